// SPDX-License-Identifier: Apache-2.0
#include "ir/verifier.h"

#include <unordered_set>

#include "ir/shape_inference.h"

namespace nhlo {

Diagnostic DiagnosticFor(const Module& module, const Instruction& inst, std::string message) {
  if (inst.source_offset != Instruction::kNoLocation && inst.source_id < module.sources.size()) {
    const SourceBuffer& src = *module.sources[inst.source_id];
    return DiagnosticAt(src.name, src.text, inst.source_offset, std::move(message));
  }
  Diagnostic d;
  if (!module.sources.empty()) d.file = module.sources.front()->name;
  d.message = "in '" + std::string(inst.name) + "' (created by a pass): " + message;
  return d;
}

namespace {

class Verifier {
 public:
  explicit Verifier(Module& m) : m_(m) {}

  Status Run() {
    if (m_.computations.empty()) {
      Fail("module has no computations");
      return std::move(status_);
    }
    if (!m_.entry) Fail("module has no entry computation");
    for (auto& comp : m_.computations) VerifyComputation(*comp);
    return std::move(status_);
  }

 private:
  void Fail(std::string message) { status_.diagnostics().push_back(Diagnostic{Severity::kError, {}, 0, 0, std::move(message), {}}); }
  void Fail(const Instruction& inst, std::string message) {
    status_.diagnostics().push_back(DiagnosticFor(m_, inst, std::move(message)));
  }

  void VerifyComputation(const Computation& comp) {
    if (comp.instructions.empty() || !comp.root) {
      Fail("computation '" + std::string(comp.name) + "' has no root");
      return;
    }
    std::unordered_set<const Instruction*> defined;
    std::vector<bool> param_seen;
    for (const Instruction* inst : comp.instructions) {
      if (inst->parent != &comp) Fail(*inst, "instruction belongs to another computation");
      for (const Instruction* op : inst->operands)
        if (!defined.count(op))
          Fail(*inst, "operand '" + std::string(op->name) + "' of '" + std::string(inst->name) +
                          "' is not defined before it in computation '" + std::string(comp.name) + "'");
      if (inst->opcode == Opcode::kParameter) {
        size_t n = static_cast<size_t>(inst->parameter_number);
        if (n >= param_seen.size()) param_seen.resize(n + 1, false);
        param_seen[n] = true;
      }
      VerifyInstruction(*inst);
      defined.insert(inst);
    }
    for (size_t i = 0; i < param_seen.size(); ++i)
      if (!param_seen[i])
        Fail(*comp.instructions.front(), "computation '" + std::string(comp.name) + "' has no parameter(" +
                                             std::to_string(i) + ") but has higher-numbered ones");
    if (!defined.count(comp.root)) Fail("root of computation '" + std::string(comp.name) + "' is not one of its instructions");
  }

  void VerifyInstruction(const Instruction& inst) {
    std::string op(OpcodeName(inst.opcode));
    int arity = OpcodeArity(inst.opcode);
    if (arity >= 0 && static_cast<int>(inst.operands.size()) != arity) {
      Fail(inst, "'" + op + "' takes " + std::to_string(arity) + " operand" + (arity == 1 ? "" : "s") +
                     ", got " + std::to_string(inst.operands.size()));
      return;
    }
    for (size_t i = 0; i < inst.shape.dims.size(); ++i)
      if (inst.shape.dims[i] < -1) Fail(inst, "negative dimension in the result shape");
    Inference inf = InferShape(m_, inst);
    if (inf.outcome == InferOutcome::kError) {
      Fail(inst, inf.message);
      return;
    }
    if (inf.outcome == InferOutcome::kInferred && !SameShape(inf.shape, inst.shape)) {
      Fail(inst, "'" + op + "' result shape is " + ShapeToString(inst.shape, false) +
                     " but its operands give " + ShapeToString(inf.shape, false));
      return;
    }
    const Shape& s = inst.shape;
    const Shape* x = inst.operands.empty() ? nullptr : &inst.operands[0]->shape;
    switch (inst.opcode) {
      case Opcode::kBroadcast: {
        const Attribute* dims = inst.FindAttr(AttrId::kDimensions);
        std::vector<int64_t> map;
        if (dims && dims->kind == AttrKind::IntList) map.assign(dims->ints.begin(), dims->ints.end());
        else if (!x->IsScalar()) {
          Fail(inst, "broadcast of a non-scalar needs dimensions=");
          break;
        }
        if (x->type != s.type) Fail(inst, "broadcast changes the element type from " + std::string(PrimitiveTypeName(x->type)) + " to " + std::string(PrimitiveTypeName(s.type)));
        if (map.size() != x->rank()) {
          Fail(inst, "broadcast dimensions has " + std::to_string(map.size()) + " entries for an operand of rank " + std::to_string(x->rank()));
          break;
        }
        for (size_t i = 0; i < map.size(); ++i) {
          if (map[i] < 0 || map[i] >= static_cast<int64_t>(s.rank())) {
            Fail(inst, "broadcast dimension " + std::to_string(map[i]) + " is out of range for the result " + ShapeToString(s, false));
            break;
          }
          if (i > 0 && map[i] <= map[i - 1]) {
            Fail(inst, "broadcast dimensions must be strictly increasing");
            break;
          }
          if (x->dims[i] != 1 && x->dims[i] != s.dims[map[i]]) {
            Fail(inst, "broadcast maps operand dimension " + std::to_string(i) + " (size " + std::to_string(x->dims[i]) +
                           ") to result dimension " + std::to_string(map[i]) + " (size " + std::to_string(s.dims[map[i]]) + ")");
            break;
          }
        }
        break;
      }
      case Opcode::kReshape:
        if (!x->IsArray() || x->type != s.type)
          Fail(inst, "reshape changes the element type or has a non-array operand");
        else if (x->ElementCount() != s.ElementCount())
          Fail(inst, "reshape from " + ShapeToString(*x, false) + " to " + ShapeToString(s, false) + " changes the element count");
        break;
      case Opcode::kConvert:
        if (!x->IsArray() || !s.IsArray() || x->dims.size() != s.dims.size() || x->ElementCount() != s.ElementCount())
          Fail(inst, "convert from " + ShapeToString(*x, false) + " to " + ShapeToString(s, false) + " changes the dimensions");
        break;
      case Opcode::kBitcastConvert:
        if (!x->IsArray() || !s.IsArray()) {
          Fail(inst, "bitcast-convert needs array shapes");
        } else {
          int in_bits = BitWidth(x->type), out_bits = BitWidth(s.type);
          // Same width: same dims. Narrower result: one extra minor dim of in/out.
          // Wider result: the operand's minor dim of out/in is folded away.
          bool ok;
          if (in_bits == out_bits) {
            ok = SameShape(*x, WithElementType(s, x->type));
          } else if (in_bits > out_bits) {
            ok = s.rank() == x->rank() + 1 && s.dims[s.rank() - 1] * out_bits == in_bits;
            for (size_t i = 0; ok && i < x->rank(); ++i) ok = x->dims[i] == s.dims[i];
          } else {
            ok = x->rank() == s.rank() + 1 && x->dims[x->rank() - 1] * in_bits == out_bits;
            for (size_t i = 0; ok && i < s.rank(); ++i) ok = x->dims[i] == s.dims[i];
          }
          if (!ok) Fail(inst, "bitcast-convert from " + ShapeToString(*x, false) + " to " + ShapeToString(s, false) + " does not preserve the bits");
        }
        break;
      case Opcode::kConstant:
        if (!inst.literal) Fail(inst, "constant has no literal");
        break;
      case Opcode::kCompare:
        if (!inst.FindAttr(AttrId::kDirection)) Fail(inst, "compare needs direction=");
        break;
      default:
        break;
    }
  }

  static Shape WithElementType(const Shape& s, PrimitiveType t) {
    Shape out = s;
    out.type = t;
    return out;
  }

  Module& m_;
  Status status_;
};

}  // namespace

Status VerifyModule(Module& module) { return Verifier(module).Run(); }

}  // namespace nhlo
