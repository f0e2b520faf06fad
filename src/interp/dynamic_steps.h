// SPDX-License-Identifier: Apache-2.0
// Bounded dynamic shapes (docs/interpreter.md "Bounded dynamic shapes"): a buffer with bounded
// dimensions holds its data at the bound and its runtime sizes beside it, in the machine's table
// (StepMachine::SizesOf; empty at the bound). Only steps that touch such a buffer
// (Step::dynamic, fixed at load) come here, so static programs pay nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/step_machine.h"

namespace nhlo {

/// Whether a buffer has a bounded (`<=N`) or unbounded (`?`) dimension.
bool IsBounded(const BufferRecord& b);
/// Whether `buffer` or a leaf of it is bounded.
bool HasBoundedLeaf(const ComputationRecord& comp, uint32_t buffer);
/// A leaf of `buffer` with an unbounded dimension, or null.
const BufferRecord* UnboundedLeaf(const ComputationRecord& comp, uint32_t buffer);
/// Whether `dims` fit inside the bounds of `b` (static dimensions equal).
bool FitsBound(const BufferRecord& b, const std::vector<int64_t>& dims);

/// A step touching a bounded buffer: copies, tuples, calls and loops carry the sizes (through
/// the machine's copies), elementwise ops give their result the operands', the dynamic-shape
/// ops set them; any other op on a value below its bound is refused, naming it.
Status RunWithSizes(const Step& s, StepMachine& m);
/// get-dimension-size, set-dimension-size, dynamic-reshape.
Status RunDynamicShape(const Step& s, StepMachine& m);
/// The custom calls SliceToDynamic (data, sizes...) and PadToStatic (value -> (data, sizes...)).
Status RunSliceToDynamic(const Step& s, StepMachine& m);
Status RunPadToStatic(const Step& s, StepMachine& m);

}  // namespace nhlo
