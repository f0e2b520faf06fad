// SPDX-License-Identifier: Apache-2.0
// Lowering a verified module to a bundle file: buffer assignment, one bundle per instruction,
// and the byte writer. The output is a pure function of the module and the options.
#pragma once

#include <string>
#include <vector>

#include "codegen/bundle_format.h"
#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

struct CodegenOptions {
  TargetArch arch = TargetArch::kV4;
  /// Reject host-only ("golden") element types that have no backend dtype.
  bool device_only = false;
  /// Refuse custom calls whose target nhlo cannot run (the default: a bundle holds only what
  /// the interpreter executes). Layout studies (nhlo-corpus-check) turn it off to measure the
  /// format and buffer assignment on every module.
  bool refuse_unknown_custom_calls = true;
  /// The most bytes the constant section may take (nhlo-run passes its memory limit, so an
  /// elided constant of a huge shape is refused before it is written out as zeros).
  uint64_t max_constant_bytes = UINT32_MAX;
  /// A get-tuple-element of an array element of a tuple in the same frame, a reshape, and a
  /// bitcast that is not a physical permutation share their source's bytes (XLA's buffer
  /// assignment aliases them); false gives each bytes of its own and a copy, as before
  /// (nhlo-compile --buffer-aliasing=off, to bisect a suspected aliasing problem).
  bool buffer_aliasing = true;
};

/// What buffer assignment achieved: per computation its frame and the lower bound for it (the
/// most bytes live at any point of its schedule, callees included), and the entry's figures,
/// which are the arena's.
struct ArenaReport {
  struct Entry {
    std::string computation;
    uint64_t frame = 0;
    uint64_t lower_bound = 0;
    uint64_t aliased_bound = 0;  // the lower bound if every XLA alias were taken (alias_bound.h)
  };
  std::vector<Entry> computations;
  uint64_t arena = 0;
  uint64_t lower_bound = 0;
  uint64_t aliased_bound = 0;
  /// The arena format version 1 asked for: every value of every computation its own 16-byte
  /// aligned slot (the figure before liveness-based assignment).
  uint64_t unshared = 0;
};

/// The whole bundle file as bytes; fills `report` when given.
Result<std::string> EmitBundleFile(const Module& module, const CodegenOptions& options, ArenaReport* report = nullptr);

}  // namespace nhlo
