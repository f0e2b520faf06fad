// SPDX-License-Identifier: Apache-2.0
// A cursor over a captured attribute value (its whitespace already folded): the structured
// attribute readers (attr_values.cc) and the header's alias lists (header_aliases.cc) share it.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

#include "support/text_scan.h"

namespace nhlo {

// A cursor over a captured value: skips spaces, reads integers and punctuation.
class ValueCursor {
 public:
  explicit ValueCursor(std::string_view text) : s_(text) {}
  void SkipSpaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  bool Eat(char c) {
    SkipSpaces();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpaces();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool Int(int64_t& v) {
    SkipSpaces();
    const char* begin = s_.data() + pos_;
    const char* end = s_.data() + s_.size();
    auto [p, ec] = std::from_chars(begin, end, v);
    if (ec != std::errc() || p == begin) return false;
    pos_ += static_cast<size_t>(p - begin);
    return true;
  }
  bool AtEnd() {
    SkipSpaces();
    return pos_ == s_.size();
  }
  // The word `w`, after spaces.
  bool Word(std::string_view w) {
    SkipSpaces();
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  // The run of letters, digits, '_' and '-' at the cursor, after spaces (possibly empty).
  std::string_view WordChars() {
    SkipSpaces();
    size_t start = pos_;
    while (pos_ < s_.size() && (IsIdentStart(s_[pos_]) || IsDigit(s_[pos_]) || s_[pos_] == '-')) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // Steps over the balanced `{...}` at the cursor, after spaces (ScanRawBraceBlock's rules: a
  // brace inside a string does not count); false when there is none.
  bool SkipBraceBlock() {
    SkipSpaces();
    if (pos_ >= s_.size() || s_[pos_] != '{') return false;
    RawBlockScan scan = ScanRawBraceBlock(s_, pos_);
    if (!scan.ok) return false;
    pos_ = scan.end;
    return true;
  }
  size_t position() const { return pos_; }
  // A quoted name 'x' (no escapes).
  bool Quoted(std::string_view& name) {
    if (!Eat('\'')) return false;
    size_t close = s_.find('\'', pos_);
    if (close == std::string_view::npos) return false;
    name = s_.substr(pos_, close - pos_);
    pos_ = close + 1;
    return true;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace nhlo
