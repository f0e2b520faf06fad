// SPDX-License-Identifier: Apache-2.0
// Text-level helpers of the HLO readers: `--split-input-file` splitting and C escapes.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "parser/lexer.h"
#include "parser/parser.h"

namespace nhlo {

std::vector<InputPiece> SplitOwnedInput(std::string&& text) {
  if (text.find("// -----") != std::string::npos) return SplitInputFile(text);
  std::vector<InputPiece> pieces;
  pieces.push_back({std::move(text), 1});
  return pieces;
}

std::vector<InputPiece> SplitInputFile(std::string_view text) {
  std::vector<InputPiece> pieces;
  // Most inputs hold one module: without the separator anywhere there is nothing to split (one
  // memmem-speed scan instead of a line-by-line copy).
  if (text.find("// -----") == std::string_view::npos) {
    pieces.push_back({std::string(text), 1});
    return pieces;
  }
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

}  // namespace nhlo
