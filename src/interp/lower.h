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

/// The computations a step runs whole, resolved, and every buffer tree its run binds or copies
/// compared with its counterpart (lower_control.cc): call, fusion and a custom call of a
/// computation (attribute `id`), while, conditional (one error per branch) and async-start.
CalleeSignature CallSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s, AttrId id);
CalleeSignature WhileSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s);
CalleeSignature ConditionalSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s);
CalleeSignature AsyncStartSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s);

}  // namespace nhlo
