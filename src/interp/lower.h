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

/// How a pair of buffer trees is used, for MatchTree's message.
enum class TreeUse : uint8_t { kBind, kCopy };

/// Buffer `from` of `fa` against `to` of `fb`: the same type, tuple size and bytes at every node
/// (a binding's `from` is the argument, `to` the parameter; a copy's `from` is the source). The
/// error names the first node that differs. The load compares control flow's pairs with it
/// (lower_control.cc); the run's other copies (Frames::CopyTreeFrom) call it before they copy.
Status MatchTree(const ComputationRecord& fa, uint32_t from, const ComputationRecord& fb, uint32_t to, TreeUse use);

/// The computations a step runs whole, resolved, and every buffer tree its run binds or copies
/// compared with its counterpart (lower_control.cc): call, fusion and a custom call of a
/// computation (attribute `id`), while, conditional (one error per branch) and async-start.
CalleeSignature CallSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s, AttrId id);
CalleeSignature WhileSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s);
CalleeSignature ConditionalSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s);
CalleeSignature AsyncStartSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s);

}  // namespace nhlo
