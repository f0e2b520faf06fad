// SPDX-License-Identifier: Apache-2.0
// The AVX2 and AVX-512 builds of SumTapRows, DotLanes and GroupedRows (tap_rows_isa.cc), one namespace per ISA level.
// Built only for x86-64 (meson.build, beside the elementwise spans' ISA levels).
#pragma once

#include <cstdint>

#include "interp/tap_rows.h"

#define NHLO_TAP_ROWS_DECLARATIONS                                                                                   \
  void SumF32(const float* const* sources, const float* weights, int64_t taps, float* out, int64_t width,            \
              int64_t rows, int64_t src_pitch, int64_t dst_pitch);                                                   \
  void SumF64(const double* const* sources, const double* weights, int64_t taps, double* out, int64_t width,         \
              int64_t rows, int64_t src_pitch, int64_t dst_pitch);                                                   \
  void StreamCopy(void* dst, const void* src, int64_t bytes);                                                        \
  void DotF32(const float* a, int64_t a_step, const float* b, int64_t b_step, int64_t n, float* lanes);              \
  void DotF64(const double* a, int64_t a_step, const double* b, int64_t b_step, int64_t n, double* lanes);           \
  void GroupedF32(const float* in, int64_t first, int64_t pos_stride, int64_t ci_stride, int64_t positions,          \
                  const GroupTap* taps, int64_t n_taps, int64_t kernel_in, const float* weights, int64_t per_group,  \
                  float* out, int64_t out_stride);                                                                   \
  void GroupedF64(const double* in, int64_t first, int64_t pos_stride, int64_t ci_stride, int64_t positions,         \
                  const GroupTap* taps, int64_t n_taps, int64_t kernel_in, const double* weights, int64_t per_group, \
                  double* out, int64_t out_stride);                                                                  \
  int VectorBytes();

namespace nhlo::tap_rows_Avx2 {
NHLO_TAP_ROWS_DECLARATIONS
}  // namespace nhlo::tap_rows_Avx2
namespace nhlo::tap_rows_Avx512 {
NHLO_TAP_ROWS_DECLARATIONS
}  // namespace nhlo::tap_rows_Avx512

#undef NHLO_TAP_ROWS_DECLARATIONS
