// SPDX-License-Identifier: Apache-2.0
// batch-norm-training and batch-norm-grad (kernels_norm.cc): their per-feature sums advance
// several features side by side, each still adding its terms in index order, and their f32
// elementwise passes run along each feature's run, so the results must be the bits of a plain
// row-major loop rounded to f32 at every step, for feature counts above, at and below the number
// of features summed together, and with the features innermost.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "load_program.h"

using namespace nhlo;

namespace {

BundleProgram LoadText(const std::string& text) { return testing::LoadProgram(text, "bn"); }

Value F32Array(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  Value v;
  v.type = PrimitiveType::kF32;
  v.dims = dims;
  v.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return v;
}

std::vector<float> Floats(const Value& v) {
  std::vector<float> f(v.bytes.size() / sizeof(float));
  std::memcpy(f.data(), v.bytes.data(), v.bytes.size());
  return f;
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

// x is [outer, features, inner], feature_index 1.
void CheckSums(int64_t outer, int64_t features, int64_t inner) {
  CAPTURE(features);
  const std::string t =
      "f32[" + std::to_string(outer) + "," + std::to_string(features) + "," + std::to_string(inner) + "]";
  const std::string f = "f32[" + std::to_string(features) + "]";
  std::string text = "HloModule bn\nENTRY e {\n";
  text += "  x = " + t + " parameter(0)\n";
  text += "  gy = " + t + " parameter(1)\n";
  text += "  scale = " + f + " parameter(2)\n";
  text += "  offset = " + f + " parameter(3)\n";
  text += "  bnt = (" + t + ", " + f + ", " + f +
          ") batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1\n";
  text += "  mean = " + f + " get-tuple-element(bnt), index=1\n";
  text += "  var = " + f + " get-tuple-element(bnt), index=2\n";
  text += "  bng = (" + t + ", " + f + ", " + f +
          ") batch-norm-grad(x, scale, mean, var, gy), epsilon=0.001, feature_index=1\n";
  text += "  gscale = " + f + " get-tuple-element(bng), index=1\n";
  text += "  goffset = " + f + " get-tuple-element(bng), index=2\n";
  text += "  out = " + t + " get-tuple-element(bnt), index=0\n";
  text += "  gx = " + t + " get-tuple-element(bng), index=0\n";
  text += "  ROOT r = (" + f + ", " + f + ", " + f + ", " + f + ", " + t + ", " + t +
          ") tuple(mean, var, gscale, goffset, out, gx)\n}\n";
  BundleProgram p = LoadText(text);
  const size_t n = static_cast<size_t>(outer * features * inner);
  const std::vector<float> x = Random(n, 1), gy = Random(n, 2), scale = Random(static_cast<size_t>(features), 3),
                           offset = Random(static_cast<size_t>(features), 4);
  auto r = Execute(p, {F32Array({outer, features, inner}, x), F32Array({outer, features, inner}, gy),
                       F32Array({features}, scale), F32Array({features}, offset)});
  REQUIRE(r.ok());
  REQUIRE(r->tuple.size() == 6);
  const std::vector<float> mean = Floats(r->tuple[0]), var = Floats(r->tuple[1]), gscale = Floats(r->tuple[2]),
                           goffset = Floats(r->tuple[3]), out = Floats(r->tuple[4]), gx = Floats(r->tuple[5]);
  const float count = static_cast<float>(outer * inner), eps = 0.001f;
  for (int64_t c = 0; c < features; ++c) {
    float sum = 0, sum_sq = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        const float v = x[static_cast<size_t>((o * features + c) * inner + j)];
        sum = sum + v;
        sum_sq = sum_sq + v * v;
      }
    const float m = sum / count, v = sum_sq / count - m * m;
    CHECK(mean[c] == m);
    CHECK(var[c] == v);
    float gy_xm = 0, gy_sum = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        const size_t i = static_cast<size_t>((o * features + c) * inner + j);
        gy_xm = gy_xm + gy[i] * (x[i] - m);
        gy_sum = gy_sum + gy[i];
      }
    CHECK(goffset[c] == gy_sum);
    const float rsqrt = 1.0f / std::sqrt(v + eps);
    CHECK(gscale[c] == gy_xm * rsqrt);
    // The elementwise passes, one rounding per step of XLA's expansion.
    const float scaled_rsqrt = (scale[static_cast<size_t>(c)] * rsqrt) / count;
    int64_t wrong_out = 0, wrong_gx = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        const size_t i = static_cast<size_t>((o * features + c) * inner + j);
        const float centered = x[i] - m;
        wrong_out += out[i] != ((centered * rsqrt) * scale[static_cast<size_t>(c)]) + offset[static_cast<size_t>(c)];
        const float i5 = (gy_xm * centered) / (v + eps);
        wrong_gx += gx[i] != scaled_rsqrt * ((gy[i] * count - gy_sum) - i5);
      }
    CHECK(wrong_out == 0);
    CHECK(wrong_gx == 0);
  }
}

}  // namespace

TEST_CASE("batch norm: per-feature sums are row-major chains; outputs are the expansion's steps") {
  CheckSums(3, 19, 37);  // two groups of 8 features, then 3 alone
  CheckSums(2, 8, 129);
  CheckSums(4, 5, 6);
  CheckSums(7, 24, 1);  // the feature dimension last
}
