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
                                     int64_t width) {
  SumTapRows<float, kBytes>(sources, weights, taps, out, width);
}

__attribute__((flatten)) void SumF64(const double* const* sources, const double* weights, int64_t taps, double* out,
                                     int64_t width) {
  SumTapRows<double, kBytes>(sources, weights, taps, out, width);
}

int VectorBytes() { return kBytes; }

}  // namespace nhlo::NHLO_TAP_NS
