// SPDX-License-Identifier: Apache-2.0
// Numbers and literals: integer and float tokens, nested array literals, tuples, and the direct
// scan of f32/s32 rows that big constants go through.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ir/literal.h"
#include "parser/parser_internal.h"
#include "types/float_cast.h"

namespace nhlo::parser_internal {
namespace {

// Clinger's fast path for f32: a decimal whose digits form an integer of at most 2^24, with at
// most 10 fraction digits, is one exactly representable integer divided by an exact power of
// ten, so a single float division rounds it correctly. On success advances `s` past the number;
// on anything else (more digits, an exponent, a letter after the digits) returns false and
// leaves `s` alone for from_chars. The text must end in a non-digit (the source buffer is a
// std::string, NUL-terminated), so the digit loops need no bounds checks.
bool ReadF32Fast(const char*& s, float* out) {
  static constexpr float kPow10[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
  const char* p = s;
  bool negative = *p == '-';
  p += negative;
  uint64_t mantissa = 0;  // wraps past 19 digits, which the count check rejects
  const char* digits_start = p;
  while (static_cast<unsigned>(*p - '0') < 10) mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
  size_t digits = static_cast<size_t>(p - digits_start), frac = 0;
  if (*p == '.') {
    const char* frac_start = ++p;
    while (static_cast<unsigned>(*p - '0') < 10) mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
    frac = static_cast<size_t>(p - frac_start);
    digits += frac;
  }
  if (digits == 0 || digits > 19 || frac > 10 || mantissa > (uint64_t(1) << 24) || IsIdentStart(*p)) return false;
  float v = static_cast<float>(mantissa);  // exact: <= 2^24
  if (frac) v /= kPow10[frac];
  *out = negative ? -v : v;
  s = p;
  return true;
}

}  // namespace

Result<int64_t> Parser::ParseInt(const Token& t) {
  std::string_view s = t.text;
  bool negative = !s.empty() && s[0] == '-';
  uint64_t magnitude = 0;
  auto r = std::from_chars(s.data() + (negative ? 1 : 0), s.data() + s.size(), magnitude);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    return ErrorAt(t.offset, "integer '" + std::string(s) + "' is out of range");
  if (negative) {
    if (magnitude > uint64_t(INT64_MAX) + 1)
      return ErrorAt(t.offset, "integer '" + std::string(s) + "' is out of range");
    return static_cast<int64_t>(0 - magnitude);
  }
  return static_cast<int64_t>(magnitude);  // values up to 2^64-1 are bit-cast, as XLA does
}

Result<double> Parser::ParseFloatToken(const Token& t, uint64_t* nan_payload) {
  if (nan_payload) *nan_payload = 0;
  if (t.kind == Tok::kIdent && t.text == "inf") return std::numeric_limits<double>::infinity();
  if (t.kind == Tok::kNegInf) return -std::numeric_limits<double>::infinity();
  if (t.kind != Tok::kInt && t.kind != Tok::kDecimal) return ErrorAt(t.offset, "expected a number, got " + Describe(t));
  std::string_view s = t.text;
  bool negative = !s.empty() && s[0] == '-';
  std::string_view body = negative ? s.substr(1) : s;
  if (body.substr(0, 3) == "nan") {
    if (body.size() > 3 && nan_payload) {
      std::string_view hex = body.substr(6, body.size() - 7);  // nan(0x...)
      uint64_t payload = 0;
      auto r = std::from_chars(hex.data(), hex.data() + hex.size(), payload, 16);
      if (r.ec != std::errc() || payload == 0) return ErrorAt(t.offset, "bad NaN payload in '" + std::string(s) + "'");
      *nan_payload = payload;
    }
    double nan = std::numeric_limits<double>::quiet_NaN();
    return negative ? -nan : nan;
  }
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars reports underflow as out of range too; only overflow is an error.
    double probe = std::strtod(std::string(s).c_str(), nullptr);
    if (std::isinf(probe)) return ErrorAt(t.offset, "number '" + std::string(s) + "' overflows a double");
    return probe;
  }
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    return ErrorAt(t.offset, "malformed number '" + std::string(s) + "'");
  return v;
}

// literal ::= '(' literal (',' literal)* ')'              for tuples
//           | value                                     for scalars
//           | '{' ... '}' nested rank deep | '{...}'    for arrays
Result<const Literal*> Parser::ParseLiteral(const Shape& shape, int depth) {
  if (depth > opts_.max_nesting) return ErrorHere("literal nesting deeper than " + std::to_string(opts_.max_nesting));
  if (tok_.kind == Tok::kIdent || tok_.kind == Tok::kLParen) NHLO_TRY(SkipOldLiteralShape(shape));
  Literal* lit = module_.arena.New<Literal>();
  lit->shape = shape;
  if (shape.IsTuple()) {
    NHLO_TRY(Expect(Tok::kLParen, "'(' to open a tuple literal"));
    std::vector<const Literal*> elements;
    for (size_t i = 0; i < shape.tuple.size(); ++i) {
      NHLO_ASSIGN_OR_RETURN(const Literal* e, ParseLiteral(shape.tuple[i], depth + 1));
      elements.push_back(e);
      if (tok_.kind == Tok::kComma) Advance();
    }
    NHLO_TRY(Expect(Tok::kRParen, "')' to close the tuple literal"));
    lit->tuple = module_.arena.Copy(elements);
    return static_cast<const Literal*>(lit);
  }
  if (!shape.IsArray()) {
    if (shape.type == PrimitiveType::kToken || shape.type == PrimitiveType::kOpaque)
      return static_cast<const Literal*>(lit);
    return ErrorHere("a literal of this shape cannot be written");
  }
  for (size_t i = 0; i < shape.dims.size(); ++i)
    if (shape.IsDynamicDim(i)) return ErrorHere("a literal cannot have a dynamic shape");
  int64_t bytes = HostBytes(shape);
  if (bytes < 0) return ErrorHere("literal of shape " + ShapeToString(shape, false) + " is too large");
  if (!shape.dims.empty() && tok_.kind == Tok::kLBrace && PeekNext().kind == Tok::kEllipsis) {
    // Elided data ({...}) has no bytes; codegen and the interpreter treat it as zeros.
    Advance();
    Advance();
    NHLO_TRY(Expect(Tok::kRBrace, "'}' after '...'"));
    lit->elided = true;
    return static_cast<const Literal*>(lit);
  }
  // Every element takes at least one character, so a literal cannot hold more elements than
  // the text has bytes left; checking first keeps a bad shape from allocating gigabytes. Small
  // literals are read, so a short one gets the parser's count message (`dimension 0 of the
  // literal has 1 elements, the shape says 4`).
  if (tok_.kind == Tok::kLBrace && bytes > (int64_t{1} << 20) &&
      shape.ElementCount() > static_cast<int64_t>(src_.text.size() - tok_.offset))
    return ErrorHere("literal of shape " + ShapeToString(shape, false) +
                     " has more elements than the text has characters");
  if (tok_.kind != Tok::kLBrace && !shape.dims.empty() && bytes > opts_.max_fill_literal_bytes)
    return ErrorHere("literal of shape " + ShapeToString(shape, false) + " filled from one value would take " +
                     std::to_string(bytes) + " bytes; the limit is " + std::to_string(opts_.max_fill_literal_bytes));
  lit->data = module_.arena.NewArray<uint8_t>(static_cast<size_t>(bytes));
  if (shape.dims.empty()) {
    NHLO_TRY(ParseElement(shape.type, lit->data.data()));
    return static_cast<const Literal*>(lit);
  }
  if (tok_.kind != Tok::kLBrace) {
    // XLA accepts one value for a whole array (`f32[3,3] constant(1)`) and, as its parser
    // stores that value at the first index of a zero-filled literal, only element 0 gets it:
    // XLA reprints the constant as `{ { 1, 0, 0 }, { 0, 0, 0 }, ... }` (the CHECK lines of
    // the corpus's matrix_einsum.hlo; docs/xla-judgments.md).
    uint8_t value[16] = {};  // an array with no elements still has a value to parse
    NHLO_TRY(ParseElement(shape.type, value));
    if (lit->data.size() > 0) {  // an empty array's storage may be a null pointer
      std::memset(lit->data.data(), 0, lit->data.size());
      std::memcpy(lit->data.data(), value, static_cast<size_t>(HostByteSize(shape.type)));
    }
    return static_cast<const Literal*>(lit);
  }
  if (shape.dims.size() > static_cast<size_t>(opts_.max_nesting))
    return ErrorHere("literal nesting deeper than " + std::to_string(opts_.max_nesting));
  int64_t index = 0;
  NHLO_TRY(ParseArrayLevel(shape, *lit, 0, index));
  return static_cast<const Literal*>(lit);
}

// shaped_literal ::= '(' shaped_literal* ')' | shape literal
// A literal attribute (custom-call `literal=`) carries its shape, and a tuple carries one per
// element, as XLA prints them: `literal=( s32[2]{0} {1, 2}, pred[] 1 )` (commas optional).
Result<const Literal*> Parser::ParseShapedLiteral(int depth) {
  if (depth > opts_.max_nesting) return ErrorHere("literal nesting deeper than " + std::to_string(opts_.max_nesting));
  if (tok_.kind != Tok::kLParen) {
    Shape shape;
    literal_follows_ = true;
    Status shape_status = ParseShape(shape);
    literal_follows_ = false;
    NHLO_TRY(shape_status);
    return ParseLiteral(shape, depth);
  }
  Advance();
  std::vector<const Literal*> elements;
  std::vector<Shape> shapes;
  while (tok_.kind != Tok::kRParen) {
    NHLO_ASSIGN_OR_RETURN(const Literal* element, ParseShapedLiteral(depth + 1));
    elements.push_back(element);
    shapes.push_back(element->shape);
    if (tok_.kind == Tok::kComma)
      Advance();
    else if (tok_.kind != Tok::kRParen && tok_.kind != Tok::kLParen && tok_.kind != Tok::kIdent)
      return Expected("',' or ')' in the tuple literal");
  }
  Advance();
  Literal* lit = module_.arena.New<Literal>();
  lit->shape = module_.MakeTupleShape(shapes);
  lit->tuple = module_.arena.Copy(elements);
  return static_cast<const Literal*>(lit);
}

Status Parser::ParseArrayLevel(const Shape& shape, Literal& lit, size_t dim, int64_t& index) {
  uint32_t open = tok_.offset;
  NHLO_TRY(Expect(Tok::kLBrace, "'{' (the literal has rank " + std::to_string(shape.dims.size()) + ")"));
  int64_t count = 0, want = shape.dims[dim];
  int elem_size = HostByteSize(shape.type);
  if (dim + 1 == shape.dims.size() && (shape.type == PrimitiveType::kF32 || shape.type == PrimitiveType::kS32))
    count = ScanNumberRow(shape.type, lit.data.data() + index * elem_size, want, index);
  for (;;) {
    // XLA's literal reader skips commas wherever they stand (ParseDenseLiteral), and some dumps
    // leave them out between sub-arrays: `{ { 0, 1 } { 2, 3 } }` reads as with them.
    while (tok_.kind == Tok::kComma) Advance();
    if (tok_.kind == Tok::kRBrace) break;
    if (count == want)
      return ErrorHere("too many elements in dimension " + std::to_string(dim) + " of the literal (expected " +
                       std::to_string(want) + ")");
    if (dim + 1 == shape.dims.size()) {
      NHLO_TRY(ParseElement(shape.type, lit.data.data() + index * elem_size));
      ++index;
    } else {
      NHLO_TRY(ParseArrayLevel(shape, lit, dim + 1, index));
    }
    ++count;
  }
  if (count != want)
    return ErrorAt(open, "dimension " + std::to_string(dim) + " of the literal has " + std::to_string(count) +
                             (count == 1 ? " element" : " elements") + ", the shape says " + std::to_string(want));
  Advance();
  return OkStatus();
}

// Big constants are most of a large dump's bytes. For f32 and s32 rows this reads plain
// numbers straight from the text, skipping the token machinery; at the first thing it does not
// handle (nan, inf, comments, an out-of-range value, a malformed number) it stops and leaves the
// rest of the row, from the start of that element, to the general path, which also produces
// any diagnostic.
int64_t Parser::ScanNumberRow(PrimitiveType type, uint8_t* out, int64_t want, int64_t& index) {
  const char* const text_end = src_.text.data() + src_.text.size();  // *text_end == '\0'
  const char* s = src_.text.data() + tok_.offset;
  const char* resume = s;
  int64_t n = 0;
  while (n < want) {
    const char* start = s;
    char c = *s;
    if (!(IsDigit(c) || c == '-' || c == '.')) break;
    if (type == PrimitiveType::kF32) {
      float v;
      if (!ReadF32Fast(s, &v)) {
        auto r = std::from_chars(start, text_end, v);
        if (r.ec != std::errc()) break;
        s = r.ptr;
      }
      std::memcpy(out + n * 4, &v, 4);
    } else {
      int32_t v;
      auto r = std::from_chars(start, text_end, v);
      if (r.ec != std::errc()) break;
      s = r.ptr;
      std::memcpy(out + n * 4, &v, 4);
    }
    while (IsSpace(*s)) ++s;
    if (*s == ',') {
      ++n;
      ++s;
      while (IsSpace(*s)) ++s;
      resume = s;
      continue;
    }
    if (*s == '}') {
      ++n;
      resume = s;
    }
    break;
  }
  if (n > 0) {
    index += n;
    lex_.set_position(static_cast<uint32_t>(resume - src_.text.data()));
    Advance();
  }
  return n;
}

// value ::= INT | DECIMAL | 'inf' | '-inf' | 'nan' ('(0x' HEX ')')? | 'true' | 'false'
//         | '(' value ',' value ')'   (complex)
Status Parser::ParseElement(PrimitiveType type, uint8_t* out) {
  Token t = tok_;
  if (type == PrimitiveType::kPred) {
    if (t.kind == Tok::kIdent && (t.text == "true" || t.text == "false")) {
      out[0] = t.text == "true";
    } else if (t.kind == Tok::kInt) {
      NHLO_ASSIGN_OR_RETURN(int64_t v, ParseInt(t));
      out[0] = v != 0;
    } else {
      return Expected("'true', 'false' or an integer");
    }
    Advance();
    return OkStatus();
  }
  if (IsComplex(type)) {
    PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    NHLO_TRY(Expect(Tok::kLParen, "'(' to open a complex value"));
    NHLO_TRY(ParseElement(part, out));
    NHLO_TRY(Expect(Tok::kComma, "','"));
    NHLO_TRY(ParseElement(part, out + HostByteSize(part)));
    NHLO_TRY(Expect(Tok::kRParen, "')' to close a complex value"));
    return OkStatus();
  }
  if (IsInteger(type)) {
    if (t.kind != Tok::kInt) return Expected("integer");
    std::string_view s = t.text;
    bool negative = s[0] == '-';
    uint64_t magnitude = 0;
    auto r = std::from_chars(s.data() + negative, s.data() + s.size(), magnitude);
    int bits = BitWidth(type);
    bool fits = r.ec == std::errc();
    if (fits && IsSignedInt(type)) {
      uint64_t limit = uint64_t(1) << (bits - 1);
      fits = negative ? magnitude <= limit : magnitude < limit;
    } else if (fits && negative) {
      // XLA reads the number as an int64 and range-checks it as a uint64: a negative value
      // wraps, which only u64 has room for (`u64[] constant(-1)` is 2^64-1).
      fits = bits == 64 && magnitude <= (uint64_t(1) << 63);
    } else if (fits) {
      fits = bits == 64 || magnitude < (uint64_t(1) << bits);
    }
    if (!fits)
      return ErrorHere("value " + std::string(s) + " is out of range for " + std::string(PrimitiveTypeName(type)));
    StoreBits(type, out, negative ? 0 - magnitude : magnitude);
    Advance();
    return OkStatus();
  }
  if (!IsFloat(type)) return ErrorHere("no literal syntax for " + std::string(PrimitiveTypeName(type)));
  if (type == PrimitiveType::kF32 &&
      (t.kind == Tok::kInt || (t.kind == Tok::kDecimal && t.text.back() != 'n' && t.text.back() != ')'))) {
    // Hot path for big f32 constants: one correctly rounded conversion straight to float.
    float v;
    const char* end = t.text.data() + t.text.size();
    const char* fast_end = t.text.data();  // the token lies inside the NUL-terminated source
    std::from_chars_result r{end, std::errc()};
    if (!ReadF32Fast(fast_end, &v) || fast_end != end) r = std::from_chars(t.text.data(), end, v);
    if (r.ec == std::errc() && r.ptr == end) {
      std::memcpy(out, &v, 4);
      Advance();
      return OkStatus();
    }
  }
  uint64_t payload = 0;
  NHLO_ASSIGN_OR_RETURN(double v, ParseFloatToken(t, &payload));
  if (payload != 0) {
    bool neg = std::signbit(v);
    // XLA refuses a payload wider than the type's mantissa rather than cutting it.
    const std::optional<NanPayloadBits> layout = NanPayloadBitsOf(type);
    if (!layout) return ErrorHere("NaN payloads are not supported for " + std::string(PrimitiveTypeName(type)));
    if (payload > layout->payload_mask) {
      char hex[40];
      std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(layout->payload_mask));
      return ErrorHere("NaN payload does not fit " + std::string(PrimitiveTypeName(type)) + ": its largest is " + hex);
    }
    StoreBits(type, out, (neg ? layout->sign : 0) | layout->infinity | payload);
    Advance();
    return OkStatus();
  }
  StoreFromDouble(type, out, v);
  if (std::isfinite(v)) {
    double back = LoadAsDouble(type, out);
    if (!std::isfinite(back))
      return ErrorHere("value " + std::string(t.text) + " is out of range for " + std::string(PrimitiveTypeName(type)));
  }
  Advance();
  return OkStatus();
}

}  // namespace nhlo::parser_internal
