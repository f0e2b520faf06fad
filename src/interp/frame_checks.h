// SPDX-License-Identifier: Apache-2.0
// Load-time checks of where a bundle file places its buffers, so the kernels can rely on it:
// every temp aligned for its element type, and no bundle writing bytes it reads, except an
// elementwise op writing exactly over one of its operands (what buffer assignment does when the
// operand dies there), nor bytes its callees' frame uses. The reader has already checked that
// each buffer lies inside its frame; a file that breaks these rules was not written by nhlo.
#pragma once

#include <vector>

#include "codegen/bundle_format.h"
#include "interp/op_table.h"
#include "support/status.h"

namespace nhlo {

/// The alignment a temp of `type` must have: its host element size up to 8 bytes (the arena and
/// every frame start at least 8-aligned).
uint64_t RequiredAlignment(PrimitiveType type);

/// Checks every temp buffer of `comp` is aligned (RequiredAlignment).
Status CheckFrameAlignment(const ComputationRecord& comp);

/// The alignment the frame of `comp` must start at so that its temps holding data (the ones
/// kernels load from) keep RequiredAlignment at run time: the largest among them.
uint64_t FrameAlignment(const ComputationRecord& comp);

/// Checks that bundle `b` starts its callees' frame at an offset that keeps their temps aligned;
/// `frame_alignment[i]` is what computation i's frame needs, its own callees' needs included.
/// Returns the largest need among b's callees (which b's computation then needs too).
Result<uint64_t> CheckCalleeFrameAlignment(const BundleRecord& b, const std::vector<uint64_t>& frame_alignment);

/// Checks that bundle `b` of `comp`, executed as `family`, writes no byte it reads or its callees
/// use, except the exact in-place case.
Status CheckBundlePlacement(const BundleProgram& program, const ComputationRecord& comp, const BundleRecord& b,
                            OpFamily family);

}  // namespace nhlo
