// SPDX-License-Identifier: Apache-2.0
// Module -> bundle file bytes. Buffers are assigned per value (tuples get one buffer per leaf
// plus an aggregate), temps are laid out in one arena in program order, and every instruction
// becomes one bundle record. See docs/bundle-format.md for every field.
#include <cstring>
#include <map>
#include <unordered_map>

#include "codegen/codegen.h"
#include "ir/literal.h"
#include "ir/verifier.h"

namespace nhlo {
namespace {

class ByteWriter {
 public:
  void U8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Raw(&v, 2); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void I64(int64_t v) { Raw(&v, 8); }
  void F64(double v) { Raw(&v, 8); }
  void Raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  void Align(size_t a) { while (bytes_.size() % a) bytes_.push_back('\0'); }
  void PatchU16(size_t at, uint16_t v) { std::memcpy(&bytes_[at], &v, 2); }
  void PatchU32(size_t at, uint32_t v) { std::memcpy(&bytes_[at], &v, 4); }
  size_t size() const { return bytes_.size(); }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class Writer {
 public:
  Writer(const Module& m, const CodegenOptions& o) : m_(m), opts_(o) {}

  Result<std::string> Run() {
    for (size_t i = 0; i < m_.computations.size(); ++i) comp_index_[m_.computations[i].get()] = static_cast<uint32_t>(i);
    for (const auto& comp : m_.computations) NHLO_TRY(LowerComputation(*comp));
    return Assemble();
  }

 private:
  uint32_t String(std::string_view s) {
    auto it = string_index_.find(std::string(s));
    if (it != string_index_.end()) return it->second;
    uint32_t off = static_cast<uint32_t>(strings_.size());
    strings_.append(s);
    string_index_.emplace(std::string(s), off);
    return off;
  }
  void StringRef(ByteWriter& w, std::string_view s) {
    w.U32(String(s));
    w.U32(static_cast<uint32_t>(s.size()));
  }

  Result<uint8_t> DtypeOf(const Instruction& inst, PrimitiveType t, uint8_t* tag) {
    *tag = kNoDtype;
    if (!IsArrayType(t)) return kNoDtype;
    auto dt = BackendDtypeFor(t);
    if (!dt) {
      if (opts_.device_only)
        return Status::FromDiagnostic(DiagnosticFor(m_, inst, "element type " + std::string(PrimitiveTypeName(t)) +
                                                               " has no device dtype (host-only type; drop --device-only to run it in the interpreter)"));
      return kNoDtype;
    }
    if (opts_.arch == TargetArch::kV3 && IsX4(*dt))
      return Status::FromDiagnostic(DiagnosticFor(m_, inst, "x4 dtype " + std::string(BackendDtypeName(*dt)) + " is not supported on v3"));
    *tag = WireTag(*dt, opts_.arch == TargetArch::kV3 ? Arch::kV3 : Arch::kV4);
    return static_cast<uint8_t>(Ordinal(*dt));
  }

  // Allocates buffers for a value of `shape`, leaves first; returns the value's buffer.
  Result<uint32_t> Allocate(const Instruction& inst, const Shape& shape, BufferKind kind, std::string_view name,
                            const uint8_t* const_data = nullptr, const Literal* lit = nullptr) {
    BufferRecord b;
    b.name = name;
    b.type = shape.type;
    b.kind = kind;
    if (shape.IsTuple()) {
      for (size_t i = 0; i < shape.tuple.size(); ++i) {
        const Literal* element = lit && i < lit->tuple.size() ? lit->tuple[i] : nullptr;
        NHLO_ASSIGN_OR_RETURN(uint32_t e, Allocate(inst, shape.tuple[i], kind, name, element ? element->data.data() : nullptr, element));
        b.tuple.push_back(e);
      }
      if (kind == BufferKind::kParameter) b.location = static_cast<uint64_t>(inst.parameter_number);
    } else {
      for (size_t i = 0; i < shape.dims.size(); ++i)
        if (shape.IsDynamicDim(i))
          return Status::FromDiagnostic(DiagnosticFor(m_, inst, "dynamic dimensions are not supported by codegen"));
      b.dims.assign(shape.dims.begin(), shape.dims.end());
      int64_t bytes = shape.IsArray() ? HostBytes(shape) : 0;
      if (bytes < 0) return Status::FromDiagnostic(DiagnosticFor(m_, inst, "buffer of shape " + ShapeToString(shape, false) + " is too large"));
      b.size = static_cast<uint64_t>(bytes);
      NHLO_ASSIGN_OR_RETURN(b.backend_dtype, DtypeOf(inst, shape.type, &b.wire_tag));
      if (b.backend_dtype != kNoDtype) b.stride = static_cast<uint32_t>(StrideBytes(static_cast<BackendDtype>(b.backend_dtype)));
      switch (kind) {
        case BufferKind::kTemp:
          arena_size_ = (arena_size_ + 15) & ~uint64_t(15);
          b.location = arena_size_;
          arena_size_ += b.size;
          break;
        case BufferKind::kParameter:
          b.location = static_cast<uint64_t>(inst.parameter_number);
          break;
        case BufferKind::kConstant: {
          while (constants_.size() % 8) constants_.push_back('\0');
          b.location = constants_.size();
          int64_t count = shape.ElementCount();
          int bits = BitWidth(shape.type);
          if (bits > 0 && bits < 8) {
            // Pack sub-byte elements, lane 0 in the low bits.
            std::string packed(PackedConstantBytes(shape.type, count), '\0');
            int per_byte = 8 / bits;
            uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
            for (int64_t i = 0; const_data && i < count; ++i)
              packed[i / per_byte] = static_cast<char>(static_cast<uint8_t>(packed[i / per_byte]) |
                                                       ((const_data[i] & mask) << (bits * (i % per_byte))));
            constants_ += packed;
          } else if (const_data) {
            constants_.append(reinterpret_cast<const char*>(const_data), b.size);
          } else {
            constants_.append(b.size, '\0');
          }
          break;
        }
      }
    }
    buffers_.push_back(std::move(b));
    return static_cast<uint32_t>(buffers_.size() - 1);
  }

  Status LowerComputation(const Computation& comp) {
    ComputationRecord rec;
    rec.name = comp.name;
    std::unordered_map<const Instruction*, uint32_t> value;
    ByteWriter code;
    size_t code_start = code_.size();
    uint32_t bundle_count = 0;
    for (const Instruction* inst : comp.instructions) {
      BufferKind kind = inst->opcode == Opcode::kParameter  ? BufferKind::kParameter
                        : inst->opcode == Opcode::kConstant ? BufferKind::kConstant
                                                            : BufferKind::kTemp;
      const uint8_t* data = inst->literal ? inst->literal->data.data() : nullptr;
      NHLO_ASSIGN_OR_RETURN(uint32_t result, Allocate(*inst, inst->shape, kind, inst->name, data, inst->literal));
      value[inst] = result;
      if (inst->opcode == Opcode::kParameter) {
        size_t n = static_cast<size_t>(inst->parameter_number);
        if (n >= comp.instructions.size())
          return Status::Error("computation '" + std::string(comp.name) + "' has a gap in its parameter numbers");
        if (rec.params.size() <= n) rec.params.resize(n + 1, UINT32_MAX);
        rec.params[n] = result;
      }
      if (inst->operands.size() > 255)
        return Status::FromDiagnostic(DiagnosticFor(m_, *inst, "more than 255 operands cannot be encoded in a bundle"));
      // Bundle header.
      size_t start = code.size();
      code.U16(static_cast<uint16_t>(inst->opcode));
      code.U16(0);  // record size, patched below
      code.U32(result);
      code.U8(static_cast<uint8_t>(inst->operands.size()));
      size_t attr_count_at = code.size();
      code.U8(0);
      code.U8(buffers_[result].wire_tag);
      code.U8(0);
      for (const Instruction* op : inst->operands) code.U32(value.at(op));
      for (const Instruction* op : inst->operands) code.U8(buffers_[value.at(op)].wire_tag);
      code.Align(4);
      uint8_t attr_count = 0;
      for (const Attribute& a : inst->attrs) {
        if (!Encoded(a.id)) continue;
        NHLO_TRY(EncodeAttr(*inst, code, a));
        ++attr_count;
      }
      code.bytes()[attr_count_at] = static_cast<char>(attr_count);
      size_t size = code.size() - start;
      if (size > 0xffff) return Status::FromDiagnostic(DiagnosticFor(m_, *inst, "bundle larger than 64 KiB"));
      code.PatchU16(start + 2, static_cast<uint16_t>(size));
      ++bundle_count;
    }
    rec.root = value.at(comp.root);
    for (uint32_t p : rec.params)
      if (p == UINT32_MAX) return Status::Error("computation '" + std::string(comp.name) + "' has a gap in its parameter numbers");
    code_records_.push_back({rec, static_cast<uint32_t>(code_start), static_cast<uint32_t>(code.size()), bundle_count});
    code_ += code.bytes();
    return OkStatus();
  }

  // Metadata-like attributes do not change what an instruction computes; they stay in the IR.
  static bool Encoded(AttrId id) {
    switch (id) {
      case AttrId::kMetadata: case AttrId::kOrigin: case AttrId::kStatistics: case AttrId::kSharding:
      case AttrId::kControlPredecessors: case AttrId::kFrontendAttributes:
        return false;
      default:
        return true;
    }
  }

  Status EncodeAttr(const Instruction& inst, ByteWriter& w, const Attribute& a) {
    w.U8(static_cast<uint8_t>(a.id));
    w.U8(static_cast<uint8_t>(a.kind));
    size_t size_at = w.size();
    w.U16(0);
    size_t start = w.size();
    switch (a.kind) {
      case AttrKind::Int: w.I64(a.i); break;
      case AttrKind::Bool: w.U8(a.b); break;
      case AttrKind::Float: w.F64(a.f); break;
      case AttrKind::String: case AttrKind::Ident: case AttrKind::Raw:
        StringRef(w, a.text);
        break;
      case AttrKind::Config:
        StringRef(w, a.text);
        w.U8(a.config_is_json);
        break;
      case AttrKind::IntList:
        w.U32(static_cast<uint32_t>(a.ints.size()));
        for (int64_t v : a.ints) w.I64(v);
        break;
      case AttrKind::Computation: case AttrKind::ComputationList:
        w.U32(static_cast<uint32_t>(a.computations.size()));
        for (const Computation* c : a.computations) w.U32(comp_index_.at(c));
        break;
      case AttrKind::InstructionList:
        w.U32(0);
        break;
      case AttrKind::Shape:
        StringRef(w, ShapeToString(*a.shape));
        break;
      case AttrKind::Literal: {
        std::string text = ShapeToString(a.literal->shape);
        text += ' ';
        AppendLiteral(text, *a.literal);
        StringRef(w, text);
        break;
      }
    }
    size_t payload = w.size() - start;
    if (payload > 0xffff) return Status::FromDiagnostic(DiagnosticFor(m_, inst, "attribute '" + std::string(AttrName(a.id)) + "' is too large to encode"));
    w.PatchU16(size_at, static_cast<uint16_t>(payload));
    w.Align(4);
    return OkStatus();
  }

  Result<std::string> Assemble() {
    // Buffers section.
    ByteWriter buffers;
    buffers.U32(static_cast<uint32_t>(buffers_.size()));
    for (const BufferRecord& b : buffers_) {
      StringRef(buffers, b.name);
      buffers.U8(static_cast<uint8_t>(b.type));
      buffers.U8(b.backend_dtype);
      buffers.U8(b.wire_tag);
      buffers.U8(static_cast<uint8_t>(b.kind));
      buffers.U8(static_cast<uint8_t>(b.dims.size()));
      buffers.U8(0);
      buffers.U16(0);
      buffers.U32(b.stride);
      buffers.U32(static_cast<uint32_t>(b.tuple.size()));
      buffers.U64(b.size);
      buffers.U64(b.location);
      for (int64_t d : b.dims) buffers.I64(d);
      for (uint32_t e : b.tuple) buffers.U32(e);
      buffers.Align(8);
    }
    // Computations section.
    ByteWriter comps;
    comps.U32(static_cast<uint32_t>(code_records_.size()));
    for (const CodeRecord& c : code_records_) {
      StringRef(comps, c.rec.name);
      comps.U32(static_cast<uint32_t>(c.rec.params.size()));
      for (uint32_t p : c.rec.params) comps.U32(p);
      comps.U32(c.rec.root);
      comps.U32(c.bundle_count);
      comps.U32(c.offset);
      comps.U32(c.size);
    }
    uint32_t entry = comp_index_.at(m_.entry);
    ByteWriter module;
    StringRef(module, m_.name);
    module.U32(entry);
    module.U32(0);
    module.U64(arena_size_);

    std::string sections[kSectionCount] = {strings_, buffers.bytes(), constants_, comps.bytes(), code_, module.bytes()};
    ByteWriter file;
    file.Raw(kBundleMagic, 8);
    file.U16(kBundleVersion);
    file.U8(static_cast<uint8_t>(opts_.arch));
    file.U8(opts_.device_only ? 1 : 0);
    file.U32(0);  // file size, patched
    file.U32(0);  // checksum, patched
    file.U32(kSectionCount);
    size_t table = file.size();
    for (uint32_t i = 0; i < kSectionCount; ++i) {
      file.U32(i + 1);
      file.U32(0);
      file.U32(0);
    }
    for (uint32_t i = 0; i < kSectionCount; ++i) {
      file.Align(8);
      file.PatchU32(table + i * kSectionEntrySize + 4, static_cast<uint32_t>(file.size()));
      file.PatchU32(table + i * kSectionEntrySize + 8, static_cast<uint32_t>(sections[i].size()));
      file.Raw(sections[i].data(), sections[i].size());
    }
    if (file.size() >= UINT32_MAX) return Status::Error("bundle file would exceed 4 GiB");
    file.PatchU32(12, static_cast<uint32_t>(file.size()));
    file.PatchU32(16, BundleChecksum(file.bytes()));
    return std::move(file.bytes());
  }

  struct CodeRecord {
    ComputationRecord rec;
    uint32_t offset;
    uint32_t size;
    uint32_t bundle_count;
  };

  const Module& m_;
  const CodegenOptions& opts_;
  std::unordered_map<const Computation*, uint32_t> comp_index_;
  std::vector<BufferRecord> buffers_;
  std::vector<CodeRecord> code_records_;
  std::string strings_;
  std::map<std::string, uint32_t> string_index_;
  std::string constants_;
  std::string code_;
  uint64_t arena_size_ = 0;
};

}  // namespace

Result<std::string> EmitBundleFile(const Module& module, const CodegenOptions& options) {
  return Writer(module, options).Run();
}

}  // namespace nhlo
