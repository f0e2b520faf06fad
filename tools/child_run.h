// SPDX-License-Identifier: Apache-2.0
// Runs a piece of work in a child process of its own, for the tools that run many modules
// (nhlo-corpus-check --run, nhlo-interp-bench's models): the child contains what a run can do
// wrong (an endless loop: an alarm; a crash; an allocation the machine cannot give: an address
// space limit) and the parent only reads the short report the child writes back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace nhlo_tools {

struct ChildOutcome {
  enum class End { kReported, kTimedOut, kCrashed, kNoReport } end = End::kNoReport;
  std::string report;  // what the body returned (kReported)
  std::string crash;   // the signal's description (kCrashed)
  double seconds = 0;  // wall time from fork to the child's end
};

/// Forks; call it with no other thread running (support/parallel.h's pool at one thread): the
/// child inherits only the calling thread, and a pool it thinks it has would never answer. The
/// child sets an alarm of `timeout_seconds` and, when `address_space_bytes` is not
/// 0, that RLIMIT_AS, runs `body` and writes what it returns to the parent. Returns false with
/// errno set when the pipe or the fork fails.
bool RunInChild(unsigned timeout_seconds, uint64_t address_space_bytes, const std::function<std::string()>& body,
                ChildOutcome& outcome);

}  // namespace nhlo_tools
