// SPDX-License-Identifier: Apache-2.0
// Kernel entry points, grouped by family (one .cc each). Each kernel checks the shapes it is
// given against its op's rules before touching memory: a bundle file is input, and a file whose
// checksum was forged must still not make a kernel read out of bounds.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

#include "codegen/bundle_format.h"
#include "interp/callee_pattern.h"
#include "interp/kernel_plans.h"
#include "interp/op_table.h"
#include "support/checked_math.h"
#include "support/status.h"
#include "types/custom_call_configs.h"
#include "types/custom_call_targets.h"
#include "types/element.h"
#include "types/solver_configs.h"

namespace nhlo {

/// How top-k orders a row: XLA's GtTotalOrder (descending) or LtTotalOrder (ascending), or the
/// comparator computation the executor runs.
enum class TopKOrder : uint8_t { kDescending, kAscending, kComparator };

/// What the run needs of the computations a step calls, checked at load (LowerCalleeSignature,
/// lower.cc): for the ops that call a computation per element (reduce, map, sort, reduce-window,
/// scatter) the root's leaves, one per result; or the error the run reports when it reaches the
/// step (a root that is not what the op reads, a while's or select-and-scatter's computations
/// of the wrong signature), at the point where the executor used to find it.
struct CalleeSignature {
  std::vector<uint32_t> leaves;
  Status error;
  /// The computations a step runs whole (lower_control.cc), resolved: call, fusion and a custom
  /// call's one, a while's {condition, body}, a conditional's branches in index order ({true,
  /// false} for a pred selector), async-start's one. Every tree the run binds or copies was
  /// compared at load, so the run compares no records. Empty when `error` is set.
  std::vector<const ComputationRecord*> computations;
  /// A conditional's error per branch (a missing or mismatched branch), reported only by a run
  /// that takes it; empty for the other steps.
  std::vector<Status> computation_errors;
};

/// A bundle lowered for execution, once, when the program is loaded: its record, its
/// attributes by id in O(1), the computations it calls and its custom call's decoded config.
/// Kernels read attributes through Find and never search or parse.
struct Step {
  const BundleRecord* bundle = nullptr;
  OpFamily family = OpFamily::kNotExecutable;
  uint8_t attr_slot[kAttrCount];  // index into bundle->attrs, kNoAttr when absent
  static constexpr uint8_t kNoAttr = 0xff;
  CustomCallKind custom_call = CustomCallKind::kNone;  // told apart once, at load
  bool dynamic = false;                                // an operand or the result has a bounded dynamic dimension
  TopKOrder topk_order = TopKOrder::kDescending;       // topk and the TopK custom call
  BuilderMathFn builder_math = BuilderMathFn::kAcos;   // kBuilderMath custom calls
  uint64_t scratch_bytes = 0;  // what the kernel allocates besides operands and result, when input sizes it
  CalleePattern pattern;       // the called computation, when the kernels run it natively
  /// The decoded backend_config of a custom call the interpreter knows (null otherwise); kept
  /// out of line so a step stays small.
  struct Configs {
    UniformQuantConfig uniform_quant;         // kUniformQuantize / kUniformDequantize
    QuantizeMxConfig quantize_mx;             // kQuantizeMx
    ScaledMatmulConfig scaled_matmul;         // kScaledMatmul
    EinsumConfig einsum;                      // kEinsum
    SolverConfig solver;                      // kLu ... kEigh
    int64_t neuron_dim = 0;                   // kNeuronSoftmax ... kNeuronArgMin: the backend_config's dimension
    NeuronOp neuron_op = NeuronOp::kSoftmax;  // and which of them
  };
  std::unique_ptr<const Configs> config;
  /// A dot's, convolution's or data-movement copy's plan (kernel_plans.h), built by LowerBundle
  /// for a static step: the run then checks and decides nothing. Null for a step of bounded
  /// dynamic shape, for records the planner refuses, and for the kernels not planned yet.
  std::unique_ptr<const KernelPlan> plan;
  /// The called computations' signature (reduce, map, sort, reduce-window, scatter,
  /// select-and-scatter, and the steps that run computations whole); null for the other families.
  std::unique_ptr<const CalleeSignature> callee;

  const AttrRecord* Find(AttrId id) const {
    uint8_t slot = attr_slot[static_cast<int>(id)];
    return slot == kNoAttr ? nullptr : &bundle->attrs[slot];
  }
  Opcode opcode() const { return bundle->opcode; }
};

/// The step's plan if it is a P (kernel_plans.h), else null.
template <typename P>
const P* PlanOf(const Step& s) {
  return s.plan ? std::get_if<P>(s.plan.get()) : nullptr;
}

/// A step for `bundle` with its attribute slots filled (no custom call decoded).
inline Step StepFor(const BundleRecord& bundle) {
  Step s;
  s.bundle = &bundle;
  for (uint8_t& slot : s.attr_slot) slot = Step::kNoAttr;
  for (size_t i = 0; i < bundle.attrs.size() && i < Step::kNoAttr; ++i)
    s.attr_slot[static_cast<int>(bundle.attrs[i].id)] = static_cast<uint8_t>(i);
  return s;
}

/// One operand or result: its buffer record and its bytes.
struct Buf {
  const BufferRecord* rec;
  uint8_t* data;
  PrimitiveType type() const { return rec->type; }
  int64_t count() const { return rec->ElementCount(); }
  size_t rank() const { return rec->dims.size(); }
};

/// The records of `bufs`: what the planners take when a step without a plan runs its kernel.
inline std::vector<const BufferRecord*> RecordsOf(const std::vector<Buf>& bufs) {
  std::vector<const BufferRecord*> records;
  records.reserve(bufs.size());
  for (const Buf& b : bufs) records.push_back(b.rec);
  return records;
}

Status KernelUnary(Opcode op, const Buf& in, const Buf& out);
Status KernelBinary(Opcode op, const Buf& a, const Buf& b, const Buf& out);
Status KernelCompare(const Step& bundle, const Buf& a, const Buf& b, const Buf& out);
Status KernelSelect(const Buf& pred, const Buf& on_true, const Buf& on_false, const Buf& out);
Status KernelClamp(const Buf& lo, const Buf& x, const Buf& hi, const Buf& out);
Status KernelConvert(const Buf& in, const Buf& out);
/// Runs `span` on Bufs of its step's records in the kernels' chunks: an operand with the
/// result's count is read element by element, one of another count (a clamp's scalar bound)
/// as one element for all.
void RunStepSpan(const SpanOp& span, std::initializer_list<const Buf*> in, const Buf& out);
/// The span an elementwise kernel runs on these records once its checks pass (element counts,
/// types, attributes, and that it implements the op on those types), or the kernel's error: the
/// fast form of elementwise_spans.h where there is one, else the complex form or the
/// element-at-a-time form (kernels_elementwise.cc). The kernels above run it at once;
/// PlanElementwise keeps it on a static step at load.
Result<SpanOp> UnaryStepSpan(Opcode op, const BufferRecord& in, const BufferRecord& out);
Result<SpanOp> BinaryStepSpan(Opcode op, const BufferRecord& a, const BufferRecord& b, const BufferRecord& out);
Result<SpanOp> CompareStepSpan(const Step& s, const BufferRecord& a, const BufferRecord& b, const BufferRecord& out);
/// A select with a predicate per element (one predicate picks an operand: no span).
Result<SpanOp> SelectStepSpan(const BufferRecord& pred, const BufferRecord& on_true, const BufferRecord& on_false,
                              const BufferRecord& out);
Result<SpanOp> ClampStepSpan(const BufferRecord& lo, const BufferRecord& x, const BufferRecord& hi,
                             const BufferRecord& out);
Result<SpanOp> ConvertStepSpan(const BufferRecord& in, const BufferRecord& out);
Result<SpanOp> ReducePrecisionStepSpan(const Step& s, const BufferRecord& in, const BufferRecord& out);
/// The span of a unary, binary, compare, select, clamp, convert or reduce-precision step, from
/// its records in `comp`.
Result<SpanOp> ElementwiseStepSpan(const ComputationRecord& comp, const Step& s);
/// The c64/c128 spans (kernels_complex.cc) the step spans above give for complex operands.
Result<SpanOp> ComplexUnarySpan(Opcode op, PrimitiveType in, PrimitiveType out);
Result<SpanOp> ComplexBinarySpan(Opcode op, PrimitiveType a, PrimitiveType b, PrimitiveType out);
/// EQ (`equal`) or NE of c64 or c128 values.
SpanOp ComplexCompareSpan(bool equal, PrimitiveType t);
/// real -> complex (imaginary part 0) or complex -> complex; complex -> real is refused.
Result<SpanOp> ComplexConvertSpan(PrimitiveType from, PrimitiveType to);
Status KernelBitcastConvert(const Buf& in, const Buf& out);
/// reduce-precision(x), exponent_bits, mantissa_bits: XLA's evaluator rounding (kernels_elementwise.cc).
Status KernelReducePrecision(const Step& bundle, const Buf& in, const Buf& out);
/// reduce-precision's exponent_bits and mantissa_bits, capped at 64 (widths past f64's change
/// nothing); false when either is absent, exponent_bits < 1 or mantissa_bits < 0.
bool ReducePrecisionWidths(const Step& step, int* exponent_bits, int* mantissa_bits);

Status KernelBroadcast(const Step& bundle, const Buf& in, const Buf& out);
/// bitcast: a reshape, or with layouts (AttrId::kBitcastLayouts) XLA's physical reinterpretation.
Status KernelBitcast(const Step& bundle, const Buf& in, const Buf& out);
/// The linear-algebra custom calls (kernels_solver.cc): all operands and every result leaf.
Status KernelSolver(const SolverConfig& config, const std::vector<Buf>& in, const std::vector<Buf>& out);
/// KernelSolver's checks on the records (every one that does not read a flag operand's value),
/// and its run after them.
Status CheckSolver(const SolverConfig& c, const std::vector<const BufferRecord*>& in,
                   const std::vector<const BufferRecord*>& out);
Status RunSolver(const SolverConfig& c, const std::vector<Buf>& in, const std::vector<Buf>& out);
/// torch-neuronx's native custom calls (kernels_neuron.cc).
/// The Neuron custom calls (kernels_neuron.cc) with the backend_config's dimension: their checks
/// on the records as a plan, its run, and the two together.
Result<NeuronPlan> PlanNeuron(NeuronOp op, int64_t dim, const std::vector<const BufferRecord*>& in,
                              const BufferRecord& out);
void RunNeuron(const NeuronPlan& plan, const Buf* in, const Buf& out);
Status KernelNeuron(NeuronOp op, int64_t dim, const std::vector<Buf>& in, const Buf& out);
/// JAX's GPU threefry2x32 custom call (kernels_rng.cc).
Status KernelThreefry2x32(const std::vector<Buf>& in, const std::vector<Buf>& out);
Status CheckThreefry2x32(const std::vector<const BufferRecord*>& in, const std::vector<const BufferRecord*>& out);
void RunThreefry2x32(const std::vector<Buf>& in, const std::vector<Buf>& out);
Status KernelReshape(const Buf& in, const Buf& out);
Status KernelTranspose(const Step& bundle, const Buf& in, const Buf& out);
Status KernelIota(const Step& bundle, const Buf& out);
Status KernelSlice(const Step& bundle, const Buf& in, const Buf& out);
Status KernelConcatenate(const Step& bundle, const std::vector<Buf>& ins, const Buf& out);
Status KernelPad(const Step& bundle, const Buf& in, const Buf& value, const Buf& out);
Status KernelReverse(const Step& bundle, const Buf& in, const Buf& out);
/// dynamic-slice(operand, starts...) and dynamic-update-slice(operand, update, starts...).
Status KernelDynamicSlice(const std::vector<Buf>& ops, const Buf& out);
Status KernelDynamicUpdateSlice(const std::vector<Buf>& ops, const Buf& out);
Status KernelDot(const DotDimensionNumbers& dims, const Buf& lhs, const Buf& rhs, const Buf& out);
Status KernelGather(const Step& bundle, const Buf& operand, const Buf& indices, const Buf& out);
Status KernelConvolution(const Step& bundle, const Buf& lhs, const Buf& rhs, const Buf& out);
// The fast convolution kernels (ConvKernel, kernel_plans.h). Each has a shape test that
// PlanConvolution runs once and a kernel that trusts it; a kernel sets `handled` false, writing
// nothing, when the values rule it out (a weight that is not finite, an output that overlaps an
// operand or is not aligned), and the next kernel that fits, or the reference, runs instead.
/// im2col and the GEMM for float results (kernels_conv_gemm.cc).
/// Sets the im2col kernel's fits bit when the shape suits it and lays out its strides and tap and
/// group offsets (plan.im2col).
void PlanConvolutionViaGemm(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out, ConvPlan& plan);
Status ConvolutionViaGemm(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled);
/// A 1x1 convolution (every kernel spatial dimension 1, no stride, padding or lhs dilation, no
/// groups) whose features come right after the batch (bf01) or last (b01f) in both input and
/// output: GEMMs over the operands in place, no im2col (kernels_conv_gemm.cc). Planning it finds
/// the layout (plan.pointwise_features_first) and sets its fits bit.
void PlanConvolutionPointwise(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out,
                              ConvPlan& plan);
Status ConvolutionPointwise(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled);
/// A convolution whose window covers the whole input, one output position (a weight gradient of
/// a 1x1 convolution): a dot contracting the input feature and every spatial dimension, for float
/// operands of the result's type. Planning it plans the dot (plan.as_dot) and sets its fits bit.
Status PlanConvolutionAsDot(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out, ConvPlan& plan);
Status ConvolutionAsDot(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out);
/// A weight gradient: a window of thousands of taps and a few output positions,
/// feature_group_count 1, any batch_group_count: each output element a sum over the input
/// feature and the window, tap row by tap row (kernels_conv_depthwise.cc).
bool ConvolutionLargeWindowFits(const ConvPlan& plan, const BufferRecord& rhs, const BufferRecord& out);
Status ConvolutionLargeWindow(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled);
/// Depthwise convolutions (one input feature per group, two spatial dimensions), computed
/// directly with the reference kernel's bits (kernels_conv_depthwise.cc). Planning one sets its
/// fits bit and lays out its padded plane and column taps (plan.depthwise).
void PlanConvolutionDepthwise(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out,
                              ConvPlan& plan);
Status ConvolutionDepthwise(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled);

/// Convolutions of narrow feature groups (a multiple of 16 bytes of output features each, up to
/// 256), two spatial dimensions, no lhs dilation, the output's features innermost: computed
/// directly in XLA's evaluator's order, so with the reference kernel's bits (kernels_conv_grouped.cc).
bool ConvolutionGroupedFits(const ConvPlan& plan, const BufferRecord& rhs, const BufferRecord& out);
Status ConvolutionGrouped(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled);

/// A scalar computation the executor runs for a kernel: binds two scalars, returns the root's bytes.
using ScalarCall = std::function<Result<const uint8_t*>(const uint8_t* a, const uint8_t* b)>;
/// select-and-scatter(operand, source, init) with its select and scatter computations (kernels_window.cc).
Status KernelSelectAndScatter(const Step& bundle, const Buf& operand, const Buf& source, const Buf& init,
                              const Buf& out, const ScalarCall& select, const ScalarCall& scatter);
/// A select-and-scatter planned at load (PlanSelectAndScatter) on buffers of the records it was
/// planned for: KernelSelectAndScatter without its checks.
Status RunPlannedSelectAndScatter(const Step& bundle, const SelectAndScatterPlan& plan, const Buf& operand,
                                  const Buf& source, const Buf& init, const Buf& out, const ScalarCall& select,
                                  const ScalarCall& scatter);

/// topk / TopK: for each row along the last dimension of `x`, the first k = values' last
/// dimension elements in `order` and their s32 indices; stable, so ties keep the lower index.
/// `less(a, b)` runs the comparator for TopKOrder::kComparator (kernels_sort.cc).
Status KernelTopK(const Buf& x, const Buf& values, const Buf& indices, TopKOrder order, const ScalarCall& less);
/// KernelTopK's checks on the records (kernel_plans.h's TopKPlan), and its run on a plan.
Result<TopKPlan> PlanTopK(const BufferRecord& x, const BufferRecord& values, const BufferRecord& indices);
Status RunTopK(const TopKPlan& plan, const Buf& x, const Buf& values, const Buf& indices, TopKOrder order,
               const ScalarCall& less);

/// Load-time lowering of a custom call (lower.cc): its kind, decoded config and, for
/// TopK, the order its comparator computation gives.
Status LowerCustomCall(const BundleProgram& program, const ComputationRecord& comp, Step& step);
/// Ops that call a computation once per element (map, sort, reduce-window, scatter) bind scalars
/// of known types to its parameters: checked once, at load, instead of on every call.
Status CheckScalarCallee(const BundleProgram& program, const ComputationRecord& comp, const Step& step);

/// rng-bit-generator(state) -> (new state, bits) or bits alone (`new_state` null), THREE_FRY and
/// PHILOX as XLA's RngBitGeneratorExpander; rng_default is PHILOX (kernels_rng.cc).
Status KernelRngBitGenerator(const Step& bundle, const Buf& state, const Buf* new_state, const Buf& bits);
/// The builder-library math functions of builder_math.def, elementwise (kernels_builder_math.cc).
Status KernelBuilderMath(BuilderMathFn fn, const std::vector<Buf>& in, const Buf& out);
Status CheckBuilderMath(BuilderMathFn fn, const std::vector<const BufferRecord*>& in, const BufferRecord& out);
void RunBuilderMath(BuilderMathFn fn, const std::vector<Buf>& in, const Buf& out);
/// ragged-dot in XLA's three modes (kernels_ragged_dot.cc); the shape check runs at load too.
Status CheckRaggedDotShapes(const Step& step, const BufferRecord& lhs, const BufferRecord& rhs,
                            const BufferRecord& sizes, const BufferRecord& out);
Status KernelRaggedDot(const Step& s, const Buf& lhs, const Buf& rhs, const Buf& sizes, const Buf& out);
/// KernelRaggedDot's checks and layout on the records (RaggedDotPlan), and its run. The load
/// lays out at most `max_rows` m (or k) coordinates; past that the run plans the step.
Result<RaggedDotPlan> PlanRaggedDot(const Step& s, const BufferRecord& lhs, const BufferRecord& rhs,
                                    const BufferRecord& sizes, const BufferRecord& out,
                                    int64_t max_rows = kMaxWindowReach);
Status RunRaggedDot(const RaggedDotPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& sizes, const Buf& out);
/// Copies the elements of the box [0, box) between two row-major layouts (kernels_dynamic.cc).
void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_dims, uint8_t* dst,
             const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& box, int elem_size);
/// dynamic-reshape: the operand's elements inside `x_sizes`, row-major, laid out in `out` with
/// runtime sizes `sizes` (zeros past them).
Status KernelDynamicReshape(const Buf& x, const std::vector<int64_t>& x_sizes, const std::vector<int64_t>& sizes,
                            const Buf& out);
/// The builder-library calls computed natively (kernels_builder_lib.cc).
Status KernelEinsum(const EinsumConfig& config, const Buf& x, const Buf& y, const Buf& out);
/// KernelEinsum's labels resolved on the records (its checks included), and its run on them.
Result<EinsumPlan> PlanEinsum(const EinsumConfig& config, const BufferRecord& x, const BufferRecord& y,
                              const BufferRecord& out);
void RunEinsum(const EinsumPlan& plan, const Buf& x, const Buf& y, const Buf& out);
/// The bytes KernelEinsum allocates besides its operands and result (partial sums of labels
/// summed inside one operand), UINT64_MAX when that does not fit; checked at load.
uint64_t EinsumScratchBytes(const EinsumConfig& config, const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                            PrimitiveType type);
Status KernelMatrixDiagonal(const Buf& x, const Buf& out);
Status KernelScramblePhiloxKey(const Buf& keys, const Buf& out);
Status KernelTridiagonalSolve(const std::vector<Buf>& in, const Buf& out);
/// The checks of the three kernels above on their records (a CheckedCallPlan at load), and
/// their runs without them.
Status CheckMatrixDiagonal(const BufferRecord& x, const BufferRecord& out);
void RunMatrixDiagonal(const Buf& x, const Buf& out);
Status CheckScramblePhiloxKey(const BufferRecord& keys, const BufferRecord& out);
void RunScramblePhiloxKey(const Buf& keys, const Buf& out);
Status CheckTridiagonalSolve(const std::vector<const BufferRecord*>& in, const BufferRecord& out);
void RunTridiagonalSolve(const std::vector<Buf>& in, const Buf& out);
/// fft in its four types over the last 1-3 dimensions (kernels_fft.cc).
Status KernelFft(const Step& bundle, const Buf& in, const Buf& out);
/// The bytes KernelFft allocates besides operand and result (its complex working set), at most;
/// UINT64_MAX when that does not fit. An FFT whose fft_length exceeds its operand works on the
/// padded lengths, so a small operand can ask for gigabytes.
uint64_t FftScratchBytes(const Step& s, const BufferRecord& in, const BufferRecord& out);

/// Collective data movement (kernels_collective.cc). `members[j]` holds the operand leaves of
/// the group's rank-j device; `out` this device's result leaves.
using MemberLeaves = std::vector<const std::vector<Buf>*>;
/// The shapes a collective over a group of `group_size` devices gives its operands' leaves.
Status CheckCollectiveShapes(Opcode op, const std::vector<const BufferRecord*>& in,
                             const std::vector<const BufferRecord*>& out, const AttrRecord* dimensions,
                             size_t group_size);
/// all-gather: each result leaf is the members' leaves concatenated along `dim`, in rank order.
Status CollectiveGather(const MemberLeaves& members, int64_t dim, size_t rank, const std::vector<Buf>& out);
/// reduce-scatter: block `rank` of the reduced value along `dim`.
Status CollectiveScatterBlock(const Buf& reduced, int64_t dim, size_t rank, const Buf& out);
/// all-to-all, array form (split and concatenate along the one dimension) or tuple form.
Status CollectiveAllToAll(const MemberLeaves& members, const AttrRecord* dimensions, size_t rank,
                          const std::vector<Buf>& out);
/// ragged-all-to-all (docs/multi-device-semantics.md 4.7): operands input, output,
/// input_offsets, send_sizes, output_offsets, recv_sizes; rows of dimension 0 move.
Status CheckRaggedAllToAllShapes(const std::vector<const BufferRecord*>& in, const BufferRecord& out,
                                 size_t group_size);
Status CollectiveRaggedAllToAll(const MemberLeaves& members, size_t rank, const Buf& out);
/// collective-permute and collective-broadcast: the leaves of `from`, or zeros when null.
void CollectiveTake(const std::vector<Buf>* from, const std::vector<Buf>& out);
/// rng(a, b), distribution=rng_uniform ([a, b)) or rng_normal (mean a, deviation b), drawn from
/// `engine` with the std:: distributions XLA's evaluator uses.
Status KernelRng(const Step& bundle, const Buf& a, const Buf& b, const Buf& out, std::minstd_rand0& engine);
/// rng as planned at load (PlanRng, kernel_plans.h); refuses low >= high for the uniform
/// distribution, the one check that reads values.
Status RunRng(const RngPlan& plan, const Buf& a, const Buf& b, const Buf& out, std::minstd_rand0& engine);
/// stochastic-convert(x, random) to a signed integer type, as XLA's StochasticConvertDecomposer.
Status KernelStochasticConvert(const Buf& x, const Buf& random, const Buf& out);
/// cholesky(a), lower=true|false, and triangular-solve(a, b) with left_side, lower,
/// unit_diagonal, transpose_a (kernels_linalg.cc).
Status KernelCholesky(const Step& bundle, const Buf& a, const Buf& out);
Status KernelTriangularSolve(const Step& bundle, const Buf& a, const Buf& b, const Buf& out);

/// batch-norm-training(x, scale, offset) -> (y, mean, variance), batch-norm-inference(x, scale,
/// offset, mean, variance) and batch-norm-grad(x, scale, mean, variance, grad_output) ->
/// (grad_x, grad_scale, grad_offset), as XLA's BatchNormExpander (kernels_norm.cc): planned
/// (PlanBatchNorm) and run at once, for a step without a plan. `out` holds the result's leaves.
Status KernelBatchNorm(const Step& bundle, const std::vector<Buf>& in, const std::vector<Buf>& out);
/// uniform_quantize (quantize = true) and uniform_dequantize custom calls.
Status KernelUniformQuantize(const Step& bundle, const Buf& x, const Buf& out, bool quantize);
/// KernelUniformQuantize's checks on the records as a plan, and its run.
Result<UniformQuantPlan> PlanUniformQuantize(const UniformQuantConfig& c, const BufferRecord& x,
                                             const BufferRecord& out, bool quantize);
void RunUniformQuantize(const UniformQuantPlan& plan, const UniformQuantConfig& c, const Buf& x, const Buf& out);
Status KernelQuantizeMx(const Step& bundle, const Buf& x, const Buf& data, const Buf& scales);
Result<QuantizeMxPlan> PlanQuantizeMx(const QuantizeMxConfig& c, const BufferRecord& x, const BufferRecord& data,
                                      const BufferRecord& scales);
void RunQuantizeMx(const QuantizeMxPlan& plan, const QuantizeMxConfig& c, const Buf& x, const Buf& data,
                   const Buf& scales);
/// scaled-dot(lhs, rhs, lhs_scale, rhs_scale), XLA's operand order.
Status KernelScaledDot(const Step& bundle, const Buf& lhs, const Buf& rhs, const Buf& lhs_scale, const Buf& rhs_scale,
                       const Buf& out);
Status KernelScaledMatmul(const Step& bundle, const Buf& lhs, const Buf& rhs, const Buf& lhs_scale,
                          const Buf& rhs_scale, const Buf& out);
Result<ScaledMatmulPlan> PlanScaledMatmul(const ScaledMatmulConfig& c, const BufferRecord& lhs, const BufferRecord& rhs,
                                          const BufferRecord& lhs_scale, const BufferRecord& rhs_scale,
                                          const BufferRecord& out);
Status RunScaledMatmul(const ScaledMatmulPlan& plan, const ScaledMatmulConfig& c, const Buf& lhs, const Buf& rhs,
                       const Buf& lhs_scale, const Buf& rhs_scale, const Buf& out);

/// Dims of a buffer record as a vector (helper shared by the kernel files).
inline const std::vector<int64_t>& Dims(const Buf& b) { return b.rec->dims; }

/// The dimension numbers the bundle reader made for a step's op (types/dimension_numbers.h). The
/// reader gives each op the kind its attribute schema names; another op gets empty numbers.
template <typename T>  // GatherDimensionNumbers, ...
const T& DimsOf(const Step& s) {
  static const T kNone{};
  const T* numbers = std::get_if<T>(s.bundle->dims.get());
  return numbers ? *numbers : kNone;
}
const DotDimensionNumbers& DotDims(const Step& s);  // dot, scaled-dot, and ragged-dot's dot part

/// The integer list attribute `id` of a step, or null when absent (or not a plain list).
inline const std::vector<int64_t>* IntList(const Step& b, AttrId id) {
  const AttrRecord* a = b.Find(id);
  return a && a->kind == AttrKind::IntList ? &a->ints() : nullptr;
}

/// An index operand's element (gather, scatter, dynamic-slice starts) as int64: an unsigned value
/// past INT64_MAX saturates instead of wrapping negative, so it clamps to the top as XLA's
/// unsigned comparison does.
inline int64_t LoadIndex(PrimitiveType type, const uint8_t* p) {
  if (IsUnsignedInt(type)) {
    uint64_t u = LoadAsUint(type, p);
    return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
  }
  return LoadAsInt(type, p);
}

/// Walks every index of `dims` in row-major order, calling f(linear, index).
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F&& f) {
  int64_t total = CheckedElementCount(dims);  // a buffer's dimensions: checked by the reader
  if (total <= 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    f(linear, index);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
}

/// Element strides of a row-major array with `dims`.
inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

}  // namespace nhlo
