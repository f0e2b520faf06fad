// SPDX-License-Identifier: Apache-2.0
// Hand-written lexer for HLO text. Tokens are views into the source; numbers are classified
// here (int, decimal, dim labels, NxM, padding) and converted by the parser on demand.
#pragma once

#include <cstdint>
#include <string_view>

#include "support/text_scan.h"

namespace nhlo {

enum class Tok : uint8_t {
  kEof,
  kError,      // text holds the offending character(s); parser reports it
  kName,       // %foo, or foo: (text without % or :)
  kAttrName,   // foo= (text without =)
  kIdent,      // bare word: keyword, type name, opcode, enum value
  kInt,        // -?[0-9]+
  kDecimal,    // floats, nan, nan(0x..), -nan
  kNegInf,     // -inf
  kString,     // "..." or '...' (text is the raw body, still escaped)
  kDimLabels,  // b01f_01io->b01f
  kDxD,        // 3x3
  kPad,        // 0_1x1_1
  kEqual,
  kComma,
  kColon,
  kStar,
  kQuestion,
  kHash,
  kPlus,
  kTilde,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kLParen,
  kRParen,
  kArrow,     // ->
  kLeq,       // <=
  kEllipsis,  // ...
};

struct Token {
  Tok kind = Tok::kEof;
  uint32_t offset = 0;    // byte offset of the token's first character
  std::string_view text;  // see Tok for what it holds
};

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source) {}

  /// Scans the next token. Comments and whitespace are skipped.
  Token Next() {
    Token t;
    NextInto(t);
    return t;
  }
  /// As Next, writing the token in place: the parser keeps its current token in a member, and
  /// copying a returned token there costs a store-forwarding stall on every token.
  void NextInto(Token& out);
  /// Scans a raw balanced `{...}` block starting at the current position (after skipping
  /// whitespace) with ScanRawBraceBlock's rules; used for JSON-like values. Returns a kString
  /// token whose text includes the braces, or kError if unbalanced.
  Token RawBraceBlock();
  /// Whether the last RawBraceBlock saw text that whitespace folding changes (line breaks,
  /// tabs, double spaces, comments); when false the block can be kept as is.
  bool last_block_needs_fold() const { return last_block_needs_fold_; }

  uint32_t position() const { return pos_; }
  void set_position(uint32_t pos) { pos_ = pos; }
  std::string_view source() const { return src_; }
  /// True if an unterminated /* comment was seen (reported as an error token).
  bool SkipTrivia();

 private:
  Token Make(Tok kind, uint32_t start, uint32_t end) {
    return Token{kind, start, std::string_view(src_.data() + start, end - start)};
  }
  Token LexNumberLike(uint32_t start);
  Token LexString(uint32_t start, char quote);

  std::string_view src_;
  uint32_t pos_ = 0;
  bool last_block_needs_fold_ = true;
};

}  // namespace nhlo
