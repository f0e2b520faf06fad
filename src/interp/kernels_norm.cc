// SPDX-License-Identifier: Apache-2.0
// batch-norm-inference and batch-norm-grad, computed as XLA's BatchNormExpander rewrites them
// (the interpreter backend runs that pass; HloEvaluator has no kernel of its own): every step
// of the expansion is one HLO op, so each is rounded to the element type, and the reductions
// add in row-major order from zero. batch-norm-training is in kernels_quant.cc.
#include <cmath>
#include <type_traits>

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

}  // namespace

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
      // Each feature's sums are chains of dependent adds in index order; kChains features
      // advance side by side, each in its own order, so the adds' latency overlaps.
      constexpr int64_t kChains = 8;
      auto add_terms = [&](int64_t i, int64_t c, C& gy_xm, C& gy_sum) {
        const C gy = t.Load(grad_out.data, i);
        const C centered = RoundTo(t, t.Load(x.data, i) - means[c]);
        gy_xm = RoundTo(t, gy_xm + RoundTo(t, gy * centered));
        gy_sum = RoundTo(t, gy_sum + gy);
      };
      for (int64_t o = 0; o < fl.outer; ++o) {
        int64_t c = 0;
        for (; c + kChains <= fl.features; c += kChains) {
          C xm[kChains], sg[kChains];
          for (int64_t k = 0; k < kChains; ++k) xm[k] = sum_gy_xm[c + k], sg[k] = sum_gy[c + k];
          const int64_t base = (o * fl.features + c) * fl.inner;
          for (int64_t j = 0; j < fl.inner; ++j)
            for (int64_t k = 0; k < kChains; ++k) add_terms(base + k * fl.inner + j, c + k, xm[k], sg[k]);
          for (int64_t k = 0; k < kChains; ++k) sum_gy_xm[c + k] = xm[k], sum_gy[c + k] = sg[k];
        }
        for (; c < fl.features; ++c)
          for (int64_t j = 0, i = (o * fl.features + c) * fl.inner; j < fl.inner; ++j, ++i)
            add_terms(i, c, sum_gy_xm[c], sum_gy[c]);
      }
      for (int64_t c = 0; c < channels; ++c) {
        t.Store(grad_scale.data, c, sum_gy_xm[c] * rsqrt[c]);
        t.Store(grad_offset.data, c, sum_gy[c]);
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
