// SPDX-License-Identifier: Apache-2.0
// Lowering a bundle into the step the machine runs, once, at load (lower.cc).
#pragma once

#include "codegen/bundle_format.h"
#include "interp/interp.h"
#include "interp/kernels.h"

namespace nhlo {

/// The step for bundle `b` of `comp`: its family, attribute slots, custom-call kind and decoded
/// config, callee pattern, and every check that does not depend on values (operand counts, the
/// attributes each family reads, host transfers under options.host_data, the step's working
/// memory against options.scratch_limit). Collectives are loaded by the machine afterwards.
Result<Step> LowerBundle(const BundleProgram& p, const ComputationRecord& comp, const BundleRecord& b,
                         const ExecuteOptions& options);

}  // namespace nhlo
