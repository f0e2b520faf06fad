// SPDX-License-Identifier: Apache-2.0
// Lexical rules of HLO text that the reader and the writer share: character classes, the scan of
// a raw `{...}` block, and whether a word reads back as one bare identifier. The lexer
// (parser/lexer.cc) scans with these; the printer asks them whether text it writes unquoted will
// read back as written, so both sides follow one implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nhlo {

// Character classes as one table lookup each: the lexer asks for every byte of the input.
enum CharClass : uint8_t {
  kIdentStartBit = 1,
  kIdentCharBit = 2,
  kDigitBit = 4,
  kSpaceBit = 8,
  kRawSpecialBit = 16,
  kNotPlainBit = 32,
  kDimTextBit = 64
};
inline constexpr auto kCharClasses = [] {
  struct Table {
    uint8_t bits[256] = {};
  } t;
  for (int c = 0; c < 256; ++c) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    // What a raw {...} block scan must stop at: whitespace (folding), quotes, comments, braces.
    bool raw_special = space || c == '"' || c == '\'' || c == '/' || c == '{' || c == '}';
    // What a quoted string cannot hold as itself (see FindNotPlain).
    bool not_plain = c < 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '\\';
    bool ident_char = alpha || digit || c == '.' || c == '-';
    // What a shape's dimension list is written with: `8,<=16,?`.
    bool dim_text = digit || c == ',' || c == '<' || c == '=' || c == '?';
    t.bits[c] =
        static_cast<uint8_t>((alpha ? kIdentStartBit : 0) | (ident_char ? kIdentCharBit : 0) | (digit ? kDigitBit : 0) |
                             (space ? kSpaceBit : 0) | (raw_special ? kRawSpecialBit : 0) |
                             (not_plain ? kNotPlainBit : 0) | (dim_text ? kDimTextBit : 0));
  }
  return t;
}();
inline bool IsIdentStart(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kIdentStartBit; }
inline bool IsIdentChar(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kIdentCharBit; }
inline bool IsDigit(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kDigitBit; }
inline bool IsSpace(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kSpaceBit; }
inline bool IsRawSpecial(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kRawSpecialBit; }
inline bool IsNotPlain(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kNotPlainBit; }
inline bool IsDimText(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kDimTextBit; }

/// Index of the first byte in s[i, n) that is not an identifier character ([A-Za-z0-9_.-]), or
/// n. Sixteen bytes a step where SSE2 exists: names (`%convert_element_type.1174`) are most of
/// what the lexer and the operand reader scan, one compare-and-branch a byte otherwise.
inline size_t SkipIdentChars(const char* s, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i case_bit = _mm_set1_epi8(0x20), before_a = _mm_set1_epi8('a' - 1), after_z = _mm_set1_epi8('z' + 1),
                before_0 = _mm_set1_epi8('0' - 1), after_9 = _mm_set1_epi8('9' + 1), underscore = _mm_set1_epi8('_'),
                dot = _mm_set1_epi8('.'), dash = _mm_set1_epi8('-');
  for (; i + 16 <= n; i += 16) {
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    __m128i lower = _mm_or_si128(c, case_bit);  // bytes from 0x80 are negative: no letter, no digit
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, before_a), _mm_cmplt_epi8(lower, after_z));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(c, before_0), _mm_cmplt_epi8(c, after_9));
    __m128i other =
        _mm_or_si128(_mm_cmpeq_epi8(c, underscore), _mm_or_si128(_mm_cmpeq_epi8(c, dot), _mm_cmpeq_epi8(c, dash)));
    unsigned ident = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), other)));
    if (ident != 0xFFFFu) return i + static_cast<size_t>(__builtin_ctz(~ident));
  }
#endif
  while (i < n && IsIdentChar(s[i])) ++i;
  return i;
}

/// Index of the first `a` or `b` in s[i, n), or n. Sixteen bytes a step where SSE2 exists:
/// quoted strings (long op_name metadata) are a large share of a big module's bytes.
size_t FindEither(const char* s, size_t i, size_t n, char a, char b);

/// Index of the first byte in s[i, n) that a quoted string cannot hold as itself: a quote, a
/// backslash, a control character or a byte outside printable ASCII; n if none. A string body
/// without one is its own value and its own escaped spelling (support/escape.h), which is
/// nearly every op_name; sixteen bytes a step where SSE2 exists.
size_t FindNotPlain(const char* s, size_t i, size_t n);

/// The outcome of scanning a raw `{...}` block.
struct RawBlockScan {
  bool ok = false;          // false: unbalanced, or a string or /* comment runs off the end
  size_t end = 0;           // when ok: one past the closing '}'
  bool needs_fold = false;  // line breaks, tabs, double spaces or comments: whitespace folding changes it
};

/// Scans the balanced block whose '{' is text[start]. Strings (either quote, with escapes) and
/// comments are skipped with the rules whitespace folding uses, so a brace inside either never
/// ends the block.
RawBlockScan ScanRawBraceBlock(std::string_view text, size_t start);

/// Whether `text` is exactly one balanced `{...}` block that the raw-block reader keeps
/// verbatim: nothing for whitespace folding to change and no NUL byte (which the reader rejects).
bool IsVerbatimRawBlock(std::string_view text);

/// Whether `text` lexes as exactly one bare identifier token: an identifier start, identifier
/// characters to the end, and not `nan` (which the lexer reads as a number). Dim labels, the
/// other token that starts with a letter, always hold a '>', which no identifier does.
bool ScansAsOneIdentifier(std::string_view text);
/// The words HLO text reserves (HloModule, ENTRY, ROOT, true, the sharding and stack-frame
/// words...): an instruction or computation of such a name must be written with `%`.
bool IsHloKeyword(std::string_view w);

}  // namespace nhlo
