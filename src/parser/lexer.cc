// SPDX-License-Identifier: Apache-2.0
#include "parser/lexer.h"

namespace nhlo {
namespace {

bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Each matcher returns the length of the longest match of its pattern at s[0..], or 0.

// -?( [0-9]+ | [0-9]+.[0-9]* | [0-9]*.[0-9]+ )([eE][+-]?[0-9]+)?  -- with '.' or exponent
size_t MatchDecimal(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++int_digits;
  bool dot = false;
  if (i < s.size() && s[i] == '.' && !(i + 1 < s.size() && s[i + 1] == '.')) {
    dot = true;
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return 0;
  bool exp = false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t d = j;
    while (j < s.size() && IsDigit(s[j])) ++j;
    if (j > d) {
      exp = true;
      i = j;
    }
  }
  if (!dot && !exp) return 0;
  return i;
}

// [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
size_t MatchDimLabels(std::string_view s) {
  auto run = [&](size_t i, char x, char y) {
    size_t j = i;
    while (j < s.size() && (IsDigit(s[j]) || s[j] == '?' || s[j] == x || s[j] == y)) ++j;
    return j - i;
  };
  size_t a = run(0, 'b', 'f');
  if (a < 2 || a >= s.size() || s[a] != '_') return 0;
  size_t b = run(a + 1, 'i', 'o');
  size_t i = a + 1 + b;
  if (b < 2 || i + 1 >= s.size() || s[i] != '-' || s[i + 1] != '>') return 0;
  size_t c = run(i + 2, 'b', 'f');
  if (c < 2) return 0;
  return i + 2 + c;
}

// [0-9]+(x[0-9]+)+
size_t MatchDxD(std::string_view s) {
  size_t i = 0, groups = 0;
  for (;;) {
    size_t d = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == d) return 0;
    ++groups;
    if (i < s.size() && s[i] == 'x' && i + 1 < s.size() && IsDigit(s[i + 1])) {
      ++i;
      continue;
    }
    break;
  }
  return groups >= 2 ? i : 0;
}

// -?[0-9]+_-?[0-9]+(_[0-9]+)?(x -?[0-9]+_-?[0-9]+(_[0-9]+)?)*
size_t MatchPad(std::string_view s) {
  size_t i = 0;
  auto signed_int = [&]() {
    size_t j = i;
    if (j < s.size() && s[j] == '-') ++j;
    size_t d = j;
    while (j < s.size() && IsDigit(s[j])) ++j;
    if (j == d) return false;
    i = j;
    return true;
  };
  for (;;) {
    if (!signed_int()) return 0;
    if (i >= s.size() || s[i] != '_') return 0;
    ++i;
    if (!signed_int()) return 0;
    if (i + 1 < s.size() && s[i] == '_' && IsDigit(s[i + 1])) {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
    }
    if (i + 1 < s.size() && s[i] == 'x' && (IsDigit(s[i + 1]) || s[i + 1] == '-')) {
      ++i;
      continue;
    }
    return i;
  }
}

size_t MatchInt(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  size_t d = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i > d ? i : 0;
}

// nan, nan(0x..) with an optional leading '-'.
size_t MatchNan(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (s.substr(i, 3) != "nan") return 0;
  i += 3;
  if (s.substr(i, 3) == "(0x") {
    size_t j = i + 3, d = j;
    while (j < s.size() && IsHex(s[j])) ++j;
    if (j > d && j < s.size() && s[j] == ')') return j + 1;
  }
  return i;
}

}  // namespace

bool Lexer::SkipTrivia() {
  for (;;) {
    while (pos_ < src_.size() && IsSpace(src_[pos_])) ++pos_;
    if (pos_ + 1 < src_.size() && src_[pos_] == '/' && src_[pos_ + 1] == '/') {
      while (pos_ < src_.size() && src_[pos_] != '\n' && src_[pos_] != '\r') ++pos_;
      continue;
    }
    if (pos_ + 1 < src_.size() && src_[pos_] == '/' && src_[pos_ + 1] == '*') {
      size_t end = src_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) return false;
      pos_ = static_cast<uint32_t>(end + 2);
      continue;
    }
    return true;
  }
}

void Lexer::NextInto(Token& out) {
  // Locals instead of members in the loops: every byte of the input passes through here.
  const char* s = src_.data();
  const uint32_t n = static_cast<uint32_t>(src_.size());
  uint32_t p = pos_;
  for (;;) {
    while (p < n && IsSpace(s[p])) ++p;
    if (p + 1 < n && s[p] == '/') {
      if (s[p + 1] == '/') {
        // A line comment ends at either line end, so files with Mac-style `\r` line ends read as
        // XLA's lexer reads them.
        while (p < n && s[p] != '\n' && s[p] != '\r') ++p;
        continue;
      }
      if (s[p + 1] == '*') {
        size_t end = src_.find("*/", p + 2);
        if (end == std::string_view::npos) {
          // Point at the comment opener, not at end of file.
          pos_ = n;
          out = Token{Tok::kError, p, "unterminated /* comment"};
          return;
        }
        p = static_cast<uint32_t>(end + 2);
        continue;
      }
    }
    break;
  }
  if (p >= n) {
    pos_ = p;
    out = Token{Tok::kEof, p, {}};
    return;
  }
  const uint32_t start = p;
  const char c = s[p];
  if (IsIdentStart(c)) {
    p = static_cast<uint32_t>(SkipIdentChars(s, p + 1, n));
    // An identifier starting with b/f may be dim labels (b01f_01io->b01f). Their characters up to
    // the arrow are identifier characters or '?', so the scan above stops at '?' or after the
    // arrow's '-': only then is it worth a look (most b/f words are element types).
    if ((c == 'b' || c == 'f') && p < n && (s[p] == '?' || (s[p] == '>' && s[p - 1] == '-'))) {
      if (size_t len = MatchDimLabels(std::string_view(s + start, n - start)); len > 0) {
        pos_ = start + static_cast<uint32_t>(len);
        out = Make(Tok::kDimLabels, start, pos_);
        return;
      }
    }
    std::string_view word(s + start, p - start);
    if (p < n && s[p] == ':') {
      pos_ = p + 1;
      out = Token{Tok::kName, start, word};
      return;
    }
    if (p < n && s[p] == '=') {
      pos_ = p + 1;
      out = Token{Tok::kAttrName, start, word};
      return;
    }
    if (word == "nan") {
      pos_ = start + static_cast<uint32_t>(MatchNan(std::string_view(s + start, n - start)));
      out = Make(Tok::kDecimal, start, pos_);
      return;
    }
    pos_ = p;
    out = Token{Tok::kIdent, start, word};
    return;
  }
  if (IsDigit(c) || c == '-' || c == '?') {
    out = LexNumberLike(start);
    return;
  }
  pos_ = ++p;
  switch (c) {
    case '%': {
      // XLA's grammar: '%' [A-Za-z_][A-Za-z0-9_.-]*. A leading digit, '.' or '-' is refused here,
      // as XLA refuses it, so no name is accepted that a signature could not print back.
      if (p < n && !IsIdentStart(s[p])) {
        out = Token{Tok::kError, start, "expected a name after '%' (a name starts with a letter or '_')"};
        return;
      }
      p = static_cast<uint32_t>(SkipIdentChars(s, p, n));
      pos_ = p;
      if (p == start + 1) {
        out = Token{Tok::kError, start, "expected a name after '%'"};
        return;
      }
      out = Token{Tok::kName, start, std::string_view(s + start + 1, p - start - 1)};
      return;
    }
    case '"':
    case '\'': out = LexString(start, c); return;
    case '=': {
      out = Make(Tok::kEqual, start, p);
      return;
    }
    case ',': {
      out = Make(Tok::kComma, start, p);
      return;
    }
    case ':': {
      out = Make(Tok::kColon, start, p);
      return;
    }
    case '*': {
      out = Make(Tok::kStar, start, p);
      return;
    }
    case '#': {
      out = Make(Tok::kHash, start, p);
      return;
    }
    case '+': {
      out = Make(Tok::kPlus, start, p);
      return;
    }
    case '~': {
      out = Make(Tok::kTilde, start, p);
      return;
    }
    case '[': {
      out = Make(Tok::kLBracket, start, p);
      return;
    }
    case ']': {
      out = Make(Tok::kRBracket, start, p);
      return;
    }
    case '{': {
      out = Make(Tok::kLBrace, start, p);
      return;
    }
    case '}': {
      out = Make(Tok::kRBrace, start, p);
      return;
    }
    case '(': {
      out = Make(Tok::kLParen, start, p);
      return;
    }
    case ')': {
      out = Make(Tok::kRParen, start, p);
      return;
    }
    case '<':
      if (p < n && s[p] == '=') {
        pos_ = p + 1;
        out = Make(Tok::kLeq, start, pos_);
        return;
      }
      break;
    case '.':
      if (src_.substr(start, 3) == "...") {
        pos_ = start + 3;
        out = Make(Tok::kEllipsis, start, pos_);
        return;
      }
      break;
    default: break;
  }
  out = Token{Tok::kError, start, std::string_view(s + start, 1)};
  return;
}

Token Lexer::LexNumberLike(uint32_t start) {
  std::string_view rest = src_.substr(start);
  if (rest[0] == '-' && rest.size() >= 2 && rest[1] == '>') {
    pos_ = start + 2;
    return Make(Tok::kArrow, start, pos_);
  }
  // Fast path: a plain integer (the most common number) is digits followed by a character
  // that cannot continue a decimal, dim-labels, NxM or padding token.
  {
    size_t i = rest[0] == '-' ? 1 : 0, d = i;
    while (i < rest.size() && IsDigit(rest[i])) ++i;
    if (i > d) {
      char c = i < rest.size() ? rest[i] : ' ';
      bool continues = c == '.' || c == 'e' || c == 'E' || c == 'x' || c == '_' || c == 'b' || c == 'f' || c == 'i' ||
                       c == 'o' || c == '?' || c == '-';
      if (!continues) {
        pos_ = start + static_cast<uint32_t>(i);
        return Make(Tok::kInt, start, pos_);
      }
    }
  }
  if (size_t n = MatchDecimal(rest)) {
    pos_ = start + static_cast<uint32_t>(n);
    return Make(Tok::kDecimal, start, pos_);
  }
  if (size_t n = MatchDimLabels(rest)) {
    pos_ = start + static_cast<uint32_t>(n);
    return Make(Tok::kDimLabels, start, pos_);
  }
  if (size_t n = MatchDxD(rest)) {
    pos_ = start + static_cast<uint32_t>(n);
    return Make(Tok::kDxD, start, pos_);
  }
  if (size_t n = MatchPad(rest)) {
    pos_ = start + static_cast<uint32_t>(n);
    return Make(Tok::kPad, start, pos_);
  }
  if (size_t n = MatchInt(rest)) {
    pos_ = start + static_cast<uint32_t>(n);
    return Make(Tok::kInt, start, pos_);
  }
  if (rest.substr(0, 4) == "-inf" && (rest.size() == 4 || !IsIdentChar(rest[4]))) {
    pos_ = start + 4;
    return Make(Tok::kNegInf, start, pos_);
  }
  if (size_t n = MatchNan(rest)) {
    pos_ = start + static_cast<uint32_t>(n);
    return Make(Tok::kDecimal, start, pos_);
  }
  if (rest[0] == '?') {
    pos_ = start + 1;
    return Make(Tok::kQuestion, start, pos_);
  }
  pos_ = start + 1;
  return Token{Tok::kError, start, src_.substr(start, 1)};
}

Token Lexer::LexString(uint32_t start, char quote) {
  uint32_t body = pos_;
  for (;;) {
    pos_ = static_cast<uint32_t>(FindEither(src_.data(), pos_, src_.size(), quote, '\\'));
    if (pos_ >= src_.size() || src_[pos_] == quote) break;
    pos_ += pos_ + 1 < src_.size() ? 2 : 1;  // an escape: skip the escaped character
  }
  if (pos_ >= src_.size()) return Token{Tok::kError, start, "unterminated string"};
  std::string_view text = src_.substr(body, pos_ - body);
  ++pos_;
  return Token{Tok::kString, start, text};
}

Token Lexer::RawBraceBlock() {
  if (!SkipTrivia()) return Token{Tok::kError, pos_, "unterminated /* comment"};
  uint32_t start = pos_;
  if (pos_ >= src_.size() || src_[pos_] != '{') return Token{Tok::kError, start, "expected '{'"};
  RawBlockScan scan = ScanRawBraceBlock(src_, start);
  if (!scan.ok) {
    pos_ = static_cast<uint32_t>(src_.size());
    return Token{Tok::kError, start, "unbalanced '{' in attribute value"};
  }
  pos_ = static_cast<uint32_t>(scan.end);
  last_block_needs_fold_ = scan.needs_fold;
  return Make(Tok::kString, start, pos_);
}

}  // namespace nhlo
