// SPDX-License-Identifier: Apache-2.0
#include "ir/gpu_library_calls.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>

#include "ir/custom_calls.h"
#include "ir/expansion_builder.h"
#include "support/checked_math.h"
#include "types/float_cast.h"
#include "types/gpu_library_configs.h"

namespace nhlo {
namespace {

using DimVector = std::vector<int64_t>;
constexpr size_t kNone = static_cast<size_t>(-1);

std::string Str(const Shape& s) { return ShapeToString(s, false); }
bool IsF8(PrimitiveType t) {
  return t == PrimitiveType::kF8E4M3FN || t == PrimitiveType::kF8E5M2 || t == PrimitiveType::kF8E4M3 ||
         t == PrimitiveType::kF8E4M3FNUZ || t == PrimitiveType::kF8E5M2FNUZ || t == PrimitiveType::kF8E4M3B11FNUZ ||
         t == PrimitiveType::kF8E3M4;
}

// The type cuBLAS and cuDNN compute in for a result of `out` (XLA's GetBlasComputationType; cuDNN
// accumulates f16 in f32): nullopt for a type they do not produce.
std::optional<PrimitiveType> ComputeType(PrimitiveType out) {
  if (out == PrimitiveType::kF16 || out == PrimitiveType::kBF16 || out == PrimitiveType::kF32 || IsF8(out))
    return PrimitiveType::kF32;
  if (out == PrimitiveType::kF64 || out == PrimitiveType::kC64 || out == PrimitiveType::kC128 ||
      out == PrimitiveType::kS32)
    return out;
  return std::nullopt;
}

// Every index of `dims` below `rank`, none twice.
bool ValidDims(const DimVector& dims, size_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(rank)) return false;
    for (size_t j = 0; j < i; ++j)
      if (dims[j] == dims[i]) return false;
  }
  return true;
}

// dot_general's result dimensions (batch, lhs free, rhs free), or nullopt.
std::optional<DimVector> DotResult(const Shape& lhs, const Shape& rhs, const GemmConfig& c) {
  const size_t lr = lhs.rank(), rr = rhs.rank();
  if (c.lhs_batch.size() != c.rhs_batch.size() || c.lhs_contracting.size() != c.rhs_contracting.size()) return {};
  DimVector lhs_used = c.lhs_batch, rhs_used = c.rhs_batch;
  lhs_used.insert(lhs_used.end(), c.lhs_contracting.begin(), c.lhs_contracting.end());
  rhs_used.insert(rhs_used.end(), c.rhs_contracting.begin(), c.rhs_contracting.end());
  if (!ValidDims(lhs_used, lr) || !ValidDims(rhs_used, rr)) return {};
  for (size_t i = 0; i < lhs_used.size(); ++i)
    if (lhs.dims[lhs_used[i]] != rhs.dims[rhs_used[i]]) return {};
  DimVector out;
  for (int64_t d : c.lhs_batch) out.push_back(lhs.dims[d]);
  for (size_t d = 0; d < lr; ++d)
    if (std::find(lhs_used.begin(), lhs_used.end(), static_cast<int64_t>(d)) == lhs_used.end())
      out.push_back(lhs.dims[d]);
  for (size_t d = 0; d < rr; ++d)
    if (std::find(rhs_used.begin(), rhs_used.end(), static_cast<int64_t>(d)) == rhs_used.end())
      out.push_back(rhs.dims[d]);
  return out;
}

// ---- cuBLAS

// Where each operand of a gemm call is (kNone: absent) and what its result holds.
struct GemmPlan {
  const GemmConfig* config = nullptr;
  size_t c = kNone, bias = kNone, a_scale = kNone, b_scale = kNone, c_scale = kNone, d_scale = kNone;
  Shape out;  // D
  PrimitiveType compute = PrimitiveType::kF32;
  bool aux = false, amax = false, workspace = false;
  DimVector bias_map;  // bias dimension i -> output dimension
};

Result<GemmPlan> PlanGemm(const Instruction& call) {
  GemmPlan plan;
  NHLO_ASSIGN_OR_RETURN(plan.config, CustomCallConfigOf(call).As<GemmConfig>());
  const GemmConfig& c = *plan.config;
  const size_t n = call.operands.size();
  // The result: D, or (D, [aux], [amax], [workspace]).
  const Shape& result = call.shape;
  plan.aux = c.HasAux();
  plan.amax = c.target == GemmTarget::kLtF8 && c.damax_output;
  if (result.IsTuple()) {
    if (result.tuple.empty()) return CustomCallError(call, "returns an empty tuple");
    plan.out = result.tuple[0];
    size_t next = 1 + plan.aux + plan.amax;
    if (result.tuple.size() == next + 1) {
      const Shape& w = result.tuple[next];
      if (!IsStaticArray(w) || w.rank() != 1 || (w.type != PrimitiveType::kS8 && w.type != PrimitiveType::kU8))
        return CustomCallError(call, "result's last element " + Str(w) + " must be the workspace, s8[N] or u8[N]");
      plan.workspace = true;
    } else if (result.tuple.size() != next) {
      return CustomCallError(call, "returns " + std::to_string(result.tuple.size()) + " values; its epilogue gives " +
                                       std::to_string(next) + " (and a workspace)");
    }
    if (plan.aux && !SameShape(result.tuple[1], plan.out))
      return CustomCallError(call,
                             "aux output " + Str(result.tuple[1]) + " must have the result's shape " + Str(plan.out));
    if (plan.amax && (!result.tuple[1 + plan.aux].IsScalar() || result.tuple[1 + plan.aux].type != PrimitiveType::kF32))
      return CustomCallError(call, "amax output must be f32[]");
  } else {
    if (plan.aux || plan.amax) return CustomCallError(call, "with this epilogue returns a tuple");
    plan.out = result;
  }
  if (!IsStaticArray(plan.out))
    return CustomCallError(call, "result " + Str(plan.out) + " must be an array of a static shape");
  std::optional<PrimitiveType> compute = ComputeType(plan.out.type);
  if (!compute) return CustomCallError(call, "cannot give a result of type " + Str(plan.out));
  plan.compute = *compute;
  // XLA fuses epilogues only into f8, f16, bf16, f32 and f64 matmuls, and gives f8 matmuls f8,
  // f16, bf16 or f32 results (SupportsEpilogueFusion, the f8 rewriter).
  const bool real = plan.compute == PrimitiveType::kF32 || plan.compute == PrimitiveType::kF64;
  if (c.epilogue != GemmEpilogue::kDefault && !real)
    return CustomCallError(call, "epilogue " + std::string(GemmEpilogueName(c.epilogue)) +
                                     " needs a floating-point result, not " + Str(plan.out));
  if (c.target == GemmTarget::kLtF8 && plan.compute != PrimitiveType::kF32)
    return CustomCallError(call, "gives an f8, f16, bf16 or f32 result, not " + Str(plan.out));
  if (plan.compute == PrimitiveType::kS32 && (c.alpha_real != std::trunc(c.alpha_real) || c.beta != std::trunc(c.beta)))
    return CustomCallError(call, "with an s32 result needs integer alpha and beta");
  // The operands (docs/custom-calls.md, "cuBLAS").
  const bool has_c = c.beta != 0;
  const bool has_bias = c.AddsBias();
  size_t want = 0;
  switch (c.target) {
    case GemmTarget::kLegacy:
      if (c.epilogue != GemmEpilogue::kDefault) return CustomCallError(call, "has no epilogue (cublasLt's calls have)");
      want = n == 3 ? 3 : 2 + has_c;
      if (n == 3) plan.c = 2;
      break;
    case GemmTarget::kLt:
      want = 2 + has_c + has_bias;
      if (has_c) plan.c = 2;
      if (has_bias) plan.bias = 2 + has_c;
      break;
    case GemmTarget::kLtF8: {
      if (plan.aux) return CustomCallError(call, "has no aux output in its f8 form");
      const bool f8_out = plan.out.type == PrimitiveType::kF8E4M3FN || plan.out.type == PrimitiveType::kF8E5M2;
      const size_t current = 4 + has_c + has_bias + f8_out, old = 6 + has_c + has_bias;
      if (has_c) plan.c = 2;
      plan.a_scale = 2 + has_c;
      plan.b_scale = plan.a_scale + 1;
      if (n == old) {  // before XLA's PR 16841 (2024-09): c_scale and d_scale always present
        want = old;
        plan.c_scale = plan.a_scale + 2;
        plan.d_scale = plan.a_scale + 3;
        if (has_bias) plan.bias = plan.a_scale + 4;
      } else {
        want = current;
        if (has_bias) plan.bias = plan.a_scale + 2;
        if (f8_out) plan.d_scale = n - 1;
      }
      break;
    }
  }
  if (n != want) {
    std::ostringstream beta;
    beta << c.beta;
    return CustomCallError(call, "takes " + std::to_string(want) + " operands for beta " + beta.str() +
                                     " and epilogue " + std::string(GemmEpilogueName(c.epilogue)) + ", not " +
                                     std::to_string(n));
  }
  for (const Instruction* op : call.operands)
    if (!IsStaticArray(op->shape)) return CustomCallError(call, "operands must be arrays of static shapes");
  for (size_t s : {plan.a_scale, plan.b_scale, plan.c_scale, plan.d_scale})
    if (s != kNone && (!call.operands[s]->shape.IsScalar() || !IsFloat(call.operands[s]->shape.type)))
      return CustomCallError(call, "operand " + std::to_string(s) + " is a scale: a floating-point scalar, not " +
                                       Str(call.operands[s]->shape));
  // Every value operand is of the result's kind: integers for an s32 result, floating-point
  // (complex too for a complex result) otherwise.
  for (size_t i = 0; i < n; ++i) {
    const PrimitiveType t = call.operands[i]->shape.type;
    const bool fits = plan.compute == PrimitiveType::kS32 ? IsInteger(t) && i < 2
                      : IsComplex(plan.compute)           ? IsFloat(t) || IsComplex(t)
                                                          : IsFloat(t);
    if (!fits)
      return CustomCallError(call, "operand " + std::to_string(i) + " " + Str(call.operands[i]->shape) +
                                       " does not fit a result of " + Str(plan.out));
  }
  const Shape& a = call.operands[0]->shape;
  const Shape& b = call.operands[1]->shape;
  std::optional<DimVector> dims = DotResult(a, b, c);
  if (!dims) return CustomCallError(call, "dot_dimension_numbers do not fit its operands " + Str(a) + " and " + Str(b));
  if (*dims != ShapeDims(plan.out))
    return CustomCallError(call, "result " + Str(plan.out) + " is not the product of " + Str(a) + " and " + Str(b));
  if (plan.c != kNone && ShapeDims(call.operands[plan.c]->shape) != *dims)
    return CustomCallError(call,
                           "addend C " + Str(call.operands[plan.c]->shape) + " must have the result's dimensions");
  if (plan.bias != kNone) {
    // The bias runs along the physically most-minor dimensions of the result (XLA's
    // FuseVectorBiasAdd matches that broadcast only).
    const Shape& bias = call.operands[plan.bias]->shape;
    if (bias.rank() == 0 || bias.rank() > plan.out.rank())
      return CustomCallError(call, "bias " + Str(bias) + " must have rank 1 to the result's");
    const DimVector out_order = MinorToMajor(plan.out), bias_order = MinorToMajor(bias);
    plan.bias_map.assign(bias.rank(), 0);
    for (size_t i = 0; i < bias.rank(); ++i) {
      plan.bias_map[bias_order[i]] = out_order[i];
      if (bias.dims[bias_order[i]] != plan.out.dims[out_order[i]])
        return CustomCallError(
            call, "bias " + Str(bias) + " does not match the result's most minor dimensions " + Str(plan.out));
    }
  }
  const bool complex = IsComplex(plan.compute);
  if (c.alpha_imag != 0 && !complex) return CustomCallError(call, "has a complex alpha for a real result");
  return plan;
}

// A scalar constant of a complex or real type.
Instruction* ScalarOf(ExpansionBuilder& x, PrimitiveType type, double re, double im) {
  if (!IsComplex(type)) return MakeScalarConstant(x.module(), x.computation(), type, re);
  std::vector<uint8_t> bytes;
  if (type == PrimitiveType::kC64) {
    std::complex<float> v(static_cast<float>(re), static_cast<float>(im));
    bytes.resize(sizeof v);
    std::memcpy(bytes.data(), &v, sizeof v);
  } else {
    std::complex<double> v(re, im);
    bytes.resize(sizeof v);
    std::memcpy(bytes.data(), &v, sizeof v);
  }
  return MakeConstant(x.module(), x.computation(), x.module().MakeArrayShape(type, {}), bytes);
}

Instruction* Times(ExpansionBuilder& x, Instruction* value, Instruction* scalar) {
  Instruction* all = x.Broadcast(scalar, ExpansionBuilder::Dims(value), {});
  return x.Elementwise(Opcode::kMultiply, {value, all});
}

// The value rounded to `type`, saturating first for f8 and s8 results (the clamp XLA's rewriters
// fold into the call).
Instruction* RoundTo(ExpansionBuilder& x, Instruction* value, PrimitiveType type) {
  if (type == PrimitiveType::kF8E4M3FN || type == PrimitiveType::kF8E5M2 || type == PrimitiveType::kS8) {
    const double hi = type == PrimitiveType::kS8 ? 127 : MaxFinite(type);
    const double lo = type == PrimitiveType::kS8 ? -128 : -hi;
    Instruction* low = x.Splat(lo, value->shape.type, value);
    Instruction* high = x.Splat(hi, value->shape.type, value);
    value = x.Elementwise(Opcode::kClamp, {low, value, high});
  }
  return x.Convert(value, type);
}

Result<Instruction*> ExpandGemm(ExpansionBuilder& x, const Instruction& call) {
  NHLO_ASSIGN_OR_RETURN(GemmPlan plan, PlanGemm(call));
  const GemmConfig& c = *plan.config;
  const PrimitiveType ct = plan.compute;
  std::vector<Instruction*> ops;
  for (size_t i = 0; i < call.operands.size(); ++i) ops.push_back(x.Parameter(i, i == 0 ? "a" : i == 1 ? "b" : "p"));
  const DimVector dims = ShapeDims(plan.out);
  Instruction* d = x.Dot(x.Convert(ops[0], ct), x.Convert(ops[1], ct), ct, dims, c.lhs_batch, c.lhs_contracting,
                         c.rhs_batch, c.rhs_contracting);
  // alpha (times the f8 input scales) on the product; cuBLAS writes zeros when alpha and beta are 0.
  Instruction* alpha = ScalarOf(x, ct, c.alpha_real, c.alpha_imag);
  if (plan.a_scale != kNone) {
    alpha = x.Elementwise(Opcode::kMultiply, {alpha, x.Convert(ops[plan.a_scale], ct)});
    alpha = x.Elementwise(Opcode::kMultiply, {alpha, x.Convert(ops[plan.b_scale], ct)});
  }
  if (c.alpha_real == 0 && c.alpha_imag == 0 && c.beta == 0 && c.target == GemmTarget::kLegacy)
    d = x.Splat(0, ct, d);
  else if (plan.a_scale != kNone || c.alpha_real != 1 || c.alpha_imag != 0)
    d = Times(x, d, alpha);
  if (plan.c != kNone && c.beta != 0) {
    Instruction* addend = x.Convert(ops[plan.c], ct);
    if (plan.c_scale != kNone) addend = Times(x, addend, x.Convert(ops[plan.c_scale], ct));
    if (c.beta != 1) addend = Times(x, addend, ScalarOf(x, ct, c.beta, 0));
    d = x.Elementwise(Opcode::kAdd, {d, addend});
  }
  if (plan.bias != kNone) {
    Instruction* bias = x.Convert(ops[plan.bias], ct);
    DimVector order(plan.bias_map.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return plan.bias_map[i] < plan.bias_map[j]; });
    DimVector mapped;
    for (int64_t i : order) mapped.push_back(plan.bias_map[i]);
    if (!std::is_sorted(plan.bias_map.begin(), plan.bias_map.end()))
      bias = MakeTranspose(x.module(), x.computation(), bias, order);
    d = x.Elementwise(Opcode::kAdd, {d, x.Broadcast(bias, dims, mapped)});
  }
  Instruction* pre = d;
  if (c.Relu()) d = x.Elementwise(Opcode::kMaximum, {d, x.Splat(0, ct, d)});
  if (c.Gelu()) {
    // x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * (x * (x * x)))))), the HLO XLA's
    // rewriter matches for this epilogue, in the compute type.
    Instruction* cube = x.Elementwise(Opcode::kMultiply, {d, x.Elementwise(Opcode::kMultiply, {d, d})});
    Instruction* inner = x.Elementwise(Opcode::kAdd, {d, Times(x, cube, ScalarOf(x, ct, 0.044715, 0))});
    Instruction* t = x.Array(Opcode::kTanh, ct, dims, {Times(x, inner, ScalarOf(x, ct, std::sqrt(2 / M_PI), 0))});
    Instruction* half = Times(x, x.Elementwise(Opcode::kAdd, {x.Splat(1, ct, t), t}), ScalarOf(x, ct, 0.5, 0));
    d = x.Elementwise(Opcode::kMultiply, {d, half});
  }
  std::vector<Instruction*> outputs;
  Instruction* amax = nullptr;
  if (plan.amax) {
    Instruction* flat = MakeReshape(x.module(), x.computation(), d, {plan.out.ElementCount()});
    amax = x.Reduce(flat, MakeScalarConstant(x.module(), x.computation(), ct, 0), 0, x.AbsMaxReducer(ct));
  }
  if (plan.d_scale != kNone) d = Times(x, d, x.Convert(ops[plan.d_scale], ct));
  outputs.push_back(RoundTo(x, d, plan.out.type));
  if (!call.shape.IsTuple()) return outputs[0];
  if (plan.aux) outputs.push_back(x.Convert(pre, plan.out.type));
  if (plan.amax) outputs.push_back(amax);
  if (plan.workspace) {
    const Shape& w = call.shape.tuple[call.shape.tuple.size() - 1];
    Instruction* zero = MakeScalarConstant(x.module(), x.computation(), w.type, 0);
    outputs.push_back(x.Broadcast(zero, ShapeDims(w), {}));
  }
  return MakeTuple(x.module(), x.computation(), outputs);
}

// ---- cuDNN

struct ConvPlan {
  const ConvConfig* config = nullptr;
  const ConvDimLabels* labels = nullptr;
  std::vector<WindowDim> window;
  int64_t groups = 1;
  Shape out;
  PrimitiveType compute = PrimitiveType::kF32;  // of the epilogue
  PrimitiveType conv = PrimitiveType::kF32;     // of the convolution (s32 for s8 data)
  bool scratch = false;
};

// The result dimensions of a convolution of `in` and `kernel` under `labels` and `window`.
DimVector ConvResultDims(const DimVector& in, const DimVector& kernel, const ConvDimLabels& labels,
                         const std::vector<WindowDim>& window, int64_t batch_groups) {
  DimVector out(labels.output_rank);
  out[labels.output_batch] = in[labels.input_batch] / batch_groups;
  out[labels.output_feature] = kernel[labels.kernel_output_feature];
  for (size_t i = 0; i < window.size(); ++i) {
    const WindowDim& w = window[i];
    // XLA's DilatedBound: an empty extent stays empty. PlanConv bounds every value by 2^40, so
    // nothing here overflows.
    auto dilated = [](int64_t n, int64_t by) { return n == 0 ? 0 : (n - 1) * by + 1; };
    const int64_t padded = dilated(in[labels.input_spatial[i]], w.base_dilation) + w.pad_low + w.pad_high;
    const int64_t dilated_k = dilated(kernel[labels.kernel_spatial[i]], w.window_dilation);
    out[labels.output_spatial[i]] = padded < dilated_k ? 0 : (padded - dilated_k) / w.stride + 1;
  }
  return out;
}

// The forward convolution's result dimensions for input `x` and filter `w`, or nullopt when
// the ranks, the labels or the features do not fit (XLA's convolution shape rules).
std::optional<DimVector> ForwardDims(const Shape& x, const Shape& w, const ConvDimLabels& d,
                                     const std::vector<WindowDim>& window, int64_t groups) {
  if (x.rank() != d.input_rank || w.rank() != d.kernel_rank || d.output_rank != d.input_rank) return {};
  const DimVector in = ShapeDims(x), kernel = ShapeDims(w);
  int64_t features = 0;
  if (MulOverflows(kernel[d.kernel_input_feature], groups, &features) || in[d.input_feature] != features ||
      kernel[d.kernel_output_feature] % groups != 0)
    return {};
  for (size_t i = 0; i < window.size(); ++i)
    if (window[i].size != kernel[d.kernel_spatial[i]]) return {};
  return ConvResultDims(in, kernel, d, window, 1);
}

Result<ConvPlan> PlanConv(const Instruction& call) {
  ConvPlan plan;
  NHLO_ASSIGN_OR_RETURN(plan.config, CustomCallConfigOf(call).As<ConvConfig>());
  const ConvConfig& c = *plan.config;
  const Shape& result = call.shape;
  if (result.IsTuple()) {
    if (result.tuple.size() != 2 || !IsStaticArray(result.tuple[1]) || result.tuple[1].rank() != 1 ||
        (result.tuple[1].type != PrimitiveType::kU8 && result.tuple[1].type != PrimitiveType::kS8))
      return CustomCallError(call, "returns (result, u8[scratch]), not " + Str(result));
    plan.out = result.tuple[0];
    plan.scratch = true;
  } else {
    plan.out = result;
  }
  if (!IsStaticArray(plan.out))
    return CustomCallError(call, "result " + Str(plan.out) + " must be an array of a static shape");
  const size_t n = call.operands.size();
  const bool activation = c.kind == ConvKind::kForwardActivation;
  if (activation ? (n != 3 && n != 4) : n != 2)
    return CustomCallError(call,
                           "takes " + std::string(activation ? "3 or 4" : "2") + " operands, not " + std::to_string(n));
  for (const Instruction* op : call.operands)
    if (!IsStaticArray(op->shape)) return CustomCallError(call, "operands must be arrays of static shapes");
  const Attribute* labels = call.FindAttr(AttrId::kDimLabels);
  const Attribute* window = call.FindAttr(AttrId::kWindow);
  if (!labels || !labels->dim_labels) return CustomCallError(call, "needs dim_labels");
  plan.labels = labels->dim_labels;
  if (plan.labels->has_unknown)
    return CustomCallError(call, "has vectorized int8 dim_labels ('?'); nhlo does not run cuDNN's NCHW_VECT_C layout");
  const size_t spatial = plan.labels->input_spatial.size();
  if (!window || window->window.size() != spatial)
    return CustomCallError(call, "needs a window with one dimension per spatial dimension of its dim_labels");
  plan.window.assign(window->window.begin(), window->window.end());
  // The bound XLA's shape inference puts on window values, so no arithmetic below overflows.
  constexpr int64_t kMaxWindowValue = int64_t{1} << 40;
  auto in_range = [&](int64_t v, int64_t least) { return v >= least && v <= kMaxWindowValue; };
  for (const WindowDim& w : plan.window)
    if (w.base_dilation != 1 || w.reversal != plan.window[0].reversal || !in_range(w.size, 1) ||
        !in_range(w.stride, 1) || !in_range(w.window_dilation, 1) || !in_range(w.pad_low, 0) ||
        !in_range(w.pad_high, 0))
      return CustomCallError(
          call,
          "window must have no lhs_dilate, padding from 0 and strides and dilations from 1 up to 2^40, "
          "and one rhs_reversal for every dimension (cuDNN's form)");
  if (const Attribute* g = call.FindAttr(AttrId::kFeatureGroupCount)) plan.groups = g->i;
  if (!in_range(plan.groups, 1)) return CustomCallError(call, "feature_group_count must be from 1 to 2^40");
  if (c.kind == ConvKind::kBackwardInput && plan.groups != 1)
    return CustomCallError(call, "with feature_group_count > 1 is not a form XLA emits");
  // The forward convolution y = conv(x, w) the call describes must fit its shapes, whichever of
  // x, w, y it computes.
  const Shape& op0 = call.operands[0]->shape;
  const Shape& op1 = call.operands[1]->shape;
  const Shape& x = c.kind == ConvKind::kBackwardInput ? plan.out : op0;
  const Shape& w = c.kind == ConvKind::kBackwardFilter ? plan.out : op1;
  const Shape& y = c.kind == ConvKind::kBackwardInput ? op0 : c.kind == ConvKind::kBackwardFilter ? op1 : plan.out;
  std::optional<DimVector> forward = ForwardDims(x, w, *plan.labels, plan.window, plan.groups);
  if (!forward || *forward != ShapeDims(y))
    return CustomCallError(call, "describes a convolution of " + Str(x) + " and " + Str(w) + " that does not give " +
                                     Str(y) + " (window, dim_labels, feature_group_count)");
  if (IsFloat(op0.type) != IsFloat(op1.type) || (!IsFloat(plan.out.type) && plan.out.type != PrimitiveType::kS8))
    return CustomCallError(call, "convolves floating-point data (or s8 data into s8 or floating-point results), not " +
                                     Str(call.operands[0]->shape) + " and " + Str(call.operands[1]->shape) + " into " +
                                     Str(plan.out));
  // The data's type decides the compute type: f32 for f16 and bf16 (cuDNN accumulates them in
  // f32), s32 for s8 convolutions (then f32 for the epilogue).
  const PrimitiveType data = call.operands[0]->shape.type;
  if (data == PrimitiveType::kS8) {
    plan.conv = PrimitiveType::kS32;
    plan.compute = PrimitiveType::kF32;
  } else if (std::optional<PrimitiveType> t = ComputeType(data); t && IsFloat(*t)) {
    plan.conv = plan.compute = *t;
  } else {
    return CustomCallError(call, "convolves f8, f16, bf16, f32, f64 or s8 data, not " + Str(call.operands[0]->shape));
  }
  if (activation) {
    const Shape& bias = call.operands[2]->shape;
    if (bias.rank() != 1 || plan.labels->output_feature < 0 ||
        bias.dims[0] != plan.out.dims[static_cast<size_t>(plan.labels->output_feature)])
      return CustomCallError(call, "bias " + Str(bias) + " must have one value per output feature of " + Str(plan.out));
    if (n == 4 && ShapeDims(call.operands[3]->shape) != ShapeDims(plan.out))
      return CustomCallError(call, "side input " + Str(call.operands[3]->shape) + " must have the result's dimensions");
    switch (c.activation) {
      case ConvActivation::kNone:
      case ConvActivation::kSigmoid:
      case ConvActivation::kRelu:
      case ConvActivation::kRelu6:
      case ConvActivation::kTanh:
      case ConvActivation::kElu:
      case ConvActivation::kLeakyRelu: break;
      case ConvActivation::kReluX:
      case ConvActivation::kBandPass:
      case ConvActivation::kGeluExact:
        return CustomCallError(call, "activation is not one XLA fuses into a convolution");
    }
  }
  return plan;
}

// An instruction's dim_labels / window attribute from typed values.
void SetConvAttrs(ExpansionBuilder& x, Instruction* conv, const ConvDimLabels& labels,
                  const std::vector<WindowDim>& window, int64_t feature_groups, int64_t batch_groups) {
  Module& m = x.module();
  Attribute l;
  l.id = AttrId::kDimLabels;
  l.kind = AttrKind::DimLabels;
  l.dim_labels = m.arena.New<ConvDimLabels>(labels);
  SetAttr(m, conv, l);
  Attribute w;
  w.id = AttrId::kWindow;
  w.kind = AttrKind::Window;
  w.window = m.arena.Copy(window);
  SetAttr(m, conv, w);
  for (auto [id, count] :
       {std::pair{AttrId::kFeatureGroupCount, feature_groups}, std::pair{AttrId::kBatchGroupCount, batch_groups}}) {
    if (count == 1) continue;
    Attribute g;
    g.id = id;
    g.kind = AttrKind::Int;
    g.i = count;
    SetAttr(m, conv, g);
  }
}

// The convolution the call's own attributes describe.
Instruction* ForwardConv(ExpansionBuilder& x, const ConvPlan& plan, Instruction* in, Instruction* filter,
                         const DimVector& out_dims) {
  Instruction* y = x.Array(Opcode::kConvolution, plan.conv, out_dims, {in, filter});
  SetConvAttrs(x, y, *plan.labels, plan.window, plan.groups, 1);
  return y;
}

Instruction* Zeros(ExpansionBuilder& x, PrimitiveType type, const DimVector& dims) {
  return x.Broadcast(MakeScalarConstant(x.module(), x.computation(), type, 0), dims, {});
}

// dx = the adjoint of x -> conv(x, w) applied to dy: dy convolved with the reversed filter,
// dilated by the stride, input and output roles swapped (inverting XLA's ConvRewriter).
Instruction* BackwardInputConv(ExpansionBuilder& x, const ConvPlan& plan, Instruction* dy, Instruction* w,
                               const DimVector& out_dims) {
  const ConvDimLabels& d = *plan.labels;
  if (dy->shape.ElementCount() == 0 || w->shape.ElementCount() == 0) return Zeros(x, plan.conv, out_dims);
  ConvDimLabels t = d;
  t.input_batch = d.output_batch;
  t.input_feature = d.output_feature;
  t.input_spatial = d.output_spatial;
  t.input_rank = d.output_rank;
  t.kernel_input_feature = d.kernel_output_feature;
  t.kernel_output_feature = d.kernel_input_feature;
  t.output_batch = d.input_batch;
  t.output_feature = d.input_feature;
  t.output_spatial = d.input_spatial;
  t.output_rank = d.input_rank;
  const size_t spatial = plan.window.size();
  std::vector<WindowDim> window(spatial);
  std::vector<SliceDim> keep(t.output_rank);
  bool cut = false;
  DimVector reversed;
  for (size_t i = 0; i < spatial; ++i) {
    const WindowDim& f = plan.window[i];
    const int64_t dy_size = dy->shape.dims[d.output_spatial[i]], dx_size = out_dims[d.input_spatial[i]];
    const int64_t k_eff = (f.size - 1) * f.window_dilation + 1;
    const int64_t lo = k_eff - 1 - f.pad_low, hi = dx_size - 1 - (dy_size - 1) * f.stride + f.pad_low;
    WindowDim& win = window[i];
    win.size = f.size;
    win.base_dilation = f.stride;
    win.window_dilation = f.window_dilation;
    win.pad_low = std::max<int64_t>(lo, 0);
    win.pad_high = std::max<int64_t>(hi, 0);
    keep[d.input_spatial[i]] = {win.pad_low - lo, win.pad_low - lo + dx_size, 1};
    cut |= lo < 0 || hi < 0;
    reversed.push_back(d.kernel_spatial[i]);
  }
  Instruction* filter = w;
  if (!plan.window[0].reversal) {
    std::sort(reversed.begin(), reversed.end());
    filter = x.Array(Opcode::kReverse, plan.conv, ExpansionBuilder::Dims(w), {w});
    SetAttr(x.module(), filter, IntListAttr(x.module(), AttrId::kDimensions, reversed));
  }
  DimVector dims = ConvResultDims(ExpansionBuilder::Dims(dy), ExpansionBuilder::Dims(filter), t, window, 1);
  Instruction* y = x.Array(Opcode::kConvolution, plan.conv, dims, {dy, filter});
  SetConvAttrs(x, y, t, window, 1, 1);
  if (!cut) return y;
  keep[d.input_batch] = {0, dims[d.input_batch], 1};
  keep[d.input_feature] = {0, dims[d.input_feature], 1};
  return x.Slice(y, keep);
}

// dw = the adjoint of w -> conv(x, w) applied to dy: x convolved with dy, batch and feature
// roles swapped, the forward stride as the kernel's dilation.
Instruction* BackwardFilterConv(ExpansionBuilder& x, const ConvPlan& plan, Instruction* in, Instruction* dy,
                                const DimVector& out_dims) {
  const ConvDimLabels& d = *plan.labels;
  if (in->shape.ElementCount() == 0 || dy->shape.ElementCount() == 0) return Zeros(x, plan.conv, out_dims);
  ConvDimLabels t = d;
  t.input_batch = d.input_feature;
  t.input_feature = d.input_batch;
  t.kernel_input_feature = d.output_batch;
  t.kernel_output_feature = d.output_feature;
  t.kernel_spatial = d.output_spatial;
  t.kernel_rank = d.output_rank;
  t.output_batch = d.kernel_input_feature;
  t.output_feature = d.kernel_output_feature;
  t.output_spatial = d.kernel_spatial;
  t.output_rank = d.kernel_rank;
  const size_t spatial = plan.window.size();
  std::vector<WindowDim> window(spatial);
  std::vector<SliceDim> keep(in->shape.rank());
  for (size_t r = 0; r < keep.size(); ++r) keep[r] = {0, in->shape.dims[r], 1};
  bool cut = false;
  DimVector reversed;
  for (size_t i = 0; i < spatial; ++i) {
    const WindowDim& f = plan.window[i];
    const int64_t in_size = in->shape.dims[d.input_spatial[i]], dy_size = dy->shape.dims[d.output_spatial[i]];
    const int64_t k = out_dims[d.kernel_spatial[i]];
    // The last input position any output reads is in_size + hi - 1; at or below 0 every
    // window lies in the low padding and the gradient is zero.
    const int64_t hi = (k - 1) * f.window_dilation + (dy_size - 1) * f.stride + 1 - in_size - f.pad_low;
    if (in_size + hi <= 0) return Zeros(x, plan.conv, out_dims);
    WindowDim& win = window[i];
    win.size = dy_size;
    win.stride = f.window_dilation;
    win.window_dilation = f.stride;
    win.pad_low = f.pad_low;
    win.pad_high = std::max<int64_t>(hi, 0);
    if (hi < 0) {
      keep[d.input_spatial[i]].limit = in_size + hi;
      cut = true;
    }
    reversed.push_back(d.kernel_spatial[i]);
  }
  if (cut) in = x.Slice(in, keep);
  DimVector dims = ConvResultDims(ExpansionBuilder::Dims(in), ExpansionBuilder::Dims(dy), t, window, plan.groups);
  Instruction* y = x.Array(Opcode::kConvolution, plan.conv, dims, {in, dy});
  SetConvAttrs(x, y, t, window, 1, plan.groups);
  if (!plan.window[0].reversal) return y;
  // A true convolution's filter gradient is the correlation's, reversed.
  std::sort(reversed.begin(), reversed.end());
  Instruction* r = x.Array(Opcode::kReverse, plan.conv, dims, {y});
  SetAttr(x.module(), r, IntListAttr(x.module(), AttrId::kDimensions, reversed));
  return r;
}

Result<Instruction*> ExpandConv(ExpansionBuilder& x, const Instruction& call) {
  NHLO_ASSIGN_OR_RETURN(ConvPlan plan, PlanConv(call));
  const ConvConfig& c = *plan.config;
  const ConvDimLabels& d = *plan.labels;
  // Every operand is a parameter of the expansion, whether or not its value is used.
  std::vector<Instruction*> params;
  for (size_t i = 0; i < call.operands.size(); ++i)
    params.push_back(x.Parameter(i, i == 0 ? "operand0" : i == 1 ? "operand1" : i == 2 ? "bias" : "side_input"));
  Instruction* op0 = x.Convert(params[0], plan.conv);
  Instruction* op1 = x.Convert(params[1], plan.conv);
  const DimVector out_dims = ShapeDims(plan.out);
  Instruction* y = nullptr;
  switch (c.kind) {
    case ConvKind::kForward:
    case ConvKind::kForwardActivation: y = ForwardConv(x, plan, op0, op1, out_dims); break;
    case ConvKind::kBackwardInput: y = BackwardInputConv(x, plan, op0, op1, out_dims); break;
    case ConvKind::kBackwardFilter: y = BackwardFilterConv(x, plan, op0, op1, out_dims); break;
  }
  if (ExpansionBuilder::Dims(y) != out_dims)
    return CustomCallError(call, "result " + Str(plan.out) + " is not what its window and dim_labels give for " +
                                     Str(call.operands[0]->shape) + " and " + Str(call.operands[1]->shape));
  const PrimitiveType ct = plan.compute;
  y = x.Convert(y, ct);
  if (c.kind == ConvKind::kForwardActivation) {
    // act(conv_result_scale * conv + side_input_scale * side + bias), XLA's
    // CudnnFusedConvRewriter pattern and cuDNN's order.
    if (c.conv_result_scale != 1)
      y = Times(x, y, MakeScalarConstant(x.module(), x.computation(), ct, c.conv_result_scale));
    if (call.operands.size() == 4 && c.side_input_scale != 0) {
      Instruction* side = x.Convert(params[3], ct);
      if (c.side_input_scale != 1)
        side = Times(x, side, MakeScalarConstant(x.module(), x.computation(), ct, c.side_input_scale));
      y = x.Elementwise(Opcode::kAdd, {y, side});
    }
    Instruction* bias = x.Convert(params[2], ct);
    y = x.Elementwise(Opcode::kAdd, {y, x.Broadcast(bias, out_dims, {d.output_feature})});
    Instruction* zero = x.Splat(0, ct, y);
    switch (c.activation) {
      case ConvActivation::kNone: break;
      case ConvActivation::kRelu: y = x.Elementwise(Opcode::kMaximum, {y, zero}); break;
      case ConvActivation::kRelu6: y = x.Elementwise(Opcode::kClamp, {zero, y, x.Splat(6, ct, y)}); break;
      case ConvActivation::kSigmoid: y = x.Elementwise(Opcode::kLogistic, {y}); break;
      case ConvActivation::kTanh: y = x.Elementwise(Opcode::kTanh, {y}); break;
      case ConvActivation::kElu:
        y = x.Array(Opcode::kSelect, ct, out_dims,
                    {x.Compare(y, zero, ComparisonDirection::kGt), y, x.Elementwise(Opcode::kExpm1, {y})});
        break;
      case ConvActivation::kLeakyRelu:
        y = x.Array(Opcode::kSelect, ct, out_dims,
                    {x.Compare(y, zero, ComparisonDirection::kGt), y,
                     Times(x, y, MakeScalarConstant(x.module(), x.computation(), ct, c.leakyrelu_alpha))});
        break;
      case ConvActivation::kReluX:
      case ConvActivation::kBandPass:
      case ConvActivation::kGeluExact: break;  // refused by PlanConv
    }
  }
  Instruction* out = RoundTo(x, y, plan.out.type);
  if (!plan.scratch) return out;
  const Shape& s = call.shape.tuple[1];
  Instruction* zero = MakeScalarConstant(x.module(), x.computation(), s.type, 0);
  return MakeTuple(x.module(), x.computation(), {out, x.Broadcast(zero, ShapeDims(s), {})});
}

}  // namespace

Status CheckGemmCall(const Instruction& call) { return PlanGemm(call).status(); }
Result<Instruction*> BuildGemmCall(ExpansionBuilder& x, const Instruction& call) { return ExpandGemm(x, call); }
Status CheckConvCall(const Instruction& call) { return PlanConv(call).status(); }
Result<Instruction*> BuildConvCall(ExpansionBuilder& x, const Instruction& call) { return ExpandConv(x, call); }

}  // namespace nhlo
