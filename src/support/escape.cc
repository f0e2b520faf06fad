// SPDX-License-Identifier: Apache-2.0
#include "support/escape.h"

#include <cctype>
#include <cstring>

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

namespace {

// The escape of a byte FindNotPlain stops at (a quote, a backslash, a control character or a
// byte outside printable ASCII), written at `out`; returns its length.
size_t EscapeByte(unsigned char c, char* out) {
  out[0] = '\\';
  switch (c) {
    case '\n': out[1] = 'n'; return 2;
    case '\t': out[1] = 't'; return 2;
    case '\r': out[1] = 'r'; return 2;
    case '"': out[1] = '"'; return 2;
    case '\\': out[1] = '\\'; return 2;
    case '\'': out[1] = '\''; return 2;
    default:  // the other control characters and everything outside ASCII: octal
      out[1] = static_cast<char>('0' + ((c >> 6) & 7));
      out[2] = static_cast<char>('0' + ((c >> 3) & 7));
      out[3] = static_cast<char>('0' + (c & 7));
      return 4;
  }
}

}  // namespace

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
    char escape[4];
    out.append(escape, EscapeByte(static_cast<unsigned char>(text[special]), escape));
    i = special + 1;
  }
}

size_t CEscapedSize(std::string_view text) {
  size_t size = text.size();
  char escape[4];
  const size_t n = text.size();
  for (size_t i = FindNotPlain(text.data(), 0, n); i < n; i = FindNotPlain(text.data(), i + 1, n))
    size += EscapeByte(static_cast<unsigned char>(text[i]), escape) - 1;
  return size;
}

char* WriteCEscaped(char* out, std::string_view text) {
  size_t i = 0;
  for (;;) {
    size_t special = FindNotPlain(text.data(), i, text.size());
    std::memcpy(out, text.data() + i, special - i);
    out += special - i;
    if (special == text.size()) return out;
    out += EscapeByte(static_cast<unsigned char>(text[special]), out);
    i = special + 1;
  }
}

void AppendXmlEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
}

}  // namespace nhlo
