// SPDX-License-Identifier: Apache-2.0
#include "types/ffi_attributes.h"

#include <vector>

namespace nhlo {
namespace {

std::string_view Trim(std::string_view s) {
  auto blank = [](char ch) { return ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// The bracket `open` closes with.
char Closer(char open) {
  switch (open) {
    case '[': return ']';
    case '{': return '}';
    case '(': return ')';
    default: return '>';
  }
}

// The positions of `sep` in `text` outside brackets and quoted strings, or an error for an
// unbalanced bracket or an unterminated string.
Result<std::vector<size_t>> TopLevel(std::string_view text, char sep) {
  std::vector<size_t> at;
  std::string open;  // the brackets open at this point, innermost last
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '\\')
        ++i;  // an escaped character, \" included
      else if (ch == '"')
        quoted = false;
      continue;
    }
    switch (ch) {
      case '"': quoted = true; break;
      case '[':
      case '{':
      case '(':
      case '<': open.push_back(ch); break;
      case ']':
      case '}':
      case ')':
      case '>':
        if (ch == '>' && i > 0 && text[i - 1] == '-') break;  // a function type's arrow, `(i32) -> i32`
        if (open.empty() || Closer(open.back()) != ch)
          return Status::Error("has an unbalanced '" + std::string(1, ch) + "'");
        open.pop_back();
        break;
      default:
        if (ch == sep && open.empty()) at.push_back(i);
        break;
    }
  }
  if (quoted) return Status::Error("has an unterminated string");
  if (!open.empty()) return Status::Error("has an unclosed '" + std::string(1, open.back()) + "'");
  return at;
}

}  // namespace

Result<FfiAttributes> ParseFfiAttributes(std::string_view text) {
  FfiAttributes attrs;
  text = Trim(text);
  if (text.empty()) return attrs;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}')
    return Status::Error("is not an attribute dictionary {name = value, ...}");
  text = text.substr(1, text.size() - 2);
  NHLO_ASSIGN_OR_RETURN(std::vector<size_t> commas, TopLevel(text, ','));
  commas.push_back(text.size());
  size_t begin = 0;
  for (size_t comma : commas) {
    std::string_view item = Trim(text.substr(begin, comma - begin));
    begin = comma + 1;
    if (item.empty()) {
      if (comma == text.size()) break;  // `{}` or a trailing comma
      return Status::Error("has an empty attribute");
    }
    const size_t eq = item.find('=');
    std::string_view name = Trim(item.substr(0, eq));
    if (eq == std::string_view::npos || name.empty())
      return Status::Error("attribute '" + std::string(item) + "' is not name = value");
    std::string_view value = Trim(item.substr(eq + 1));
    NHLO_ASSIGN_OR_RETURN(std::vector<size_t> colons, TopLevel(value, ':'));
    if (!colons.empty()) value = Trim(value.substr(0, colons.front()));
    if (value.empty()) return Status::Error("attribute '" + std::string(name) + "' has no value");
    if (!attrs.emplace(std::string(name), std::string(value)).second)
      return Status::Error("names attribute '" + std::string(name) + "' twice");
  }
  return attrs;
}

}  // namespace nhlo
