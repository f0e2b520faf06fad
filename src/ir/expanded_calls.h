// SPDX-License-Identifier: Apache-2.0
// Custom calls nhlo runs as the HLO they stand for, built for each call's shapes and bound as its
// implied computation after the pass pipeline (driver/custom_call_expansions.h): the kinds for
// which ExpandsBeforeRun holds. XLA's block-scaling calls (ir/block_scaling.h) and XLA GPU's
// cuBLAS and cuDNN calls (ir/gpu_library_calls.h); expanded_calls.cc has the one table from kind
// to checks and builder.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// The checks of an expanded call, at verification (before any expansion exists).
Status CheckExpandedCall(const Instruction& call);

/// The computation `call` runs, added to `module`; `added` receives it and any computation it
/// calls, callees first.
Result<Computation*> ExpandCall(Module& module, const Instruction& call, std::vector<Computation*>& added);

}  // namespace nhlo
