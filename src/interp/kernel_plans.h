// SPDX-License-Identifier: Apache-2.0
// Plans for the kernels: dot and convolution; the elementwise spans; the data movement of
// broadcast, transpose, slice, reverse, pad, concatenate, iota, reshape and bitcast; gather,
// dynamic slices and scatter; reduce, reduce-window, select-and-scatter and sort; fft, cholesky
// and triangular-solve; batch norm; rng, rng-bit-generator and stochastic-convert; scaled-dot.
// A plan is built once, when the program is loaded (LowerBundle, lower.cc), from the buffer
// records of a static step; it holds every check and decision that depends only on shapes,
// types and attributes, so running the step does none. What is left to
// the run depends on values: a weight that is not finite (the GEMM forms would reorder its
// inf * 0), an operand that is not aligned or overlaps the result. A step of bounded dynamic
// shape has no plan: its sizes are known only at the run, which plans and runs together
// (KernelDot, KernelConvolution, KernelBatchNorm, and the other kernels of kernels.h).
#pragma once

#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "codegen/bundle_format.h"
#include "interp/elementwise_spans.h"
#include "support/status.h"
#include "types/dimension_numbers.h"
#include "types/hlo_attrs.h"

namespace nhlo {

struct Buf;
struct Step;

/// A copy as strided walks: for every index of `dims` (row-major), the element at
/// src + sum(index * src_stride) goes to dst + sum(index * dst_stride), strides in elements.
struct Walk {
  std::vector<int64_t> dims, src, dst;
  void Add(int64_t n, int64_t src_stride, int64_t dst_stride) {
    dims.push_back(n);
    src.push_back(src_stride);
    dst.push_back(dst_stride);
  }
  int64_t Count() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  /// Drops size-1 dimensions and merges a dimension into its inner neighbour when both strides
  /// continue it, so the innermost run is as long as the layout allows. Keeps at least one dim.
  void Simplify();
};

/// Calls row(a, b) for rows [begin, end), in row-major order, of the index space of `dims` without
/// its last `inner` dimensions; a and b are the row's offsets sum(index[k] * a_stride[k]) and
/// sum(index[k] * b_stride[k]), kept up to date as the index advances (an odometer).
template <typename Row>
void ForEachRow(const std::vector<int64_t>& dims, const std::vector<int64_t>& a_stride,
                const std::vector<int64_t>& b_stride, size_t inner, int64_t begin, int64_t end, Row&& row) {
  const size_t outer = dims.size() - inner;
  std::vector<int64_t> index(outer, 0);
  int64_t a = 0, b = 0, rest = begin;
  for (size_t k = outer; k-- > 0;) {
    index[k] = rest % dims[k];
    rest /= dims[k];
    a += index[k] * a_stride[k];
    b += index[k] * b_stride[k];
  }
  for (int64_t r = begin; r < end; ++r) {
    row(a, b);
    for (size_t k = outer; k-- > 0;) {
      a += a_stride[k];
      b += b_stride[k];
      if (++index[k] < dims[k]) break;
      a -= a_stride[k] * dims[k];
      b -= b_stride[k] * dims[k];
      index[k] = 0;
    }
  }
}

/// A data-movement step as one walk from the operand to the result (kernels_shape.cc), checked
/// against the records and simplified: broadcast, transpose, slice, reverse, and pad (which
/// first fills the result with its padding value, then copies what survives of the operand).
/// When the destination's innermost run is strided in the source and another dimension is
/// contiguous there (a transpose), `tile_dim` is that dimension and `tile_outer` walks the rest
/// in bands of tiles that keep both sides in cache.
struct CopyPlan {
  Walk walk;
  int64_t src_base = 0, dst_base = 0;  // in elements
  int element_bytes = 0;
  bool copies = true;       // false: nothing to copy (an empty result, or all of it padding)
  bool fill_first = false;  // pad
  int64_t tile_dim = -1;
  Walk tile_outer;
};

/// A concatenate (kernels_shape.cc): one copy per operand, from the operand to its place
/// along the axis.
struct ConcatPlan {
  std::vector<CopyPlan> parts;
};

/// An iota (kernels_shape.cc): the result as [outer, n, inner] with the iota dimension of size n.
struct IotaPlan {
  int64_t outer = 1, n = 0, inner = 1;
  PrimitiveType type = PrimitiveType::kF32;
  int element_bytes = 0;
};

/// A reshape, or a bitcast without layouts (kernels_shape.cc): the same bytes in another shape
/// or element type, `bytes` of them (nothing to move when buffer assignment shared them).
struct ReshapePlan {
  int64_t bytes = 0;
};

/// A bitcast between layouts (kernels_shape.cc), as XLA's evaluator runs it: the operand laid
/// out in its physical order, those bytes read back as the result's physical buffer and laid
/// out row-major. Two walks through a buffer of `bytes`; one, straight from operand to result,
/// when either walk is a plain copy.
struct BitcastPlan {
  CopyPlan to_physical, from_physical;
  int64_t bytes = 0;
};

/// A gather (kernels_gather_conv.cc) as strides over the result's index: result element o reads
/// the operand at sum(o[d] * src_stride[d]) plus, for each entry k of the index vector, its
/// clamped start times start_stride[k]; the index vector of o starts at sum(o[d] *
/// index_stride[d]) in the indices, its entries index_vector_stride apart. Batching dimensions
/// fold into src_stride (their start is the result's own index). A rank-0 result is planned
/// as [1].
struct GatherPlan {
  std::vector<int64_t> out_dims, src_stride, index_stride;
  std::vector<int64_t> start_stride, start_limit;  // per index vector entry; the start is clamped to [0, limit]
  int64_t index_vector_stride = 0;
  int element_bytes = 0;
};

/// A dynamic-slice, or a dynamic-update-slice (`update`), checked against its records: the copy
/// from the operand (from the update) with its start left to the run, which reads the start
/// indices (one rank-1 operand, or one scalar per dimension from operand `first_index` on),
/// clamps start d to [0, limit[d]] and offsets the walk by sum(start[d] * stride[d]).
struct DynamicSlicePlan {
  CopyPlan copy;
  std::vector<int64_t> stride, limit;
  size_t first_index = 1;
  bool vector_starts = false;
  bool update = false;
};

/// A one-input scatter (kernels_scatter.cc) as strides over the update's index: update element
/// u lands at sum(u[d] * dst_stride[d]) in the result plus, for each entry k of its index vector,
/// start_k * start_stride[k], where the vector starts at sum(u[d] * index_stride[d]) in the
/// indices, entries index_vector_stride apart; a start outside [0, start_limit[k]] skips the
/// update. With row_window the update's last dimension is a window dimension, and each of its
/// rows shares one index vector.
struct ScatterPlan {
  std::vector<int64_t> update_dims, dst_stride, index_stride;
  std::vector<int64_t> start_stride, start_limit;
  int64_t index_vector_stride = 0;
  int64_t bytes = 0;  // the operand's, copied to the result first
  int element_bytes = 0;
  bool row_window = false;
  bool skips_all = false;  // a window wider than the operand: the result is the operand
};

/// A scatter that walks every update element as the evaluator does (a variadic scatter, or one
/// whose start dimensions repeat or name a batching dimension), its records checked: the
/// operand dimensions the window covers and each one's extent, which update dimensions are
/// window dimensions, the operand's and the indices' row-major strides, and the index vector's
/// length.
struct ScatterWalkPlan {
  std::vector<int64_t> operand_window, window_size, strides, istrides;
  std::vector<bool> is_window;
  int64_t index_len = 1;
};

/// Adjacent dimensions of one kind merged: `size` elements `stride` elements apart.
struct StridedGroup {
  int64_t size, stride;
};

/// A reduce (exec_callees.cc, reduce_native.cc) checked against its records: the input's
/// dimensions without those of size 1, neighbours of one kind merged, as kept groups (row-major
/// over the result) and reduced ones (the order elements fold in); inner_kept when the
/// innermost group is kept (or there is none). A one-input reduce whose init value's type
/// differs from its result's (an f32 reducer, a bf16 result) reduces in `accumulate`, the init
/// value's type, and converts once, as XLA's evaluator does; otherwise accumulate is kInvalid.
struct ReducePlan {
  std::vector<StridedGroup> kept, reduced;
  bool inner_kept = true;
  PrimitiveType accumulate = PrimitiveType::kInvalid;
  SpanOp convert;  // with accumulate: the convert from it to the result's type
};

/// A map (exec_callees.cc) checked against its records: operands of the result's size, and for
/// a map whose computation is one binary op of its two parameters, that op's span (the
/// elementwise kernel's, operands in the computation's order); fn null: the computation runs
/// per element.
struct LiftedCallee;  // fused_groups.h
struct MapPlan {
  SpanOp native;
  bool swapped = false;
  /// A callee of scalar elementwise steps, run over the arrays tile by tile (fused_groups.h).
  std::shared_ptr<const LiftedCallee> lifted;
};

/// What a window op's windows meet (reduce-window, select-and-scatter; kernels_window.cc). The
/// window is separable: along dimension d, the window at position o of the result (reduce-
/// window) or source (select-and-scatter) meets the input elements offsets[d][first[d][o]] up to
/// offsets[d][first[d][o + 1]], in window order, each an index times the input's row-major
/// stride; padding and base-dilation holes meet nothing. A window's elements are the product of
/// its dimensions' lists, in row-major order: the order XLA's evaluator walks them in.
struct WindowReach {
  std::vector<int64_t> positions;  // per dimension, the result's or source's size
  std::vector<std::vector<int64_t>> first, offsets;
};

/// Calls f(offset) for each input element the window at position `o` (one index per dimension)
/// meets, in window order; `at` is scratch. A rank-0 window meets the one element.
template <typename F>
void ForEachInWindow(const WindowReach& reach, const int64_t* o, std::vector<int64_t>& at, F&& f) {
  const size_t rank = reach.first.size();
  if (rank == 0) return f(int64_t{0});
  at.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    at[d] = reach.first[d][o[d]];
    if (at[d] == reach.first[d][o[d] + 1]) return;
  }
  const size_t last = rank - 1;
  const int64_t* last_offsets = reach.offsets[last].data();
  const int64_t last_begin = at[last], last_end = reach.first[last][o[last] + 1];
  for (;;) {
    int64_t base = 0;
    for (size_t d = 0; d < last; ++d) base += reach.offsets[d][at[d]];
    for (int64_t j = last_begin; j < last_end; ++j) f(base + last_offsets[j]);
    size_t d = last;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++at[d] < reach.first[d][o[d] + 1]) break;
      at[d] = reach.first[d][o[d]];
    }
  }
}

/// A reduce-window and a select-and-scatter checked against their records, with their reach.
struct ReduceWindowPlan {
  WindowReach reach;
};
struct SelectAndScatterPlan {
  WindowReach reach;
};

/// How the native sort (sort_native.cc) keys a line's elements: the order of an unsigned image of
/// operand `operand`'s values is the comparator's (callee_pattern.h: compare(key(p[2k]),
/// key(p[2k+1])) LT or GT, plain or TOTALORDER, keys canonicalised or not).
enum class SortKeyKind : uint8_t { kFloatTotal, kFloatPlain, kSigned, kUnsigned };
struct SortKeySpec {
  PrimitiveType type = PrimitiveType::kInvalid;
  int size = 0;  // host bytes per key
  SortKeyKind kind = SortKeyKind::kUnsigned;
  bool canonical = false, descending = false;
  uint64_t nan_bits = 0, zero_bits = 0;
  double zero_value = 0;  // the canonicalisation's zero, decoded
  uint32_t operand = 0;
  bool narrow = false;       // keys fit in 32 bits: each travels with its index in one word
  bool fast = false;         // f32 or bf16 keys: keyed without the per-element type dispatch
  bool carry_value = false;  // one operand, long lines: the key word carries the element itself
};

/// A sort (exec_callees.cc, sort_native.cc) checked against its records: along dimension `dim`
/// of `len` elements `stride` apart, `total` elements in all. With a recognised comparator and
/// lines of at most 2^32 elements, `native` and the key the native sort orders by.
struct SortPlan {
  int64_t dim = 0, len = 0, stride = 1, total = 0;
  bool native = false;
  SortKeySpec key;
  std::vector<int> sizes;  // host bytes per element of each operand
};

/// Checks a broadcast, transpose, slice, reverse or pad step against its records (the pad value
/// too, for pad) and plans its copy; the error is the one the kernel gives for the same records.
Result<CopyPlan> PlanCopy(const Step& step, const BufferRecord& in, const BufferRecord* pad_value,
                          const BufferRecord& out);
/// Runs a plan on buffers whose records are the ones it was made for.
Status RunCopy(const CopyPlan& plan, const Buf& in, const Buf* pad_value, const Buf& out);
/// The same for concatenate (its operands' records), iota and reshape.
Result<ConcatPlan> PlanConcatenate(const Step& step, const std::vector<const BufferRecord*>& ins,
                                   const BufferRecord& out);
void RunConcatenate(const ConcatPlan& plan, const Buf* ins, const Buf& out);
Result<IotaPlan> PlanIota(const Step& step, const BufferRecord& out);
void RunIota(const IotaPlan& plan, const Buf& out);
Result<ReshapePlan> PlanReshape(const BufferRecord& in, const BufferRecord& out);
/// A bitcast-convert between types of whole bytes (kernels_elementwise.cc): KernelBitcastConvert's
/// checks, and its byte copy as a reshape's; refused for sub-byte types, whose fields the kernel
/// splits or joins.
Result<ReshapePlan> PlanBitcastConvert(const BufferRecord& in, const BufferRecord& out);
/// A bitcast-convert to or from a type narrower than a byte (kernels_elementwise.cc): each of
/// `wide_count` wider elements split into `ratio` narrower ones (`split`), or `ratio` narrower
/// ones joined into each of `wide_count` wider ones, lane 0 in the low bits.
struct BitFieldPlan {
  bool split = true;
  int ratio = 1;
  int64_t wide_count = 0;
};
Result<BitFieldPlan> PlanBitFields(const BufferRecord& in, const BufferRecord& out);
void RunBitFields(const BitFieldPlan& plan, const Buf& in, const Buf& out);
/// A bitcast with layouts: KernelBitcast's checks and its walks.
Result<BitcastPlan> PlanBitcast(const Step& step, const BufferRecord& in, const BufferRecord& out);
void RunBitcast(const BitcastPlan& plan, const Buf& in, const Buf& out);
/// A gather's checks (those KernelGather makes, with its messages) and its strides; refused
/// too, to run on KernelGather's general path, when start_index_map repeats an operand dimension
/// or names a batching one (there a later start overrides an earlier one).
Result<GatherPlan> PlanGather(const Step& step, const BufferRecord& operand, const BufferRecord& indices,
                              const BufferRecord& out);
void RunGather(const GatherPlan& plan, const Buf& operand, const Buf& indices, const Buf& out);
/// The checks of KernelDynamicSlice / KernelDynamicUpdateSlice on the records, and the copy.
Result<DynamicSlicePlan> PlanDynamicSlice(bool update, const std::vector<const BufferRecord*>& ops,
                                          const BufferRecord& out);
void RunDynamicSlice(const DynamicSlicePlan& plan, const Buf* ops, const Buf& out);
void RunReshape(const ReshapePlan& plan, const Buf& in, const Buf& out);
/// A scatter's checks (KernelScatter's, with its messages) on (input, indices, updates) and the
/// result, and its strides; refused, to run on KernelScatter's general walk, for a variadic
/// scatter or one whose start dimensions repeat or name a batching dimension. Run by
/// RunPlannedScatter (native_callees.h), which calls the scatter computation.
/// A reduce's checks (KernelReduce's, with its messages) on its inputs, init values and results
/// (one of each per input) and the reduced dimensions, and its groups.
Result<ReducePlan> PlanReduce(const std::vector<const BufferRecord*>& in, const std::vector<const BufferRecord*>& init,
                              const std::vector<const BufferRecord*>& out, DimIndexList dims);
struct CalleePattern;  // callee_pattern.h
/// A sort's checks (KernelSort's) on its operands and results, one of each per operand, and with
/// the comparator's recognised pattern (or null), the native sort's key.
Result<SortPlan> PlanSort(const std::vector<const BufferRecord*>& in, const std::vector<const BufferRecord*>& out,
                          int64_t dim, const CalleePattern* pattern);
/// A reduce-window's checks (KernelReduceWindow's) on its inputs, init values and results, and
/// its reach; refused, to walk each window as the run finds it, when the reach would hold more
/// than kMaxWindowReach offsets (a window far wider than its input, over many positions).
Result<ReduceWindowPlan> PlanReduceWindow(const Step& step, const std::vector<const BufferRecord*>& in,
                                          const std::vector<const BufferRecord*>& init,
                                          const std::vector<const BufferRecord*>& out);
/// The same for select-and-scatter(operand, source, init) and its result.
Result<SelectAndScatterPlan> PlanSelectAndScatter(const Step& step, const BufferRecord& operand,
                                                  const BufferRecord& source, const BufferRecord& init,
                                                  const BufferRecord& out);
constexpr int64_t kMaxWindowReach = int64_t{1} << 22;
Result<ScatterPlan> PlanScatter(const Step& step, const std::vector<const BufferRecord*>& ops, const BufferRecord& out);
/// The checks of any scatter on (inputs..., indices, updates...) and its result leaves, and its
/// walk.
Result<ScatterWalkPlan> PlanScatterWalk(const Step& step, const std::vector<const BufferRecord*>& ops,
                                        const std::vector<const BufferRecord*>& out);

/// A dot as [batch, m, k] x [batch, k, n] -> [batch, m, n] (kernels_dot.cc): the permutations that
/// bring each operand into that order, or into [batch, k, m] and [batch, n, k], which the GEMM
/// reads as they are.
struct DotPlan {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t work = 1;  // m * n * k, saturated at INT64_MAX
  std::vector<int64_t> l_mk, l_km, r_kn, r_nk;
};

/// Checks `dims` against the records (each dimension used once, matching sizes, the result's
/// element count) and plans the dot.
Result<DotPlan> PlanDot(const DotDimensionNumbers& dims, const BufferRecord& lhs, const BufferRecord& rhs,
                        const BufferRecord& out);
/// Runs a plan on operands whose records are the ones it was made for.
Status RunDot(const DotPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out);

/// The fast convolution kernels, in the order they are tried; the reference kernel (XLA's
/// evaluator loop) takes what none of them does.
enum class ConvKernel : uint8_t {
  kDepthwise,    // one input feature per group, two spatial dimensions (kernels_conv_depthwise.cc)
  kAsDot,        // a window covering the whole input: one dot (kernels_conv_gemm.cc)
  kLargeWindow,  // a weight gradient: thousands of taps, few outputs (kernels_conv_depthwise.cc)
  kPointwise,    // 1x1 with features first or last: GEMMs in place (kernels_conv_gemm.cc)
  kGrouped,      // narrow feature groups, features last in the output: directly (kernels_conv_grouped.cc)
  kViaGemm,      // im2col and the GEMM (kernels_conv_gemm.cc)
};
constexpr int kConvKernelCount = 6;

struct DepthwiseLayout;  // kernels_conv_depthwise.cc
struct Im2colLayout;     // kernels_conv_gemm.cc

/// A convolution checked against its records: labels, window, group counts, sizes, and the
/// 64-bit range of every window position; `fits` has bit k set when ConvKernel k's shape test
/// passed. The labels point into the bundle, which outlives the plan.
struct ConvPlan {
  const ConvDimLabels* labels = nullptr;
  std::vector<WindowDim> window;  // one per spatial dimension (defaults for an absent window)
  int64_t fgc = 1, bgc = 1;
  uint8_t fits = 0;
  // kAsDot: the dot over the operands (lhs first when the output's batch precedes its feature)
  // and the result seen as that dot's [batch, feature] or [feature, batch] matrix.
  DotPlan as_dot;
  BufferRecord as_dot_out;
  bool as_dot_swapped = false;
  // kPointwise: features right after the batch (bf01) rather than last (b01f).
  bool pointwise_features_first = false;
  // kDepthwise: the padded-plane layout and column taps its shape decides (shared: plans are
  // copied).
  std::shared_ptr<const DepthwiseLayout> depthwise;
  // kViaGemm: im2col's strides, tap offsets and group offsets, and how jobs share the work.
  std::shared_ptr<const Im2colLayout> im2col;

  bool Fits(ConvKernel k) const { return (fits >> static_cast<int>(k)) & 1; }
};

/// A unary, binary, compare, select, clamp, convert or reduce-precision step whose records pass
/// its kernel's checks (kernels_elementwise.cc), resolved once to the span that kernel runs
/// (ElementwiseStepSpan: the fast, complex or element-at-a-time form): running it is the span
/// over `count` elements in the kernel's chunks. A select of one predicate copies `pick_bytes`
/// from the operand it picks.
struct ElementwisePlan {
  SpanOp span;
  int64_t count = 0;
  int64_t element[3] = {0, 0, 0};  // bytes per element of each operand; 0: one element read for all
  int64_t pick_bytes = -1;         // >= 0: a select of one predicate
};

/// Plans an elementwise step (fused_groups.cc, beside the groups' own span forms); the kernel's
/// error when its checks fail (the run then reports it), or an error for a dynamic step.
Result<ElementwisePlan> PlanElementwise(const ComputationRecord& comp, const Step& s);
/// A copy between float types (XLA's mixed-precision verifier allows it) as the convert it is.
Result<ElementwisePlan> PlanConvertingCopy(const BufferRecord& in, const BufferRecord& out);
/// Runs a plan on buffers whose records are the ones it was made for.
void RunElementwise(const ElementwisePlan& plan, const Buf* in, const Buf& out);

/// An fft checked against its records (kernels_fft.cc): its type and lengths, and whether a
/// complex transform's lengths differ from the operand's dimensions (`padded`: XLA's evaluator
/// reads and writes the common part, zeros elsewhere).
struct FftPlan {
  FftType type = FftType::kFft;
  std::vector<int64_t> length;
  bool padded = false;
};
/// KernelFft's checks on the records, with its messages.
Result<FftPlan> PlanFft(const Step& s, const BufferRecord& in, const BufferRecord& out);
Status RunFft(const FftPlan& plan, const Buf& in, const Buf& out);

/// A cholesky or triangular-solve checked against its records (kernels_linalg.cc): `n` the size
/// of a's square matrices, `matrices` how many, b's (and the result's) rows and cols, and the
/// attributes read once.
struct LinalgPlan {
  int64_t n = 0, matrices = 0, rows = 0, cols = 0;
  bool lower = true, left = false, unit = false, transposed = false;
};
/// KernelCholesky's and KernelTriangularSolve's checks on the records, with their messages.
Result<LinalgPlan> PlanCholesky(const Step& s, const BufferRecord& a, const BufferRecord& out);
Result<LinalgPlan> PlanTriangularSolve(const Step& s, const BufferRecord& a, const BufferRecord& b,
                                       const BufferRecord& out);
Status RunCholesky(const LinalgPlan& plan, const Buf& a, const Buf& out);
Status RunTriangularSolve(const LinalgPlan& plan, const Buf& a, const Buf& b, const Buf& out);

/// A batch-norm-training, -inference or -grad step (kernels_norm.cc), its operand and result
/// leaves checked: the operand as [outer, features, inner] around its feature dimension (outer
/// and inner 0 for an empty operand), the element count per feature (training's, and grad's s32
/// product), and epsilon as XLA keeps it (an f32).
struct BatchNormPlan {
  Opcode op = Opcode::kBatchNormTraining;
  int64_t outer = 1, features = 1, inner = 1;
  int64_t per_feature = 0;
  int32_t grad_count = 0;
  float epsilon = 0;
};
/// `in` are the operands, `out` the result's leaves.
Result<BatchNormPlan> PlanBatchNorm(const Step& s, const std::vector<const BufferRecord*>& in,
                                    const std::vector<const BufferRecord*>& out);
Status RunBatchNorm(const BatchNormPlan& plan, const Buf* in, const Buf* out);

/// rng-bit-generator (kernels_rng.cc), its state and results checked: THREE_FRY or PHILOX
/// (rng_default), and the state's words.
struct RngBitsPlan {
  bool three_fry = false;
  int64_t words = 0;
};
/// `new_state` is null when the step gives the bits alone.
Result<RngBitsPlan> PlanRngBitGenerator(const Step& s, const BufferRecord& state, const BufferRecord* new_state,
                                        const BufferRecord& bits);
void RunRngBitGenerator(const RngBitsPlan& plan, const Buf& state, const Buf* new_state, const Buf& bits);

/// rng (kernels_rng.cc), its distribution read and its operands' and result's types checked;
/// that low < high is a check on values, made at the run (RunRng, kernels.h).
struct RngPlan {
  bool normal = false;
};
Result<RngPlan> PlanRng(const Step& s, const BufferRecord& a, const BufferRecord& b, const BufferRecord& out);

/// stochastic-convert (kernels_rng.cc), its types checked: the result type's bounds as the
/// operand's type holds them, the type's own, and 2^bits of the random operand.
struct StochasticConvertPlan {
  double min = 0, max = 0, scale = 0;
  int64_t type_min = 0, type_max = 0;
};
Result<StochasticConvertPlan> PlanStochasticConvert(const BufferRecord& x, const BufferRecord& random,
                                                    const BufferRecord& out);
void RunStochasticConvert(const StochasticConvertPlan& plan, const Buf& x, const Buf& random, const Buf& out);

/// scaled-dot (kernels_quant.cc), its records checked: per side whether it is an MX pair (f8
/// data, f8e8m0fnu block scales along the contracting dimension, `block` elements each) or any
/// float data with float block scales, the f32 record of its dequantized values, and the dot of
/// those values, planned.
struct ScaledDotPlan {
  struct Side {
    bool mx = false;
    int64_t contracting = 0, block = 1;
    BufferRecord f32_record;  // the dequantized operand: f32 in the operand's dims
  };
  Side side[2];
  DotPlan dot;
};
Result<ScaledDotPlan> PlanScaledDot(const Step& s, const BufferRecord& lhs, const BufferRecord& rhs,
                                    const BufferRecord& lhs_scale, const BufferRecord& rhs_scale,
                                    const BufferRecord& out);
Status RunScaledDot(const ScaledDotPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& lhs_scale,
                    const Buf& rhs_scale, const Buf& out);

/// topk and the TopK custom call (kernels_sort.cc), their records checked: each of `rows` rows
/// of `n` elements gives its first `k` in the order (k <= n).
struct TopKPlan {
  int64_t rows = 0, n = 0, k = 0;
};

/// A Neuron custom call (kernels_neuron.cc), its records checked: the lines along the
/// backend_config's dimension, element (o, i, j) at o * len * inner + i * inner + j, and how
/// many lines there are to compute.
enum class NeuronOp : uint8_t { kSoftmax, kSoftmaxBackward, kRmsNorm, kArgMax, kArgMin };
struct NeuronPlan {
  NeuronOp op = NeuronOp::kSoftmax;
  int64_t outer = 1, len = 1, inner = 1, lines = 0;
};

/// The uniform_quantize / uniform_dequantize custom calls (kernels_quant.cc), their records
/// checked against the config: which way, and the real-valued side's row-major strides.
struct UniformQuantPlan {
  bool quantize = true;
  std::vector<int64_t> strides;
};

/// QuantizeMX (kernels_quant.cc), its records checked against the config: the blocks of 32
/// along the config's dimension (k elements long) between `outer` and `inner`, and whether the
/// data is packed four lanes to a u32.
struct QuantizeMxPlan {
  int64_t outer = 1, inner = 1, k = 0;
  bool packed = false;
};

/// ScaledMatmul (kernels_quant.cc), its records checked against the config: per side the
/// contracting dimension, the codes its u32 words unpack to and their f32 record in the
/// logical (unpacked) shape; and the f32 dot of the dequantized values, planned.
struct ScaledMatmulPlan {
  struct Side {
    int64_t contracting = 0, codes = 0;
    std::vector<int64_t> packed_strides;
    BufferRecord f32_record;
  };
  Side side[2];
  DotPlan dot;
};

/// xla_builder.matrix.Einsum (kernels_builder_lib.cc), its labels resolved on its records: for
/// each operand, whether its diagonal adds zero and the labels it sums away inside itself
/// (kept and summed extents and strides); the contracting labels' extents and strides into
/// x and y; per result dimension its extent, its strides into x and y and the first result
/// dimension with its label (a repeated label holds the value on its diagonal).
struct EinsumPlan {
  struct Side {
    bool add_zero = false, sums = false;
    int64_t kept_count = 0, summed_count = 0;
    std::vector<int64_t> kept_dims, kept_strides, summed_dims, summed_strides;
  };
  bool zeros = false;  // an operand has no elements: every sum is empty
  Side x, y;
  std::vector<int64_t> cdims, cx, cy, dims, ox, oy;
  std::vector<size_t> first;
  int64_t count = 0, contract_count = 0;
};

/// A custom call whose kernel has nothing to lay out, only checks to make on its records
/// (GetMatrixDiagonalViaGather, ScramblePhiloxKey, TridiagonalSolver, the builder math
/// functions, threefry2x32): they passed at load, and the run makes none.
struct CheckedCallPlan {};

/// ragged-dot's mode: the kind of its lhs ragged dimension (kernels_ragged_dot.cc).
enum class RaggedMode : uint8_t { kNonContracting, kContracting, kBatch };

/// A ragged-dot checked against its records (kernels_ragged_dot.cc): its dimension numbers,
/// mode, sizes and group-sizes form; for batch mode the dot it runs first and how a batch index
/// finds its group row, for the others the operands' orders into [batch, m, k] and
/// [batch, group, k, n] and, per m (or k) coordinate, its place on the ragged dimension and its
/// group-sizes row.
struct RaggedDotPlan {
  RaggedMode mode = RaggedMode::kNonContracting;
  std::vector<int64_t> lb, lc, rb, rc;
  int64_t ragged = 0;                 // lhs dimension
  int64_t rhs_group = -1;             // rhs dimension, non-contracting mode only
  std::vector<int64_t> lfree, rfree;  // free dimensions, ascending
  std::vector<int64_t> x_dims;        // lhs dimensions of the ragged kind before the ragged one
  int64_t groups = 0;
  bool broadcast_sizes = false;  // group_sizes is [g]
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool empty = false;  // the result has no elements
  bool zeros = false;  // an operand has none: every sum is empty
  // batch mode
  DotPlan dot;
  std::vector<int64_t> batch_sizes, x_pos, x_sizes;
  size_t ragged_pos = 0;
  int64_t block = 0;  // bytes of one batch index's [m, n] block
  // non-contracting and contracting modes
  std::vector<int64_t> lorder, rorder, place, xrow;
  int64_t x_count = 1;
};

/// scan (scan_step.cc) checked against its records and computation: the counts of inputs,
/// carries and outputs, the result's and the callee root's leaves, each input's and output's
/// blocks along the scanned dimension (outer x length x inner bytes), the length and the order.
struct ScanPlan {
  struct Along {
    int64_t outer = 1, length = 0, inner = 0;
  };
  size_t inputs = 0, carries = 0, outputs = 0;
  std::vector<uint32_t> result_leaves, root_leaves;
  std::vector<Along> in_along, out_along;
  int64_t length = -1;
  bool reverse = false;
};

/// What LowerBundle keeps on a step (Step::plan).
using KernelPlan =
    std::variant<DotPlan, ConvPlan, CopyPlan, ConcatPlan, IotaPlan, ReshapePlan, GatherPlan, DynamicSlicePlan,
                 ScatterPlan, ReducePlan, ReduceWindowPlan, SelectAndScatterPlan, BitcastPlan, SortPlan,
                 ElementwisePlan, FftPlan, LinalgPlan, BatchNormPlan, RngBitsPlan, RngPlan, StochasticConvertPlan,
                 ScaledDotPlan, BitFieldPlan, TopKPlan, NeuronPlan, UniformQuantPlan, QuantizeMxPlan, ScaledMatmulPlan,
                 CheckedCallPlan, EinsumPlan, ScatterWalkPlan, MapPlan, RaggedDotPlan, ScanPlan>;

Result<ConvPlan> PlanConvolution(const ConvolutionDimensionNumbers& dims, const BufferRecord& lhs,
                                 const BufferRecord& rhs, const BufferRecord& out);
Status RunConvolution(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out);

}  // namespace nhlo
