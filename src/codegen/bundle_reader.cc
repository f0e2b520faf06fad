// SPDX-License-Identifier: Apache-2.0
#include "codegen/bundle_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace nhlo {
namespace {

class Reader {
 public:
  Reader(std::string_view data, uint32_t base, std::string_view file) : data_(data), base_(base), file_(file) {}

  bool Has(size_t n) const { return pos_ <= data_.size() && n <= data_.size() - pos_; }
  template <typename T>
  Status Read(T& out, const char* what) {
    if (!Has(sizeof(T))) return Error(std::string("truncated ") + what);
    std::memcpy(&out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return OkStatus();
  }
  Status Skip(size_t n, const char* what) {
    if (!Has(n)) return Error(std::string("truncated ") + what);
    pos_ += n;
    return OkStatus();
  }
  Status AlignTo(size_t a, const char* what) {
    size_t pad = (a - pos_ % a) % a;
    return Skip(pad, what);
  }
  Status Error(std::string message) const { return ErrorAt(pos_, std::move(message)); }
  Status ErrorAt(size_t local, std::string message) const {
    char where[32];
    std::snprintf(where, sizeof(where), ":0x%08zx", static_cast<size_t>(base_) + local);
    Diagnostic d;
    d.file = std::string(file_) + where;
    d.message = std::move(message);
    return Status::FromDiagnostic(std::move(d));
  }
  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  uint32_t offset() const { return base_ + static_cast<uint32_t>(pos_); }
  size_t size() const { return data_.size(); }

 private:
  std::string_view data_;
  uint32_t base_;
  std::string_view file_;
  size_t pos_ = 0;
};

class Decoder {
 public:
  Decoder(BundleProgram& p, std::string_view file) : p_(p), file_(file) {}

  Status Run() {
    std::string_view bytes = p_.bytes;
    Reader r(bytes, 0, file_);
    if (bytes.size() < kHeaderSize) return r.ErrorAt(0, "file is too short to be a bundle file (" + std::to_string(bytes.size()) + " bytes)");
    if (std::memcmp(bytes.data(), kBundleMagic, 8) != 0) return r.ErrorAt(0, "not a bundle file (bad magic)");
    r.set_pos(8);
    uint32_t file_size, section_count;
    uint8_t arch;
    NHLO_TRY(r.Read(p_.version, "header"));
    NHLO_TRY(r.Read(arch, "header"));
    NHLO_TRY(r.Read(p_.flags, "header"));
    NHLO_TRY(r.Read(file_size, "header"));
    NHLO_TRY(r.Read(p_.checksum, "header"));
    NHLO_TRY(r.Read(section_count, "header"));
    if (p_.version != kBundleVersion)
      return r.ErrorAt(8, "unsupported bundle version " + std::to_string(p_.version) + " (this nhlo reads version " + std::to_string(kBundleVersion) + ")");
    if (arch != 3 && arch != 4) return r.ErrorAt(10, "unknown target arch " + std::to_string(arch));
    p_.arch = static_cast<TargetArch>(arch);
    if (file_size != bytes.size())
      return r.ErrorAt(12, "file size is " + std::to_string(bytes.size()) + " bytes but the header says " + std::to_string(file_size) + " (truncated or extended file)");
    uint32_t actual = BundleChecksum(bytes);
    if (actual != p_.checksum) {
      char msg[96];
      std::snprintf(msg, sizeof(msg), "checksum mismatch: header says 0x%08x, contents give 0x%08x (corrupted file)", p_.checksum, actual);
      return r.ErrorAt(16, msg);
    }
    if (section_count != kSectionCount) return r.ErrorAt(20, "expected " + std::to_string(kSectionCount) + " sections, header says " + std::to_string(section_count));
    std::string_view sections[kSectionCount + 1];
    uint32_t bases[kSectionCount + 1] = {};
    for (uint32_t i = 0; i < kSectionCount; ++i) {
      size_t at = r.pos();
      uint32_t id, offset, size;
      NHLO_TRY(r.Read(id, "section table"));
      NHLO_TRY(r.Read(offset, "section table"));
      NHLO_TRY(r.Read(size, "section table"));
      if (id != i + 1) return r.ErrorAt(at, "section " + std::to_string(i) + " has id " + std::to_string(id) + ", expected " + std::to_string(i + 1));
      if (offset > bytes.size() || size > bytes.size() - offset)
        return r.ErrorAt(at, std::string(SectionName(static_cast<SectionId>(id))) + " section lies outside the file");
      sections[id] = bytes.substr(offset, size);
      bases[id] = offset;
      p_.sections.push_back({static_cast<SectionId>(id), offset, size});
    }
    strings_ = sections[1];
    p_.constants = sections[3];
    {
      Reader m(sections[6], bases[6], file_);
      NHLO_TRY(ReadString(m, p_.module_name));
      uint32_t reserved;
      NHLO_TRY(m.Read(p_.entry, "module section"));
      NHLO_TRY(m.Read(reserved, "module section"));
      NHLO_TRY(m.Read(p_.arena_size, "module section"));
    }
    NHLO_TRY(ReadBuffers(Reader(sections[2], bases[2], file_)));
    NHLO_TRY(ReadComputations(Reader(sections[4], bases[4], file_), sections[5], bases[5]));
    if (p_.entry >= p_.computations.size()) return Status::Error(std::string(file_) + ": entry computation index " + std::to_string(p_.entry) + " is out of range");
    return OkStatus();
  }

 private:
  Status ReadString(Reader& r, std::string_view& out) {
    size_t at = r.pos();
    uint32_t off, len;
    NHLO_TRY(r.Read(off, "string reference"));
    NHLO_TRY(r.Read(len, "string reference"));
    if (off > strings_.size() || len > strings_.size() - off) return r.ErrorAt(at, "string reference outside the string table");
    out = strings_.substr(off, len);
    return OkStatus();
  }

  Status ReadBuffers(Reader r) {
    uint32_t count;
    NHLO_TRY(r.Read(count, "buffer count"));
    if (static_cast<uint64_t>(count) * kBufferFixedSize > r.size()) return r.Error("buffer count " + std::to_string(count) + " does not fit in the buffer section");
    p_.buffers.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      BufferRecord& b = p_.buffers[i];
      b.file_offset = r.offset();
      size_t at = r.pos();
      uint8_t type, kind, rank, pad8;
      uint16_t pad16;
      uint32_t tuple_count;
      NHLO_TRY(ReadString(r, b.name));
      NHLO_TRY(r.Read(type, "buffer"));
      NHLO_TRY(r.Read(b.backend_dtype, "buffer"));
      NHLO_TRY(r.Read(b.wire_tag, "buffer"));
      NHLO_TRY(r.Read(kind, "buffer"));
      NHLO_TRY(r.Read(rank, "buffer"));
      NHLO_TRY(r.Read(pad8, "buffer"));
      NHLO_TRY(r.Read(pad16, "buffer"));
      NHLO_TRY(r.Read(b.stride, "buffer"));
      NHLO_TRY(r.Read(tuple_count, "buffer"));
      NHLO_TRY(r.Read(b.size, "buffer"));
      NHLO_TRY(r.Read(b.location, "buffer"));
      std::string where = "buffer " + std::to_string(i);
      auto type_or = PrimitiveTypeFromCode(type);
      if (!type_or) return r.ErrorAt(at, where + " has unknown element type code " + std::to_string(type));
      b.type = *type_or;
      if (kind > 2) return r.ErrorAt(at, where + " has unknown kind " + std::to_string(kind));
      b.kind = static_cast<BufferKind>(kind);
      if (b.backend_dtype != kNoDtype) {
        Result<BackendDtype> dt = BackendDtypeFromOrdinal(b.backend_dtype);
        if (!dt.ok()) return r.ErrorAt(at, where + ": " + dt.status().message());
        uint8_t want = WireTag(*dt, p_.arch == TargetArch::kV3 ? Arch::kV3 : Arch::kV4);
        if (b.wire_tag != want) return r.ErrorAt(at, where + " has wire tag " + std::to_string(b.wire_tag) + " but its dtype " + std::string(BackendDtypeName(*dt)) + " has " + std::to_string(want));
      }
      if (b.type == PrimitiveType::kTuple) {
        if (rank != 0) return r.ErrorAt(at, where + " is a tuple with dimensions");
        if (static_cast<uint64_t>(tuple_count) * 4 > r.size()) return r.ErrorAt(at, where + " has an impossible tuple size");
        b.tuple.resize(tuple_count);
      } else if (tuple_count != 0) {
        return r.ErrorAt(at, where + " is not a tuple but lists tuple elements");
      }
      b.dims.resize(rank);
      for (int64_t& d : b.dims) {
        NHLO_TRY(r.Read(d, "buffer dimensions"));
        if (d < 0) return r.ErrorAt(at, where + " has a negative dimension");
      }
      for (uint32_t& e : b.tuple) {
        NHLO_TRY(r.Read(e, "tuple elements"));
        if (e >= i) return r.ErrorAt(at, where + " lists tuple element " + std::to_string(e) + ", which does not precede it");
        if (p_.buffers[e].kind != b.kind) return r.ErrorAt(at, where + " mixes buffer kinds in its tuple");
      }
      NHLO_TRY(r.AlignTo(8, "buffer padding"));
      if (IsArrayType(b.type)) {
        int64_t n = b.ElementCount();
        if (n < 0 || static_cast<uint64_t>(n) > UINT64_MAX / 16 ||
            static_cast<uint64_t>(n) * HostByteSize(b.type) != b.size)
          return r.ErrorAt(at, where + " size " + std::to_string(b.size) + " does not match its dimensions");
        if (b.kind == BufferKind::kTemp && (b.location > p_.arena_size || b.size > p_.arena_size - b.location))
          return r.ErrorAt(at, where + " lies outside the arena");
        if (b.kind == BufferKind::kConstant) {
          uint64_t packed = PackedConstantBytes(b.type, n);
          if (b.location > p_.constants.size() || packed > p_.constants.size() - b.location)
            return r.ErrorAt(at, where + " lies outside the constant section");
        }
      } else if (b.size != 0 || (!b.dims.empty())) {
        return r.ErrorAt(at, where + " of type " + std::string(PrimitiveTypeName(b.type)) + " cannot hold data");
      }
      if (b.kind == BufferKind::kParameter && b.location > INT32_MAX) return r.ErrorAt(at, where + " has an impossible parameter number");
    }
    if (r.pos() != r.size()) return r.Error("trailing bytes after the last buffer");
    // The arena is exactly as large as its last temp needs: a forged size cannot make the
    // interpreter allocate more than the buffer table describes.
    uint64_t arena_end = 0;
    for (const BufferRecord& b : p_.buffers)
      if (b.kind == BufferKind::kTemp && IsArrayType(b.type)) arena_end = std::max(arena_end, b.location + b.size);
    if (arena_end != p_.arena_size)
      return Status::Error(std::string(file_) + ": arena size " + std::to_string(p_.arena_size) +
                           " does not match the buffer table (" + std::to_string(arena_end) + ")");
    return OkStatus();
  }

  Status ReadComputations(Reader r, std::string_view code, uint32_t code_base) {
    uint32_t count;
    NHLO_TRY(r.Read(count, "computation count"));
    if (static_cast<uint64_t>(count) * 24 > r.size()) return r.Error("computation count does not fit in its section");
    p_.computations.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      ComputationRecord& c = p_.computations[i];
      c.file_offset = r.offset();
      size_t at = r.pos();
      uint32_t nparams, bundle_count, offset, size;
      NHLO_TRY(ReadString(r, c.name));
      NHLO_TRY(r.Read(nparams, "computation"));
      if (static_cast<uint64_t>(nparams) * 4 > r.size()) return r.ErrorAt(at, "impossible parameter count");
      c.params.resize(nparams);
      for (uint32_t& pb : c.params) {
        NHLO_TRY(r.Read(pb, "parameter list"));
        if (pb >= p_.buffers.size() || p_.buffers[pb].kind != BufferKind::kParameter)
          return r.ErrorAt(at, "computation '" + std::string(c.name) + "' names a parameter buffer that is not a parameter");
      }
      NHLO_TRY(r.Read(c.root, "computation"));
      NHLO_TRY(r.Read(bundle_count, "computation"));
      NHLO_TRY(r.Read(offset, "computation"));
      NHLO_TRY(r.Read(size, "computation"));
      if (c.root >= p_.buffers.size()) return r.ErrorAt(at, "root buffer index out of range");
      if (offset > code.size() || size > code.size() - offset) return r.ErrorAt(at, "bundle stream lies outside the code section");
      if (static_cast<uint64_t>(bundle_count) * kBundleFixedSize > size) return r.ErrorAt(at, "bundle count does not fit in the bundle stream");
      Reader br(code.substr(offset, size), code_base + offset, file_);
      c.bundles.resize(bundle_count);
      for (BundleRecord& b : c.bundles) NHLO_TRY(ReadBundle(br, b, count));
      if (br.pos() != br.size()) return br.Error("trailing bytes after the last bundle of '" + std::string(c.name) + "'");
    }
    if (r.pos() != r.size()) return r.Error("trailing bytes after the last computation");
    return OkStatus();
  }

  Status ReadBundle(Reader& r, BundleRecord& b, uint32_t comp_count) {
    b.file_offset = r.offset();
    size_t start = r.pos();
    uint16_t opcode, size;
    uint8_t noperands, nattrs, reserved;
    NHLO_TRY(r.Read(opcode, "bundle"));
    NHLO_TRY(r.Read(size, "bundle"));
    NHLO_TRY(r.Read(b.result, "bundle"));
    NHLO_TRY(r.Read(noperands, "bundle"));
    NHLO_TRY(r.Read(nattrs, "bundle"));
    NHLO_TRY(r.Read(b.result_tag, "bundle"));
    NHLO_TRY(r.Read(reserved, "bundle"));
    b.size = size;
    if (opcode >= kOpcodeCount) return r.ErrorAt(start, "unknown opcode " + std::to_string(opcode));
    b.opcode = static_cast<Opcode>(opcode);
    if (size < kBundleFixedSize || size % 4 != 0 || size > r.size() - start)
      return r.ErrorAt(start, "bundle size " + std::to_string(size) + " is invalid");
    if (b.result >= p_.buffers.size()) return r.ErrorAt(start, "result buffer " + std::to_string(b.result) + " is out of range");
    if (b.result_tag != p_.buffers[b.result].wire_tag) return r.ErrorAt(start, "result wire tag does not match the buffer table");
    b.operands.resize(noperands);
    for (uint32_t& op : b.operands) {
      NHLO_TRY(r.Read(op, "bundle operands"));
      if (op >= p_.buffers.size()) return r.ErrorAt(start, "operand buffer " + std::to_string(op) + " is out of range");
    }
    b.operand_tags.resize(noperands);
    for (size_t i = 0; i < noperands; ++i) {
      NHLO_TRY(r.Read(b.operand_tags[i], "bundle operand tags"));
      if (b.operand_tags[i] != p_.buffers[b.operands[i]].wire_tag) return r.ErrorAt(start, "operand wire tag does not match the buffer table");
    }
    NHLO_TRY(r.AlignTo(4, "bundle padding"));
    b.attrs.resize(nattrs);
    for (AttrRecord& a : b.attrs) {
      size_t at = r.pos();
      uint8_t id, kind;
      uint16_t payload;
      NHLO_TRY(r.Read(id, "attribute"));
      NHLO_TRY(r.Read(kind, "attribute"));
      NHLO_TRY(r.Read(payload, "attribute"));
      if (id >= sizeof(kAttrCountProbe) || kind > static_cast<uint8_t>(AttrKind::Literal))
        return r.ErrorAt(at, "unknown attribute id " + std::to_string(id) + " or kind " + std::to_string(kind));
      a.id = static_cast<AttrId>(id);
      a.kind = static_cast<AttrKind>(kind);
      size_t payload_start = r.pos();
      switch (a.kind) {
        case AttrKind::Int: NHLO_TRY(r.Read(a.i, "attribute")); break;
        case AttrKind::Bool: { uint8_t v; NHLO_TRY(r.Read(v, "attribute")); a.b = v != 0; break; }
        case AttrKind::Float: NHLO_TRY(r.Read(a.f, "attribute")); break;
        case AttrKind::String: case AttrKind::Ident: case AttrKind::Raw: case AttrKind::Shape: case AttrKind::Literal:
          NHLO_TRY(ReadString(r, a.text));
          break;
        case AttrKind::Config: {
          NHLO_TRY(ReadString(r, a.text));
          uint8_t json;
          NHLO_TRY(r.Read(json, "attribute"));
          a.is_json = json != 0;
          break;
        }
        case AttrKind::IntList: {
          uint32_t n;
          NHLO_TRY(r.Read(n, "attribute"));
          if (static_cast<uint64_t>(n) * 8 > payload) return r.ErrorAt(at, "integer list longer than its payload");
          a.ints.resize(n);
          for (int64_t& v : a.ints) NHLO_TRY(r.Read(v, "attribute"));
          break;
        }
        case AttrKind::Computation: case AttrKind::ComputationList: case AttrKind::InstructionList: {
          uint32_t n;
          NHLO_TRY(r.Read(n, "attribute"));
          if (static_cast<uint64_t>(n) * 4 > payload) return r.ErrorAt(at, "computation list longer than its payload");
          a.computations.resize(n);
          for (uint32_t& c : a.computations) {
            NHLO_TRY(r.Read(c, "attribute"));
            if (c >= comp_count) return r.ErrorAt(at, "computation index " + std::to_string(c) + " is out of range");
          }
          break;
        }
      }
      if (r.pos() - payload_start != payload) return r.ErrorAt(at, "attribute payload size does not match its contents");
      NHLO_TRY(r.AlignTo(4, "attribute padding"));
    }
    if (r.pos() - start != size) return r.ErrorAt(start, "bundle size field does not match its contents");
    return OkStatus();
  }

  static constexpr char kAttrCountProbe[] = {
#define NHLO_ATTR(Enum, text, kind) 0,
#include "ir/attributes.def"
#undef NHLO_ATTR
  };

  BundleProgram& p_;
  std::string_view file_;
  std::string_view strings_;
};

}  // namespace

bool LooksLikeBundle(std::string_view bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), kBundleMagic, 8) == 0;
}

Result<BundleProgram> ReadBundleFile(std::string bytes, std::string_view file) {
  BundleProgram program;
  program.bytes = std::move(bytes);
  NHLO_TRY(Decoder(program, file).Run());
  return program;
}

std::string UnpackConstant(const BundleProgram& program, const BufferRecord& buffer) {
  std::string out(buffer.size, '\0');
  int bits = BitWidth(buffer.type);
  std::string_view src = program.constants.substr(buffer.location);
  if (bits > 0 && bits < 8) {
    int per_byte = 8 / bits;
    uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
    bool is_signed = IsSignedInt(buffer.type);
    for (uint64_t i = 0; i < buffer.size; ++i) {
      uint8_t v = (static_cast<uint8_t>(src[i / per_byte]) >> (bits * (i % per_byte))) & mask;
      if (is_signed && (v & (1u << (bits - 1)))) v |= static_cast<uint8_t>(~mask);
      out[i] = static_cast<char>(v);
    }
  } else {
    std::memcpy(out.data(), src.data(), buffer.size);
  }
  return out;
}

}  // namespace nhlo
