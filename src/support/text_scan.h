// SPDX-License-Identifier: Apache-2.0
// Lexical rules of HLO text that the reader and the writer share: character classes, the scan of
// a raw `{...}` block, and whether a word reads back as one bare identifier. The lexer
// (parser/lexer.cc) scans with these; the printer asks them whether text it writes unquoted will
// read back as written, so both sides follow one implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nhlo {

// Character classes as one table lookup each: the lexer asks for every byte of the input.
enum CharClass : uint8_t {
  kIdentStartBit = 1, kIdentCharBit = 2, kDigitBit = 4, kSpaceBit = 8, kRawSpecialBit = 16, kNotPlainBit = 32
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
    t.bits[c] = static_cast<uint8_t>((alpha ? kIdentStartBit : 0) | (ident_char ? kIdentCharBit : 0) | (digit ? kDigitBit : 0) |
                                     (space ? kSpaceBit : 0) | (raw_special ? kRawSpecialBit : 0) |
                                     (not_plain ? kNotPlainBit : 0));
  }
  return t;
}();
inline bool IsIdentStart(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kIdentStartBit; }
inline bool IsIdentChar(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kIdentCharBit; }
inline bool IsDigit(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kDigitBit; }
inline bool IsSpace(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kSpaceBit; }
inline bool IsRawSpecial(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kRawSpecialBit; }
inline bool IsNotPlain(char c) { return kCharClasses.bits[static_cast<uint8_t>(c)] & kNotPlainBit; }

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
