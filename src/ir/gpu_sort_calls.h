// SPDX-License-Identifier: Apache-2.0
// XLA GPU's CUB radix sort calls in post-optimization dumps, run as the HLO they stand for:
//   __cub$DeviceRadixSort, __cub$DeviceRadixSortUnassignedScratchSize     (XLA's SortRewriter)
//   xla.gpu.ext.cub_sort_keys, xla.gpu.ext.cub_sort_pairs                 (its typed-FFI form)
// (keys[, values]) -> (keys, [values,] u8[scratch]): each row of the keys' minor dimension sorted
// stably in CUB's radix order, the values carried along, the scratch buffer zeros. CUB orders
// floats by their bits with -0 and +0 equal (their order kept) and NaNs by sign and payload, which
// is XLA's total order once -0 reads as +0; descending reverses the key order but not the order
// of equal keys. docs/custom-calls.md ("XLA GPU's sort calls") gives the sources.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

class ExpansionBuilder;

/// The operand, shape and config checks of a CUB sort call (kind kCubSort), and its expansion's
/// instructions built into `x`; the result is the expansion's root.
Status CheckCubSortCall(const Instruction& call);
Result<Instruction*> BuildCubSortCall(ExpansionBuilder& x, const Instruction& call);

}  // namespace nhlo
