// SPDX-License-Identifier: Apache-2.0
#include "passes/remarks.h"

namespace nhlo {
namespace {

// A YAML single-quoted scalar: only the quote is special, written twice.
std::string Quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    if (c == '\n') {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "'";
}

}  // namespace

std::string_view RemarkTag(RemarkKind kind) {
  switch (kind) {
    case RemarkKind::kApplied: return "Passed";
    case RemarkKind::kMissed: return "Missed";
    case RemarkKind::kAnalysis: return "Analysis";
    case RemarkKind::kWarning: return "Warning";
  }
  return "Analysis";
}

std::string RemarksYaml(const std::vector<Remark>& remarks) {
  std::string out;
  for (const Remark& r : remarks) {
    out += "--- !" + std::string(RemarkTag(r.kind)) + "\n";
    out += "Pass:            " + Quoted(r.pass) + "\n";
    out += "Name:            " + Quoted(r.name) + "\n";
    if (r.line > 0)
      out += "DebugLoc:        { File: " + Quoted(r.file) + ", Line: " + std::to_string(r.line) +
             ", Column: " + std::to_string(r.column) + " }\n";
    out += "Function:        " + Quoted(r.computation) + "\n";
    out += "Instruction:     " + Quoted(r.instruction) + "\n";
    out += "Args:\n  - String:          " + Quoted(r.message) + "\n";
    out += "...\n";
  }
  return out;
}

}  // namespace nhlo
