// SPDX-License-Identifier: Apache-2.0
// Shapes and layouts, with the cache that lets repeated shape text skip parsing.
#include <cstring>
#include <string>

#include "parser/parser_internal.h"

namespace nhlo::parser_internal {

namespace {

// The length of the plain array shape text at `t` (NUL-terminated), with a hash of it:
// `type[dims]` (digits, ',', '<=', '?') and a layout of integers written straight after the
// ']'. 0 for anything else, and when whitespace after the ']' leads to a '{' or a comment (a
// layout after all, or a computation's body): the ring and the token path judge those.
uint32_t PlainShapeExtent(const char* t, uint32_t* hash) {
  const char* p = t;
  if (!IsIdentStart(*p)) return 0;
  ++p;
  while (IsIdentChar(*p)) ++p;
  if (*p != '[') return 0;
  ++p;
  while (IsDimText(*p)) ++p;
  if (*p != ']') return 0;
  ++p;
  if (*p == '{') {
    ++p;
    if (!IsDigit(*p)) return 0;
    while (IsDigit(*p) || *p == ',') ++p;
    if (*p != '}') return 0;
    ++p;
  }
  if (IsIdentChar(*p)) return 0;  // `f32[2]sparse{4}`: the text goes on
  const char* q = p;
  while (IsSpace(*q)) ++q;
  if (*q == '/' || (q != p && *q == '{')) return 0;
  const size_t n = static_cast<size_t>(p - t);
  *hash = static_cast<uint32_t>(NameTable<Instruction>::Hash(std::string_view(t, n)));
  return static_cast<uint32_t>(n);
}

}  // namespace

bool Parser::TryHashedShape(uint32_t at, Shape& shape, uint32_t* length) {
  if (!shape_table_) return false;
  const char* text = src_.text.data();
  uint32_t hash = 0;
  uint32_t n = PlainShapeExtent(text + at, &hash);
  if (n == 0) return false;
  const HashedShape& e = shape_table_[hash % kShapeTableSize];
  if (!SameName(std::string_view(text + at, n), std::string_view(text + e.offset, e.length))) return false;
  shape = e.shape;
  *length = n;
  return true;
}

// shape ::= '(' (shape (',' shape)*)? ')' | TYPE '[' (dim (',' dim)*)? ']' layout?
// dim   ::= INT | '<=' INT | '?'
Status Parser::ParseShape(Shape& shape, int depth) {
  if (depth > opts_.max_nesting) return ErrorHere("shape nesting deeper than " + std::to_string(opts_.max_nesting));
  if (tok_.kind == Tok::kLParen) {
    Advance();
    std::vector<Shape> elements;
    while (tok_.kind != Tok::kRParen) {
      Shape e;
      NHLO_TRY(ParseShape(e, depth + 1));
      elements.push_back(e);
      if (tok_.kind == Tok::kComma)
        Advance();
      else if (tok_.kind != Tok::kRParen)
        return Expected("',' or ')' in the tuple shape");
    }
    Advance();
    shape = module_.MakeTupleShape(elements);
    return OkStatus();
  }
  if (IsIdent("b") && PeekNext().kind == Tok::kLParen) {
    Advance();
    Advance();
    Shape inner;
    NHLO_TRY(ParseShape(inner, depth + 1));
    NHLO_TRY(Expect(Tok::kRParen, "')'"));
    shape = Shape();
    shape.type = PrimitiveType::kBuffer;
    shape.tuple = module_.arena.Copy(&inner, 1);
    return OkStatus();
  }
  if (tok_.kind != Tok::kIdent) return Expected("shape");
  if (TryCachedShape(shape)) return OkStatus();
  auto type = TypeFromWord(tok_.text);
  if (!type) return ErrorHere("unknown element type '" + std::string(tok_.text) + "'");
  uint32_t text_start = tok_.offset;
  Advance();
  NHLO_TRY(Expect(Tok::kLBracket, "'['"));
  SmallVec<int64_t, 8> dims;
  SmallVec<DimKind, 8> kinds;
  bool dynamic = false;
  int64_t elements = 1;
  while (tok_.kind != Tok::kRBracket) {
    DimKind kind = DimKind::kStatic;
    int64_t value = 0;
    if (tok_.kind == Tok::kQuestion) {
      kind = DimKind::kUnbounded;
      value = -1;
      Advance();
    } else {
      if (tok_.kind == Tok::kLeq) {
        kind = DimKind::kBounded;
        Advance();
      }
      if (tok_.kind != Tok::kInt) return Expected("dimension size");
      NHLO_ASSIGN_OR_RETURN(value, ParseInt(tok_));
      if (value < 0) return ErrorHere("dimension size must be >= 0");
      // The non-zero dimensions must multiply to less than 2^63 whatever their order: an empty
      // array's other dimensions still size its loops and its printed form.
      if (value != 0 && elements > INT64_MAX / value) return ErrorHere("shape has more than 2^63 elements");
      if (value != 0) elements *= value;
      Advance();
    }
    dynamic |= kind != DimKind::kStatic;
    dims.push_back(value);
    kinds.push_back(kind);
    if (tok_.kind == Tok::kComma)
      Advance();
    else if (tok_.kind != Tok::kRBracket)
      return Expected("',' or ']' in the dimensions");
  }
  uint32_t text_end = tok_.offset + 1;
  Advance();
  shape = Shape();
  shape.type = *type;
  shape.dims = module_.arena.Copy(dims.data(), dims.size());
  if (dynamic) shape.dim_kinds = module_.arena.Copy(kinds.data(), kinds.size());
  if (IsIdent("sparse") && PeekNext().kind == Tok::kLBrace) {
    // `f32[2,3,4]sparse{10}`: the sparse layout (its element budget in braces), 2018-01 until
    // 31bec056e8 (2020-01-02). Read as the dense shape; the constant's literal lists elements.
    uint32_t at = tok_.offset;
    Advance();
    Advance();
    if (tok_.kind != Tok::kInt) return Expected("the sparse layout's element count");
    Advance();
    NHLO_TRY(Expect(Tok::kRBrace, "'}' to close the sparse layout"));
    NoteOldForm(at,
                "the sparse layout `sparse{N}` (removed from XLA in 31bec056e8, 2020-01-02), read as a dense "
                "array");
    sparse_layout_seen_ = true;
    if (!dims.empty()) shape.layout = &kLayoutNotWritten;
    return OkStatus();  // not remembered: the shape caches hold plain text only
  }
  bool layout_written = false;
  if (tok_.kind == Tok::kLBrace) {
    Tok next = PeekNext().kind;
    if (next == Tok::kRBrace && dims.empty() && !literal_follows_) {
      // `f32[]{}`: a scalar's layout, empty; XLA reads it and prints the scalar without it.
      Advance();
      text_end = tok_.offset + 1;
      Advance();
      RememberShape(text_start, text_end, shape);
      return OkStatus();
    }
    if ((next == Tok::kInt || next == Tok::kColon) && (!literal_follows_ || BraceGroupIsFollowedByBrace())) {
      uint32_t close = 0;
      NHLO_TRY(ParseLayout(shape, &close));
      text_end = close + 1;
      layout_written = true;
    }
  }
  if (!layout_written && !dims.empty()) shape.layout = &kLayoutNotWritten;
  RememberShape(text_start, text_end, shape);
  return OkStatus();
}

// The cache applies when the source at the current token repeats a remembered shape's text
// exactly and nothing after it could extend the shape: text that ends at `]` must not be
// followed by a `{` (a layout) or a comment hiding one.
bool Parser::TryCachedShape(Shape& shape) { return TryCachedShapeAt(tok_.offset, shape); }

// `at` is where the token path's next token would start (the instruction head calls this before
// lexing the shape's first word): every remembered text starts with a letter, so spaces or a
// comment at `at` match nothing.
bool Parser::TryCachedShapeAt(uint32_t at, Shape& shape) {
  if (literal_follows_) return false;
  std::string_view text = src_.text;
  // Most shapes are plain and seen before: the hashed table answers them in one probe. The
  // ring is for the rest (tuples, layouts with tails, a shape first seen in a signature).
  uint32_t length = 0;
  if (TryHashedShape(at, shape, &length)) {
    lex_.set_position(at + length);
    Advance();
    return true;
  }
  if (size_t(at) + 8 > text.size()) return false;
  uint64_t head;
  std::memcpy(&head, text.data() + at, 8);
  for (const CachedShape& c : shape_cache_) {
    if (c.length == 0 || (head & c.mask) != c.prefix || size_t(at) + c.length > text.size()) continue;
    if (std::memcmp(text.data() + at, text.data() + c.offset, c.length) != 0) continue;
    uint32_t end = at + c.length;
    if (end < text.size() && IsIdentChar(text[end])) continue;  // `f32[2]sparse{4}`: the text goes on
    if (text[end - 1] == ']') {
      size_t q = end;
      while (q < text.size() && IsSpace(text[q])) ++q;
      // `f32[8]` cached from a signature is a prefix of `f32[8]{0}`: try the other entries. A
      // `{` whose content starts with a name or closes at once cannot be a layout (the token
      // path reads a layout only at an integer or ':'): the body after a signature's result.
      if (q < text.size() && text[q] == '/') continue;
      if (q < text.size() && text[q] == '{') {
        size_t r = q + 1;
        while (r < text.size() && IsSpace(text[r])) ++r;
        if (r >= text.size() || !(IsIdentStart(text[r]) || text[r] == '%' || text[r] == '}')) continue;
        if (text[r] == '}' && c.shape.dims.empty()) continue;  // `f32[]{}`: a scalar's empty layout
      }
    }
    shape = c.shape;
    lex_.set_position(end);
    Advance();
    return true;
  }
  return false;
}

// With the current token a signature's `(`: steps over `name: shape, ...)` written plainly (one
// space after ':' and ','; every shape byte-identical to a cached one, which the token path
// parsed before, so it is valid) and leaves the token at what follows `)`. Signatures are
// checked for syntax only, and a post-fusion dump has one per few instructions. At anything
// else it stops at the start of that parameter, with the token path's token there, and returns
// false: the caller's loop continues as if nothing had been skipped.
bool Parser::SkipPlainSignatureParameters() {
  std::string_view text = src_.text;  // NUL-terminated: scans stop at the end
  const char* t = text.data();
  uint32_t param = lex_.position();
  for (;;) {
    uint32_t p = param;
    if (!IsIdentStart(t[p])) break;
    while (IsIdentChar(t[p])) ++p;
    if (t[p] != ':' || t[p + 1] != ' ') break;
    p += 2;
    uint32_t length = 0;
    Shape unused;
    if (!TryHashedShape(p, unused, &length) || (t[p + length] != ',' && t[p + length] != ')')) {
      length = 0;
      for (const CachedShape& c : shape_cache_) {
        if (c.length == 0 || size_t(p) + c.length >= text.size()) continue;
        char after = t[p + c.length];
        if ((after == ',' || after == ')') && std::memcmp(t + p, t + c.offset, c.length) == 0) {
          length = c.length;
          break;
        }
      }
      if (length == 0) break;
    }
    p += length;
    if (t[p] == ')') {
      lex_.set_position(p + 1);
      Advance();
      return true;
    }
    if (t[p + 1] != ' ') break;  // t[p] is ','
    param = p + 2;
  }
  lex_.set_position(param);
  Advance();
  return false;
}

void Parser::RememberShape(uint32_t start, uint32_t end, const Shape& shape) {
  if (literal_follows_ || end <= start || end - start > 128) return;
  CachedShape& c = shape_cache_[shape_cache_next_];
  shape_cache_next_ = (shape_cache_next_ + 1) % kShapeCacheSize;
  c.offset = start;
  c.length = end - start;
  c.mask = c.length >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * c.length)) - 1;
  c.prefix = 0;
  std::memcpy(&c.prefix, src_.text.data() + start, std::min<uint32_t>(c.length, 8));
  c.shape = shape;
  uint32_t hash = 0;
  if (PlainShapeExtent(src_.text.data() + start, &hash) != end - start) return;
  if (!shape_table_) shape_table_ = std::make_unique<HashedShape[]>(kShapeTableSize);
  shape_table_[hash % kShapeTableSize] = HashedShape{start, end - start, shape};
}

// In `f32[2] {1, 2}` the braces are the literal, in `f32[2]{0} {1, 2}` the first pair is the
// layout: where a literal follows the shape, a brace group is a layout only if another `{`
// comes after it.
bool Parser::BraceGroupIsFollowedByBrace() {
  uint32_t saved = lex_.position();
  int depth = 1;
  Token t;
  do {
    t = lex_.Next();
    if (t.kind == Tok::kLBrace) ++depth;
    if (t.kind == Tok::kRBrace) --depth;
  } while (depth > 0 && t.kind != Tok::kEof && t.kind != Tok::kError);
  bool brace = depth == 0 && lex_.Next().kind == Tok::kLBrace;
  lex_.set_position(saved);
  return brace;
}

// The parts of a layout's attributes XLA's parser judges: `D(...)` dim level types are D
// (dense), C (compressed), S (singleton) or H (loose compressed), each optionally followed by
// `+` or `~`, one per dimension; a `P(...)` physical shape belongs to sparse layouts only.
Status Parser::CheckLayoutTail(std::string_view tail, uint32_t offset, size_t rank) {
  bool sparse = false;
  size_t d = tail.find("D(");
  if (d != std::string_view::npos && (d == 0 || !IsIdentChar(tail[d - 1]))) {
    size_t i = d + 2, count = 0;
    for (;;) {
      while (i < tail.size() && tail[i] == ' ') ++i;
      if (i >= tail.size()) break;
      char c = tail[i];
      if (c == ')') break;
      if (c != 'D' && c != 'C' && c != 'S' && c != 'H')
        return ErrorAt(offset + static_cast<uint32_t>(i),
                       std::string("unknown dim level type '") + c + "' (D, C, S or H, optionally followed by + or ~)");
      sparse |= c != 'D';
      ++count;
      ++i;
      while (i < tail.size() && (tail[i] == '+' || tail[i] == '~')) ++i;
      while (i < tail.size() && tail[i] == ' ') ++i;
      if (i < tail.size() && tail[i] == ',') ++i;
    }
    if (count != rank)
      return ErrorAt(
          offset + static_cast<uint32_t>(d),
          "layout gives " + std::to_string(count) + " dim level types for a shape of rank " + std::to_string(rank));
  }
  size_t p = tail.find("P(");
  if (p != std::string_view::npos && (p == 0 || !IsIdentChar(tail[p - 1])) && !sparse)
    return ErrorAt(offset + static_cast<uint32_t>(p), "a physical shape P(...) belongs to sparse layouts only");
  return OkStatus();
}

// layout ::= '{' (INT (',' INT)*)? (':' layout_attrs)? '}'
Status Parser::ParseLayout(Shape& shape, uint32_t* close_offset) {
  uint32_t open = tok_.offset;
  Advance();
  SmallVec<int64_t, 8> minor_to_major;
  while (tok_.kind == Tok::kInt) {
    NHLO_ASSIGN_OR_RETURN(int64_t v, ParseInt(tok_));
    minor_to_major.push_back(v);
    Advance();
    if (tok_.kind == Tok::kComma) Advance();
  }
  Layout* layout = module_.arena.New<Layout>();
  if (tok_.kind == Tok::kColon) {
    // Everything up to the matching '}' is kept as text (tiles, memory space, element size...).
    // Only the characters layout attributes use are accepted, with properly nested brackets,
    // so the kept text always prints back to something that parses the same way.
    std::string_view text = src_.text;
    uint32_t start = lex_.position(), i = start;
    char closers[64];
    int depth = 0;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (c == '}' && depth == 0) break;
      if (c == '(' || c == '[' || c == '{') {
        if (depth == static_cast<int>(sizeof(closers))) return ErrorAt(i, "layout nested too deeply");
        closers[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0 || closers[depth - 1] != c)
          return ErrorAt(i, std::string("unbalanced '") + c + "' in the layout");
        --depth;
      } else if (!IsIdentChar(c) && c != ',' && c != '*' && c != '#' && c != '+' && c != '~' && c != ':' && c != ' ' &&
                 c != '\n' && c != '\t' && c != '\r') {
        return ErrorAt(i, std::string("unexpected '") + c + "' in the layout");
      }
    }
    if (i >= text.size()) return ErrorAt(open, "unterminated layout");
    NHLO_TRY(CheckLayoutTail(text.substr(start, i - start), start, shape.dims.size()));
    layout->tail = FoldRaw(module_.arena, text.substr(start, i - start));
    while (!layout->tail.empty() && layout->tail.back() == ' ') layout->tail.remove_suffix(1);
    while (!layout->tail.empty() && layout->tail.front() == ' ') layout->tail.remove_prefix(1);
    lex_.set_position(i);
    Advance();
  }
  if (tok_.kind != Tok::kRBrace) return Expected("'}' to close the layout");
  if (minor_to_major.size() != shape.dims.size())
    return ErrorAt(open, "layout has " + std::to_string(minor_to_major.size()) + " dimensions but the shape has rank " +
                             std::to_string(shape.dims.size()));
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    int64_t d = minor_to_major[i];
    bool repeated = false;
    for (size_t j = 0; j < i; ++j) repeated |= minor_to_major[j] == d;
    if (d < 0 || d >= static_cast<int64_t>(shape.dims.size()) || repeated)
      return ErrorAt(open, "layout is not a permutation of the dimensions");
  }
  *close_offset = tok_.offset;
  Advance();
  bool is_default = layout->tail.empty();
  for (size_t i = 0; i < minor_to_major.size() && is_default; ++i)
    is_default = minor_to_major[i] == static_cast<int64_t>(minor_to_major.size() - 1 - i);
  if (!is_default) {
    layout->minor_to_major = module_.arena.Copy(minor_to_major.data(), minor_to_major.size());
    shape.layout = layout;
  }
  return OkStatus();
}

}  // namespace nhlo::parser_internal
