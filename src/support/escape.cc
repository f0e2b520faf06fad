// SPDX-License-Identifier: Apache-2.0
#include "support/escape.h"

#include <cctype>

#include "support/text_scan.h"

namespace nhlo {

std::string CUnescape(std::string_view body) {
  if (body.find('\\') == std::string_view::npos) return std::string(body);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case 'x': {
        int value = 0, digits = 0;
        while (i + 1 < body.size() && digits < 2 && std::isxdigit(static_cast<unsigned char>(body[i + 1]))) {
          char h = body[++i];
          value = value * 16 + ((h >= '0' && h <= '9') ? h - '0' : (h | 0x20) - 'a' + 10);
          ++digits;
        }
        out += static_cast<char>(value);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = e - '0', digits = 1;
          while (i + 1 < body.size() && digits < 3 && body[i + 1] >= '0' && body[i + 1] <= '7') {
            value = value * 8 + (body[++i] - '0');
            ++digits;
          }
          out += static_cast<char>(value);
        } else {
          out += e;  // \" \\ \' \?
        }
    }
  }
  return out;
}

std::string CEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendCEscaped(out, text);
  return out;
}

void AppendCEscaped(std::string& out, std::string_view text) {
  size_t i = 0;
  for (;;) {
    // Plain runs (most of every string) in one append.
    size_t special = FindNotPlain(text.data(), i, text.size());
    out.append(text.data() + i, special - i);
    if (special == text.size()) return;
    i = special + 1;
    auto c = static_cast<unsigned char>(text[special]);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default: {  // the other control characters and everything outside ASCII: octal
        char buf[4] = {'\\', static_cast<char>('0' + ((c >> 6) & 7)), static_cast<char>('0' + ((c >> 3) & 7)),
                       static_cast<char>('0' + (c & 7))};
        out.append(buf, 4);
      }
    }
  }
}

}  // namespace nhlo
