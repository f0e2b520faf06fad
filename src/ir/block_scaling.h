// SPDX-License-Identifier: Apache-2.0
// XLA's block-scaling custom calls, which JAX's MX/NVFP4 APIs and XLA's own tests emit:
//   __op$quantize(input) -> (quantized, scales)
//   __op$dequantize(quantized, scales) -> values
//   __op$block_scaled_dot(lhs, rhs, lhs_scale[, rhs_scale[, global_scale]]) -> dot
// XLA's GPU compiler rewrites each into plain HLO (BlockScalingRewriter,
// xla/service/gpu/transforms/block_scaling_rewriter.cc), or into a cuDNN call that computes the
// same dot. nhlo builds that HLO as the call's computation (an implied one, never printed), so
// the interpreter runs exactly XLA's expansion. The checks and their messages are XLA's; where
// XLA would fail a CHECK the message is nhlo's (marked inferred in docs/custom-calls.md).
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

class ExpansionBuilder;

/// The operand and shape checks of each block-scaling call (CustomCallKind kBlockQuantize,
/// kBlockDequantize, kBlockScaledDot), as XLA's rewriter makes them before it expands.
Status CheckBlockQuantize(const Instruction& call);
Status CheckBlockDequantize(const Instruction& call);
Status CheckBlockScaledDot(const Instruction& call);

/// The instructions XLA's BlockScalingRewriter expands a checked call into, built into `x`; the
/// result is the expansion's root.
Result<Instruction*> BuildBlockQuantize(ExpansionBuilder& x, const Instruction& call);
Result<Instruction*> BuildBlockDequantize(ExpansionBuilder& x, const Instruction& call);
Result<Instruction*> BuildBlockScaledDot(ExpansionBuilder& x, const Instruction& call);

}  // namespace nhlo
