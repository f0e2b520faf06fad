// SPDX-License-Identifier: Apache-2.0
// The span kernels compiled for AVX2 and AVX-512 (elementwise_spans_isa.cc), one namespace per
// ISA level; each function returns null for an op or type it does not cover, and the caller
// keeps the baseline loop. Built only for x86-64 (meson.build, beside the GEMM's ISA levels).
#pragma once

#include <cstdint>

#include "interp/elementwise_spans.h"

#define NHLO_SPAN_ISA_DECLARATIONS             \
  SpanFn UnaryFn(Opcode op, PrimitiveType t);  \
  SpanFn BinaryFn(Opcode op, PrimitiveType t); \
  SpanFn CompareFn(int code, PrimitiveType t); \
  SpanFn SelectFn(int element_bytes);

namespace nhlo::span_isa_Avx2 {
NHLO_SPAN_ISA_DECLARATIONS
}  // namespace nhlo::span_isa_Avx2
namespace nhlo::span_isa_Avx512 {
NHLO_SPAN_ISA_DECLARATIONS
}  // namespace nhlo::span_isa_Avx512

#undef NHLO_SPAN_ISA_DECLARATIONS
