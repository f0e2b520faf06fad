// SPDX-License-Identifier: Apache-2.0
// The f32 exp and tanh kernels (the AVX-512 path where the CPU has it, and the portable path)
// against the long-double libm rounded once to float (the
// correctly rounded result, save for inputs within 2^-64 of a rounding boundary, which binary32
// exp and tanh do not have): every 1021st float, the special values, and with
// NHLO_EXHAUSTIVE=1 in the environment every one of the 2^32 (about three minutes per function).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "interp/vector_math.h"

namespace {

bool SameFloat(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

template <typename Kernel, typename Reference>
int64_t Mismatches(Kernel kernel, Reference reference, uint64_t step) {
  std::vector<float> in, out;
  int64_t bad = 0;
  auto flush = [&] {
    out.resize(in.size());
    kernel(in.data(), out.data(), static_cast<int64_t>(in.size()));
    for (size_t i = 0; i < in.size(); ++i)
      if (!SameFloat(out[i], reference(in[i]))) {
        if (bad < 5) MESSAGE("input bits " << std::bit_cast<uint32_t>(in[i]) << " gave " << out[i]);
        ++bad;
      }
    in.clear();
  };
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += step) {
    in.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    if (in.size() == 4096) flush();
  }
  for (float special :
       {0.0f,    -0.0f, INFINITY, -INFINITY, NAN,       88.72283f, 88.72284f,   -103.9721f, -103.97208f, 1e-30f,
        -1e-30f, 9.0f,  10.0f,    0.175f,    0x1p-149f, -104.0f,   -104.00001f, 89.0f,      89.00001f,   -1e30f})
    in.push_back(special);
  flush();
  return bad;
}

uint64_t Step() { return std::getenv("NHLO_EXHAUSTIVE") ? 1 : 1021; }

}  // namespace

TEST_CASE("ExpF32 is correctly rounded") {
  auto reference = [](float x) { return static_cast<float>(expl(static_cast<long double>(x))); };
  CHECK(Mismatches([](const float* in, float* out, int64_t n) { nhlo::ExpF32(in, out, n); }, reference, Step()) == 0);
  CHECK(Mismatches([](const float* in, float* out, int64_t n) { nhlo::ExpF32Portable(in, out, n); }, reference,
                   Step()) == 0);
  CHECK(SameFloat(nhlo::ExpF32(1.0f), 2.71828183f));
  CHECK(std::isnan(nhlo::ExpF32(NAN)));
}

TEST_CASE("TanhF32 is correctly rounded and odd") {
  auto reference = [](float x) { return static_cast<float>(tanhl(static_cast<long double>(x))); };
  CHECK(Mismatches([](const float* in, float* out, int64_t n) { nhlo::TanhF32(in, out, n); }, reference, Step()) == 0);
  CHECK(Mismatches([](const float* in, float* out, int64_t n) { nhlo::TanhF32Portable(in, out, n); }, reference,
                   Step()) == 0);
  CHECK(std::signbit(nhlo::TanhF32(-0.0f)));
  CHECK(SameFloat(nhlo::TanhF32(-INFINITY), -1.0f));
}

TEST_CASE("ExpF32 and TanhF32 work in place and on ragged lengths") {
  // Lengths that end mid-vector and mid-block, in place, with values that take the slow path
  // (NaN, overflow, subnormal results, tiny tanh arguments) among them.
  std::vector<float> values;
  for (int i = 0; i < 1000; ++i) values.push_back(static_cast<float>(i % 97) * 0.37f - 18.0f);
  for (int i = 0; i < 1000; i += 37)
    values[static_cast<size_t>(i)] = (i % 4 == 0) ? NAN : (i % 4 == 1 ? -95.0f : (i % 4 == 2 ? 1e-20f : 100.0f));
  for (int n : {1, 15, 17, 255, 257, 1000}) {
    std::vector<float> exp_in_place(values.begin(), values.begin() + n), tanh_in_place = exp_in_place;
    nhlo::ExpF32(exp_in_place.data(), exp_in_place.data(), n);
    nhlo::TanhF32(tanh_in_place.data(), tanh_in_place.data(), n);
    for (int i = 0; i < n; ++i) {
      long double x = values[static_cast<size_t>(i)];
      CHECK(SameFloat(exp_in_place[static_cast<size_t>(i)], static_cast<float>(expl(x))));
      CHECK(SameFloat(tanh_in_place[static_cast<size_t>(i)], static_cast<float>(tanhl(x))));
    }
  }
}

TEST_CASE("ExpF32 rounds every subnormal result correctly") {
  // Every float x in [-104, -87] (e^x below 2^-126), where ExpSlow rounds ExpCore's double
  // unless it is near a midpoint between two subnormals: all of them, against expl.
  std::vector<float> in, out, slow;
  for (uint32_t bits = std::bit_cast<uint32_t>(-87.0f); bits <= std::bit_cast<uint32_t>(-104.0f); ++bits)
    in.push_back(std::bit_cast<float>(bits));
  out.resize(in.size());
  slow.resize(in.size());
  nhlo::ExpF32(in.data(), out.data(), static_cast<int64_t>(in.size()));
  nhlo::ExpF32Portable(in.data(), slow.data(), static_cast<int64_t>(in.size()));
  int64_t bad = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    float want = static_cast<float>(expl(static_cast<long double>(in[i])));
    bad += !SameFloat(out[i], want) + !SameFloat(slow[i], want);
  }
  CHECK(in.size() > 1000000);
  CHECK(bad == 0);
}
