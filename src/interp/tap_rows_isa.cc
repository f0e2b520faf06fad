// SPDX-License-Identifier: Apache-2.0
// SumTapRows and DotLanesAdd (tap_rows.h) compiled for a wider vector ISA: meson builds this file
// once per level above the baseline, beside the elementwise spans (-DNHLO_SPAN_ISA=Avx2|Avx512
// with that level's -m flags), and kernels_conv_depthwise.cc picks one at run time. The entry points are
// flattened so no inline function from the header is emitted out of line from this file.
#ifndef NHLO_SPAN_ISA
#error "compile with -DNHLO_SPAN_ISA=<Avx2|Avx512>"
#endif

#include "interp/tap_rows_isa.h"
#include "interp/tap_rows.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#define NHLO_TAP_CAT2(a, b) a##b
#define NHLO_TAP_CAT(a, b) NHLO_TAP_CAT2(a, b)
#define NHLO_TAP_NS NHLO_TAP_CAT(tap_rows_, NHLO_SPAN_ISA)

namespace nhlo::NHLO_TAP_NS {

namespace {
#if defined(__AVX512F__)
constexpr int kBytes = 64;
#else
constexpr int kBytes = 32;
#endif
}  // namespace

__attribute__((flatten)) void SumF32(const float* const* sources, const float* weights, int64_t taps, float* out,
                                     int64_t width, int64_t rows, int64_t src_pitch, int64_t dst_pitch) {
  SumTapRows<float, kBytes>(sources, weights, taps, out, width, rows, src_pitch, dst_pitch);
}

__attribute__((flatten)) void SumF64(const double* const* sources, const double* weights, int64_t taps, double* out,
                                     int64_t width, int64_t rows, int64_t src_pitch, int64_t dst_pitch) {
  SumTapRows<double, kBytes>(sources, weights, taps, out, width, rows, src_pitch, dst_pitch);
}

#if defined(__AVX512F__)
// DotLanesAdd in one register for a contiguous or 2-strided `a` and a contiguous `b`: the last
// partial block adds to its lanes under a mask (the other lanes keep their sums, as the scalar
// loop leaves them), and masked loads read no element past the run.
void DotF32(const float* a, int64_t a_step, const float* b, int64_t b_step, int64_t n, float* lanes) {
  if (b_step != 1 || (a_step != 1 && a_step != 2)) {
    DotLanesAdd<float>(a, a_step, b, b_step, n, lanes);
    return;
  }
  __m512 acc = _mm512_loadu_ps(lanes);
  int64_t k = 0;
  if (a_step == 1) {
    for (; k + 16 <= n; k += 16)
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k)));
    if (k < n) {
      const __mmask16 m = static_cast<__mmask16>((1u << (n - k)) - 1);
      acc = _mm512_mask_add_ps(acc, m, acc,
                               _mm512_mul_ps(_mm512_maskz_loadu_ps(m, a + k), _mm512_maskz_loadu_ps(m, b + k)));
    }
  } else {
    // Lane l takes a[2 * (k + l)]: the even elements of the 31 floats from a + 2k.
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    auto evens = [&](const float* from, int64_t count) {  // count = elements readable from `from`, up to 31
      const __mmask16 lo = static_cast<__mmask16>(count >= 16 ? 0xffffu : (1u << count) - 1);
      const __mmask16 hi = static_cast<__mmask16>(count > 16 ? (1u << (count - 16)) - 1 : 0u);
      return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lo, from), even, _mm512_maskz_loadu_ps(hi, from + 16));
    };
    for (; k + 16 <= n; k += 16) acc = _mm512_add_ps(acc, _mm512_mul_ps(evens(a + 2 * k, 31), _mm512_loadu_ps(b + k)));
    if (k < n) {
      const int64_t rest = n - k;
      const __mmask16 m = static_cast<__mmask16>((1u << rest) - 1);
      acc = _mm512_mask_add_ps(acc, m, acc,
                               _mm512_mul_ps(evens(a + 2 * k, 2 * rest - 1), _mm512_maskz_loadu_ps(m, b + k)));
    }
  }
  _mm512_storeu_ps(lanes, acc);
}
#else
__attribute__((flatten)) void DotF32(const float* a, int64_t a_step, const float* b, int64_t b_step, int64_t n,
                                     float* lanes) {
  DotLanesAdd<float>(a, a_step, b, b_step, n, lanes);
}
#endif

__attribute__((flatten)) void DotF64(const double* a, int64_t a_step, const double* b, int64_t b_step, int64_t n,
                                     double* lanes) {
  DotLanesAdd<double>(a, a_step, b, b_step, n, lanes);
}

__attribute__((flatten)) void GroupedF32(const float* in, int64_t first, int64_t pos_stride, int64_t ci_stride,
                                         int64_t positions, const GroupTap* taps, int64_t n_taps, int64_t kernel_in,
                                         const float* weights, int64_t per_group, float* out, int64_t out_stride) {
  GroupedRows<float, kBytes>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, weights, per_group,
                             out, out_stride);
}

__attribute__((flatten)) void GroupedF64(const double* in, int64_t first, int64_t pos_stride, int64_t ci_stride,
                                         int64_t positions, const GroupTap* taps, int64_t n_taps, int64_t kernel_in,
                                         const double* weights, int64_t per_group, double* out, int64_t out_stride) {
  GroupedRows<double, kBytes>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, weights, per_group,
                              out, out_stride);
}

// Whole vectors with non-temporal stores once the destination is aligned to one; the head and
// the tail (under a vector) with plain stores. The bytes are a memcpy's.
void StreamCopy(void* dst, const void* src, int64_t bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  const int64_t head = std::min<int64_t>(bytes, (kBytes - reinterpret_cast<uintptr_t>(out) % kBytes) % kBytes);
  std::memcpy(out, in, static_cast<size_t>(head));
  out += head, in += head, bytes -= head;
  for (; bytes >= kBytes; out += kBytes, in += kBytes, bytes -= kBytes) {
#if defined(__AVX512F__)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out), _mm512_loadu_si512(in));
#else
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
#endif
  }
  std::memcpy(out, in, static_cast<size_t>(bytes));
}

int VectorBytes() { return kBytes; }

}  // namespace nhlo::NHLO_TAP_NS
