// SPDX-License-Identifier: Apache-2.0
// Kernels of the ops that call a computation per element (reduce, map, sort, reduce-window;
// exec_callees.cc; scatter, kernels_scatter.cc), and the native forms they take when load recognised the
// computation as a pattern (callee_pattern.h): reduce and sort without running it per element,
// and the scalar op and compare the per-element loops of scatter, reduce-window, map and
// select-and-scatter apply instead of a call. Results are bit-identical to running the
// computation, except that float add and multiply reductions over a contiguous run sum in
// several lanes (a fixed association that depends only on the shape, never on the thread count).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "interp/kernels.h"

namespace nhlo {

/// The executor's call of a computation on scalars: binds args[i] (one element each, which the
/// computation does not write) to parameter i, runs it, and returns the bytes of its root's
/// leaves, one per result, each of the size the executor checked when it made the call.
using CalleeCall = std::function<Result<const uint8_t* const*>(const uint8_t* const* args)>;

/// The result leaves a call returned, copied into `acc` (their sizes checked by the executor).
inline void TakeResults(const uint8_t* const* results, std::vector<std::string>& acc) {
  for (size_t k = 0; k < acc.size(); ++k) std::memmove(acc[k].data(), results[k], acc[k].size());
}

/// reduce(in..., init...) over `dims`: `call` takes (accumulators..., elements...).
Status KernelReduce(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& init,
                    const std::vector<Buf>& out, const std::vector<int64_t>& dims, const CalleeCall& call);
/// A reduce planned at load (PlanReduce, kernel_plans.h) on buffers of the records it was
/// planned for: KernelReduce without its checks.
Status RunPlannedReduce(const ReducePlan& plan, const CalleePattern& pattern, const std::vector<Buf>& in,
                        const std::vector<Buf>& init, const std::vector<Buf>& out, const CalleeCall& call);
/// map(in...): `call` takes one element of each operand.
Status KernelMap(const CalleePattern& pattern, const std::vector<Buf>& in, const Buf& out, const CalleeCall& call);
/// KernelMap's checks on the records and its native span (MapPlan, kernel_plans.h), and its run.
Result<MapPlan> PlanMap(const CalleePattern& pattern, const std::vector<const BufferRecord*>& in,
                        const BufferRecord& out);
Status RunMap(const MapPlan& plan, const std::vector<Buf>& in, const Buf& out, const CalleeCall& call);
/// sort(in...) along `dim`, stable: `less` takes (lhs_0, rhs_0, lhs_1, rhs_1, ...) and returns pred[].
Status KernelSort(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& out, int64_t dim,
                  const CalleeCall& less);
/// A sort planned at load (PlanSort) on buffers of the records it was planned for.
Status RunPlannedSort(const SortPlan& plan, const std::vector<Buf>& in, const std::vector<Buf>& out,
                      const CalleeCall& less);
/// reduce-window(in..., init...) with the step's window: `call` takes (accumulators..., elements...).
Status KernelReduceWindow(const Step& step, const std::vector<Buf>& in, const std::vector<Buf>& init,
                          const std::vector<Buf>& out, const CalleeCall& call);
/// A reduce-window planned at load (PlanReduceWindow) on buffers of the records it was planned
/// for: KernelReduceWindow without its checks.
Status RunPlannedReduceWindow(const Step& step, const ReduceWindowPlan& plan, const std::vector<Buf>& in,
                              const std::vector<Buf>& init, const std::vector<Buf>& out, const CalleeCall& call);
/// A one-input reduce-window with the recognised op over the windows of `reach`, in parallel
/// over the result, with ApplyScalarOp's bits; handled is false, with nothing written, when
/// the op or type has no native form.
Status ReduceWindowNative(const CalleePattern& pattern, const WindowReach& reach, const Buf& in, const Buf& init,
                          const Buf& out, bool& handled);
/// scatter(in..., indices, updates...) with the step's dimension numbers: `call` takes (current
/// values..., updates...). A window that does not fit in the operand is skipped, as XLA's
/// evaluator does.
Status KernelScatter(const Step& step, const std::vector<Buf>& in, const Buf& indices, const std::vector<Buf>& updates,
                     const std::vector<Buf>& out, const CalleeCall& call);
/// A one-input scatter planned at load (PlanScatter, kernel_plans.h) on buffers of the records
/// it was planned for: the same result as KernelScatter, without its checks.
Status RunPlannedScatter(const ScatterPlan& plan, const CalleePattern& pattern, const Buf& in, const Buf& indices,
                         const Buf& updates, const Buf& out, const CalleeCall& call);
/// A scatter planned at load to walk every update element (PlanScatterWalk): the same result as
/// KernelScatter's general walk, without its checks.
Status RunScatterWalk(const Step& step, const ScatterWalkPlan& plan, const std::vector<Buf>& in, const Buf& indices,
                      const std::vector<Buf>& upd, const std::vector<Buf>& out, const CalleeCall& call);

/// Recognises the computation `step` calls (reduce, reduce-window, scatter, map, sort,
/// select-and-scatter) and fills step.pattern; leaves it empty for anything else. Never fails:
/// a computation it does not recognise runs as written.
void LowerCalleePattern(const BundleProgram& program, const ComputationRecord& comp, Step& step);
/// The first computation the step's attribute `id` names, or null (absent, or out of range).
const ComputationRecord* Called(const BundleProgram& program, const Step& step, AttrId id);

/// The opcode of a recognised scalar op (kAdd for ScalarOp::kAdd, ...).
Opcode ScalarOpcode(ScalarOp op);

/// reduce(in, init) over `dims` with the recognised op: `out` has in's kept dimensions. The
/// caller checked the dimensions, shapes and types (one input, init and result of its type).
Status KernelReduceNative(const CalleePattern& pattern, const Buf& in, const Buf& init, const Buf& out,
                          const ReducePlan& plan);

/// reduce(values, indices, init value, init index) over `dims` with JAX's argmax/argmin
/// reducer (pattern.arg_reduce), folding in the reducer's order. The caller checked shapes and types.
Status KernelArgReduceNative(const CalleePattern& pattern, const Buf& values, const Buf& indices, const Buf& init_value,
                             const Buf& init_index, const Buf& out_value, const Buf& out_index, const ReducePlan& plan);

/// acc = op(acc, x) (op(x, acc) when swapped) on one element of type `t`, as the computation
/// computes it. False when the type has no native form here (the caller then runs the call).
bool ApplyScalarOp(const CalleePattern& pattern, PrimitiveType t, uint8_t* acc, const uint8_t* x);
/// ApplyScalarOp for one op and type, resolved once: a function with its bits for f32, f64,
/// bf16 and 32/64-bit integers, else null (the caller keeps ApplyScalarOp, or the call).
using ScalarApplyFn = void (*)(uint8_t* acc, const uint8_t* x);
ScalarApplyFn ScalarApplyFor(const CalleePattern& pattern, PrimitiveType t);
/// Whether ApplyScalarOp and KernelReduceNative take elements of type `t`.
bool NativeScalarType(PrimitiveType t);

/// compare(a, b) with pattern.direction (and pattern.total_order) on elements of type `t`.
bool CompareScalar(const CalleePattern& pattern, PrimitiveType t, const uint8_t* a, const uint8_t* b);

/// The native sort's key for a recognised comparator, a key operand of type `key_type`, `operands`
/// operands and lines of `len` elements (PlanSort calls it, at load).
SortKeySpec PlanSortKey(const CalleePattern& pattern, PrimitiveType key_type, size_t operands, int64_t len);
/// A sort planned with a native key (plan.native): every operand permuted by the stable order of
/// operand plan.key.operand's keys, on buffers of the records it was planned for.
Status KernelSortNative(const SortPlan& plan, const std::vector<Buf>& in, const std::vector<Buf>& out);

}  // namespace nhlo
