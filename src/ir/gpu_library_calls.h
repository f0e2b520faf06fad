// SPDX-License-Identifier: Apache-2.0
// XLA GPU's library calls in post-optimization dumps, run as the HLO they stand for:
//   __cublas$gemm, __cublas$lt$matmul, __cublas$lt$matmul$f8   (XLA's GemmRewriter)
//   __cudnn$convForward, __cudnn$convBackwardInput, __cudnn$convBackwardFilter,
//   __cudnn$convBiasActivationForward                          (XLA's ConvRewriter and
//                                                               CudnnFusedConvRewriter)
// Each call becomes a computation of plain HLO (an implied one, never printed) that computes what
// the library computes: the products and convolutions in the library's compute type (f32 for
// f16, bf16, f8 and f32 data), scales, bias and activation in that type, one rounding to the
// result type at the end, and the workspace or scratch buffer of the result tuple as zeros.
// docs/custom-calls.md gives the operand lists, the formulas and where they come from.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

class ExpansionBuilder;

/// The operand, shape and config checks of a cuBLAS call (kind kCublasGemm) and its expansion's
/// instructions, built into `x`; the result is the expansion's root.
Status CheckGemmCall(const Instruction& call);
Result<Instruction*> BuildGemmCall(ExpansionBuilder& x, const Instruction& call);

/// The same for a cuDNN convolution (kind kCudnnConv).
Status CheckConvCall(const Instruction& call);
Result<Instruction*> BuildConvCall(ExpansionBuilder& x, const Instruction& call);

}  // namespace nhlo
