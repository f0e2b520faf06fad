// SPDX-License-Identifier: Apache-2.0
// Kernels for ops whose called computation is a pattern recognised at load (callee_pattern.h):
// reduce and sort without running the computation per element, and the scalar op and compare
// the per-element loops of scatter, reduce-window, map and select-and-scatter apply instead of
// a call. Results are bit-identical to running the computation, except that float add and
// multiply reductions over a contiguous run sum in several lanes (a fixed association that
// depends only on the shape, never on the thread count).
#pragma once

#include <cstdint>
#include <vector>

#include "interp/kernels.h"

namespace nhlo {

/// Recognises the computation `step` calls (reduce, reduce-window, scatter, map, sort,
/// select-and-scatter) and fills step.pattern; leaves it empty for anything else. Never fails:
/// a computation it does not recognise runs as written.
void LowerCalleePattern(const BundleProgram& program, const ComputationRecord& comp, Step& step);

/// The opcode of a recognised scalar op (kAdd for ScalarOp::kAdd, ...).
Opcode ScalarOpcode(ScalarOp op);

/// reduce(in, init) over `dims` with the recognised op: `out` has in's kept dimensions. The
/// caller checked the dimensions, shapes and types (one input, init and result of its type).
Status KernelReduceNative(const CalleePattern& pattern, const Buf& in, const Buf& init, const Buf& out,
                          const std::vector<int64_t>& dims);

/// acc = op(acc, x) (op(x, acc) when swapped) on one element of type `t`, as the computation
/// computes it. False when the type has no native form here (the caller then runs the call).
bool ApplyScalarOp(const CalleePattern& pattern, PrimitiveType t, uint8_t* acc, const uint8_t* x);
/// Whether ApplyScalarOp and KernelReduceNative take elements of type `t`.
bool NativeScalarType(PrimitiveType t);

/// compare(a, b) with pattern.direction (and pattern.total_order) on elements of type `t`.
bool CompareScalar(const CalleePattern& pattern, PrimitiveType t, const uint8_t* a, const uint8_t* b);

/// sort(in...) along `dim` with a recognised comparator: every operand permuted by the stable
/// order of operand pattern.key_operand's keys. The caller checked shapes and types.
Status KernelSortNative(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& out,
                        int64_t dim);

}  // namespace nhlo
