// SPDX-License-Identifier: Apache-2.0
#include "driver/tensor_files.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "driver/common.h"
#include "driver/values.h"
#include "support/checked_math.h"
#include "support/large_alloc.h"
#include "types/element.h"

namespace nhlo {

namespace {

Status FileError(std::string_view file, std::string message) {
  return Status::FromDiagnostic(Diagnostic{Severity::kError, std::string(file), 0, 0, std::move(message), {}});
}

// Overflow-checked arithmetic for sizes taken from files: a hostile header must fail the check,
// never wrap into a small allocation.

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

// ---------------------------------------------------------------------------------------------
// Element types and descr strings.

constexpr PrimitiveType kAllTypes[] = {
#define NHLO_PRIMITIVE_TYPE(Enum, text, code, bits, kind, numpy, ml_dtypes) PrimitiveType::k##Enum,
#include "types/primitive_types.def"
#undef NHLO_PRIMITIVE_TYPE
};

// A descr string taken apart: `<f4` is order '<', kind 'f', size 4; an ml_dtypes name
// (`bfloat16`, as written by code that saves `str(array.dtype)`) sets `named`.
struct Descr {
  char order = '|';
  char kind = 0;
  uint64_t size = 0;
  PrimitiveType named = PrimitiveType::kInvalid;
};

bool ParseDescr(std::string_view text, Descr* d) {
  for (PrimitiveType t : kAllTypes) {
    const char* name = MlDtypesName(t);
    if (name && text == name) {
      d->named = t;
      d->size = static_cast<uint64_t>(HostByteSize(t));
      return true;
    }
  }
  size_t i = 0;
  if (i < text.size() && std::strchr("<>|=", text[i])) d->order = text[i++];
  if (i >= text.size() || !std::isalpha(static_cast<unsigned char>(text[i]))) return false;
  d->kind = text[i++];
  if (i >= text.size() || text.size() - i > 4) return false;
  for (; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    d->size = d->size * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  return d->size > 0;
}

// The nhlo type numpy's descr stands for (kInvalid for void and the kinds nhlo has no type for).
PrimitiveType NativeTypeOf(const Descr& d) {
  if (d.named != PrimitiveType::kInvalid) return d.named;
  for (PrimitiveType t : kAllTypes) {
    const char* native = NumpyDescr(t);
    if (native && native[1] == d.kind && std::to_string(d.size) == native + 2) return t;
  }
  return PrimitiveType::kInvalid;
}

// How the file's elements are described, for messages: "element type f32 (descr '<f4')".
std::string DescrText(std::string_view descr, const Descr& d, bool parsed) {
  std::string quoted = "descr '" + std::string(descr) + "'";
  if (!parsed) return quoted;
  PrimitiveType t = NativeTypeOf(d);
  if (t != PrimitiveType::kInvalid) return "element type " + std::string(PrimitiveTypeName(t)) + " (" + quoted + ")";
  if (d.kind == 'V') return std::to_string(d.size) + "-byte void elements (" + quoted + ")";
  return quoted;
}

// True when a file whose elements are `d` may be read as `t`. A void descr of the type's size
// (untyped bytes; what np.save writes for an ml_dtypes array) fits every type. Otherwise numpy's
// own types need their own descr, and ml_dtypes types (which numpy cannot name) accept their
// ml_dtypes name, an unsigned integer of their size holding the raw bits (`x.view(np.uint16)`),
// and for f8e5m2 `<f1` (older ml_dtypes gave it kind 'f', which np.load cannot read).
bool DescrMatches(const Descr& d, PrimitiveType t) {
  if (d.named != PrimitiveType::kInvalid) return d.named == t;
  if (d.size != static_cast<uint64_t>(HostByteSize(t))) return false;
  if (d.kind == 'V') return true;
  if (const char* native = NumpyDescr(t)) return d.kind == native[1];
  return d.kind == 'u' || (t == PrimitiveType::kF8E5M2 && d.kind == 'f');
}

// ---------------------------------------------------------------------------------------------
// The .npy header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Only the literal forms numpy writes are read: strings, True/False, tuples of integers.

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  Status Parse(NpyHeader* h) {
    bool have_descr = false, have_order = false, have_shape = false;
    Skip();
    if (!Eat('{')) return Error("the header is not a dictionary");
    while (true) {
      Skip();
      if (Eat('}')) break;
      std::string key;
      if (!String(&key)) return Error("expected a string key");
      Skip();
      if (!Eat(':')) return Error("expected ':' after '" + key + "'");
      Skip();
      if (key == "descr") {
        if (Peek() == '[') return Error("structured arrays (a list descr) are not supported");
        if (!String(&h->descr)) return Error("'descr' is not a string");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (!Bool(&h->fortran_order)) return Error("'fortran_order' is not True or False");
        have_order = true;
      } else if (key == "shape") {
        NHLO_TRY(Shape(&h->shape));
        have_shape = true;
      } else {
        return Error("unexpected key '" + key + "'");
      }
      Skip();
      if (Eat(',')) continue;
      Skip();
      if (Eat('}')) break;
      return Error("expected ',' or '}'");
    }
    Skip();
    if (pos_ != text_.size()) return Error("unexpected text after the dictionary");
    const char* missing = !have_descr ? "descr" : !have_order ? "fortran_order" : !have_shape ? "shape" : nullptr;
    if (missing) return FileError(file_, std::string("the .npy header lacks '") + missing + "'");
    return OkStatus();
  }

 private:
  Status Error(const std::string& what) const {
    return FileError(file_, "malformed .npy header: " + what + " at header byte " + std::to_string(pos_));
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void Skip() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool String(std::string* out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return false;
    size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return false;  // numpy never escapes in these strings
      ++pos_;
    }
    if (pos_ >= text_.size()) return false;
    *out = std::string(text_.substr(start, pos_ - start));
    ++pos_;
    return true;
  }
  bool Word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  bool Bool(bool* out) {
    if (Word("True"))
      *out = true;
    else if (Word("False"))
      *out = false;
    else
      return false;
    return true;
  }
  Status Shape(std::vector<int64_t>* dims) {
    if (!Eat('(')) return Error("'shape' is not a tuple");
    while (true) {
      Skip();
      if (Eat(')')) return OkStatus();
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) return Error("expected a dimension size");
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        if (MulOverflows(v, 10, &v) || AddOverflows(v, static_cast<uint64_t>(text_[pos_] - '0'), &v) ||
            v > static_cast<uint64_t>(INT64_MAX))
          return Error("dimension size out of range");
        ++pos_;
      }
      Eat('L');  // Python 2 longs, in files written by old numpy
      if (dims->size() >= 1024) return Error("too many dimensions");
      dims->push_back(static_cast<int64_t>(v));
      Skip();
      if (Eat(')')) return OkStatus();
      if (!Eat(',')) return Error("expected ',' or ')' in 'shape'");
    }
  }

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
};

constexpr std::string_view kZipMagic("PK\x03\x04", 4);
constexpr std::string_view kEmptyZipMagic("PK\x05\x06", 4);

uint16_t Le16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8);
}
uint32_t Le32(std::string_view b, size_t at) { return Le16(b, at) | static_cast<uint32_t>(Le16(b, at + 2)) << 16; }
uint64_t Le64(std::string_view b, size_t at) { return Le32(b, at) | static_cast<uint64_t>(Le32(b, at + 4)) << 32; }
void Put16(std::string& out, uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void Put32(std::string& out, uint32_t v) {
  Put16(out, v & 0xffff);
  Put16(out, v >> 16);
}

// Copies the C-order elements of a Fortran-order array: element (i0, ..., in-1) sits at
// sum(ik * d0 * ... * dk-1) in `src`.
void FortranToC(const char* src, char* dst, const std::vector<int64_t>& dims, size_t elem) {
  size_t rank = dims.size();
  std::vector<int64_t> index(rank, 0), stride(rank, 1);
  for (size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * dims[k - 1];
  int64_t count = CheckedElementCount(dims);  // checked by the caller against the file size
  for (int64_t n = 0; n < count; ++n) {
    int64_t from = 0;
    for (size_t k = 0; k < rank; ++k) from += index[k] * stride[k];
    std::memcpy(dst + static_cast<size_t>(n) * elem, src + static_cast<size_t>(from) * elem, elem);
    for (size_t k = rank; k-- > 0;) {  // advance the C-order index, last dimension fastest
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
}

}  // namespace

std::string SpecShapeText(const TensorSpec& spec) { return ArrayShapeText(spec.type, spec.dims, spec.dim_kinds); }

bool SpecTakes(const TensorSpec& spec, const std::vector<int64_t>& dims) {
  if (dims.size() != spec.dims.size()) return false;
  for (size_t d = 0; d < dims.size(); ++d) {
    bool bounded = d < spec.dim_kinds.size() && spec.dim_kinds[d] == 1;
    if (bounded ? dims[d] < 0 || dims[d] > spec.dims[d] : dims[d] != spec.dims[d]) return false;
  }
  return true;
}

std::string NpyDescr(PrimitiveType type) {
  if (const char* native = NumpyDescr(type)) return native;
  if (!IsArrayType(type)) return "";
  return "<V" + std::to_string(HostByteSize(type));
}

Result<NpyHeader> ParseNpyHeader(std::string_view bytes, std::string_view file) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kNpyMagic) {
    if (bytes.substr(0, 6) == kNpyMagic.substr(0, bytes.size() < 6 ? bytes.size() : 6))
      return FileError(file, "truncated .npy file: " + std::to_string(bytes.size()) +
                                 " bytes, shorter than its magic and header length");
    return FileError(file, "not a .npy file (no \\x93NUMPY magic)");
  }
  NpyHeader h;
  h.major = static_cast<uint8_t>(bytes[6]);
  h.minor = static_cast<uint8_t>(bytes[7]);
  if (h.major < 1 || h.major > 3 || h.minor != 0)
    return FileError(file, "unsupported .npy format version " + std::to_string(h.major) + "." +
                               std::to_string(h.minor) + " (1.0, 2.0 and 3.0 are read)");
  size_t length_bytes = h.major == 1 ? 2 : 4;
  if (bytes.size() < 8 + length_bytes) return FileError(file, "truncated .npy file: no header length");
  uint64_t header_len = h.major == 1 ? Le16(bytes, 8) : Le32(bytes, 8);
  if (header_len > kMaxNpyHeaderBytes)
    return FileError(file, "the .npy header says it is " + std::to_string(header_len) + " bytes long; at most " +
                               std::to_string(kMaxNpyHeaderBytes) + " are read");
  size_t start = 8 + length_bytes;
  if (bytes.size() - start < header_len)
    return FileError(file, "truncated .npy file: the header is " + std::to_string(header_len) +
                               " bytes but the file ends after " + std::to_string(bytes.size() - start));
  NHLO_TRY(HeaderParser(bytes.substr(start, header_len), file).Parse(&h));
  h.data_offset = start + header_len;
  return h;
}

Result<Value> ReadNpy(std::string_view bytes, std::string_view file, const TensorSpec& spec) {
  NHLO_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(bytes, file));
  Descr d;
  bool parsed = ParseDescr(h.descr, &d);
  if (!parsed || !DescrMatches(d, spec.type))
    return FileError(file, DescrText(h.descr, d, parsed) + " but " + spec.what + " is " + SpecShapeText(spec));
  if (!SpecTakes(spec, h.shape))
    return FileError(file, "shape " + DimsText(h.shape) + " but " + spec.what + " is " + SpecShapeText(spec));
  uint64_t count = 1, size = 0, elem = static_cast<uint64_t>(HostByteSize(spec.type));
  for (int64_t dim : h.shape)
    if (MulOverflows(count, static_cast<uint64_t>(dim), &count)) return FileError(file, "the array is too large");
  if (MulOverflows(count, elem, &size)) return FileError(file, "the array is too large");
  uint64_t have = bytes.size() - h.data_offset;
  if (have < size)
    return FileError(file, "truncated .npy file: " + SpecShapeText(spec) + " needs " + std::to_string(size) +
                               " bytes of data but the file holds " + std::to_string(have));
  if (have > size)
    return FileError(file, "the .npy file holds " + std::to_string(have - size) + " bytes after the " +
                               std::to_string(size) + " bytes of its array");
  Value v;
  v.type = spec.type;
  v.dims = h.shape;  // below a bounded dimension's bound, the caller lays it out at the bound
  AssignZeros(v.bytes, static_cast<size_t>(size));
  const char* src = bytes.data() + h.data_offset;
  if (h.fortran_order && h.shape.size() > 1)
    FortranToC(src, v.bytes.data(), h.shape, static_cast<size_t>(elem));
  else if (size > 0)
    std::memcpy(v.bytes.data(), src, static_cast<size_t>(size));
  // Big-endian files: swap each element (each half of a complex).
  size_t swap = IsComplex(spec.type) ? elem / 2 : elem;
  if (d.order == '>' && swap > 1)
    for (size_t at = 0; at < v.bytes.size(); at += swap)
      std::reverse(v.bytes.begin() + at, v.bytes.begin() + at + swap);
  // Sub-byte types keep the low bits (ml_dtypes leaves the others unspecified) and the host
  // layout sign-extends the signed ones; pred is 0 or 1.
  uint8_t* p = reinterpret_cast<uint8_t*>(v.bytes.data());
  if (spec.type == PrimitiveType::kPred) {
    for (size_t i = 0; i < v.bytes.size(); ++i) p[i] = p[i] != 0;
  } else if (BitWidth(spec.type) < 8) {
    for (size_t i = 0; i < v.bytes.size(); ++i) StoreBits(spec.type, p + i, p[i]);
  }
  return v;
}

Result<std::string> WriteNpy(const Value& value) {
  std::string descr = NpyDescr(value.type);
  if (value.IsTuple() || descr.empty())
    return Status::Error("a " + ValueShapeText(value) + " value is not an array and has no .npy form");
  uint64_t count = 1, size = 0;
  for (int64_t dim : value.dims)
    if (dim < 0 || MulOverflows(count, static_cast<uint64_t>(dim), &count))
      return Status::Error("bad array dimensions");
  if (MulOverflows(count, static_cast<uint64_t>(HostByteSize(value.type)), &size) || size != value.bytes.size())
    return Status::Error("internal: value bytes do not match its shape " + ValueShapeText(value));
  // The header numpy's `np.save` writes, byte for byte: sorted keys, spare spaces for growing
  // the first dimension in place, then spaces and a newline up to a 64-byte boundary; format 2.0
  // only when the length does not fit in 16 bits.
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < value.dims.size(); ++i) dict += (i ? ", " : "") + std::to_string(value.dims[i]);
  dict += value.dims.size() == 1 ? ",), }" : "), }";
  if (!value.dims.empty()) dict.append(21 - std::to_string(value.dims[0]).size(), ' ');
  auto padded = [&](size_t prefix) { return dict.size() + 1 + 64 - (prefix + dict.size() + 1) % 64; };
  bool v2 = padded(10) > 0xffff;
  size_t length = padded(v2 ? 12 : 10);
  dict.append(length - dict.size() - 1, ' ');
  dict += '\n';
  std::string out;
  ReserveHugeBacked(out, kNpyMagic.size() + 6 + dict.size() + value.bytes.size());
  out += kNpyMagic;
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  if (v2)
    Put32(out, static_cast<uint32_t>(dict.size()));
  else
    Put16(out, static_cast<uint32_t>(dict.size()));
  out += dict;
  size_t data = out.size();
  out += value.bytes;
  if (value.type == PrimitiveType::kPred) {
    for (size_t i = data; i < out.size(); ++i) out[i] = out[i] != 0;
  } else if (int bits = BitWidth(value.type); bits < 8) {
    for (size_t i = data; i < out.size(); ++i) out[i] = static_cast<char>(out[i] & ((1 << bits) - 1));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Zip archives (PKWARE APPNOTE): the central directory gives each member's name, method, sizes,
// CRC and local header; numpy writes members with zip64 local headers, so sizes come from the
// central directory (and its zip64 extra field when they are 0xffffffff).

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;

Status Inflate(std::string_view in, uint64_t out_size, std::string* out) {
  AssignZeros(*out, static_cast<size_t>(out_size));
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return Status::Error("cannot start zlib");
  int rc = Z_OK;
  size_t in_done = 0, out_done = 0;
  // zlib counts in 32-bit units; feed it at most 1 GiB at a time.
  constexpr size_t kChunk = size_t(1) << 30;
  while (rc == Z_OK) {
    size_t in_now = std::min(kChunk, in.size() - in_done), out_now = std::min(kChunk, out->size() - out_done);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_done));
    z.avail_in = static_cast<uInt>(in_now);
    z.next_out = reinterpret_cast<Bytef*>(out->data() + out_done);
    z.avail_out = static_cast<uInt>(out_now);
    rc = inflate(&z, Z_NO_FLUSH);
    in_done += in_now - z.avail_in;
    out_done += out_now - z.avail_out;
    if (rc == Z_OK && z.avail_out == out_now && z.avail_in == in_now) rc = Z_BUF_ERROR;  // no progress
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::Error("corrupt deflate data");
  if (out_done != out->size()) return Status::Error("decompressed size differs from the directory's");
  return OkStatus();
}

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < bytes.size();) {
    size_t n = std::min<size_t>(bytes.size() - at, size_t(1) << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
    at += n;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

Result<std::vector<ZipEntry>> ReadZip(std::string_view b, std::string_view file, uint64_t max_inflated) {
  auto bad = [&](const std::string& what) { return FileError(file, "malformed .npz (zip) archive: " + what); };
  if (b.size() < 22)
    return FileError(file, "not a .npz archive: " + std::to_string(b.size()) + " bytes, too short for a zip file");
  // The end-of-central-directory record is in the last 22 + 65535 (comment) bytes.
  size_t end = std::string_view::npos;
  for (size_t at = b.size() - 22;; --at) {
    if (Le32(b, at) == kEndSig && at + 22 + Le16(b, at + 20) == b.size()) {
      end = at;
      break;
    }
    if (at == 0 || b.size() - at >= 22 + 0xffff) break;
  }
  if (end == std::string_view::npos) {
    if (b.substr(0, 4) == kZipMagic) return bad("no end-of-central-directory record (truncated file?)");
    return FileError(file, "not a .npz archive (no zip end-of-central-directory record)");
  }
  if (Le16(b, end + 4) != 0 || Le16(b, end + 6) != 0) return bad("multi-disk archives are not supported");
  uint64_t count = Le16(b, end + 10), dir_size = Le32(b, end + 12), dir_offset = Le32(b, end + 16);
  if (count == 0xffff || dir_size == 0xffffffff || dir_offset == 0xffffffff) {
    if (end < 20 || Le32(b, end - 20) != kZip64LocatorSig) return bad("zip64 end record locator missing");
    uint64_t at = Le64(b, end - 12);
    if (at > b.size() || b.size() - at < 56 || Le32(b, static_cast<size_t>(at)) != kZip64EndSig)
      return bad("zip64 end record missing");
    count = Le64(b, static_cast<size_t>(at) + 32);
    dir_size = Le64(b, static_cast<size_t>(at) + 40);
    dir_offset = Le64(b, static_cast<size_t>(at) + 48);
  }
  if (dir_offset > b.size() || dir_size > b.size() - dir_offset) return bad("central directory outside the file");
  // Every member needs at least 46 directory bytes, which bounds `count` by the file.
  if (count > dir_size / 46) return bad("more members than the central directory can hold");
  std::vector<ZipEntry> entries;
  uint64_t inflated = 0;  // the members' sizes so far
  size_t at = static_cast<size_t>(dir_offset), dir_end = static_cast<size_t>(dir_offset + dir_size);
  for (uint64_t i = 0; i < count; ++i) {
    if (dir_end - at < 46 || Le32(b, at) != kCentralSig)
      return bad("central directory entry " + std::to_string(i + 1) + " is damaged");
    uint16_t flags = Le16(b, at + 8), method = Le16(b, at + 10);
    uint32_t crc = Le32(b, at + 16);
    uint64_t csize = Le32(b, at + 20), usize = Le32(b, at + 24), local = Le32(b, at + 42);
    size_t name_len = Le16(b, at + 28), extra_len = Le16(b, at + 30), comment_len = Le16(b, at + 32);
    if (dir_end - at - 46 < name_len + extra_len + comment_len)
      return bad("central directory entry " + std::to_string(i + 1) + " is damaged");
    std::string name(b.substr(at + 46, name_len));
    std::string_view extra = b.substr(at + 46 + name_len, extra_len);
    at += 46 + name_len + extra_len + comment_len;
    // Zip64: the 64-bit values of the fields that hold 0xffffffff, in this order.
    for (size_t e = 0; e + 4 <= extra.size();) {
      uint16_t id = Le16(extra, e), len = Le16(extra, e + 2);
      if (extra.size() - e - 4 < len) break;
      if (id == 0x0001) {
        size_t f = e + 4, f_end = e + 4 + len;
        for (uint64_t* field : {&usize, &csize, &local}) {
          if (*field != 0xffffffff) continue;
          if (f_end - f < 8) return bad("zip64 field of '" + name + "' is short");
          *field = Le64(extra, f);
          f += 8;
        }
      }
      e += 4 + len;
    }
    std::string member = "'" + name + "'";
    if (flags & 1) return FileError(file, "member " + member + " is encrypted");
    if (method != 0 && method != 8)
      return FileError(file, "member " + member + " uses compression method " + std::to_string(method) +
                                 " (stored and deflate are read)");
    if (local > b.size() || b.size() - local < 30 || Le32(b, static_cast<size_t>(local)) != kLocalSig)
      return bad("local header of " + member + " is missing");
    uint64_t data = local + 30 + Le16(b, static_cast<size_t>(local) + 26) + Le16(b, static_cast<size_t>(local) + 28);
    if (data > b.size() || csize > b.size() - data) return bad("data of " + member + " runs past the end of the file");
    std::string_view raw = b.substr(static_cast<size_t>(data), static_cast<size_t>(csize));
    // Checked before any member is unpacked: an archive of members claiming gigabytes each must
    // not be inflated first and judged after.
    if (usize > max_inflated || inflated + usize > max_inflated)
      return FileError(file, "member " + member + " holds " + std::to_string(usize) +
                                 " bytes, which with the members before it is more than the " +
                                 std::to_string(max_inflated) + " bytes the arrays it is read for can take");
    inflated += usize;
    ZipEntry entry;
    entry.name = std::move(name);
    if (method == 0) {
      if (csize != usize) return bad("stored member " + member + " has different sizes");
      AssignBytes(entry.bytes, raw.data(), raw.size());
    } else {
      // Deflate expands at most 1032:1, so a larger claimed size is a lie (or a bomb).
      uint64_t most = 0;
      if (MulOverflows(csize, 1032, &most) || usize > most + 64)
        return bad("member " + member + " claims " + std::to_string(usize) + " bytes from " + std::to_string(csize) +
                   " compressed");
      Status s = Inflate(raw, usize, &entry.bytes);
      if (!s.ok()) return bad("member " + member + ": " + s.message());
    }
    if (Crc32(entry.bytes) != crc) return bad("member " + member + " fails its CRC-32 check");
    for (const ZipEntry& e : entries)
      if (e.name == entry.name) return bad("member " + member + " appears twice");
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::string> WriteZip(const std::vector<ZipEntry>& entries) {
  // 1980-01-01 00:00:00 in MS-DOS form: the earliest a zip can say, and the same every run.
  constexpr uint32_t kTime = 0, kDate = (0 << 9) | (1 << 5) | 1;
  std::string out, dir;
  // The whole archive in one block: the members with their local headers, the central directory
  // and its end record. One past 4 GiB is refused below, before anything is copied.
  uint64_t total = 22;
  for (const ZipEntry& e : entries) total += 30 + 46 + 2 * e.name.size() + e.bytes.size();
  if (total <= 0xffffffffull) ReserveHugeBacked(out, static_cast<size_t>(total));
  for (const ZipEntry& e : entries) {
    if (out.size() + e.bytes.size() + e.name.size() + 30 > 0xffffffffull || e.name.size() > 0xffff)
      return Status::Error("the archive would be larger than 4 GiB (write a directory of .npy files instead)");
    uint32_t crc = Crc32(e.bytes), offset = static_cast<uint32_t>(out.size());
    auto common = [&](std::string& s) {
      Put16(s, 20);  // version needed: 2.0
      Put16(s, 0);   // flags
      Put16(s, 0);   // stored
      Put16(s, kTime);
      Put16(s, kDate);
      Put32(s, crc);
      Put32(s, static_cast<uint32_t>(e.bytes.size()));
      Put32(s, static_cast<uint32_t>(e.bytes.size()));
      Put16(s, static_cast<uint32_t>(e.name.size()));
      Put16(s, 0);  // extra field length
    };
    Put32(out, kLocalSig);
    common(out);
    out += e.name;
    out += e.bytes;
    Put32(dir, kCentralSig);
    Put16(dir, 20);  // made by: MS-DOS, 2.0
    common(dir);
    Put16(dir, 0);  // comment length
    Put16(dir, 0);  // disk
    Put16(dir, 0);  // internal attributes
    Put32(dir, 0);  // external attributes
    Put32(dir, offset);
    dir += e.name;
  }
  if (entries.size() > 0xfffe || out.size() + dir.size() > 0xffffffffull)
    return Status::Error("the archive would be larger than 4 GiB or hold too many members");
  uint32_t dir_offset = static_cast<uint32_t>(out.size());
  out += dir;
  Put32(out, kEndSig);
  Put16(out, 0);
  Put16(out, 0);
  Put16(out, static_cast<uint32_t>(entries.size()));
  Put16(out, static_cast<uint32_t>(entries.size()));
  Put32(out, static_cast<uint32_t>(dir.size()));
  Put32(out, dir_offset);
  Put16(out, 0);  // comment length
  return out;
}

// ---------------------------------------------------------------------------------------------
// nhlo-run's argument and output files.

namespace {

uint64_t SpecBytes(const TensorSpec& spec) {
  uint64_t n = static_cast<uint64_t>(std::max(HostByteSize(spec.type), 1));
  for (int64_t d : spec.dims)
    if (MulOverflows(n, static_cast<uint64_t>(d), &n)) return UINT64_MAX;
  return n;
}

// The largest file ReadTensorFile reads into one block reserved up front (1 TiB).
constexpr uintmax_t kMaxReserve = uintmax_t(1) << 40;

}  // namespace

Result<std::string> ReadTensorFile(const std::string& path, uint64_t limit, const std::string& why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return FileError(path, "is a directory");
  std::ifstream f(path, std::ios::binary);
  // As every program reports a file it cannot open: `nhlo-run: error: cannot open 'PATH': REASON`.
  if (!f) return Status::Error("cannot open '" + path + "': " + std::strerror(errno));
  std::string bytes;
  // One block for the whole file, in huge pages when large, rather than doubling as it is read.
  // Only for a size the read may reach and memory could hold: a larger claim (a sparse file, a
  // special file) is read as before, and refused by the limit or by the memory it really takes.
  if (uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > 0 && size <= limit && size < kMaxReserve)
    ReserveHugeBacked(bytes, static_cast<size_t>(size));
  char block[1 << 16];
  while (f.read(block, sizeof(block)) || f.gcount() > 0) {
    if (bytes.size() + static_cast<uint64_t>(f.gcount()) > limit)
      return FileError(path, "the file is larger than " + std::to_string(limit) + " bytes, more than " + why);
    bytes.append(block, static_cast<size_t>(f.gcount()));
  }
  if (f.bad()) return FileError(path, "cannot read");
  return bytes;
}

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

Result<Value> LoadArgumentFile(const std::string& path, const TensorSpec& spec) {
  // Literal text takes far more bytes than the values; 64 per element bounds any real one. (A
  // tuple's spec has no leaves to count: it gets the input limit of HLO files.)
  uint64_t data = SpecBytes(spec), limit = 0;
  if (MulOverflows(data, 64, &limit) || AddOverflows(limit, kMaxNpyHeaderBytes + 4096, &limit)) limit = UINT64_MAX;
  if (spec.type == PrimitiveType::kTuple) limit = kMaxInputBytes;
  NHLO_ASSIGN_OR_RETURN(
      std::string bytes,
      ReadTensorFile(path, limit, "a .npy or literal file of " + spec.what + " (" + SpecShapeText(spec) + ") needs"));
  if (StartsWith(bytes, kNpyMagic)) {
    if (spec.type == PrimitiveType::kTuple)
      return FileError(path, spec.what + " is a tuple; a .npy file holds one array (write the tuple as literal text)");
    return ReadNpy(bytes, path, spec);
  }
  if (StartsWith(bytes, kZipMagic) || StartsWith(bytes, kEmptyZipMagic))
    return FileError(path, "is a zip (.npz) archive; an archive of all the arguments goes in --args=@" + path);
  NHLO_ASSIGN_OR_RETURN(Value v, ParseValue(bytes, path));
  if (!v.IsTuple() && (v.type != spec.type || !SpecTakes(spec, v.dims)))
    return FileError(path, "the literal is " + ValueShapeText(v) + " but " + spec.what + " is " + SpecShapeText(spec));
  return v;
}

// A member's name without its `.npy`: what np.load(npz) calls it, and what is matched.
std::string Stem(const std::string& name) {
  return name.size() > 4 && name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
}

// `noun` is what the specs are ("parameter", "output") in messages.
Result<std::vector<Value>> LoadArgumentArchive(const std::string& path, const std::vector<TensorSpec>& params,
                                               const std::string& noun = "parameter") {
  NHLO_ASSIGN_OR_RETURN(std::string bytes,
                        ReadTensorFile(path, ArchiveLimit(params),
                                       "a .npz of the " + std::to_string(params.size()) + " " + noun + "(s) needs"));
  return ArgumentsFromArchive(bytes, path, params, noun);
}

}  // namespace

ArchiveMatch MatchArchiveMembers(const std::vector<ZipEntry>& entries, const std::vector<TensorSpec>& specs) {
  ArchiveMatch match;
  match.chosen.assign(specs.size(), nullptr);
  // Names first: when any member is named after a spec, members match by name only.
  std::vector<std::string> names;
  for (const TensorSpec& p : specs) names.push_back(p.name);
  for (const ZipEntry& e : entries) match.by_name |= std::find(names.begin(), names.end(), Stem(e.name)) != names.end();
  if (match.by_name) {
    for (const ZipEntry& e : entries) {
      auto it = std::find(names.begin(), names.end(), Stem(e.name));
      if (it == names.end() || match.chosen[it - names.begin()])
        match.unmatched.push_back(&e);
      else
        match.chosen[it - names.begin()] = &e;
    }
    return match;
  }
  // Positions next: arg0, arg1... (nhlo's --save-args) or arr_0, arr_1... (np.savez(f, *arrays)).
  if (entries.size() == specs.size()) {
    for (const char* prefix : {"arg", "arr_"}) {
      std::vector<const ZipEntry*> by_position(specs.size(), nullptr);
      size_t found = 0;
      for (const ZipEntry& e : entries)
        for (size_t i = 0; i < specs.size(); ++i)
          if (Stem(e.name) == prefix + std::to_string(i) && !by_position[i]) by_position[i] = &e, ++found;
      if (found == specs.size()) {
        match.chosen = by_position;
        return match;
      }
    }
  }
  // Otherwise the archive's order; members past the specs, or specs past the members, are left over.
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i < specs.size())
      match.chosen[i] = &entries[i];
    else
      match.unmatched.push_back(&entries[i]);
  }
  return match;
}

std::string NpzMemberStem(const ZipEntry& entry) { return Stem(entry.name); }

Result<Value> ReadNpyAsWritten(std::string_view bytes, std::string_view file, const TensorSpec& like) {
  NHLO_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(bytes, file));
  Descr d;
  TensorSpec spec = like;
  if (ParseDescr(h.descr, &d) && !DescrMatches(d, like.type) && NativeTypeOf(d) != PrimitiveType::kInvalid)
    spec.type = NativeTypeOf(d);
  if (!SpecTakes(spec, h.shape)) {
    spec.dims = h.shape;
    spec.dim_kinds.clear();
  }
  return ReadNpy(bytes, file, spec);
}

uint64_t ArchiveLimit(const std::vector<TensorSpec>& params) {
  uint64_t limit = 64 * 1024;
  for (const TensorSpec& p : params)
    if (AddOverflows(limit, SpecBytes(p), &limit) || AddOverflows(limit, kMaxNpyHeaderBytes + 4096, &limit))
      limit = UINT64_MAX;
  return limit;
}

Result<std::vector<Value>> ArgumentsFromArchive(std::string_view bytes, const std::string& path,
                                                const std::vector<TensorSpec>& params, const std::string& noun) {
  const uint64_t limit = ArchiveLimit(params);
  if (bytes.size() > limit)
    return FileError(path, "the file is larger than " + std::to_string(limit) + " bytes, more than a .npz of the " +
                               std::to_string(params.size()) + " " + noun + "(s) needs");
  if (StartsWith(bytes, kNpyMagic))
    return FileError(path, "is a .npy file; --args takes a .npz archive of every argument (use --arg=@" + path +
                               " for one argument)");
  NHLO_ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, ReadZip(bytes, path, limit));
  for (const ZipEntry& e : entries)
    if (!e.name.ends_with(".npy")) return FileError(path, "member '" + e.name + "' is not a .npy file");
  for (const TensorSpec& p : params)
    if (p.type == PrimitiveType::kTuple)
      return FileError(path, p.what + " is a tuple; a .npz holds arrays only (pass the arguments with --arg)");
  ArchiveMatch match = MatchArchiveMembers(entries, params);
  std::string listing;
  for (const ZipEntry& e : entries) listing += (listing.empty() ? "" : ", ") + Stem(e.name);
  if (match.by_name) {
    if (!match.unmatched.empty())
      return FileError(path, "member '" + match.unmatched[0]->name + "' is named after no " + noun +
                                 " (matching by name: there are " + std::to_string(params.size()) + " " + noun +
                                 "(s))");
    for (size_t i = 0; i < params.size(); ++i)
      if (!match.chosen[i])
        return FileError(path, "no member for " + params[i].what + " (matching by name; members: " + listing + ")");
  } else if (entries.size() != params.size()) {
    return FileError(path, "holds " + std::to_string(entries.size()) + " array(s) (" + listing + ") but there are " +
                               std::to_string(params.size()) + " " + noun + "(s)");
  }
  const std::vector<const ZipEntry*>& chosen = match.chosen;
  std::vector<Value> values;
  for (size_t i = 0; i < params.size(); ++i) {
    NHLO_ASSIGN_OR_RETURN(Value v, ReadNpy(chosen[i]->bytes, path + "(" + chosen[i]->name + ")", params[i]));
    values.push_back(std::move(v));
  }
  return values;
}

void AddTensorFileFlags(CLI::App& app, TensorFileFlags& flags) {
  app.add_option("--args", flags.args,
                 "all arguments from a .npz archive (@in.npz): members matched to parameters by name, else by position "
                 "(arg0/arr_0...), else in archive order");
  app.add_option("--output", flags.output,
                 "also write the outputs to a .npz (out0.npy, out1.npy...), a .npy (one output) or a directory (DIR/)");
  app.add_option("--save-args", flags.save_args,
                 "write the arguments of the run to a .npz (arg0.npy...), readable by --args=@");
}

std::string TensorFileFlagMisuse(const TensorFileFlags& flags, bool other_args, bool split_input_file) {
  if (!flags.args.empty() && other_args)
    return "--args gives every argument; it cannot be combined with --arg or --random-args";
  if (split_input_file && (!flags.output.empty() || !flags.save_args.empty()))
    return "--output and --save-args take one module; they cannot be combined with --split-input-file";
  return "";
}

std::vector<TensorSpec> EntryParameters(const BundleProgram& program) {
  std::vector<TensorSpec> specs;
  const ComputationRecord& entry = program.computations[program.entry];
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const BufferRecord& b = entry.buffers[entry.params[i]];
    std::string name(b.name);
    specs.push_back({"parameter " + std::to_string(i + 1) + " '" + name + "'", name, b.type, b.dims, b.dim_kinds});
  }
  return specs;
}

Result<std::vector<Value>> LoadArguments(const std::vector<std::string>& arg_texts, const std::string& args_archive,
                                         const std::vector<TensorSpec>& params) {
  if (args_archive == "@") return Status::Error("--args: '@' needs a file name (--args=@in.npz)");
  if (!args_archive.empty())
    return LoadArgumentArchive(args_archive[0] == '@' ? args_archive.substr(1) : args_archive, params);
  std::vector<Value> values;
  for (size_t i = 0; i < arg_texts.size(); ++i) {
    std::string what = "<argument " + std::to_string(i + 1) + ">";
    if (arg_texts[i].starts_with("@")) {
      if (arg_texts[i].size() == 1) return Status::Error(what + ": '@' needs a file name (--arg=@x.npy)");
      if (i >= params.size()) continue;  // the caller reports the count with the entry's signature
      NHLO_ASSIGN_OR_RETURN(Value v, LoadArgumentFile(arg_texts[i].substr(1), params[i]));
      values.push_back(std::move(v));
      continue;
    }
    NHLO_ASSIGN_OR_RETURN(Value v, ParseValue(arg_texts[i], what));
    values.push_back(std::move(v));
  }
  return values;
}

Status SaveArguments(const std::string& path, const std::vector<Value>& args) {
  std::vector<ZipEntry> entries;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].IsTuple())
      return Status::Error("--save-args: argument " + std::to_string(i + 1) + " is a tuple; a .npz holds arrays only");
    NHLO_ASSIGN_OR_RETURN(std::string npy, WriteNpy(args[i]));
    entries.push_back({"arg" + std::to_string(i) + ".npy", std::move(npy)});
  }
  NHLO_ASSIGN_OR_RETURN(std::string zip, WriteZip(entries));
  return WriteFileAtomically(path, zip);
}

Status SaveOutputs(const std::string& path, const Value& result) {
  std::vector<std::pair<std::string, const Value*>> outputs = NamedOutputs(result);
  std::vector<ZipEntry> files;
  for (const auto& [name, v] : outputs) {
    NHLO_ASSIGN_OR_RETURN(std::string npy, WriteNpy(*v));
    files.push_back({name + ".npy", std::move(npy)});
  }
  std::error_code ec;
  if (path.ends_with("/") || std::filesystem::is_directory(path, ec)) {
    std::filesystem::create_directories(path, ec);
    if (ec) return Status::Error("--output: cannot create the directory '" + path + "': " + ec.message());
    for (const ZipEntry& f : files)
      NHLO_TRY(WriteFileAtomically((std::filesystem::path(path) / f.name).string(), f.bytes));
    return OkStatus();
  }
  if (path.ends_with(".npy")) {
    if (files.size() != 1)
      return Status::Error("--output=" + path + ": the result has " + std::to_string(files.size()) +
                           " outputs; a .npy file holds one (use a .npz or a directory)");
    return WriteFileAtomically(path, files[0].bytes);
  }
  NHLO_ASSIGN_OR_RETURN(std::string zip, WriteZip(files));
  return WriteFileAtomically(path, zip);
}

}  // namespace nhlo
