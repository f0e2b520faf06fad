// SPDX-License-Identifier: Apache-2.0
// nhlo-objdump -x: the annotated hex dump of a bundle file, in the manner of `wat2wasm -v`.
//
// It decodes nothing itself. Where each record starts comes from the decoded program
// (SectionRecord, BufferRecord/ComputationRecord/BundleRecord/AttrRecord::file_offset, the
// string views into the file); the fields inside a record are walked by the format's layout,
// in the order bundle_writer.cc writes them and bundle_reader.cc reads them, and every numeric
// field's decoded value is compared with its bytes, so a walk that went astray prints
// `DUMP ERROR` instead of a plausible lie. The records are sorted by file offset and printed
// with one cursor: bytes no record claims print as padding (or `unreferenced` if they are not
// the zeros of an alignment), and bytes that two records claim print once, under the first. So
// every byte appears exactly once, in order, whatever the reader accepted.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/attr_layout.h"
#include "codegen/objdump.h"
#include "support/escape.h"
#include "types/element.h"

namespace nhlo {
namespace {

constexpr size_t kRowBytes = 16;        // bytes per line; longer runs wrap
constexpr size_t kMaxAlignPadding = 8;  // the largest alignment the format pads to
constexpr size_t kPreview = 48;         // characters of a string or attribute shown in a value
// Field-name column: the longest fixed name ("kernel output feature"), and the longest name
// that carries an index ("[i] window dilation") without its digits.
constexpr size_t kFixedNameWidth = 21;
constexpr size_t kIndexedNameWidth = 18;

size_t Digits(uint64_t v, unsigned base) {
  size_t n = 1;
  while (v >= base) v /= base, ++n;
  return n;
}

std::string Dec(uint64_t v) { return std::to_string(v); }
std::string SDec(int64_t v) { return std::to_string(v); }
std::string Hex(uint64_t v, int digits = 1) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}
// "f32 (11)"
std::string Named(std::string_view name, int64_t code) {
  std::string s(name);
  s += " (" + std::to_string(code) + ")";
  return s;
}
// "1 byte", "2 bytes"
std::string Count(uint64_t n, std::string_view unit) {
  std::string s = std::to_string(n) + " ";
  s += unit;
  if (n != 1) s += 's';
  return s;
}
std::string Idx(std::string_view name, size_t i) {
  std::string s(name);
  s += '[';
  s += std::to_string(i);
  s += ']';
  return s;
}

// A string shown in a value or a heading: escaped, cut to kPreview characters.
std::string Preview(std::string_view s) {
  std::string e = CEscape(s.substr(0, kPreview));
  std::string out = "\"" + e + "\"";
  if (s.size() > kPreview) out += "...";
  return out;
}
std::string Cut(std::string s) {
  if (s.size() > 2 * kPreview) {
    s.resize(2 * kPreview);
    s += "...";
  }
  return s;
}

std::string TagText(uint8_t tag) { return tag == kNoDtype ? "none (0xff)" : Hex(tag, 2); }

std::string AttrKindName(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "int";
    case AttrKind::Bool: return "bool";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ident: return "ident";
    case AttrKind::IntList: return "int list";
    case AttrKind::Computation: return "computation";
    case AttrKind::ComputationList: return "computation list";
    case AttrKind::InstructionList: return "instruction list";
    case AttrKind::Shape: return "shape";
    case AttrKind::Raw: return "raw";
    case AttrKind::Config: return "config";
    case AttrKind::Literal: return "literal";
    case AttrKind::Window: return "window";
    case AttrKind::SliceRanges: return "slice ranges";
    case AttrKind::PaddingConfig: return "padding config";
    case AttrKind::DimLabels: return "dim labels";
    case AttrKind::Enum: return "enum";
    case AttrKind::EnumList: return "enum list";
    case AttrKind::ReplicaGroups: return "replica groups";
    case AttrKind::PairList: return "pair list";
    case AttrKind::KeyValues: return "key/value list";
    case AttrKind::ShapeList: return "shape list";
    case AttrKind::BoolList: return "bool list";
  }
  return "unknown";
}

std::string ShapeText(const BufferRecord& b) {
  std::string s;
  if (b.type == PrimitiveType::kTuple) {
    s = "(";
    for (size_t i = 0; i < b.tuple.size(); ++i) s += (i ? ", #" : "#") + Dec(b.tuple[i]);
    return s + ")";
  }
  return ArrayShapeText(b.type, b.dims, b.dim_kinds);
}

// The records of the file, each at its offset; printed in offset order.
struct Block {
  enum Kind : uint8_t {
    kHeader,
    kSectionTable,
    kSection,
    kString,
    kBufferCount,
    kBuffer,
    kConstant,
    kComputationCount,
    kComputation,
    kStream,
    kBundle,
    kModule
  };
  uint64_t offset;
  Kind kind;
  uint32_t a = 0, b = 0;  // computation and record index; string: length
};

class HexDumper {
 public:
  HexDumper(const BundleProgram& p, std::ostream& os) : p_(p), os_(os), bytes_(p.bytes) {
    offset_width_ = Digits(std::max<size_t>(bytes_.size(), 1), 16);
    index_width_ = Digits(LargestIndex(), 10);
    name_width_ = std::max(kFixedNameWidth, kIndexedNameWidth + index_width_);
    for (size_t i = 0; i < p_.sections.size(); ++i)
      if (p_.sections[i].id == SectionId::kStrings) strings_base_ = p_.sections[i].offset;
    out_.reserve(kFlushAt + 4096);
  }

  // Returns the number of fields whose bytes disagree with the decoded value.
  size_t Run(std::string_view file_name) {
    out_ += "; " + std::string(file_name) + ": " + Count(bytes_.size(), "byte") + ", nhlo bundle file version " +
            Dec(p_.version) + "\n";
    std::vector<Block> blocks = CollectBlocks();
    std::stable_sort(blocks.begin(), blocks.end(), [](const Block& x, const Block& y) { return x.offset < y.offset; });
    for (const Block& b : blocks) Print(b);
    Gap(bytes_.size());
    out_ += "; end of file\n";
    Flush();
    return dump_errors_;
  }

 private:
  static constexpr size_t kFlushAt = 1 << 20;

  // The largest index any field name or heading shows, for the column widths.
  uint64_t LargestIndex() const {
    uint64_t m = std::max<uint64_t>({p_.sections.size(), p_.computations.size(), p_.buffer_count});
    for (const ComputationRecord& c : p_.computations) {
      m = std::max<uint64_t>({m, c.buffers.size(), c.bundles.size(), c.params.size()});
      for (const BufferRecord& b : c.buffers) m = std::max<uint64_t>({m, b.dims.size(), b.tuple.size()});
      for (const BundleRecord& b : c.bundles) {
        m = std::max<uint64_t>({m, b.operands.size(), b.attrs.size()});
        for (const AttrRecord& a : b.attrs) {
          const ReplicaGroupsRecord& g = a.replica_groups();
          m = std::max<uint64_t>({m, a.ints().size(), a.computations().size(), a.window().size(), a.slices().size(),
                                  a.padding().size(), a.dim_labels().input_spatial.size(), g.ids.size(),
                                  g.group_sizes.size(), g.reshape_dims.size(), g.transpose.size()});
        }
      }
    }
    return m == 0 ? 0 : m - 1;
  }

  std::vector<Block> CollectBlocks() const {
    std::vector<Block> blocks;
    blocks.push_back({0, Block::kHeader});
    blocks.push_back({kHeaderSize, Block::kSectionTable});
    // Every string the program refers to, once; the strings section prints as these.
    std::vector<std::pair<uint64_t, uint32_t>> strings;
    auto add_string = [&](std::string_view s) {
      if (!s.empty()) strings.emplace_back(Where(s), static_cast<uint32_t>(s.size()));
    };
    add_string(p_.module_name);
    for (const ComputationRecord& c : p_.computations) {
      add_string(c.name);
      for (const BufferRecord& b : c.buffers) add_string(b.name);
      for (const BundleRecord& b : c.bundles)
        for (const AttrRecord& a : b.attrs) add_string(a.text());
    }
    std::sort(strings.begin(), strings.end());
    strings.erase(std::unique(strings.begin(), strings.end()), strings.end());

    for (uint32_t s = 0; s < p_.sections.size(); ++s) {
      const SectionRecord& sec = p_.sections[s];
      blocks.push_back({sec.offset, Block::kSection, s});
      switch (sec.id) {
        case SectionId::kStrings:
          for (const auto& [at, len] : strings) blocks.push_back({at, Block::kString, 0, len});
          break;
        case SectionId::kBuffers:
          blocks.push_back({sec.offset, Block::kBufferCount});
          for (uint32_t c = 0; c < p_.computations.size(); ++c)
            for (uint32_t i = 0; i < p_.computations[c].buffers.size(); ++i)
              blocks.push_back({p_.computations[c].buffers[i].file_offset, Block::kBuffer, c, i});
          break;
        case SectionId::kConstants:
          for (uint32_t c = 0; c < p_.computations.size(); ++c)
            for (uint32_t i = 0; i < p_.computations[c].buffers.size(); ++i) {
              const BufferRecord& b = p_.computations[c].buffers[i];
              if (b.kind == BufferKind::kConstant && IsArrayType(b.type))
                blocks.push_back({sec.offset + b.location, Block::kConstant, c, i});
            }
          break;
        case SectionId::kComputations:
          blocks.push_back({sec.offset, Block::kComputationCount});
          for (uint32_t c = 0; c < p_.computations.size(); ++c)
            blocks.push_back({p_.computations[c].file_offset, Block::kComputation, c});
          break;
        case SectionId::kCode:
          for (uint32_t c = 0; c < p_.computations.size(); ++c) {
            blocks.push_back({p_.computations[c].code_offset, Block::kStream, c});
            for (uint32_t i = 0; i < p_.computations[c].bundles.size(); ++i)
              blocks.push_back({p_.computations[c].bundles[i].file_offset, Block::kBundle, c, i});
          }
          break;
        case SectionId::kModule: blocks.push_back({sec.offset, Block::kModule}); break;
      }
    }
    return blocks;
  }

  // File offset of a string view into the program's bytes.
  uint64_t Where(std::string_view s) const { return static_cast<uint64_t>(s.data() - bytes_.data()); }

  void Print(const Block& blk) {
    switch (blk.kind) {
      case Block::kHeader: return Header();
      case Block::kSectionTable: return SectionTable();
      case Block::kSection: {
        const SectionRecord& s = p_.sections[blk.a];
        return Label(s.offset, "section " + Dec(static_cast<uint32_t>(s.id)) + " " + std::string(SectionName(s.id)) +
                                   ": " + Count(s.size, "byte") + " at " + Hex(s.offset));
      }
      case Block::kString: return String(blk.offset, blk.b);
      case Block::kBufferCount: {
        uint64_t at = blk.offset;
        return U32(at, "buffer count", p_.buffer_count, Dec(p_.buffer_count));
      }
      case Block::kBuffer: return Buffer(blk.a, blk.b);
      case Block::kConstant: return Constant(blk.a, blk.b);
      case Block::kComputationCount: {
        uint64_t at = blk.offset;
        return U32(at, "computation count", p_.computations.size(), Dec(p_.computations.size()));
      }
      case Block::kComputation: return Computation(blk.a);
      case Block::kStream: {
        const ComputationRecord& c = p_.computations[blk.a];
        return Label(c.code_offset, "bundles of computation " + Index(blk.a) + " '" + std::string(c.name) +
                                        "': " + Count(c.bundles.size(), "bundle") + ", " + Count(c.code_size, "byte"));
      }
      case Block::kBundle: return Bundle(blk.a, blk.b);
      case Block::kModule: return Module(blk.offset);
    }
  }

  // ----- records

  void Header() {
    Label(0, "header");
    uint64_t at = 0;
    Field(at, 8, "magic", Preview(bytes_.substr(0, 8)));
    at += 8;
    U16(at, "version", p_.version, Dec(p_.version));
    U8(at, "target arch", static_cast<uint8_t>(p_.arch), "v" + Dec(static_cast<uint8_t>(p_.arch)));
    std::string flag_names = std::string(p_.flags & kFlagDeviceOnly ? ", device-only" : "") +
                             (p_.flags & kFlagStatesOneDevice ? ", one device stated" : "");
    U8(at, "flags", p_.flags,
       flag_names.empty() ? Hex(p_.flags, 2) : Hex(p_.flags, 2) + " (" + flag_names.substr(2) + ")");
    U32(at, "file size", bytes_.size(), Dec(bytes_.size()));
    U32(at, "checksum", p_.checksum, Hex(p_.checksum, 8));
    U32(at, "section count", p_.sections.size(), Dec(p_.sections.size()));
  }

  void SectionTable() {
    Label(kHeaderSize, "section table");
    uint64_t at = kHeaderSize;
    for (const SectionRecord& s : p_.sections) {
      std::string name(SectionName(s.id));
      U32(at, name + " id", static_cast<uint32_t>(s.id), Dec(static_cast<uint32_t>(s.id)));
      U32(at, name + " offset", s.offset, Hex(s.offset));
      U32(at, name + " size", s.size, Dec(s.size));
    }
  }

  // A string of the strings section, its text beside each line of bytes.
  void String(uint64_t at, uint32_t len) {
    std::string_view s = bytes_.substr(at, len);
    for (size_t row = 0; row < s.size(); row += kRowBytes) {
      std::string_view chunk = s.substr(row, kRowBytes);
      std::string text = row == 0 ? "\"" : " ";
      text += CEscape(chunk);
      if (row + kRowBytes >= s.size()) text += '"';
      Field(at + row, chunk.size(), row == 0 ? "string" : "", text);
    }
  }

  std::string BufferText(const ComputationRecord& c, uint32_t i) const {
    if (i >= c.buffers.size()) return "#" + Dec(i);
    return "#" + Dec(i) + " " + std::string(c.buffers[i].name);
  }

  std::string Index(uint64_t i) const {
    std::string s = Dec(i);
    return s.size() < index_width_ ? std::string(index_width_ - s.size(), ' ') + s : s;
  }

  void Buffer(uint32_t ci, uint32_t bi) {
    const ComputationRecord& c = p_.computations[ci];
    const BufferRecord& b = c.buffers[bi];
    uint64_t at = b.file_offset;
    Label(at, "buffer " + Index(bi) + " of '" + std::string(c.name) + "' (table entry " +
                  Dec(c.first_buffer + uint64_t{bi}) + "): " + std::string(b.name) + " " + ShapeText(b) + " " +
                  std::string(BufferKindName(b.kind)));
    StringRef(at, "name", b.name);
    U8(at, "element type", static_cast<uint8_t>(b.type),
       Named(PrimitiveTypeName(b.type), static_cast<uint8_t>(b.type)));
    U8(at, "backend dtype", b.backend_dtype,
       b.backend_dtype == kNoDtype
           ? "none (0xff, host-only)"
           : Named(BackendDtypeName(static_cast<BackendDtype>(b.backend_dtype)), b.backend_dtype));
    U8(at, "wire tag", b.wire_tag, TagText(b.wire_tag));
    uint8_t kind = static_cast<uint8_t>(static_cast<uint8_t>(b.kind) | (b.dim_kinds.empty() ? 0 : kBufferHasDimKinds));
    U8(at, "kind", kind, std::string(BufferKindName(b.kind)) + (b.dim_kinds.empty() ? "" : ", dimension kinds follow"));
    U32(at, "rank", b.dims.size(), Dec(b.dims.size()));
    U32(at, "stride", b.stride, Dec(b.stride));
    U32(at, "tuple count", b.tuple.size(), Dec(b.tuple.size()));
    U64(at, "size", b.size, Dec(b.size));
    std::string where = b.type == PrimitiveType::kTuple && b.kind != BufferKind::kParameter ? Dec(b.location)
                        : b.kind == BufferKind::kTemp      ? "frame offset " + Hex(b.location)
                        : b.kind == BufferKind::kParameter ? "parameter " + Dec(b.location)
                        : b.kind == BufferKind::kAlias
                            ? "the bytes of " + BufferText(c, static_cast<uint32_t>(b.location))
                            : "constants + " + Hex(b.location);
    U64(at, "location", b.location, where);
    for (size_t i = 0; i < b.dims.size(); ++i) I64(at, Idx("dims", i), b.dims[i]);
    for (size_t i = 0; i < b.tuple.size(); ++i) U32(at, Idx("tuple", i), b.tuple[i], BufferText(c, b.tuple[i]));
    static const char* const kDimKinds[] = {"static", "bounded", "unbounded"};
    for (size_t i = 0; i < b.dim_kinds.size(); ++i)
      U8(at, Idx("dim kinds", i), b.dim_kinds[i], b.dim_kinds[i] < 3 ? kDimKinds[b.dim_kinds[i]] : Dec(b.dim_kinds[i]));
  }

  // A constant's bytes, 16 a line, each line naming the buffer and the elements it holds.
  void Constant(uint32_t ci, uint32_t bi) {
    const ComputationRecord& c = p_.computations[ci];
    const BufferRecord& b = c.buffers[bi];
    int64_t count = b.ElementCount();
    uint64_t size = PackedConstantBytes(b.type, count);
    uint64_t base = p_.constants.data() - bytes_.data() + b.location;
    Label(base, "constant " + std::string(b.name) + " " + ShapeText(b) + " (buffer " + Dec(bi) + " of '" +
                    std::string(c.name) + "'): " + Count(size, "byte"));
    int bits = BitWidth(b.type);
    bool packed = bits > 0 && bits < 8;
    uint64_t element_bytes = packed ? 1 : static_cast<uint64_t>(HostByteSize(b.type));
    uint64_t per_byte = packed ? static_cast<uint64_t>(8 / bits) : 1;
    for (uint64_t row = 0; row < size; row += kRowBytes) {
      uint64_t end = std::min(size, row + kRowBytes);
      // Elements that start in this row.
      uint64_t first = packed ? row * per_byte : (row + element_bytes - 1) / element_bytes;
      uint64_t last = packed ? std::min<uint64_t>(static_cast<uint64_t>(count), end * per_byte)
                             : (end + element_bytes - 1) / element_bytes;
      std::string text(b.name);
      text += '[' + Dec(first) + (last - first > 1 ? ".." + Dec(last - 1) : "") + "] ";
      for (uint64_t e = first; e < last; ++e) {
        if (e > first) text += ", ";
        uint8_t element[16] = {};
        if (packed) {
          uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
          uint8_t v = (static_cast<uint8_t>(bytes_[base + e / per_byte]) >> (bits * (e % per_byte))) & mask;
          if (IsSignedInt(b.type) && (v & (1u << (bits - 1)))) v |= static_cast<uint8_t>(~mask);
          element[0] = v;
        } else {
          std::memcpy(element, bytes_.data() + base + e * element_bytes,
                      std::min<uint64_t>(element_bytes, sizeof(element)));
        }
        AppendElement(text, b.type, element, true);
      }
      Field(base + row, end - row, "constant", text);
    }
  }

  void Computation(uint32_t ci) {
    const ComputationRecord& c = p_.computations[ci];
    uint64_t at = c.file_offset;
    Label(at, "computation " + Index(ci) + " '" + std::string(c.name) + "'" + (ci == p_.entry ? " (entry)" : ""));
    uint64_t code_base = 0;
    for (const SectionRecord& s : p_.sections)
      if (s.id == SectionId::kCode) code_base = s.offset;
    StringRef(at, "name", c.name);
    U32(at, "first buffer", c.first_buffer, Dec(c.first_buffer));
    U32(at, "buffer count", c.buffers.size(), Dec(c.buffers.size()));
    U32(at, "root", c.root, BufferText(c, c.root));
    U32(at, "bundle count", c.bundles.size(), Dec(c.bundles.size()));
    U32(at, "code offset", c.code_offset - code_base,
        "code + " + Hex(c.code_offset - code_base) + " (file " + Hex(c.code_offset) + ")");
    U32(at, "code size", c.code_size, Dec(c.code_size));
    U64(at, "frame size", c.frame_size, Dec(c.frame_size));
    U64(at, "live-bytes bound", c.live_bytes_bound, Dec(c.live_bytes_bound));
    U32(at, "param count", c.params.size(), Dec(c.params.size()));
    Reserved(at, 4);
    for (size_t i = 0; i < c.params.size(); ++i) U32(at, Idx("params", i), c.params[i], BufferText(c, c.params[i]));
  }

  void Bundle(uint32_t ci, uint32_t bi) {
    const ComputationRecord& c = p_.computations[ci];
    const BundleRecord& b = c.bundles[bi];
    uint64_t at = b.file_offset;
    std::string head = "bundle " + Index(bi) + " of '" + std::string(c.name) + "': " + BufferText(c, b.result) + " = " +
                       std::string(OpcodeName(b.opcode)) + "(";
    for (size_t i = 0; i < b.operands.size(); ++i) head += (i ? ", " : "") + BufferText(c, b.operands[i]);
    Label(at, head + ")");
    U16(at, "opcode", OpcodeWireCode(b.opcode), Named(OpcodeName(b.opcode), OpcodeWireCode(b.opcode)));
    Reserved(at, 2);
    U32(at, "size", b.size, Dec(b.size));
    U32(at, "result", b.result, BufferText(c, b.result));
    U32(at, "operand count", b.operands.size(), Dec(b.operands.size()));
    U32(at, "attribute count", b.attrs.size(), Dec(b.attrs.size()));
    U8(at, "result tag", b.result_tag, TagText(b.result_tag));
    Reserved(at, 1);
    Reserved(at, 2);
    U64(at, "callee frame", b.callee_frame, b.callee_frame ? "frame offset " + Hex(b.callee_frame) : "0");
    for (size_t i = 0; i < b.operands.size(); ++i)
      U32(at, Idx("operands", i), b.operands[i], BufferText(c, b.operands[i]));
    for (size_t i = 0; i < b.operand_tags.size(); ++i)
      U8(at, Idx("operand tags", i), b.operand_tags[i], TagText(b.operand_tags[i]));
    for (size_t i = 0; i < b.attrs.size(); ++i) Attr(i, b.attrs[i]);
  }

  // The dump's side of codegen/attr_layout.h: each field printed beside its bytes, checked
  // against the decoded value.
  struct HexFields {
    static constexpr bool kDecoding = false;
    HexDumper& d;
    uint64_t& at;

    static std::string Name(FieldName f) {
      std::string s;
      if (f.index >= 0 && f.index_first)
        s = Idx("", static_cast<size_t>(f.index)) + " " + std::string(f.name);
      else if (f.index >= 0)
        s = Idx(f.name, static_cast<size_t>(f.index));
      else
        s = std::string(f.name);
      return s + std::string(f.suffix);
    }
    Status Invalid(const std::string&) { return OkStatus(); }  // the reader accepted the record
    Status U8Named(FieldName f, uint8_t v, std::string_view description) {
      d.U8(at, Name(f), v, std::string(description));
      return OkStatus();
    }
    Status U32(FieldName f, uint32_t v) {
      d.U32(at, Name(f), v, Dec(v));
      return OkStatus();
    }
    Status I64(FieldName f, int64_t v) {
      d.I64(at, Name(f), v);
      return OkStatus();
    }
    Status F64(FieldName f, double v) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      std::string value;
      AppendElement(value, PrimitiveType::kF64, reinterpret_cast<const uint8_t*>(&v), false);
      d.U64(at, Name(f), bits, value);
      return OkStatus();
    }
    Status Bool(FieldName f, bool v) {
      d.U8(at, Name(f), v, v ? "true" : "false");
      return OkStatus();
    }
    Status Flag(FieldName f, bool v) {
      d.Flag(at, Name(f), v);
      return OkStatus();
    }
    Status Bool64(FieldName f, bool v) {
      d.I64(at, Name(f), v ? 1 : 0);
      return OkStatus();
    }
    Status Enum(FieldName f, AttrId id, int64_t v) {
      d.U8(at, Name(f), static_cast<uint64_t>(v), Named(EnumValueName(EnumSetOf(id), v), v));
      return OkStatus();
    }
    Status Text(FieldName f, std::string_view s) {
      d.StringRef(at, Name(f), s);
      return OkStatus();
    }
    Status Callee(FieldName f, uint32_t callee) {
      std::string name =
          callee < d.p_.computations.size() ? " '" + std::string(d.p_.computations[callee].name) + "'" : "";
      d.U32(at, Name(f), callee, "computation " + Dec(callee) + name);
      return OkStatus();
    }
    Status Count(FieldName f, size_t, uint32_t n) { return U32(f, n); }
    Status Reserved(size_t bytes) {
      d.Reserved(at, bytes);
      return OkStatus();
    }
  };

  void Attr(size_t index, const AttrRecord& a) {
    uint64_t at = a.file_offset;
    std::string text;
    AppendAttrText(text, p_, a);
    Label(at, "  attribute " + Index(index) + ": " + Cut(std::move(text)));
    U16(at, "code", AttrWireCode(a.id), Named(AttrName(a.id), AttrWireCode(a.id)));
    U8(at, "kind", static_cast<uint8_t>(a.kind), Named(AttrKindName(a.kind), static_cast<uint8_t>(a.kind)));
    Reserved(at, 1);
    U32(at, "payload size", a.payload_size, Dec(a.payload_size));
    HexFields fields{*this, at};
    (void)AttrPayload(fields, a);
    // Whatever payload the walk did not name (never, for a file the reader accepted) prints by
    // the cursor as unreferenced bytes; the padding to 4 after it as padding.
  }

  void Module(uint64_t at) {
    Label(at, "module");
    StringRef(at, "name", p_.module_name);
    const std::string entry =
        p_.entry < p_.computations.size() ? " '" + std::string(p_.computations[p_.entry].name) + "'" : "";
    U32(at, "entry", p_.entry, "computation " + Dec(p_.entry) + entry);
    U32(at, "replica_count", Bytes(at, 4), p_.replicas > 1 ? Dec(p_.replicas) : "one replica");
    U32(at, "num_partitions", Bytes(at, 4), p_.partitions > 1 ? Dec(p_.partitions) : "one partition");
    U64(at, "arena size", p_.arena_size, Dec(p_.arena_size));
  }

  // ----- fields: each checks the decoded value against its bytes and advances `at`

  uint64_t Bytes(uint64_t at, size_t n) const {
    uint64_t v = 0;
    if (at <= bytes_.size() && n <= bytes_.size() - at) std::memcpy(&v, bytes_.data() + at, n);  // little-endian host
    return v;
  }
  void Num(uint64_t& at, size_t n, std::string_view name, uint64_t decoded, std::string value) {
    uint64_t mask = n == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
    uint64_t actual = Bytes(at, n);
    if (actual != (decoded & mask)) {
      value += "  DUMP ERROR: the reader decoded " + Dec(decoded) + ", the bytes hold " + Dec(actual);
      ++dump_errors_;
    }
    Field(at, n, name, value);
    at += n;
  }
  void U8(uint64_t& at, std::string_view name, uint64_t v, std::string value) { Num(at, 1, name, v, std::move(value)); }
  void U16(uint64_t& at, std::string_view name, uint64_t v, std::string value) {
    Num(at, 2, name, v, std::move(value));
  }
  void U32(uint64_t& at, std::string_view name, uint64_t v, std::string value) {
    Num(at, 4, name, v, std::move(value));
  }
  void U64(uint64_t& at, std::string_view name, uint64_t v, std::string value) {
    Num(at, 8, name, v, std::move(value));
  }
  void I64(uint64_t& at, std::string_view name, int64_t v) { Num(at, 8, name, static_cast<uint64_t>(v), SDec(v)); }
  // A byte the reader takes as a bool when it is not zero.
  void Flag(uint64_t& at, std::string_view name, bool v) {
    uint64_t byte = Bytes(at, 1);
    U8(at, name, v && byte != 0 ? byte : v, v ? "yes" : "no");
  }
  void Reserved(uint64_t& at, size_t n) {
    Field(at, n, "reserved", "");
    at += n;
  }
  // A string reference {u32 offset, u32 length} into the strings section.
  void StringRef(uint64_t& at, std::string_view name, std::string_view s) {
    uint64_t offset = Where(s) - strings_base_;
    std::string value = Preview(s) + " (strings + " + Hex(offset) + ", " + Count(s.size(), "byte") + ")";
    uint64_t actual = Bytes(at, 8), decoded = offset | (static_cast<uint64_t>(s.size()) << 32);
    if (actual != decoded) {
      value += "  DUMP ERROR: the bytes do not hold this reference";
      ++dump_errors_;
    }
    Field(at, 8, name, value);
    at += 8;
  }

  // ----- output

  // A heading line for what starts at `at`; bytes before it print first.
  void Label(uint64_t at, std::string_view text) {
    Gap(at);
    out_ += "; ";
    Text(text);
    out_ += '\n';
  }

  // Bytes [cursor, to) that no record claims.
  void Gap(uint64_t to) {
    to = std::min<uint64_t>(to, bytes_.size());
    if (to <= pos_) return;
    uint64_t from = pos_;
    bool zeros = std::all_of(bytes_.begin() + static_cast<ptrdiff_t>(from), bytes_.begin() + static_cast<ptrdiff_t>(to),
                             [](char c) { return c == 0; });
    bool padding = zeros && to - from < kMaxAlignPadding;
    for (uint64_t at = from; at < to; at += kRowBytes)
      Row(at, std::min<uint64_t>(kRowBytes, to - at), padding ? "padding" : "unreferenced", "");
    pos_ = to;
  }

  // One field of `n` bytes at `at`; the name and value go on its first line. Bytes already
  // printed (a record overlapping another, which only a hand-made file has) are not repeated.
  void Field(uint64_t at, uint64_t n, std::string_view name, std::string_view value) {
    Gap(at);
    uint64_t end = std::min<uint64_t>(at + n, bytes_.size());
    uint64_t from = std::max(at, pos_);
    if (from > at || from >= end) {
      std::string note =
          "(" + Hex(at) + ".." + Hex(at + n) + ", overlapping bytes printed above) " + std::string(value);
      if (from >= end) {
        out_.append(offset_width_ + 1 + 3 * kRowBytes + 2, ' ');
        out_ += "; ";
        Names(name, note);
        return;
      }
      Row(from, std::min<uint64_t>(kRowBytes, end - from), name, note);
    } else {
      Row(from, std::min<uint64_t>(kRowBytes, end - from), name, value);
    }
    for (uint64_t row = from + kRowBytes; row < end; row += kRowBytes)
      Row(row, std::min<uint64_t>(kRowBytes, end - row), "", "");
  }

  // `offset: bytes  ; name value`, columns padded to widths fixed for the whole file. A line
  // with neither name nor value (the continuation of a long field) ends after its bytes.
  void Row(uint64_t at, uint64_t n, std::string_view name, std::string_view value) {
    static const char kHex[] = "0123456789abcdef";
    for (size_t i = offset_width_; i > 0; --i) out_ += kHex[(at >> (4 * (i - 1))) & 15];
    out_ += ':';
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t c = static_cast<uint8_t>(bytes_[at + i]);
      out_ += ' ';
      out_ += kHex[c >> 4];
      out_ += kHex[c & 15];
    }
    if (name.empty() && value.empty()) {
      out_ += '\n';
    } else {
      out_.append(3 * (kRowBytes - n) + 2, ' ');
      out_ += "; ";
      Names(name, value);
    }
    pos_ = std::max(pos_, at + n);
    if (out_.size() >= kFlushAt) Flush();
  }

  void Names(std::string_view name, std::string_view value) {
    out_ += name;
    if (!value.empty()) {
      if (name.size() < name_width_) out_.append(name_width_ - name.size(), ' ');
      out_ += ' ';
      Text(value);
    }
    out_ += '\n';
  }

  // Text from the file (names, attribute text) goes out with control characters escaped, so a
  // name holding a newline cannot start a line that reads as bytes of the file.
  void Text(std::string_view text) {
    for (char ch : text) {
      uint8_t c = static_cast<uint8_t>(ch);
      if (c >= 0x20 && c != 0x7f) {
        out_ += ch;
      } else {
        static const char kHex[] = "0123456789abcdef";
        out_ += "\\x";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 15];
      }
    }
  }

  void Flush() {
    os_.write(out_.data(), static_cast<std::streamsize>(out_.size()));
    out_.clear();
  }

  const BundleProgram& p_;
  std::ostream& os_;
  std::string_view bytes_;
  uint64_t strings_base_ = 0;
  size_t offset_width_ = 1, index_width_ = 1, name_width_ = kFixedNameWidth;
  uint64_t pos_ = 0;  // every byte before this has been printed
  size_t dump_errors_ = 0;
  std::string out_;
};

}  // namespace

size_t HexDumpBundleProgram(const BundleProgram& program, std::string_view file_name, std::ostream& out) {
  return HexDumper(program, out).Run(file_name);
}

}  // namespace nhlo
