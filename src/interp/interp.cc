// SPDX-License-Identifier: Apache-2.0
// The interpreter's driver: binds buffers to memory (arena temps, constants unpacked from the
// file, parameters bound to argument bytes), then runs each bundle of the entry computation
// through one switch over opcodes.
#include "interp/interp.h"

#include <cstring>
#include <new>

#include "codegen/bundle_reader.h"
#include "interp/kernels.h"
#include "ir/custom_calls.h"
#include "ir/literal.h"

namespace nhlo {
namespace {

class Machine {
 public:
  explicit Machine(const BundleProgram& p) : p_(p), ptr_(p.buffers.size(), nullptr) {}

  Result<Value> Run(const std::vector<Value>& args) {
    try {
      arena_.assign(static_cast<size_t>(p_.arena_size), '\0');
    } catch (const std::bad_alloc&) {
      return Status::Error("cannot allocate the " + std::to_string(p_.arena_size) + "-byte arena this bundle needs");
    }
    constants_.resize(p_.buffers.size());
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      const BufferRecord& b = p_.buffers[i];
      if (b.type == PrimitiveType::kTuple) continue;
      if (b.kind == BufferKind::kTemp) ptr_[i] = reinterpret_cast<uint8_t*>(arena_.data()) + b.location;
      if (b.kind == BufferKind::kConstant) {
        constants_[i] = UnpackConstant(p_, b);
        ptr_[i] = reinterpret_cast<uint8_t*>(constants_[i].data());
      }
    }
    const ComputationRecord& entry = p_.computations[p_.entry];
    if (args.size() != entry.params.size())
      return Status::Error("the entry computation '" + std::string(entry.name) + "' takes " +
                           std::to_string(entry.params.size()) + " argument(s), got " + std::to_string(args.size()));
    args_ = args;
    for (size_t i = 0; i < args_.size(); ++i)
      NHLO_TRY(BindArgument(entry.params[i], args_[i], "argument " + std::to_string(i)));
    NHLO_TRY(RunComputation(entry));
    return ReadValue(entry.root);
  }

 private:
  Status BindArgument(uint32_t buffer, Value& v, const std::string& what) {
    const BufferRecord& b = p_.buffers[buffer];
    if (b.type == PrimitiveType::kTuple) {
      if (!v.IsTuple() || v.tuple.size() != b.tuple.size())
        return Status::Error(what + " must be a tuple of " + std::to_string(b.tuple.size()) + " elements");
      for (size_t i = 0; i < b.tuple.size(); ++i)
        NHLO_TRY(BindArgument(b.tuple[i], v.tuple[i], what + "." + std::to_string(i)));
      return OkStatus();
    }
    if (v.type != b.type || v.dims != b.dims) {
      std::string want = std::string(PrimitiveTypeName(b.type)) + "[";
      for (size_t i = 0; i < b.dims.size(); ++i) want += (i ? "," : "") + std::to_string(b.dims[i]);
      return Status::Error(what + " has shape " + PrintValue(v).substr(0, PrintValue(v).find(' ')) + ", expected " + want + "]");
    }
    ptr_[buffer] = reinterpret_cast<uint8_t*>(v.bytes.data());
    return OkStatus();
  }

  Value ReadValue(uint32_t buffer) const {
    const BufferRecord& b = p_.buffers[buffer];
    Value v;
    v.type = b.type;
    if (b.type == PrimitiveType::kTuple) {
      for (uint32_t e : b.tuple) v.tuple.push_back(ReadValue(e));
      return v;
    }
    v.dims = b.dims;
    if (ptr_[buffer]) v.bytes.assign(reinterpret_cast<const char*>(ptr_[buffer]), b.size);
    return v;
  }

  // Copies the value tree of buffer `from` into buffer `to` (same structure).
  Status CopyTree(uint32_t from, uint32_t to) {
    const BufferRecord& a = p_.buffers[from];
    const BufferRecord& b = p_.buffers[to];
    if (a.type != b.type || a.tuple.size() != b.tuple.size() || a.size != b.size)
      return Status::Error("bundle copies between buffers '" + std::string(a.name) + "' and '" + std::string(b.name) + "' of different shapes");
    if (a.type == PrimitiveType::kTuple) {
      for (size_t i = 0; i < a.tuple.size(); ++i) NHLO_TRY(CopyTree(a.tuple[i], b.tuple[i]));
      return OkStatus();
    }
    if (from != to && a.size > 0) {
      if (!ptr_[from] || !ptr_[to]) return Status::Error("bundle reads an unbound buffer '" + std::string(a.name) + "'");
      std::memmove(ptr_[to], ptr_[from], a.size);
    }
    return OkStatus();
  }

  Result<Buf> Array(uint32_t buffer) const {
    const BufferRecord& b = p_.buffers[buffer];
    if (!IsArrayType(b.type)) return Status::Error("buffer '" + std::string(b.name) + "' is not an array");
    if (!ptr_[buffer] && b.size > 0) return Status::Error("buffer '" + std::string(b.name) + "' is read before it is bound");
    return Buf{&b, ptr_[buffer]};
  }

  Status RunComputation(const ComputationRecord& comp) {
    for (const BundleRecord& bundle : comp.bundles) {
      Status s = RunBundle(bundle);
      if (!s.ok()) {
        Status annotated;
        for (Diagnostic d : s.diagnostics()) {
          char where[64];
          std::snprintf(where, sizeof(where), " (bundle at 0x%08x, result '%s')", bundle.file_offset,
                        std::string(p_.buffers[bundle.result].name).c_str());
          d.message += where;
          annotated.diagnostics().push_back(d);
        }
        return annotated;
      }
    }
    return OkStatus();
  }

  Status Arity(const BundleRecord& b, size_t n) const {
    if (b.operands.size() != n)
      return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has " + std::to_string(b.operands.size()) +
                           " operands, expected " + std::to_string(n));
    return OkStatus();
  }

  Status RunBundle(const BundleRecord& b) {
    Opcode op = b.opcode;
    switch (op) {
      case Opcode::kParameter:
      case Opcode::kConstant:
        return OkStatus();  // bound before the run
      case Opcode::kTuple: {
        const BufferRecord& r = p_.buffers[b.result];
        if (r.type != PrimitiveType::kTuple || r.tuple.size() != b.operands.size())
          return Status::Error("bundle 'tuple' does not match its result buffer");
        for (size_t i = 0; i < b.operands.size(); ++i) NHLO_TRY(CopyTree(b.operands[i], r.tuple[i]));
        return OkStatus();
      }
      case Opcode::kGetTupleElement: {
        NHLO_TRY(Arity(b, 1));
        const BufferRecord& t = p_.buffers[b.operands[0]];
        const AttrRecord* index = b.Find(AttrId::kIndex);
        if (t.type != PrimitiveType::kTuple || !index || index->i < 0 || index->i >= static_cast<int64_t>(t.tuple.size()))
          return Status::Error("bundle 'get-tuple-element' has an invalid index");
        return CopyTree(t.tuple[index->i], b.result);
      }
      case Opcode::kCopy:
      case Opcode::kOptimizationBarrier:
        NHLO_TRY(Arity(b, 1));
        return CopyTree(b.operands[0], b.result);
      case Opcode::kBatchNormTraining:
      case Opcode::kCustomCall:
        return RunTupleResult(b);
      default:
        break;
    }
    std::vector<Buf> in;
    for (uint32_t o : b.operands) {
      NHLO_ASSIGN_OR_RETURN(Buf buf, Array(o));
      in.push_back(buf);
    }
    NHLO_ASSIGN_OR_RETURN(Buf out, Array(b.result));
    if (IsElementwiseUnary(op) || op == Opcode::kIsFinite) {
      NHLO_TRY(Arity(b, 1));
      return KernelUnary(op, in[0], out);
    }
    if (IsElementwiseBinary(op)) {
      NHLO_TRY(Arity(b, 2));
      return KernelBinary(op, in[0], in[1], out);
    }
    switch (op) {
      case Opcode::kCompare: NHLO_TRY(Arity(b, 2)); return KernelCompare(b, in[0], in[1], out);
      case Opcode::kSelect: NHLO_TRY(Arity(b, 3)); return KernelSelect(in[0], in[1], in[2], out);
      case Opcode::kClamp: NHLO_TRY(Arity(b, 3)); return KernelClamp(in[0], in[1], in[2], out);
      case Opcode::kConvert: NHLO_TRY(Arity(b, 1)); return KernelConvert(in[0], out);
      case Opcode::kBitcastConvert: NHLO_TRY(Arity(b, 1)); return KernelBitcastConvert(in[0], out);
      case Opcode::kBroadcast: NHLO_TRY(Arity(b, 1)); return KernelBroadcast(b, in[0], out);
      case Opcode::kReshape: case Opcode::kBitcast: NHLO_TRY(Arity(b, 1)); return KernelReshape(in[0], out);
      case Opcode::kTranspose: NHLO_TRY(Arity(b, 1)); return KernelTranspose(b, in[0], out);
      case Opcode::kIota: NHLO_TRY(Arity(b, 0)); return KernelIota(b, out);
      case Opcode::kDot: NHLO_TRY(Arity(b, 2)); return KernelDot(b, in[0], in[1], out);
      case Opcode::kScaledDot: NHLO_TRY(Arity(b, 4)); return KernelScaledDot(b, in[0], in[1], in[2], in[3], out);
      default:
        return Status::Error("the interpreter does not implement '" + std::string(OpcodeName(op)) + "' yet");
    }
  }

  // Ops whose result may be a tuple: the kernels get one Buf per result leaf.
  Status RunTupleResult(const BundleRecord& b) {
    std::vector<Buf> in, out;
    for (uint32_t o : b.operands) {
      NHLO_ASSIGN_OR_RETURN(Buf buf, Array(o));
      in.push_back(buf);
    }
    const BufferRecord& r = p_.buffers[b.result];
    if (r.type == PrimitiveType::kTuple) {
      for (uint32_t e : r.tuple) {
        NHLO_ASSIGN_OR_RETURN(Buf buf, Array(e));
        out.push_back(buf);
      }
    } else {
      NHLO_ASSIGN_OR_RETURN(Buf buf, Array(b.result));
      out.push_back(buf);
    }
    auto shape_error = [&](const std::string& what) {
      return Status::Error("bundle '" + what + "' has " + std::to_string(in.size()) + " operands and " +
                           std::to_string(out.size()) + " results, which its kernel does not take");
    };
    if (b.opcode == Opcode::kBatchNormTraining) {
      if (in.size() != 3 || out.size() != 3) return shape_error("batch-norm-training");
      return KernelBatchNormTraining(b, in[0], in[1], in[2], out[0], out[1], out[2]);
    }
    const AttrRecord* target = b.Find(AttrId::kCustomCallTarget);
    std::string_view name = target ? target->text : std::string_view();
    if (name == kUniformQuantizeTarget || name == kUniformDequantizeTarget) {
      if (in.size() != 1 || out.size() != 1) return shape_error(std::string(name));
      return KernelUniformQuantize(b, in[0], out[0], name == kUniformQuantizeTarget);
    }
    if (name == kQuantizeMxTarget) {
      if (in.size() != 1 || out.size() != 2) return shape_error(std::string(name));
      return KernelQuantizeMx(b, in[0], out[0], out[1]);
    }
    if (name == kScaledMatmulTarget) {
      if (in.size() != 4 || out.size() != 1) return shape_error(std::string(name));
      return KernelScaledMatmul(b, in[0], in[1], in[2], in[3], out[0]);
    }
    return Status::Error("the interpreter does not know custom_call_target \"" + std::string(name) + "\"");
  }

  const BundleProgram& p_;
  std::vector<uint8_t*> ptr_;
  std::string arena_;
  std::vector<std::string> constants_;
  std::vector<Value> args_;
};

}  // namespace

Result<Value> Execute(const BundleProgram& program, const std::vector<Value>& args) {
  return Machine(program).Run(args);
}

Shape BufferShape(const BundleProgram& program, uint32_t index, Module& scratch) {
  const BufferRecord& b = program.buffers[index];
  if (b.type == PrimitiveType::kTuple) {
    std::vector<Shape> elements;
    for (uint32_t e : b.tuple) elements.push_back(BufferShape(program, e, scratch));
    return scratch.MakeTupleShape(elements);
  }
  return scratch.MakeArrayShape(b.type, b.dims);
}

}  // namespace nhlo
