// SPDX-License-Identifier: Apache-2.0
// Optimization remarks, as LLVM's -Rpass family: what a pass did (applied), what it declined to
// do and why (missed), facts it found (analysis), and warnings when a rewrite may change this
// module's results. A pass emits them through Pass::Emit; the pass manager prints them with
// `file:line:col` (--remarks=REGEX; warnings always) and writes them as YAML (--remarks-file),
// in LLVM's optimization-record form. Formats: docs/cli.md, "Remarks".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nhlo {

enum class RemarkKind : uint8_t { kApplied, kMissed, kAnalysis, kWarning };

struct Remark {
  RemarkKind kind = RemarkKind::kApplied;
  std::string_view pass;    // the pass's registered name (set by the pass manager)
  std::string name;         // a short identifier of the remark, e.g. `ComputedInF32`
  std::string computation;  // where: the computation and instruction names
  std::string instruction;
  uint32_t source_offset = UINT32_MAX;  // the instruction's place in its source, if it has one
  uint32_t source_id = 0;
  std::string message;
  // Resolved by the pass manager from the source (line 0: no location).
  std::string file;
  uint32_t line = 0, column = 0;
};

/// `Passed`, `Missed`, `Analysis`, `Warning`: the YAML tag of a kind (LLVM's record tags; LLVM
/// has no warning records, nhlo writes its warnings as `!Warning`).
std::string_view RemarkTag(RemarkKind kind);

/// The remarks as LLVM optimization records: one `--- !Passed` document per remark, with Pass,
/// Name, DebugLoc (File, Line, Column), Function, Instruction and Args (a String).
std::string RemarksYaml(const std::vector<Remark>& remarks);

}  // namespace nhlo
