// SPDX-License-Identifier: Apache-2.0
// Correctly rounded f32 exp and tanh over arrays (see vector_math.h). The core works on blocks
// in double precision without branches, so the compiler vectorizes it for the widest unit the
// CPU has (GCC target_clones picks AVX-512, AVX2 or SSE2 at load time; the arithmetic is the
// same IEEE double operations in the same order on each, so the results are too):
//   exp(x) = 2^k * e^r, k = round(x / ln2), r = x - k*ln2 (ln2 in two parts, so k*ln2_hi is
//   exact), e^r by its Taylor series to r^13/13! (|r| <= ln2/2: truncation below 2^-60).
//   tanh(a) = t / (t + 2) with t = expm1(2a) = (2^k - 1) + 2^k (e^r - 1), from the same reduction.
// The double result is within about 2^-50 of the true value (relative). It rounds to the
// correctly rounded float unless it lies within 2^-44 of a rounding boundary (a float
// midpoint), which happens for about one input in a million; those, the subnormal results and
// the special inputs (NaN, overflow, underflow) are redone one by one with expl/tanhl, whose
// 64-bit significands decide them. tests/test_vector_math.cc checks the results against
// expl/tanhl on sampled inputs, and on all 2^32 with NHLO_EXHAUSTIVE=1.
#include "interp/vector_math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace nhlo {
namespace {

constexpr int kBlock = 256;
constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // 32 significant bits: k * kLn2Hi is exact
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kShift = 0x1.8p52;               // adding it rounds to an integer (ties to even)

// 1/n! for n = 2..13.
constexpr double kInvFact[14] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600,
                                 1.0 / 6227020800.0};

// The sum of r^(n-1)/n! for n = 1..13, by Estrin's scheme: a dependency chain of 5 steps
// instead of Horner's 24, so a vector unit overlaps more of them. (Written out: a loop here
// kept GCC from vectorizing the callers.)
inline double Series13(double r) {
  const double* c = kInvFact;
  double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  double p01 = c[1] + c[2] * r, p23 = c[3] + c[4] * r, p45 = c[5] + c[6] * r, p67 = c[7] + c[8] * r;
  double p89 = c[9] + c[10] * r, p1011 = c[11] + c[12] * r;
  double q0 = p01 + p23 * r2, q1 = p45 + p67 * r2, q2 = p89 + p1011 * r2;
  double low = q0 + q1 * r4;
  double high = q2 + c[13] * r4;
  return low + high * r8;
}

// x = k*ln2 + r with |r| <= ln2/2: returns 2^k and sets r (x in [-104, 89]; callers clamp).
inline double Reduce(double x, double& r) {
  double z = x * kInvLn2 + kShift;
  uint64_t zbits = std::bit_cast<uint64_t>(z);
  double k = z - kShift;
  r = (x - k * kLn2Hi) - k * kLn2Lo;
  // zbits is 0x4338000000000000 + k as a two's complement sum; rebias k into an exponent.
  return std::bit_cast<double>((zbits - 0x4338000000000000ULL + 1023) << 52);
}

// e^x, relative error about 2^-51.
inline double ExpCore(double x) {
  double r;
  double scale = Reduce(x, r);
  return (Series13(r) * r + 1.0) * scale;
}

// e^y - 1 for y in [0, 20]: below ln2/2, k = 0 and this is the series itself (no cancellation);
// above, 2^k - 1 is exact and the sum is at least 0.4, so no digits cancel either.
inline double Expm1Core(double y) {
  double r;
  double scale = Reduce(y, r);
  return (scale - 1.0) + scale * (Series13(r) * r);
}

// 1 when the positive double `y` may not round to the correctly rounded float of the value it
// approximates: its bits beyond float's 24 are within 2^8 double ulps of the midpoint pattern,
// or the float result would be subnormal (a coarser grid); else 0. Integer arithmetic only:
// comparisons would give masks of 64-bit lanes that GCC cannot mix with the callers' 32-bit
// ones, and the loops would not vectorize.
inline uint32_t Undecided(double y) {
  uint64_t bits = std::bit_cast<uint64_t>(y);
  int64_t low = static_cast<int64_t>(bits & 0x1fffffffULL) - 0x10000000LL;
  int64_t magnitude = (low ^ (low >> 63)) - (low >> 63);
  uint64_t near_midpoint = static_cast<uint64_t>(magnitude - 257) >> 63;             // magnitude <= 256
  uint64_t subnormal = (bits - std::bit_cast<uint64_t>(0x1p-126)) >> 63;              // y < 2^-126
  return static_cast<uint32_t>(near_midpoint | subnormal);
}

// 1 for a NaN's bits, else 0.
inline uint32_t IsNanBits(uint32_t bits) { return (0x7f800000u - (bits & 0x7fffffffu)) >> 31; }

float ExpSlow(float x) {
  if (std::isnan(x)) return x + x;
  if (x > 89.0f) return INFINITY;
  if (x < -104.0f) return 0.0f;
  return static_cast<float>(expl(static_cast<long double>(x)));
}

float TanhSlow(float x) {
  if (std::isnan(x)) return x + x;
  return static_cast<float>(tanhl(static_cast<long double>(x)));
}

// One block: results, and a flag for each element to redo. Returns whether any is flagged.
__attribute__((target_clones("avx512f", "avx2", "default")))
bool ExpBlock(const float* in, float* out, uint32_t* redo, int n) {
  uint32_t flagged = 0;
  for (int i = 0; i < n; ++i) {
    float x = in[i];
    uint32_t bits = std::bit_cast<uint32_t>(x);
    // Clamped into the range ExpCore takes and NaN replaced, without conditional floating-point
    // operations (GCC keeps those as branches) or float masks (see Undecided).
    float xs = std::max(-104.0f, std::min(x, 89.0f));
    uint32_t nan = IsNanBits(bits);
    uint32_t xs_bits = std::bit_cast<uint32_t>(xs) & (nan - 1u);  // +0 for NaN
    uint32_t moved = xs_bits ^ bits;
    uint32_t special = (moved | (0u - moved)) >> 31;  // clamped or NaN
    double y = ExpCore(static_cast<double>(std::bit_cast<float>(xs_bits)));
    uint32_t hard = special | Undecided(y);
    out[i] = static_cast<float>(y);
    redo[i] = hard;
    flagged |= hard;
  }
  return flagged != 0;
}

__attribute__((target_clones("avx512f", "avx2", "default")))
bool TanhBlock(const float* in, float* out, uint32_t* redo, int n) {
  uint32_t flagged = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t bits = std::bit_cast<uint32_t>(in[i]);
    uint32_t nan = IsNanBits(bits);
    // |x| (0 for NaN), clamped to 10: past 10 tanh rounds to 1 (1 - tanh(10) is below half an
    // ulp of 1); inf included.
    uint32_t abs_bits = bits & 0x7fffffffu & (nan - 1u);
    float a = std::bit_cast<float>(std::min(abs_bits, std::bit_cast<uint32_t>(10.0f)));  // bits order as values
    double y2 = 2.0 * static_cast<double>(a);
    double t = Expm1Core(y2);
    double y = t / (t + 2.0);
    uint32_t hard = nan | Undecided(y);
    out[i] = std::bit_cast<float>(std::bit_cast<uint32_t>(static_cast<float>(y)) | (bits & 0x80000000u));
    redo[i] = hard;
    flagged |= hard;
  }
  return flagged != 0;
}

template <bool (*Block)(const float*, float*, uint32_t*, int), float (*Slow)(float)>
void Run(const float* in, float* out, int64_t n) {
  float saved[kBlock];
  uint32_t redo[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    int count = static_cast<int>(n - start < kBlock ? n - start : kBlock);
    // `in` may be `out`: the slow path needs the inputs the block overwrote.
    std::memcpy(saved, in + start, sizeof(float) * static_cast<size_t>(count));
    if (!Block(saved, out + start, redo, count)) continue;
    for (int i = 0; i < count; ++i)
      if (redo[i]) out[start + i] = Slow(saved[i]);
  }
}

}  // namespace

void ExpF32(const float* in, float* out, int64_t n) { Run<ExpBlock, ExpSlow>(in, out, n); }
void TanhF32(const float* in, float* out, int64_t n) { Run<TanhBlock, TanhSlow>(in, out, n); }

float ExpF32(float x) {
  float y;
  ExpF32(&x, &y, 1);
  return y;
}

float TanhF32(float x) {
  float y;
  TanhF32(&x, &y, 1);
  return y;
}

}  // namespace nhlo
