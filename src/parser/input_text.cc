// SPDX-License-Identifier: Apache-2.0
// Text-level helpers of the HLO readers: `--split-input-file` splitting and C escapes.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "parser/lexer.h"
#include "parser/parser.h"

namespace nhlo {

std::vector<InputPiece> SplitInputFile(std::string_view text) {
  std::vector<InputPiece> pieces;
  std::string current;
  int line = 1, piece_start = 1;
  bool in_block_comment = false;  // a `// -----` inside /* ... */ is text, not a separator
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
    std::string_view content = text.substr(pos, (eol == std::string_view::npos ? text.size() : eol) - pos);
    while (!content.empty() && (content.back() == '\r' || content.back() == ' ')) content.remove_suffix(1);
    if (!in_block_comment && content == "// -----") {
      pieces.push_back({std::move(current), piece_start});
      current = std::string(static_cast<size_t>(line), '\n');  // keep line numbers of the file
      piece_start = line + 1;
    } else {
      current.append(text.substr(pos, next - pos));
      for (size_t i = 0; i < content.size(); ++i) {
        if (in_block_comment) {
          if (content.substr(i, 2) == "*/") in_block_comment = false, ++i;
        } else if (content.substr(i, 2) == "//") {
          break;
        } else if (content.substr(i, 2) == "/*") {
          in_block_comment = true;
          ++i;
        } else if (content[i] == '"') {
          for (++i; i < content.size() && content[i] != '"'; ++i)
            if (content[i] == '\\') ++i;
        }
      }
    }
    pos = next;
    ++line;
  }
  pieces.push_back({std::move(current), piece_start});
  return pieces;
}

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
          value = value * 16 + (IsDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
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
  for (unsigned char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[5];
          buf[0] = '\\';
          buf[1] = static_cast<char>('0' + ((c >> 6) & 7));
          buf[2] = static_cast<char>('0' + ((c >> 3) & 7));
          buf[3] = static_cast<char>('0' + (c & 7));
          out.append(buf, 4);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace nhlo
