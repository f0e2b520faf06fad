// SPDX-License-Identifier: Apache-2.0
// XLA GPU's cuDNN fused attention calls, which JAX's cuDNN dot_product_attention and XLA's own
// rewriter put in GPU dumps, run as the HLO they stand for:
//   __cudnn$fmhaSoftmax[Dropout], __cudnn$fmhaScaleBiasSoftmax[Dropout]
//     (Q, K, V[, bias][, q_seqlen, kv_seqlen]) -> (O[, stats f32[B,N,T]], u8[workspace])
//   the same names with Backward
//     (Q, K, V, stats, dO[, bias], O[, q_seqlen, kv_seqlen]) -> (dQ, dK, dV[, dbias], u8[workspace])
// The scores are fmha_scale * Q.K plus the bias, masked with -inf (causal, padding, sliding
// window), a softmax over the keys in f32, and O the probabilities (rounded to the config's
// intermediate type) times V; stats is each row's log-sum-exp. Q, K and V are in any layout the
// config's dimension numbers describe, with fewer key/value heads than query heads (GQA) allowed.
// docs/custom-calls.md ("cuDNN fused attention") gives the sources and what is refused.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

class ExpansionBuilder;

/// The operand, shape and config checks of a fused attention call (kind kCudnnFmha), and its
/// expansion's instructions built into `x`; the result is the expansion's root.
Status CheckFmhaCall(const Instruction& call);
Result<Instruction*> BuildFmhaCall(ExpansionBuilder& x, const Instruction& call);

}  // namespace nhlo
