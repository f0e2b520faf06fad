// SPDX-License-Identifier: Apache-2.0
// Correctly rounded f32 exp and tanh over arrays (see vector_math.h). Both paths below compute
// in double precision, flag the values they cannot decide, and redo those one by one with
// expl/tanhl, whose 64-bit significands decide them:
// - On CPUs with AVX-512, explicit vector code: exp(x) = 2^k * 2^(j/16) * e^r with
//   16k + j = round(x * 16/ln2), r = x - (16k + j) ln2/16 in one fused step (|r| <= ln2/32),
//   2^(j/16) from a 16-entry table held in two registers (one permute looks it up), e^r - 1
//   by its Taylor series to r^7/7! with fused multiply-adds (truncation below 2^-59). It
//   prefetches ahead: the arithmetic per cache line is long enough to leave loads waiting.
// - Elsewhere, a portable block loop that GCC vectorizes (target_clones picks AVX2 or SSE2):
//   exp(x) = 2^k * e^r, k = round(x / ln2), |r| <= ln2/2, e^r by its Taylor series to r^13/13!
//   (truncation below 2^-60), separate multiplies and adds.
// tanh(a) = t / (t + 2) with t = expm1(2a), from the same reductions. The double result is
// within about 2^-47 of the true value (relative; the AVX-512 path's one-step reduction
// dominates, 2^-50 on the portable path). It rounds to the correctly rounded float
// unless it lies within 2^-44 of a rounding boundary (a float midpoint), which happens for
// about one input in a million; those, the subnormal results and the special inputs (NaN,
// overflow, underflow) are redone. So the two paths return the same floats: the correctly
// rounded ones. tests/test_vector_math.cc checks both against expl/tanhl on sampled inputs,
// and on all 2^32 with NHLO_EXHAUSTIVE=1.
#include "interp/vector_math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nhlo {
namespace {

constexpr int kBlock = 256;
constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // 32 significant bits: k * kLn2Hi is exact
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kShift = 0x1.8p52;  // adding it rounds to an integer (ties to even)

// 1/n! for n = 2..13.
constexpr double kInvFact[14] = {
    1.0,        1.0,         1.0 / 2,      1.0 / 6,       1.0 / 24,       1.0 / 120,       1.0 / 720,
    1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0};

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
  uint64_t near_midpoint = static_cast<uint64_t>(magnitude - 257) >> 63;  // magnitude <= 256
  uint64_t subnormal = (bits - std::bit_cast<uint64_t>(0x1p-126)) >> 63;  // y < 2^-126
  return static_cast<uint32_t>(near_midpoint | subnormal);
}

// 1 for a NaN's bits, else 0.
inline uint32_t IsNanBits(uint32_t bits) { return (0x7f800000u - (bits & 0x7fffffffu)) >> 31; }

float ExpSlow(float x) {
  if (std::isnan(x)) return x + x;
  if (x > 89.0f) return INFINITY;
  if (x < -104.0f) return 0.0f;
  // Subnormal results (x below ln(2^-126)) are multiples of 2^-149: ExpCore's double, within
  // 2^-47 of e^x relative, is at most 2^-24 of a step away, so rounding it gives the correctly
  // rounded float unless it is within that of a midpoint between two steps (about one input in
  // a million; expl decides those). A softmax over wide scores has many such inputs.
  if (x < -87.0f) {
    double y = ExpCore(static_cast<double>(x));
    double steps = y * 0x1p149;  // exact: a power of two
    double from_midpoint = std::fabs(steps - std::floor(steps) - 0.5);
    if (from_midpoint > 0x1p-20) return static_cast<float>(y);
  }
  return static_cast<float>(expl(static_cast<long double>(x)));
}

// The block loops are compiled for AVX-512, AVX2 and baseline, picked once by an ifunc
// resolver. ThreadSanitizer instruments resolvers, which the loader runs before the sanitizer's
// runtime exists, so a TSan build keeps the baseline loop only.
#if defined(__SANITIZE_THREAD__)
#define NHLO_BLOCK_CLONES
#else
#define NHLO_BLOCK_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

float TanhSlow(float x) {
  if (std::isnan(x)) return x + x;
  return static_cast<float>(tanhl(static_cast<long double>(x)));
}

// One block: results, and a flag for each element to redo. Returns whether any is flagged.
// `in` must not be `out` (the callers pass a copy).
NHLO_BLOCK_CLONES
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
    // Below -104 (-inf included) e^x rounds to +0, above 89 to +inf: ExpSlow's answers, given
    // here without the slow path (a softmax over masked scores has many of them). Compared as
    // bits: negative floats order backwards, and the bounds exclude the NaNs.
    uint32_t below = static_cast<uint32_t>(bits > 0xC2D00000u) & static_cast<uint32_t>(bits <= 0xFF800000u);
    uint32_t above = static_cast<uint32_t>(bits > 0x42B20000u) & static_cast<uint32_t>(bits <= 0x7F800000u);
    double y = ExpCore(static_cast<double>(std::bit_cast<float>(xs_bits)));
    uint32_t hard = (nan | Undecided(y)) & ~(below | above);
    uint32_t y_bits = std::bit_cast<uint32_t>(static_cast<float>(y)) & (below - 1u);  // +0 below
    out[i] = std::bit_cast<float>(y_bits | ((0u - above) & 0x7F800000u));             // +inf above
    redo[i] = hard;
    flagged |= hard;
  }
  return flagged != 0;
}

NHLO_BLOCK_CLONES
bool TanhBlock(const float* in, float* out, uint32_t* redo, int n) {
  uint32_t flagged = 0;
  for (int i = 0; i < n; ++i) {
    float x = in[i];
    uint32_t bits = std::bit_cast<uint32_t>(x);
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

// A block kernel: out[i] for i < n, redo[i] set for the values to recompute and saved[i] their
// inputs (`in` may be `out`); returns whether any is flagged.
using BlockFn = bool (*)(const float* in, float* out, uint32_t* redo, float* saved, int n);

// The portable kernels read a copy of their inputs, which also keeps them for the slow path.
bool ExpBlockPortable(const float* in, float* out, uint32_t* redo, float* saved, int n) {
  std::memcpy(saved, in, sizeof(float) * static_cast<size_t>(n));
  return ExpBlock(saved, out, redo, n);
}
bool TanhBlockPortable(const float* in, float* out, uint32_t* redo, float* saved, int n) {
  std::memcpy(saved, in, sizeof(float) * static_cast<size_t>(n));
  return TanhBlock(saved, out, redo, n);
}

template <float (*Slow)(float)>
void Run(BlockFn block, const float* in, float* out, int64_t n) {
  float saved[kBlock];
  uint32_t redo[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    int count = static_cast<int>(n - start < kBlock ? n - start : kBlock);
    if (!block(in + start, out + start, redo, saved, count)) continue;
    for (int i = 0; i < count; ++i)
      if (redo[i]) out[start + i] = Slow(saved[i]);
  }
}

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics start some vectors from _mm512_undefined_*, which its
// -Wmaybe-uninitialized reports in every function that inlines them (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// 2^(j/16) and 2^(j/16) - 1 for j = 0..15, each the double nearest the exact value (60-digit
// decimal arithmetic). The second keeps expm1 near 0 to its relative precision.
alignas(64) constexpr double kExp2Sixteenths[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0,
};
alignas(64) constexpr double kExp2SixteenthsMinus1[16] = {
    0x0.0p+0,
    0x1.6ab0d9f3121ecp-5,
    0x1.72b83c7d517aep-4,
    0x1.1c3d373ab11c3p-3,
    0x1.837f0518db8a9p-3,
    0x1.ef5326091a112p-3,
    0x1.2ff6b54d8a89cp-2,
    0x1.6ac1f752150a5p-2,
    0x1.a827999fcef32p-2,
    0x1.e8451cfac061bp-2,
    0x1.159ca845541b7p-1,
    0x1.389230547e120p-1,
    0x1.5d13f32b5a75bp-1,
    0x1.83337bb0aa538p-1,
    0x1.ab031b9f7490ep-1,
    0x1.d495f454921b3p-1,
};

struct Avx512Reduction {
  __m512i zbits;    // 0x4338000000000000 + N, two's complement; the low four bits are j
  __m512d expm1_r;  // e^r - 1
};

// 2^k from zbits = 0x4338000000000000 + 16k + j.
__attribute__((target("avx512f"))) inline __m512d PowerOfTwoK(__m512i zbits) {
  __m512i k = _mm512_srai_epi64(_mm512_sub_epi64(zbits, _mm512_set1_epi64(0x4338000000000000LL)), 4);
  return _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(k, _mm512_set1_epi64(1023)), 52));
}

// The lookups read the low four bits of each lane of zbits: j.
__attribute__((target("avx512f"))) inline __m512d Lookup(const double* table, __m512i zbits) {
  return _mm512_permutex2var_pd(_mm512_load_pd(table), zbits, _mm512_load_pd(table + 8));
}

__attribute__((target("avx512f"))) inline Avx512Reduction ReduceAvx512(__m512d x) {
  const __m512d shift = _mm512_set1_pd(kShift);
  __m512d z = _mm512_fmadd_pd(x, _mm512_set1_pd(0x1.71547652b82fep+4), shift);  // 16/ln2
  __m512d big_n = _mm512_sub_pd(z, shift);
  // One fused step with ln2/16 rounded to double (error below 2^-58): r is off by at most
  // |N| 2^-58 <= 2^-47 (|N| <= 2054 for x <= 89), a relative error of e^x below 2^-47.
  __m512d r = _mm512_fnmadd_pd(big_n, _mm512_set1_pd(0x1.62e42fefa39efp-5), x);
  Avx512Reduction out;
  out.zbits = _mm512_castpd_si512(z);
  // e^r - 1 = r + r^2 (1/2! + r/3! + ... + r^5/7!), the bracket by Estrin's scheme.
  __m512d r2 = _mm512_mul_pd(r, r);
  __m512d p01 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 6), _mm512_set1_pd(0.5));
  __m512d p23 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 120), _mm512_set1_pd(1.0 / 24));
  __m512d p45 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 5040), _mm512_set1_pd(1.0 / 720));
  __m512d q = _mm512_fmadd_pd(r2, _mm512_fmadd_pd(r2, p45, p23), p01);
  out.expm1_r = _mm512_fmadd_pd(r2, q, r);
  return out;
}

// The mask form of Undecided (below) for positive normal doubles: the 29 bits below float's
// significand are within 256 of the midpoint pattern 2^28.
__attribute__((target("avx512f"))) inline __mmask8 NearMidpointAvx512(__m512d y) {
  __m512i shifted = _mm512_add_epi64(_mm512_castpd_si512(y), _mm512_set1_epi64(256 - 0x10000000LL));
  return _mm512_cmple_epu64_mask(_mm512_and_si512(shifted, _mm512_set1_epi64(0x1fffffff)), _mm512_set1_epi64(512));
}

// Asks for the cache lines 2 KiB ahead of the input and output: the computation per line is
// long enough that the hardware prefetcher alone leaves the loads waiting (exp ran at 0.7 G
// elements/s without this, 1.4 with it). The addresses are formed as integers because they
// may lie past the arrays; a prefetch never faults.
inline void PrefetchAhead(const float* in, float* out) {
  constexpr uintptr_t kAhead = 2048;
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(in) + kAhead), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(out) + kAhead), _MM_HINT_ET0);
}

// Widens 16 floats into two vectors of doubles and narrows them back.
__attribute__((target("avx512f"))) inline __m512d LowHalf(__m512 v) {
  return _mm512_cvtps_pd(_mm512_castps512_ps256(v));
}
__attribute__((target("avx512f"))) inline __m512d HighHalf(__m512 v) {
  return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
__attribute__((target("avx512f"))) inline __m512 Join(__m512d low, __m512d high) {
  __m512d joined = _mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(low)));
  return _mm512_castpd_ps(_mm512_insertf64x4(joined, _mm256_castps_pd(_mm512_cvtpd_ps(high)), 1));
}

// Records the flagged lanes of elements [i, i + count) of a block of n and their inputs x; the
// first flag of a block clears the block's redo array (unflagged blocks never touch it).
__attribute__((target("avx512f"))) inline void RecordFlags(uint32_t flags, __m512 x, uint32_t* redo, float* saved,
                                                           int i, int count, int n, bool& flagged) {
  if (!flags) return;
  if (!flagged) std::memset(redo, 0, sizeof(uint32_t) * static_cast<size_t>(n));
  flagged = true;
  _mm512_mask_storeu_ps(saved + i, static_cast<__mmask16>((1u << count) - 1u), x);
  for (int lane = 0; lane < count; ++lane) redo[i + lane] = (flags >> lane) & 1u;
}

// 2^(j/16) / (1 + j/16), the nearest doubles: ExpAvx512 scales by 2^k (1 + j/16), whose bits
// are two integer operations away from those of z.
alignas(64) constexpr double kExp2SixteenthsOverStep[16] = {
    0x1.0000000000000p+0, 0x1.f737945997a77p-1, 0x1.f04d5c0dec9bep-1, 0x1.eaff69f168a7ap-1,
    0x1.e719676b5f1bbp-1, 0x1.e4715c9404f71p-1, 0x1.e2e5593378322p-1, 0x1.e259ba32cfaa9p-1,
    0x1.e2b7dddfefa66p-1, 0x1.e3ed27fe520adp-1, 0x1.e5ea402aa9e98p-1, 0x1.e8a27b7470a26p-1,
    0x1.ec0b6661ea8c6p-1, 0x1.f01c678d9bc42p-1, 0x1.f4ce7521d7c4cp-1, 0x1.fa1bd8f1d7cc0p-1,
};

// e^x = 2^k (1 + j/16) * [2^(j/16) / (1 + j/16)] * (1 + (e^r - 1)). The first factor's bits:
// zbits << 48 puts N's low 16 bits (k's low 12, then j) in the exponent and the top four
// significand bits (the 0x4338 of the shift constant falls off the top); adding 1023 << 52
// biases the exponent (k in [-126, 128]).
__attribute__((target("avx512f"))) inline __m512d ExpAvx512(__m512d x) {
  Avx512Reduction red = ReduceAvx512(x);
  __m512d step_scale =
      _mm512_castsi512_pd(_mm512_add_epi64(_mm512_slli_epi64(red.zbits, 48), _mm512_set1_epi64(0x3ff0000000000000LL)));
  __m512d s = Lookup(kExp2SixteenthsOverStep, red.zbits);
  return _mm512_mul_pd(_mm512_fmadd_pd(s, red.expm1_r, s), step_scale);
}

__attribute__((target("avx512f"))) bool ExpBlockAvx512(const float* in, float* out, uint32_t* redo, float* saved,
                                                       int n) {
  bool flagged = false;
  for (int i = 0; i < n; i += 16) {
    int count = n - i < 16 ? n - i : 16;
    __mmask16 lanes = static_cast<__mmask16>((1u << count) - 1u);
    PrefetchAhead(in + i, out + i);
    __m512 x = _mm512_maskz_loadu_ps(lanes, in + i);
    // Below -104 (-inf too) the result is +0 and above 89 +inf, set here (ExpSlow's answers);
    // NaN, the last floats before overflow and subnormal results (x < ln(2^-126) = -87.3365...)
    // take the slow path. The vector lanes of all of them compute garbage, harmlessly.
    __mmask16 below = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_LT_OQ);
    __mmask16 above = _mm512_cmp_ps_mask(x, _mm512_set1_ps(89.0f), _CMP_GT_OQ);
    __mmask16 special = static_cast<__mmask16>(
        (_mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_NGE_UQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q)) & ~below);
    __m512d y_low = ExpAvx512(LowHalf(x)), y_high = ExpAvx512(HighHalf(x));
    uint32_t hard = (static_cast<uint32_t>(special) | NearMidpointAvx512(y_low) |
                     (static_cast<uint32_t>(NearMidpointAvx512(y_high)) << 8)) &
                    ~static_cast<uint32_t>(below | above);
    __m512 y = _mm512_mask_blend_ps(below, Join(y_low, y_high), _mm512_setzero_ps());
    y = _mm512_mask_blend_ps(above, y, _mm512_set1_ps(INFINITY));
    _mm512_mask_storeu_ps(out + i, lanes, y);
    RecordFlags(hard & lanes, x, redo, saved, i, count, n, flagged);
  }
  return flagged;
}

// tanh(a) for a = |x| in [2^-13, 10] (clamped by the caller), as t / (t + 2) with
// t = e^2a - 1 = (2^k - 1) + 2^k (T + 2^(j/16) (e^r - 1)), T = 2^(j/16) - 1: 2^k - 1 is exact;
// for k = 0 the bracket is e^2a - 1 and its terms are at most about three times it (it is
// e^r - 1 itself for j = 0), so few digits cancel; for k > 0 the sum is above 0.95.
__attribute__((target("avx512f"))) inline __m512d TanhAvx512(__m512d a) {
  Avx512Reduction red = ReduceAvx512(_mm512_add_pd(a, a));
  __m512d bracket =
      _mm512_fmadd_pd(Lookup(kExp2Sixteenths, red.zbits), red.expm1_r, Lookup(kExp2SixteenthsMinus1, red.zbits));
  __m512d scale = PowerOfTwoK(red.zbits);
  __m512d t = _mm512_fmadd_pd(scale, bracket, _mm512_sub_pd(scale, _mm512_set1_pd(1.0)));
  return _mm512_div_pd(t, _mm512_add_pd(t, _mm512_set1_pd(2.0)));
}

__attribute__((target("avx512f"))) bool TanhBlockAvx512(const float* in, float* out, uint32_t* redo, float* saved,
                                                        int n) {
  bool flagged = false;
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  for (int i = 0; i < n; i += 16) {
    int count = n - i < 16 ? n - i : 16;
    __mmask16 lanes = static_cast<__mmask16>((1u << count) - 1u);
    PrefetchAhead(in + i, out + i);
    __m512 x = _mm512_maskz_loadu_ps(lanes, in + i);
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    // |x| clamped to 10: past 10 tanh rounds to 1 (1 - tanh(10) is below half an ulp of 1).
    __m512 a = _mm512_min_ps(_mm512_castsi512_ps(_mm512_andnot_si512(sign_bit, _mm512_castps_si512(x))),
                             _mm512_set1_ps(10.0f));
    // Below 2^-13, tanh(x) = x - x^3/3 + ... rounds to x itself (x^2/3 < 2^-27, under half the
    // spacing below x); so are zeros and subnormals, which need no flag.
    __mmask16 tiny = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0x1p-13f), _CMP_LT_OQ);
    __m512d y_low = TanhAvx512(LowHalf(a)), y_high = TanhAvx512(HighHalf(a));
    uint32_t hard = static_cast<uint32_t>(nan) |
                    ((NearMidpointAvx512(y_low) | (static_cast<uint32_t>(NearMidpointAvx512(y_high)) << 8)) &
                     ~static_cast<uint32_t>(tiny));
    __m512i magnitude = _mm512_castps_si512(Join(y_low, y_high));
    __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), sign_bit);
    __m512 y = _mm512_mask_blend_ps(tiny, _mm512_castsi512_ps(_mm512_or_si512(magnitude, sign)), x);
    _mm512_mask_storeu_ps(out + i, lanes, y);
    RecordFlags(hard & lanes, x, redo, saved, i, count, n, flagged);
  }
  return flagged;
}

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
BlockFn ExpBlockFor(bool portable) { return portable || !HasAvx512() ? ExpBlockPortable : ExpBlockAvx512; }
BlockFn TanhBlockFor(bool portable) { return portable || !HasAvx512() ? TanhBlockPortable : TanhBlockAvx512; }
#pragma GCC diagnostic pop
#else
BlockFn ExpBlockFor(bool) { return ExpBlockPortable; }
BlockFn TanhBlockFor(bool) { return TanhBlockPortable; }
#endif

}  // namespace

void ExpF32(const float* in, float* out, int64_t n) { Run<ExpSlow>(ExpBlockFor(false), in, out, n); }
void TanhF32(const float* in, float* out, int64_t n) { Run<TanhSlow>(TanhBlockFor(false), in, out, n); }
void ExpF32Portable(const float* in, float* out, int64_t n) { Run<ExpSlow>(ExpBlockFor(true), in, out, n); }
void TanhF32Portable(const float* in, float* out, int64_t n) { Run<TanhSlow>(TanhBlockFor(true), in, out, n); }

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
