// SPDX-License-Identifier: Apache-2.0
// The kernels of tuple-result steps that need no machine state: the custom calls the interpreter
// computes natively (all but topk, whose comparator the machine calls), rng-bit-generator and
// batch norm, run on their operand and result-leaf Bufs.
#pragma once

#include <vector>

#include "interp/kernels.h"

namespace nhlo {

/// Runs step `s` on one Buf per operand and one per result leaf, whose counts LowerBundle
/// checked (CheckKernelLeaves): its plan when it has one, else its kernel.
Status RunLeafKernel(const Step& s, const std::vector<Buf>& in, const std::vector<Buf>& out);

}  // namespace nhlo
