// SPDX-License-Identifier: Apache-2.0
#include "codegen/bundle_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "codegen/attr_layout.h"
#include "support/checked_math.h"

namespace nhlo {
namespace {

// A record's attributes as MakeDimensionNumbers asks for them (their kinds were checked when read).
struct RecordAttrs {
  const BundleRecord& b;
  std::optional<DimIndexList> List(AttrId id) const {
    const AttrRecord* a = b.Find(id);
    return a && a->kind == AttrKind::IntList ? std::optional<DimIndexList>(a->ints()) : std::nullopt;
  }
  std::optional<int64_t> Int(AttrId id) const {
    const AttrRecord* a = b.Find(id);
    return a && a->kind == AttrKind::Int ? std::optional<int64_t>(a->i()) : std::nullopt;
  }
  std::span<const WindowDim> Window() const {
    const AttrRecord* a = b.Find(AttrId::kWindow);
    return a && a->kind == AttrKind::Window ? std::span<const WindowDim>(a->window()) : std::span<const WindowDim>();
  }
  const ConvDimLabels* Labels() const {
    const AttrRecord* a = b.Find(AttrId::kDimLabels);
    return a && a->kind == AttrKind::DimLabels ? &a->dim_labels() : nullptr;
  }
};

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
  std::string_view Slice(size_t at, size_t n) const { return data_.substr(at, n); }

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
    if (bytes.size() < kHeaderSize)
      return r.ErrorAt(0, "file is too short to be a bundle file (" + std::to_string(bytes.size()) + " bytes)");
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
      return r.ErrorAt(8, "bundle format version " + std::to_string(p_.version) +
                              " is not supported: this nhlo reads version " + std::to_string(kBundleVersion) +
                              (p_.version < kBundleVersion ? " (recompile the HLO with this nhlo-compile)" : ""));
    if (arch != 3 && arch != 4) return r.ErrorAt(10, "unknown target arch " + std::to_string(arch));
    p_.arch = static_cast<TargetArch>(arch);
    if (file_size != bytes.size())
      return r.ErrorAt(12, "file size is " + std::to_string(bytes.size()) + " bytes but the header says " +
                               std::to_string(file_size) + " (truncated or extended file)");
    uint32_t actual = BundleChecksum(bytes);
    if (actual != p_.checksum) {
      char msg[96];
      std::snprintf(msg, sizeof(msg), "checksum mismatch: header says 0x%08x, contents give 0x%08x (corrupted file)",
                    p_.checksum, actual);
      return r.ErrorAt(16, msg);
    }
    if (section_count != kSectionCount)
      return r.ErrorAt(
          20, "expected " + std::to_string(kSectionCount) + " sections, header says " + std::to_string(section_count));
    std::string_view sections[kSectionCount + 1];
    uint32_t bases[kSectionCount + 1] = {};
    for (uint32_t i = 0; i < kSectionCount; ++i) {
      size_t at = r.pos();
      uint32_t id, offset, size;
      NHLO_TRY(r.Read(id, "section table"));
      NHLO_TRY(r.Read(offset, "section table"));
      NHLO_TRY(r.Read(size, "section table"));
      if (id != i + 1)
        return r.ErrorAt(at, "section " + std::to_string(i) + " has id " + std::to_string(id) + ", expected " +
                                 std::to_string(i + 1));
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
      NHLO_TRY(m.Read(p_.entry, "module section"));
      NHLO_TRY(m.Read(p_.replicas, "module section"));
      NHLO_TRY(m.Read(p_.partitions, "module section"));
      p_.device_counts_given = p_.replicas != 0 || p_.partitions != 0 || (p_.flags & kFlagStatesOneDevice) != 0;
      if (p_.replicas == 0) p_.replicas = 1;
      if (p_.partitions == 0) p_.partitions = 1;
      NHLO_TRY(m.Read(p_.arena_size, "module section"));
      if (m.pos() != m.size()) return m.Error("trailing bytes in the module section");
    }
    NHLO_TRY(ReadComputations(Reader(sections[4], bases[4], file_), Reader(sections[2], bases[2], file_), sections[5],
                              bases[5]));
    if (p_.entry >= p_.computations.size())
      return Status::Error(std::string(file_) + ": entry computation index " + std::to_string(p_.entry) +
                           " is out of range");
    if (p_.computations[p_.entry].frame_size != p_.arena_size)
      return Status::Error(std::string(file_) + ": arena size " + std::to_string(p_.arena_size) +
                           " is not the entry computation's frame (" +
                           std::to_string(p_.computations[p_.entry].frame_size) + ")");
    return OkStatus();
  }

 private:
  Status ReadString(Reader& r, std::string_view& out) {
    size_t at = r.pos();
    uint32_t off, len;
    NHLO_TRY(r.Read(off, "string reference"));
    NHLO_TRY(r.Read(len, "string reference"));
    if (off > strings_.size() || len > strings_.size() - off)
      return r.ErrorAt(at, "string reference outside the string table");
    out = strings_.substr(off, len);
    return OkStatus();
  }

  // Reads `count` buffer records of computation `c` from `r` (which is positioned at them).
  Status ReadBuffers(Reader& r, ComputationRecord& c, uint32_t count) {
    c.buffers.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      BufferRecord& b = c.buffers[i];
      b.file_offset = r.offset();
      size_t at = r.pos();
      uint8_t type, kind;
      uint32_t rank, tuple_count;
      NHLO_TRY(ReadString(r, b.name));
      NHLO_TRY(r.Read(type, "buffer"));
      NHLO_TRY(r.Read(b.backend_dtype, "buffer"));
      NHLO_TRY(r.Read(b.wire_tag, "buffer"));
      NHLO_TRY(r.Read(kind, "buffer"));
      NHLO_TRY(r.Read(rank, "buffer"));
      NHLO_TRY(r.Read(b.stride, "buffer"));
      NHLO_TRY(r.Read(tuple_count, "buffer"));
      NHLO_TRY(r.Read(b.size, "buffer"));
      NHLO_TRY(r.Read(b.location, "buffer"));
      std::string where = "buffer " + std::to_string(i) + " of '" + std::string(c.name) + "'";
      auto type_or = PrimitiveTypeFromCode(type);
      if (!type_or) return r.ErrorAt(at, where + " has unknown element type code " + std::to_string(type));
      b.type = *type_or;
      bool has_dim_kinds = (kind & kBufferHasDimKinds) != 0;
      kind &= static_cast<uint8_t>(~kBufferHasDimKinds);
      if (kind > 3) return r.ErrorAt(at, where + " has unknown kind " + std::to_string(kind));
      b.kind = static_cast<BufferKind>(kind);
      if (b.backend_dtype != kNoDtype) {
        Result<BackendDtype> dt = BackendDtypeFromOrdinal(b.backend_dtype);
        if (!dt.ok()) return r.ErrorAt(at, where + ": " + dt.status().message());
        uint8_t want = WireTag(*dt, p_.arch == TargetArch::kV3 ? Arch::kV3 : Arch::kV4);
        if (b.wire_tag != want)
          return r.ErrorAt(at, where + " has wire tag " + std::to_string(b.wire_tag) + " but its dtype " +
                                   std::string(BackendDtypeName(*dt)) + " has " + std::to_string(want));
      } else if (b.wire_tag != kNoDtype) {
        return r.ErrorAt(at, where + " has a wire tag but no dtype");
      }
      if (static_cast<uint64_t>(rank) * 8 > r.size() - r.pos() ||
          static_cast<uint64_t>(tuple_count) * 4 > r.size() - r.pos())
        return r.ErrorAt(at, where + " has more dimensions or tuple elements than its section holds");
      if (b.type == PrimitiveType::kTuple) {
        if (rank != 0) return r.ErrorAt(at, where + " is a tuple with dimensions");
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
        if (e >= i)
          return r.ErrorAt(at, where + " lists tuple element " + std::to_string(e) + ", which does not precede it");
        BufferKind element = c.buffers[e].kind;
        if (element != b.kind && !(b.kind == BufferKind::kTemp && element == BufferKind::kAlias))
          return r.ErrorAt(at, where + " mixes buffer kinds in its tuple");
      }
      bool unbounded = false;
      if (has_dim_kinds) {
        if (rank == 0) return r.ErrorAt(at, where + " lists dimension kinds but has no dimensions");
        b.dim_kinds.resize(rank);
        for (size_t k = 0; k < rank; ++k) {
          NHLO_TRY(r.Read(b.dim_kinds[k], "dimension kinds"));
          if (b.dim_kinds[k] > 2)
            return r.ErrorAt(at, where + " has unknown dimension kind " + std::to_string(b.dim_kinds[k]));
          if (b.dim_kinds[k] == 2) {
            if (b.dims[k] != 0) return r.ErrorAt(at, where + " gives an unbounded dimension a size");
            unbounded = true;
          }
        }
      }
      NHLO_TRY(r.AlignTo(8, "buffer padding"));
      if (IsArrayType(b.type)) {
        int64_t n = b.ElementCount();
        if (n < 0 || static_cast<uint64_t>(n) > UINT64_MAX / 16 ||
            (unbounded ? 0 : static_cast<uint64_t>(n) * HostByteSize(b.type)) != b.size)
          return r.ErrorAt(at, where + " size " + std::to_string(b.size) + " does not match its dimensions");
        if (b.kind == BufferKind::kTemp && (b.location > c.frame_size || b.size > c.frame_size - b.location))
          return r.ErrorAt(at, where + " lies outside its computation's frame");
        if (b.kind == BufferKind::kConstant) {
          uint64_t packed = PackedConstantBytes(b.type, n);
          if (b.location > p_.constants.size() || packed > p_.constants.size() - b.location)
            return r.ErrorAt(at, where + " lies outside the constant section");
        }
      } else if (b.size != 0 || !b.dims.empty()) {
        return r.ErrorAt(at, where + " of type " + std::string(PrimitiveTypeName(b.type)) + " cannot hold data");
      } else if (b.kind == BufferKind::kConstant && b.location > p_.constants.size()) {
        // A token constant holds no data, but its location is still an offset into the section.
        return r.ErrorAt(at, where + " lies outside the constant section");
      }
      // A token or tuple temp holds no bytes, but the interpreter still forms base + location
      // for it: that must stay inside the frame too (a fuzz-bundle finding).
      if (b.kind == BufferKind::kTemp && !IsArrayType(b.type) && b.location > c.frame_size)
        return r.ErrorAt(at, where + " lies outside its computation's frame");
      if (b.kind == BufferKind::kParameter && b.location > INT32_MAX)
        return r.ErrorAt(at, where + " has an impossible parameter number");
      if (b.kind == BufferKind::kAlias) NHLO_TRY(CheckAlias(r, at, where, c, b, i));
    }
    return OkStatus();
  }

  // An alias shares the bytes of an earlier parameter or constant array of the same size; the
  // interpreter resolves it with one lookup, so the target is never an alias itself. Values of
  // bounded dynamic shape carry runtime sizes per buffer and are never aliased.
  static Status CheckAlias(const Reader& r, size_t at, const std::string& where, const ComputationRecord& c,
                           const BufferRecord& b, uint32_t index) {
    if (!IsArrayType(b.type) || !b.dim_kinds.empty())
      return r.ErrorAt(at, where + " is an alias but not an array of static shape");
    if (b.location >= index)
      return r.ErrorAt(at, where + " aliases buffer " + std::to_string(b.location) + ", which does not precede it");
    const BufferRecord& target = c.buffers[static_cast<size_t>(b.location)];
    if ((target.kind != BufferKind::kParameter && target.kind != BufferKind::kConstant) || !IsArrayType(target.type) ||
        !target.dim_kinds.empty() || target.size != b.size)
      return r.ErrorAt(at, where + " aliases buffer " + std::to_string(b.location) +
                               ", which is not a parameter or constant array of its size");
    return OkStatus();
  }

  Status ReadComputations(Reader r, Reader buffers, std::string_view code, uint32_t code_base) {
    uint32_t count, buffer_count;
    NHLO_TRY(r.Read(count, "computation count"));
    NHLO_TRY(buffers.Read(buffer_count, "buffer count"));
    if (static_cast<uint64_t>(count) * kComputationFixedSize > r.size())
      return r.Error("computation count does not fit in its section");
    if (static_cast<uint64_t>(buffer_count) * kBufferFixedSize > buffers.size())
      return buffers.Error("buffer count " + std::to_string(buffer_count) + " does not fit in the buffer section");
    p_.buffer_count = buffer_count;
    p_.computations.resize(count);
    uint32_t next_buffer = 0;
    for (uint32_t i = 0; i < count; ++i) {
      ComputationRecord& c = p_.computations[i];
      c.file_offset = r.offset();
      size_t at = r.pos();
      uint32_t nbuffers, bundle_count, offset, size, nparams, reserved;
      NHLO_TRY(ReadString(r, c.name));
      NHLO_TRY(r.Read(c.first_buffer, "computation"));
      NHLO_TRY(r.Read(nbuffers, "computation"));
      NHLO_TRY(r.Read(c.root, "computation"));
      NHLO_TRY(r.Read(bundle_count, "computation"));
      NHLO_TRY(r.Read(offset, "computation"));
      NHLO_TRY(r.Read(size, "computation"));
      NHLO_TRY(r.Read(c.frame_size, "computation"));
      NHLO_TRY(r.Read(c.live_bytes_bound, "computation"));
      NHLO_TRY(r.Read(nparams, "computation"));
      NHLO_TRY(r.Read(reserved, "computation"));
      std::string where = "computation '" + std::string(c.name) + "'";
      if (c.first_buffer != next_buffer || nbuffers > buffer_count - next_buffer)
        return r.ErrorAt(at, where + " claims buffers " + std::to_string(c.first_buffer) + ".." +
                                 std::to_string(static_cast<uint64_t>(c.first_buffer) + nbuffers) +
                                 ", not the next ones of the buffer table");
      next_buffer += nbuffers;
      if (static_cast<uint64_t>(nparams) * 4 > r.size() - r.pos()) return r.ErrorAt(at, "impossible parameter count");
      NHLO_TRY(ReadBuffers(buffers, c, nbuffers));
      c.params.resize(nparams);
      for (uint32_t& pb : c.params) {
        NHLO_TRY(r.Read(pb, "parameter list"));
        if (pb >= c.buffers.size() || c.buffers[pb].kind != BufferKind::kParameter)
          return r.ErrorAt(at, where + " names a parameter buffer that is not a parameter");
      }
      NHLO_TRY(r.AlignTo(8, "computation padding"));
      if (c.root >= c.buffers.size()) return r.ErrorAt(at, where + ": root buffer index out of range");
      if (offset > code.size() || size > code.size() - offset)
        return r.ErrorAt(at, "bundle stream lies outside the code section");
      if (static_cast<uint64_t>(bundle_count) * kBundleFixedSize > size)
        return r.ErrorAt(at, "bundle count does not fit in the bundle stream");
      c.code_offset = code_base + offset;
      c.code_size = size;
      Reader br(code.substr(offset, size), code_base + offset, file_);
      c.bundles.resize(bundle_count);
      for (BundleRecord& b : c.bundles) NHLO_TRY(ReadBundle(br, c, i, b));
      if (br.pos() != br.size())
        return br.Error("trailing bytes after the last bundle of '" + std::string(c.name) + "'");
    }
    if (next_buffer != buffer_count) return buffers.Error("buffers after the last computation's");
    if (buffers.pos() != buffers.size()) return buffers.Error("trailing bytes after the last buffer");
    if (r.pos() != r.size()) return r.Error("trailing bytes after the last computation");
    return OkStatus();
  }

  Status ReadBundle(Reader& r, const ComputationRecord& c, uint32_t comp_index, BundleRecord& b) {
    b.file_offset = r.offset();
    size_t start = r.pos();
    uint16_t opcode, reserved16;
    uint32_t size, noperands, nattrs;
    uint8_t reserved8;
    NHLO_TRY(r.Read(opcode, "bundle"));
    NHLO_TRY(r.Read(reserved16, "bundle"));
    NHLO_TRY(r.Read(size, "bundle"));
    NHLO_TRY(r.Read(b.result, "bundle"));
    NHLO_TRY(r.Read(noperands, "bundle"));
    NHLO_TRY(r.Read(nattrs, "bundle"));
    NHLO_TRY(r.Read(b.result_tag, "bundle"));
    NHLO_TRY(r.Read(reserved8, "bundle"));
    NHLO_TRY(r.Read(reserved16, "bundle"));
    NHLO_TRY(r.Read(b.callee_frame, "bundle"));
    b.size = size;
    std::optional<Opcode> op = OpcodeFromWireCode(opcode);
    if (!op) return r.ErrorAt(start, "unknown opcode code " + std::to_string(opcode));
    b.opcode = *op;
    if (size < kBundleFixedSize || size % 4 != 0 || size > r.size() - start)
      return r.ErrorAt(start, "bundle size " + std::to_string(size) + " is invalid");
    Reader body(r.Slice(start, size), r.offset() - static_cast<uint32_t>(r.pos() - start), file_);
    body.set_pos(r.pos() - start);
    if (b.result >= c.buffers.size())
      return r.ErrorAt(start, "result buffer " + std::to_string(b.result) + " is out of range");
    if (b.result_tag != c.buffers[b.result].wire_tag)
      return r.ErrorAt(start, "result wire tag does not match the buffer table");
    if (static_cast<uint64_t>(noperands) * 5 > size || static_cast<uint64_t>(nattrs) * kAttrHeaderSize > size)
      return r.ErrorAt(start, "operand or attribute count does not fit in the bundle");
    b.operands.resize(noperands);
    for (uint32_t& o : b.operands) {
      NHLO_TRY(body.Read(o, "bundle operands"));
      if (o >= c.buffers.size()) return r.ErrorAt(start, "operand buffer " + std::to_string(o) + " is out of range");
    }
    b.operand_tags.resize(noperands);
    for (size_t i = 0; i < noperands; ++i) {
      NHLO_TRY(body.Read(b.operand_tags[i], "bundle operand tags"));
      if (b.operand_tags[i] != c.buffers[b.operands[i]].wire_tag)
        return r.ErrorAt(start, "operand wire tag does not match the buffer table");
    }
    NHLO_TRY(body.AlignTo(4, "bundle padding"));
    b.attrs.resize(nattrs);
    uint64_t callee_frame_end = 0;
    for (AttrRecord& a : b.attrs) {
      NHLO_TRY(ReadAttr(body, a, comp_index));
      for (uint32_t callee : a.computations()) {
        const ComputationRecord& f = p_.computations[callee];
        callee_frame_end = std::max(callee_frame_end, f.frame_size);
      }
    }
    if (body.pos() != body.size()) return r.ErrorAt(start, "bundle size field does not match its contents");
    if (std::optional<AttrId> missing = FillDimensionNumbers(b))
      return r.ErrorAt(start, "bundle '" + std::string(OpcodeName(b.opcode)) + "' has no attribute '" +
                                  std::string(AttrName(*missing)) + "', which its dimension numbers need");
    if (b.opcode == Opcode::kCustomCall) {
      // The typed config, decoded here once; a config that does not decode is reported when
      // the interpreter lowers the call (the bundle itself is well formed).
      const AttrRecord* target = b.Find(AttrId::kCustomCallTarget);
      const AttrRecord* config = b.Find(AttrId::kBackendConfig);
      CustomCallOperands operands;
      for (uint32_t o : b.operands)
        operands.ranks.push_back(IsArrayType(c.buffers[o].type) ? static_cast<int64_t>(c.buffers[o].dims.size()) : -1);
      bool calls = false;
      for (const AttrRecord& a : b.attrs) calls |= !a.computations().empty();
      b.config = std::make_shared<const CustomCallConfig>(DecodeCustomCallConfig(
          target ? target->text() : std::string_view(), calls, config ? config->text() : std::string_view(), operands));
    }
    // The callees run in [callee_frame, callee_frame + their frame) of this computation's frame.
    if (b.callee_frame > c.frame_size || callee_frame_end > c.frame_size - b.callee_frame)
      return r.ErrorAt(start, "the callees' frame does not fit in the frame of '" + std::string(c.name) + "'");
    r.set_pos(start + size);
    return OkStatus();
  }

  // The reader's side of codegen/attr_layout.h: each field read from the payload and checked.
  struct ReadFields {
    static constexpr bool kDecoding = true;
    static constexpr const char* kWhat = "attribute payload";
    Decoder& decoder;
    Reader& r;
    size_t at;   // the attribute's header, where errors point
    size_t end;  // the end of its payload
    const std::string& name;
    uint32_t comp_index;

    Status Invalid(const std::string& message) { return r.ErrorAt(at, "attribute '" + name + "' " + message); }
    Status U8Named(FieldName, uint8_t& v, std::string_view) { return r.Read(v, kWhat); }
    Status U32(FieldName, uint32_t& v) { return r.Read(v, kWhat); }
    Status I64(FieldName, int64_t& v) { return r.Read(v, kWhat); }
    Status F64(FieldName, double& v) { return r.Read(v, kWhat); }
    Status Bool(FieldName, bool& v) {
      uint8_t byte;
      NHLO_TRY(r.Read(byte, kWhat));
      if (byte > 1) return Invalid("is a bool of value " + std::to_string(byte));
      v = byte != 0;
      return OkStatus();
    }
    Status Flag(FieldName, bool& v) {
      uint8_t byte;
      NHLO_TRY(r.Read(byte, kWhat));
      v = byte != 0;
      return OkStatus();
    }
    Status Bool64(FieldName, bool& v) {
      int64_t word;
      NHLO_TRY(r.Read(word, kWhat));
      if (word != 0 && word != 1) return r.ErrorAt(at, "window reversal must be 0 or 1");
      v = word == 1;
      return OkStatus();
    }
    Status Enum(FieldName, AttrId id, int64_t& v) {
      uint8_t code;
      NHLO_TRY(r.Read(code, kWhat));
      if (EnumValueName(EnumSetOf(id), code).empty()) return Invalid("has unknown value code " + std::to_string(code));
      if (id == AttrId::kOperandPrecision && code == static_cast<uint8_t>(Precision::kPackedNibble))
        return Invalid("holds packed_nibble, an old form the parser lowers, which no file holds");
      v = code;
      return OkStatus();
    }
    Status Text(FieldName, std::string_view& s) { return decoder.ReadString(r, s); }
    Status Callee(FieldName, uint32_t& c) {
      NHLO_TRY(r.Read(c, kWhat));
      // Callees come before their callers, so no file can make a computation call itself.
      if (c >= comp_index)
        return Invalid("calls computation " + std::to_string(c) + ", which does not precede its caller");
      return OkStatus();
    }
    Status Count(FieldName, size_t element_bytes, uint32_t& n) {
      NHLO_TRY(r.Read(n, kWhat));
      if (r.pos() > end || static_cast<uint64_t>(n) * element_bytes > end - r.pos())
        return r.Error(std::string(kWhat) + " is longer than its payload");
      return OkStatus();
    }
    Status Reserved(size_t bytes) {
      for (size_t i = 0; i < bytes; ++i) {
        uint8_t ignored;
        NHLO_TRY(r.Read(ignored, kWhat));
      }
      return OkStatus();
    }
  };

  // Without a `?` label each shape's labels are a permutation of its dimensions (batch,
  // feature, spatial...), which the interpreter indexes with.
  static Status CheckDimLabels(const Reader& r, size_t at, const ConvDimLabels& l) {
    if (l.has_unknown) return OkStatus();
    const size_t spatial = l.input_spatial.size();
    auto permutation = [&](size_t rank, std::initializer_list<int64_t> fixed, const SpatialDims& dims) {
      if (rank != spatial + 2) return false;
      uint64_t seen = 0;
      auto take = [&](int64_t v) {
        if (v < 0 || v >= static_cast<int64_t>(rank) || (seen >> v & 1)) return false;
        seen |= uint64_t{1} << v;
        return true;
      };
      for (int64_t v : fixed)
        if (!take(v)) return false;
      for (int64_t v : dims)
        if (!take(v)) return false;
      return true;
    };
    if (!permutation(l.input_rank, {l.input_batch, l.input_feature}, l.input_spatial) ||
        !permutation(l.kernel_rank, {l.kernel_input_feature, l.kernel_output_feature}, l.kernel_spatial) ||
        !permutation(l.output_rank, {l.output_batch, l.output_feature}, l.output_spatial))
      return r.ErrorAt(at, "dim_labels are not a permutation of the dimensions of each shape");
    return OkStatus();
  }

  static Status CheckReplicaGroups(const Reader& r, size_t at, const ReplicaGroupsRecord& g) {
    if (g.mesh) return OkStatus();
    if (g.iota) {
      if (const char* problem = IotaDeviceListProblem(g.num_groups, g.group_size, g.reshape_dims, g.transpose))
        return r.ErrorAt(at, std::string("replica_groups: ") + problem);
      return OkStatus();
    }
    uint64_t total = 0;
    for (int64_t n : g.group_sizes) {
      if (n < 0) return r.ErrorAt(at, "replica_groups has a negative group size");
      total += static_cast<uint64_t>(n);
    }
    if (total != g.ids.size()) return r.ErrorAt(at, "replica_groups sizes do not add up to its members");
    return OkStatus();
  }

  Status ReadAttr(Reader& r, AttrRecord& a, uint32_t comp_index) {
    size_t at = r.pos();
    a.file_offset = r.offset();
    uint16_t code;
    uint8_t kind, reserved;
    uint32_t payload;
    NHLO_TRY(r.Read(code, "attribute"));
    NHLO_TRY(r.Read(kind, "attribute"));
    NHLO_TRY(r.Read(reserved, "attribute"));
    NHLO_TRY(r.Read(payload, "attribute"));
    std::optional<AttrId> id = AttrFromWireCode(code);
    if (!id) return r.ErrorAt(at, "unknown attribute code " + std::to_string(code));
    if (kind >= kAttrKindCount) return r.ErrorAt(at, "unknown attribute kind " + std::to_string(kind));
    a.id = *id;
    a.kind = static_cast<AttrKind>(kind);
    a.payload_size = payload;
    std::string name(AttrName(a.id));
    AttrKind declared = AttrDeclaredKind(a.id);
    // A declared integer list may hold a list of lists in the IR (kept as Raw), never encoded.
    if (a.kind != declared)
      return r.ErrorAt(at, "attribute '" + name + "' has kind " + std::to_string(kind) + ", not its declared kind");
    size_t start = r.pos();
    if (payload > r.size() - start) return r.ErrorAt(at, "attribute '" + name + "' is longer than its bundle");
    size_t end = start + payload;
    ReadFields fields{*this, r, at, end, name, comp_index};
    NHLO_TRY(AttrPayload(fields, a));
    if (a.kind == AttrKind::DimLabels) NHLO_TRY(CheckDimLabels(r, at, a.dim_labels()));
    if (a.kind == AttrKind::ReplicaGroups) NHLO_TRY(CheckReplicaGroups(r, at, a.replica_groups()));
    if (r.pos() != end) return r.ErrorAt(at, "attribute '" + name + "' payload size does not match its contents");
    NHLO_TRY(r.AlignTo(4, "attribute padding"));
    return OkStatus();
  }

  BundleProgram& p_;
  std::string_view file_;
  std::string_view strings_;
};

}  // namespace

std::optional<AttrId> FillDimensionNumbers(BundleRecord& record) {
  std::optional<AttrId> missing;
  DimensionNumbers dims = MakeDimensionNumbers(record.opcode, RecordAttrs{record}, missing);
  record.dims = std::holds_alternative<std::monostate>(dims) ? nullptr : std::make_unique<DimensionNumbers>(dims);
  return missing;
}

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
