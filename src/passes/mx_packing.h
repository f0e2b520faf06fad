// SPDX-License-Identifier: Apache-2.0
// Packing FP8 tensors into u32 words (four lanes along one dimension, lane 0 in the low byte)
// and back, in plain HLO: shared by legalize-quantize-mx (which unpacks its packed output for
// existing users) and legalize-scaled-matmul (which packs operands or finds the packed form).
#pragma once

#include "ir/ir.h"

namespace nhlo {

/// f8[..., K at dim, ...] -> u32[..., K/4 at dim, ...] (transpose, reshape, bitcast-convert).
Instruction* PackLanes(Module& module, Computation* comp, Instruction* value, int64_t dim);
/// The inverse: u32[..., K/4 at dim, ...] -> `element`[..., K at dim, ...].
Instruction* UnpackLanes(Module& module, Computation* comp, Instruction* packed, int64_t dim, PrimitiveType element);
/// If `value` is exactly UnpackLanes(p, dim, ...) of some p, returns p; else null.
Instruction* FindPackedSource(Instruction* value, int64_t dim);

}  // namespace nhlo
