// SPDX-License-Identifier: Apache-2.0
#include "support/status.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace nhlo {

const std::vector<Diagnostic> Status::kNoDiagnostics;
void Status::DeleteDiagnostics::operator()(std::vector<Diagnostic>* diags) const { delete diags; }

std::string FormatDiagnostic(const Diagnostic& diag, std::string_view program) {
  std::string out;
  if (!diag.file.empty()) {
    out += diag.file;
    if (diag.line > 0) out += ":" + std::to_string(diag.line) + ":" + std::to_string(diag.col);
    out += ": ";
  } else if (!program.empty()) {
    out += program;
    out += ": ";
  }
  switch (diag.severity) {
    case Severity::kError: out += "error: "; break;
    case Severity::kWarning: out += "warning: "; break;
    case Severity::kNote: out += "note: "; break;
    case Severity::kRemark: out += "remark: "; break;
  }
  out += diag.message;
  out += '\n';
  if (diag.line > 0) {
    // A long line (minified JSON, a 38 KB literal) is shown as a window of at most
    // kMaxEchoColumns around the caret, with "..." where it was cut.
    std::string_view text = diag.line_text;
    size_t caret = diag.col > 0 ? static_cast<size_t>(diag.col - 1) : 0;
    if (caret > text.size()) caret = text.size();
    size_t begin = 0, end = text.size();
    if (text.size() > kMaxEchoColumns) {
      begin = caret > kMaxEchoColumns / 2 ? caret - kMaxEchoColumns / 2 : 0;
      end = std::min(text.size(), begin + kMaxEchoColumns);
      if (end - begin < kMaxEchoColumns) begin = end - kMaxEchoColumns;
    }
    std::string_view prefix = begin > 0 ? "..." : "";
    out += "  ";
    out += prefix;
    out += text.substr(begin, end - begin);
    if (end < text.size()) out += "...";
    out += "\n  ";
    out.append(prefix.size(), ' ');
    // Keep tabs so the caret lines up under the same column in a terminal.
    for (size_t i = begin; i < caret; ++i) out += text[i] == '\t' ? '\t' : ' ';
    out += "^\n";
  }
  return out;
}

namespace {

Diagnostic DiagnosticOnLine(std::string_view file, std::string_view text, int line, size_t line_start, size_t offset,
                            std::string message, Severity severity) {
  size_t line_end = text.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = text.size();
  std::string line_text(text.substr(line_start, line_end - line_start));
  if (!line_text.empty() && line_text.back() == '\r') line_text.pop_back();
  // Non-printable bytes would garble the terminal; show them as '?'.
  for (char& c : line_text)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
  Diagnostic diag;
  diag.severity = severity;
  diag.file = std::string(file);
  diag.line = line;
  diag.col = static_cast<int>(offset - line_start) + 1;
  diag.message = std::move(message);
  diag.line_text = std::move(line_text);
  return diag;
}

}  // namespace

Diagnostic DiagnosticAt(std::string_view file, std::string_view text, size_t offset, std::string message,
                        Severity severity) {
  if (offset > text.size()) offset = text.size();
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return DiagnosticOnLine(file, text, line, line_start, offset, std::move(message), severity);
}

LineStarts::LineStarts(std::string_view text) : size_(text.size()) {
  starts_.push_back(0);
  for (size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1))
    starts_.push_back(at + 1);
}

std::pair<int, size_t> LineStarts::Locate(size_t offset) const {
  if (offset > size_) offset = size_;
  // The last start at or before `offset` (starts_[0] is 0, so there is one).
  auto after = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return {static_cast<int>(after - starts_.begin()), *(after - 1)};
}

Diagnostic DiagnosticAt(std::string_view file, std::string_view text, const LineStarts& lines, size_t offset,
                        std::string message, Severity severity) {
  if (offset > text.size()) offset = text.size();
  auto [line, line_start] = lines.Locate(offset);
  return DiagnosticOnLine(file, text, line, line_start, offset, std::move(message), severity);
}

std::string Status::ToString(std::string_view program) const {
  std::string out;
  for (const Diagnostic& d : diagnostics()) out += FormatDiagnostic(d, program);
  return out;
}

void InternalError(const char* file, int line, const std::string& message) {
  std::fprintf(stderr,
               "nhlo: internal compiler error at %s:%d: %s\n"
               "This is a bug in nhlo, not in your input; please report it.\n",
               file, line, message.c_str());
  std::abort();
}

}  // namespace nhlo
