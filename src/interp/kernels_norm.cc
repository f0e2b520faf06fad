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

// The checks both kernels share: a float operand, a valid feature_index, feature-sized
// operands of the operand's type. Sets `feature` and `epsilon`.
Status CheckBatchNorm(const Step& s, const char* op, const Buf& x, std::initializer_list<const Buf*> features,
                      int64_t* feature, double* epsilon) {
  const AttrRecord* eps = s.Find(AttrId::kEpsilon);
  const AttrRecord* fi = s.Find(AttrId::kFeatureIndex);
  if (!eps || !fi || fi->i() < 0 || fi->i() >= static_cast<int64_t>(x.rank()))
    return Status::Error(std::string("bundle '") + op + "' needs epsilon and a valid feature_index");
  if (!IsFloat(x.type()))
    return Status::Error(std::string(op) + " is implemented for float types, got " +
                         std::string(PrimitiveTypeName(x.type())));
  int64_t channels = Dims(x)[fi->i()];
  for (const Buf* b : features)
    if (b->count() != channels || b->rank() != 1 || b->type() != x.type())
      return Status::Error(std::string("bundle '") + op + "' has mismatched feature shapes");
  *feature = fi->i();
  // XLA keeps epsilon as an f32 and converts it to the element type.
  *epsilon = static_cast<double>(static_cast<float>(eps->f()));
  return OkStatus();
}

// A row-major array as [outer, features, inner] around its feature dimension: element
// (o, c, j) is at (o * features + c) * inner + j, so loops in that order visit the elements in
// index order (the reductions' order) without dividing per element.
struct FeatureLayout {
  int64_t outer = 1, features = 1, inner = 1;
};

FeatureLayout LayoutAround(const Buf& x, int64_t feature) {
  FeatureLayout f;
  const std::vector<int64_t>& dims = Dims(x);
  for (int64_t d = 0; d < feature; ++d) f.outer *= dims[d];
  f.features = dims[feature];
  for (size_t d = static_cast<size_t>(feature) + 1; d < dims.size(); ++d) f.inner *= dims[d];
  return f;
}

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

}  // namespace

Status KernelBatchNormTraining(const Step& bundle, const Buf& x, const Buf& scale, const Buf& offset, const Buf& out,
                               const Buf& mean, const Buf& var) {
  const AttrRecord* eps = bundle.Find(AttrId::kEpsilon);
  const AttrRecord* fi = bundle.Find(AttrId::kFeatureIndex);
  if (!eps || !fi || fi->i() < 0 || fi->i() >= static_cast<int64_t>(x.rank()))
    return Status::Error("bundle 'batch-norm-training' needs epsilon and a valid feature_index");
  if (!IsFloat(x.type()))
    return Status::Error("batch-norm-training is implemented for float types, got " +
                         std::string(PrimitiveTypeName(x.type())));
  int64_t f = fi->i(), channels = Dims(x)[f];
  for (const Buf* b : {&scale, &offset, &mean, &var})
    if (b->count() != channels || b->type() != x.type())
      return Status::Error("bundle 'batch-norm-training' has mismatched feature shapes");
  if (out.count() != x.count() || out.type() != x.type())
    return Status::Error("bundle 'batch-norm-training' has a mismatched output");
  return DispatchType(x.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("batch-norm-training: unsupported element type");
    } else {
      int64_t n = x.count();
      C count = RoundTo(t, static_cast<C>(channels ? n / channels : 0));
      // sum and sum of squares per feature, reduced in row-major order in the element type.
      const FeatureLayout fl = LayoutAround(x, f);
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
      C epsilon = RoundTo(t, static_cast<C>(static_cast<float>(eps->f())));  // XLA keeps epsilon as an f32
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

Status KernelBatchNormInference(const Step& s, const Buf& x, const Buf& scale, const Buf& offset, const Buf& mean,
                                const Buf& var, const Buf& out) {
  int64_t f;
  double epsilon;
  NHLO_TRY(CheckBatchNorm(s, "batch-norm-inference", x, {&scale, &offset, &mean, &var}, &f, &epsilon));
  if (out.count() != x.count() || out.type() != x.type() || Dims(out) != Dims(x))
    return Status::Error("bundle 'batch-norm-inference' has a mismatched output");
  return DispatchType(x.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("batch-norm-inference: unsupported element type");
    } else {
      int64_t channels = scale.count();
      C eps = RoundTo(t, static_cast<C>(epsilon));
      std::vector<C> true_scale(channels), true_shift(channels);
      for (int64_t c = 0; c < channels; ++c) {
        C rsqrt = RoundTo(t, C(1) / std::sqrt(RoundTo(t, t.Load(var.data, c) + eps)));
        true_scale[c] = RoundTo(t, t.Load(scale.data, c) * rsqrt);
        true_shift[c] = RoundTo(t, t.Load(offset.data, c) - RoundTo(t, t.Load(mean.data, c) * true_scale[c]));
      }
      const FeatureLayout fl = LayoutAround(x, f);
      for (int64_t o = 0, i = 0; o < fl.outer; ++o)
        for (int64_t c = 0; c < fl.features; ++c)
          for (int64_t j = 0; j < fl.inner; ++j, ++i)
            t.Store(out.data, i, RoundTo(t, t.Load(x.data, i) * true_scale[c]) + true_shift[c]);
      return OkStatus();
    }
  });
}

Status KernelBatchNormGrad(const Step& s, const Buf& x, const Buf& scale, const Buf& mean, const Buf& var,
                           const Buf& grad_out, const Buf& grad_x, const Buf& grad_scale, const Buf& grad_offset) {
  int64_t f;
  double epsilon;
  NHLO_TRY(CheckBatchNorm(s, "batch-norm-grad", x, {&scale, &mean, &var, &grad_scale, &grad_offset}, &f, &epsilon));
  for (const Buf* b : {&grad_out, &grad_x})
    if (b->type() != x.type() || Dims(*b) != Dims(x))
      return Status::Error("bundle 'batch-norm-grad' has a mismatched gradient shape");
  return DispatchType(x.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("batch-norm-grad: unsupported element type");
    } else {
      int64_t channels = scale.count();
      // Elements per feature: an s32 product converted to the element type.
      int64_t per_feature = 1;
      for (size_t d = 0; d < x.rank(); ++d)
        if (static_cast<int64_t>(d) != f) per_feature *= Dims(x)[d];
      C count = RoundTo(t, static_cast<C>(static_cast<int32_t>(static_cast<uint32_t>(per_feature))));
      C eps = RoundTo(t, static_cast<C>(epsilon));
      std::vector<C> var_eps(channels), rsqrt(channels), sum_gy(channels, C(0)), sum_gy_xm(channels, C(0));
      std::vector<C> scaled_rsqrt(channels);
      for (int64_t c = 0; c < channels; ++c) {
        var_eps[c] = RoundTo(t, t.Load(var.data, c) + eps);
        rsqrt[c] = RoundTo(t, C(1) / std::sqrt(var_eps[c]));
        // scale * rsqrt(var + epsilon) / N
        scaled_rsqrt[c] = RoundTo(t, RoundTo(t, t.Load(scale.data, c) * rsqrt[c]) / count);
      }
      const FeatureLayout fl = LayoutAround(x, f);
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

}  // namespace nhlo
