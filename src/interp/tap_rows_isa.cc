// SPDX-License-Identifier: Apache-2.0
// SumTapRows (tap_rows.h) compiled for a wider vector ISA: meson builds this file once per level
// above the baseline, beside the elementwise spans (-DNHLO_SPAN_ISA=Avx2|Avx512 with that
// level's -m flags), and kernels_conv_depthwise.cc picks one at run time. The entry points are
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
