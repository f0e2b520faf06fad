// SPDX-License-Identifier: Apache-2.0
// batch-norm-training, batch-norm-inference and batch-norm-grad, computed as XLA's
// BatchNormExpander rewrites them (the interpreter backend runs that pass; HloEvaluator has no
// kernel of its own): every step of the expansion is one HLO op, so each is rounded to the
// element type, and the reductions add in row-major order from zero.
//
// f32 arrays take loops written for the vector unit with the same operations in the same order:
// the elementwise passes run along a feature's contiguous run with its constants hoisted, and
// with the features innermost each feature's chain of adds advances a row at a time.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "interp/dense_operands.h"
#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

// Rounds a compute-domain value to the element type of `t` and back: one HLO op's result.
template <typename Traits, typename C>
C RoundTo(const Traits& t, C v) {
  uint8_t tmp[16] = {};
  t.Store(tmp, 0, v);
  return static_cast<C>(t.Load(tmp, 0));
}

// The [outer, features, inner] view of the plan: a row-major array around its feature dimension,
// element (o, c, j) at (o * features + c) * inner + j, so loops in that order visit the
// elements in index order (the reductions' order) without dividing per element.
using FeatureLayout = BatchNormPlan;

// Calls add(i, c, a[c], b[c]) for every element i of every feature c, each feature's elements in
// index order (o, then j): the reductions' order. Each feature's two sums are chains of
// dependent adds, so kChains features advance side by side, each in its own order, and the adds'
// latency overlaps instead of adding up.
template <typename C, typename Add>
void SumFeatureChains(const FeatureLayout& fl, std::vector<C>& a, std::vector<C>& b, Add add) {
  constexpr int64_t kChains = 8;
  for (int64_t o = 0; o < fl.outer; ++o) {
    int64_t c = 0;
    for (; c + kChains <= fl.features; c += kChains) {
      C sa[kChains], sb[kChains];
      for (int64_t k = 0; k < kChains; ++k) sa[k] = a[c + k], sb[k] = b[c + k];
      const int64_t base = (o * fl.features + c) * fl.inner;
      for (int64_t j = 0; j < fl.inner; ++j)
        for (int64_t k = 0; k < kChains; ++k) add(base + k * fl.inner + j, c + k, sa[k], sb[k]);
      for (int64_t k = 0; k < kChains; ++k) a[c + k] = sa[k], b[c + k] = sb[k];
    }
    for (; c < fl.features; ++c)
      for (int64_t j = 0, i = (o * fl.features + c) * fl.inner; j < fl.inner; ++j, ++i) add(i, c, a[c], b[c]);
  }
}

// ---- f32 loops -----------------------------------------------------------------------------
// (Sums over an NCHW array keep the generic loops below, eight features' runs read side by side:
// sixteen features transposed through a tile made batch-norm-training on 32x144x56x56 slower,
// 20.1 ms against 8.7 ms, the 32 streams outrunning the prefetcher.)

// batch-norm-training's sums when the features are innermost (NHWC): each row holds one term of
// every feature's chain, so the chains advance a row at a time, across the vector's lanes.
void TrainingSumsF32(const FeatureLayout& fl, const float* x, float* sum, float* sum_sq) {
  for (int64_t o = 0; o < fl.outer; ++o) {
    const float* row = x + o * fl.features;
    for (int64_t c = 0; c < fl.features; ++c) {
      sum[c] = sum[c] + row[c];
      sum_sq[c] = sum_sq[c] + row[c] * row[c];
    }
  }
}

// batch-norm-grad's sums, features innermost: sum_gy_xm[c] += gy * (x - mean[c]), sum_gy[c] += gy.
void GradSumsF32(const FeatureLayout& fl, const float* x, const float* gy, const float* mean, float* sum_gy_xm,
                 float* sum_gy) {
  for (int64_t o = 0; o < fl.outer; ++o) {
    const float *row_x = x + o * fl.features, *row_g = gy + o * fl.features;
    for (int64_t c = 0; c < fl.features; ++c) {
      sum_gy_xm[c] = sum_gy_xm[c] + row_g[c] * (row_x[c] - mean[c]);
      sum_gy[c] = sum_gy[c] + row_g[c];
    }
  }
}

// Whether every buffer is f32 and aligned for reading as floats.
template <size_t N>
bool AllF32(const std::array<const Buf*, N>& bufs) {
  for (const Buf* b : bufs)
    if (!InPlaceElements<float>(*b, PrimitiveType::kF32)) return false;
  return true;
}

Status RunTraining(const BatchNormPlan& plan, const Buf& x, const Buf& scale, const Buf& offset, const Buf& out,
                   const Buf& mean, const Buf& var) {
  const int64_t channels = plan.features;
  return DispatchType(x.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("batch-norm-training: unsupported element type");
    } else {
      C count = RoundTo(t, static_cast<C>(plan.per_feature));
      // sum and sum of squares per feature, reduced in row-major order in the element type.
      const FeatureLayout& fl = plan;
      const int64_t outer = fl.outer, inner = fl.inner;
      std::vector<C> sum(channels, C(0)), sum_sq(channels, C(0));
      bool f32 = false;
      if constexpr (std::is_same_v<C, float>) {
        f32 = AllF32(std::array{&x, &scale, &offset, &out, &mean, &var});
        if (f32 && inner == 1) TrainingSumsF32(fl, reinterpret_cast<const float*>(x.data), sum.data(), sum_sq.data());
      }
      if (!(f32 && inner == 1))
        SumFeatureChains(fl, sum, sum_sq, [&](int64_t i, int64_t, C& s, C& q) {
          const C v = t.Load(x.data, i);
          s = RoundTo(t, s + v);
          q = RoundTo(t, q + RoundTo(t, v * v));
        });
      std::vector<C> m(channels), inv(channels);
      C epsilon = RoundTo(t, static_cast<C>(plan.epsilon));
      for (int64_t c = 0; c < channels; ++c) {
        m[c] = RoundTo(t, sum[c] / count);
        C square_mean = RoundTo(t, sum_sq[c] / count);
        C mean_square = RoundTo(t, m[c] * m[c]);
        C v = RoundTo(t, square_mean - mean_square);
        t.Store(mean.data, c, m[c]);
        t.Store(var.data, c, v);
        inv[c] = RoundTo(t, C(1) / std::sqrt(RoundTo(t, v + epsilon)));
      }
      if constexpr (std::is_same_v<C, float>) {
        if (f32) {
          const float* xs = reinterpret_cast<const float*>(x.data);
          float* os = reinterpret_cast<float*>(out.data);
          const float *scales = reinterpret_cast<const float*>(scale.data),
                      *offsets = reinterpret_cast<const float*>(offset.data);
          for (int64_t o = 0, i = 0; o < outer; ++o)
            for (int64_t c = 0; c < channels; ++c, i += inner) {
              const float m_c = m[c], inv_c = inv[c], scale_c = scales[c], offset_c = offsets[c];
              for (int64_t j = 0; j < inner; ++j) os[i + j] = ((xs[i + j] - m_c) * inv_c) * scale_c + offset_c;
            }
          return OkStatus();
        }
      }
      for (int64_t o = 0, i = 0; o < outer; ++o)
        for (int64_t c = 0; c < channels; ++c) {
          const C scale_c = t.Load(scale.data, c), offset_c = t.Load(offset.data, c);
          for (int64_t j = 0; j < inner; ++j, ++i) {
            C centered = RoundTo(t, t.Load(x.data, i) - m[c]);
            C normalized = RoundTo(t, centered * inv[c]);
            C scaled = RoundTo(t, normalized * scale_c);
            t.Store(out.data, i, scaled + offset_c);
          }
        }
      return OkStatus();
    }
  });
}

Status RunInference(const BatchNormPlan& plan, const Buf& x, const Buf& scale, const Buf& offset, const Buf& mean,
                    const Buf& var, const Buf& out) {
  return DispatchType(x.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("batch-norm-inference: unsupported element type");
    } else {
      const int64_t channels = plan.features;
      C eps = RoundTo(t, static_cast<C>(plan.epsilon));
      std::vector<C> true_scale(channels), true_shift(channels);
      for (int64_t c = 0; c < channels; ++c) {
        C rsqrt = RoundTo(t, C(1) / std::sqrt(RoundTo(t, t.Load(var.data, c) + eps)));
        true_scale[c] = RoundTo(t, t.Load(scale.data, c) * rsqrt);
        true_shift[c] = RoundTo(t, t.Load(offset.data, c) - RoundTo(t, t.Load(mean.data, c) * true_scale[c]));
      }
      const FeatureLayout& fl = plan;
      for (int64_t o = 0, i = 0; o < fl.outer; ++o)
        for (int64_t c = 0; c < fl.features; ++c)
          for (int64_t j = 0; j < fl.inner; ++j, ++i)
            t.Store(out.data, i, RoundTo(t, t.Load(x.data, i) * true_scale[c]) + true_shift[c]);
      return OkStatus();
    }
  });
}

Status RunGrad(const BatchNormPlan& plan, const Buf& x, const Buf& scale, const Buf& mean, const Buf& var,
               const Buf& grad_out, const Buf& grad_x, const Buf& grad_scale, const Buf& grad_offset) {
  return DispatchType(x.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("batch-norm-grad: unsupported element type");
    } else {
      const int64_t channels = plan.features;
      C count = RoundTo(t, static_cast<C>(plan.grad_count));
      C eps = RoundTo(t, static_cast<C>(plan.epsilon));
      std::vector<C> var_eps(channels), rsqrt(channels), sum_gy(channels, C(0)), sum_gy_xm(channels, C(0));
      std::vector<C> scaled_rsqrt(channels);
      for (int64_t c = 0; c < channels; ++c) {
        var_eps[c] = RoundTo(t, t.Load(var.data, c) + eps);
        rsqrt[c] = RoundTo(t, C(1) / std::sqrt(var_eps[c]));
        // scale * rsqrt(var + epsilon) / N
        scaled_rsqrt[c] = RoundTo(t, RoundTo(t, t.Load(scale.data, c) * rsqrt[c]) / count);
      }
      const FeatureLayout& fl = plan;
      std::vector<C> means(channels);
      for (int64_t c = 0; c < channels; ++c) means[c] = t.Load(mean.data, c);
      bool f32 = false;
      if constexpr (std::is_same_v<C, float>) {
        f32 = AllF32(std::array{&x, &scale, &mean, &var, &grad_out, &grad_x, &grad_scale, &grad_offset});
        if (f32 && fl.inner == 1)
          GradSumsF32(fl, reinterpret_cast<const float*>(x.data), reinterpret_cast<const float*>(grad_out.data),
                      means.data(), sum_gy_xm.data(), sum_gy.data());
      }
      if (!(f32 && fl.inner == 1))
        SumFeatureChains(fl, sum_gy_xm, sum_gy, [&](int64_t i, int64_t c, C& gy_xm, C& gy_sum) {
          const C gy = t.Load(grad_out.data, i);
          const C centered = RoundTo(t, t.Load(x.data, i) - means[c]);
          gy_xm = RoundTo(t, gy_xm + RoundTo(t, gy * centered));
          gy_sum = RoundTo(t, gy_sum + gy);
        });
      for (int64_t c = 0; c < channels; ++c) {
        t.Store(grad_scale.data, c, sum_gy_xm[c] * rsqrt[c]);
        t.Store(grad_offset.data, c, sum_gy[c]);
      }
      if constexpr (std::is_same_v<C, float>) {
        if (f32) {
          const float *xs = reinterpret_cast<const float*>(x.data), *gs = reinterpret_cast<const float*>(grad_out.data);
          float* dx = reinterpret_cast<float*>(grad_x.data);
          for (int64_t o = 0, i = 0; o < fl.outer; ++o)
            for (int64_t c = 0; c < fl.features; ++c, i += fl.inner) {
              const float m = means[c], xm = sum_gy_xm[c], sg = sum_gy[c], ve = var_eps[c], sr = scaled_rsqrt[c];
              for (int64_t j = 0; j < fl.inner; ++j) {
                const float i5 = (xm * (xs[i + j] - m)) / ve;
                dx[i + j] = sr * ((gs[i + j] * count - sg) - i5);
              }
            }
          return OkStatus();
        }
      }
      for (int64_t o = 0, i = 0; o < fl.outer; ++o)
        for (int64_t c = 0; c < fl.features; ++c)
          for (int64_t j = 0; j < fl.inner; ++j, ++i) {
            C centered = RoundTo(t, t.Load(x.data, i) - means[c]);  // as in the first pass
            C i1 = RoundTo(t, t.Load(grad_out.data, i) * count);
            C i5 = RoundTo(t, RoundTo(t, sum_gy_xm[c] * centered) / var_eps[c]);
            C i6 = RoundTo(t, RoundTo(t, i1 - sum_gy[c]) - i5);
            t.Store(grad_x.data, i, scaled_rsqrt[c] * i6);
          }
      return OkStatus();
    }
  });
}

// A double attribute as the f32 XLA keeps it, rounded to nearest; a magnitude at or past the
// midpoint between FLT_MAX and 2^128 rounds to infinity (a cast of it would be undefined).
float ToF32(double v) {
  if (std::fabs(v) >= 0x1.ffffffp127)
    return v > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

// The checks the three kernels share: epsilon and a valid feature_index, a float operand, and
// feature-sized operands of its type (rank 1 unless `any_rank`, as batch-norm-training's check
// has always allowed).
Status CheckFeatures(const Step& s, const char* op, const BufferRecord& x,
                     std::initializer_list<const BufferRecord*> features, bool any_rank) {
  const AttrRecord* eps = s.Find(AttrId::kEpsilon);
  const AttrRecord* fi = s.Find(AttrId::kFeatureIndex);
  if (!eps || !fi || fi->i() < 0 || fi->i() >= static_cast<int64_t>(x.dims.size()))
    return Status::Error(std::string("bundle '") + op + "' needs epsilon and a valid feature_index");
  if (!IsFloat(x.type))
    return Status::Error(std::string(op) + " is implemented for float types, got " +
                         std::string(PrimitiveTypeName(x.type)));
  const int64_t channels = x.dims[static_cast<size_t>(fi->i())];
  for (const BufferRecord* b : features)
    if (b->ElementCount() != channels || (!any_rank && b->dims.size() != 1) || b->type != x.type)
      return Status::Error(std::string("bundle '") + op + "' has mismatched feature shapes");
  return OkStatus();
}

}  // namespace

Result<BatchNormPlan> PlanBatchNorm(const Step& s, const std::vector<const BufferRecord*>& in,
                                    const std::vector<const BufferRecord*>& out) {
  const Opcode op = s.opcode();
  if (op != Opcode::kBatchNormTraining && op != Opcode::kBatchNormInference && op != Opcode::kBatchNormGrad)
    return Status::Error("bundle '" + std::string(OpcodeName(op)) + "' is not a batch norm");
  const std::string op_name(OpcodeName(op));
  const char* name = op_name.c_str();
  const size_t operands = op == Opcode::kBatchNormTraining ? 3 : 5, results = op == Opcode::kBatchNormInference ? 1 : 3;
  if (in.size() != operands || out.size() != results)
    return Status::Error(std::string("bundle '") + name + "' has " + std::to_string(in.size()) + " operands and " +
                         std::to_string(out.size()) + " results, which its kernel does not take");
  const BufferRecord& x = *in[0];
  if (op == Opcode::kBatchNormInference) {
    NHLO_TRY(CheckFeatures(s, name, x, {in[1], in[2], in[3], in[4]}, false));
    if (out[0]->ElementCount() != x.ElementCount() || out[0]->type != x.type || out[0]->dims != x.dims)
      return Status::Error("bundle 'batch-norm-inference' has a mismatched output");
  } else if (op == Opcode::kBatchNormGrad) {
    NHLO_TRY(CheckFeatures(s, name, x, {in[1], in[2], in[3], out[1], out[2]}, false));
    for (const BufferRecord* b : {in[4], out[0]})
      if (b->type != x.type || b->dims != x.dims)
        return Status::Error("bundle 'batch-norm-grad' has a mismatched gradient shape");
  } else {  // batch-norm-training
    NHLO_TRY(CheckFeatures(s, name, x, {in[1], in[2], out[1], out[2]}, true));
    if (out[0]->ElementCount() != x.ElementCount() || out[0]->type != x.type)
      return Status::Error("bundle 'batch-norm-training' has a mismatched output");
  }
  BatchNormPlan plan;
  plan.op = op;
  const size_t feature = static_cast<size_t>(s.Find(AttrId::kFeatureIndex)->i());
  plan.features = x.dims[feature];
  const int64_t n = x.ElementCount();
  // Every product below divides n when n > 0; an empty operand runs no element loop (its other
  // dimensions may multiply past 64 bits, and would only count empty iterations).
  plan.outer = plan.inner = n > 0 ? 1 : 0;
  uint64_t others = 1;  // wraps: only its low 32 bits are read
  for (size_t d = 0; d < x.dims.size(); ++d) {
    if (d != feature) others *= static_cast<uint64_t>(x.dims[d]);
    if (n > 0 && d < feature) plan.outer *= x.dims[d];
    if (n > 0 && d > feature) plan.inner *= x.dims[d];
  }
  plan.per_feature = plan.features ? n / plan.features : 0;
  // batch-norm-grad's element count per feature is an s32 product (XLA's expander).
  plan.grad_count = static_cast<int32_t>(static_cast<uint32_t>(others));
  // XLA keeps epsilon as an f32 and converts it to the element type.
  plan.epsilon = ToF32(s.Find(AttrId::kEpsilon)->f());
  return plan;
}

Status RunBatchNorm(const BatchNormPlan& plan, const Buf* in, const Buf* out) {
  if (plan.op == Opcode::kBatchNormInference) return RunInference(plan, in[0], in[1], in[2], in[3], in[4], out[0]);
  if (plan.op == Opcode::kBatchNormGrad)
    return RunGrad(plan, in[0], in[1], in[2], in[3], in[4], out[0], out[1], out[2]);
  return RunTraining(plan, in[0], in[1], in[2], out[0], out[1], out[2]);
}

Status KernelBatchNorm(const Step& s, const std::vector<Buf>& in, const std::vector<Buf>& out) {
  NHLO_ASSIGN_OR_RETURN(BatchNormPlan plan, PlanBatchNorm(s, RecordsOf(in), RecordsOf(out)));
  return RunBatchNorm(plan, in.data(), out.data());
}

}  // namespace nhlo
