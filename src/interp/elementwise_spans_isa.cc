// SPDX-License-Identifier: Apache-2.0
// The f32/f64 span kernels of the common elementwise ops compiled for a wider vector ISA: meson
// builds this file once per level above the baseline (-DNHLO_SPAN_ISA=Avx2|Avx512 with that
// level's -m flags, as for the GEMM) and kernels_elementwise_fast.cc picks one at run time.
//
// The loops are span_loops.h's, unchanged, so each result is the baseline's bit for bit: IEEE
// +, -, *, / and sqrt round the same at every vector width, the both-NaN rules are explicit in
// the loops, and -ffp-contract=off keeps a*b+c two roundings (no FMA) here too. Every entry point
// is flattened, so no inline function from a shared header is emitted out of line from this file
// (the linker could otherwise keep this file's AVX copy for the baseline callers).
#ifndef NHLO_SPAN_ISA
#error "compile with -DNHLO_SPAN_ISA=<Avx2|Avx512>"
#endif

#include "interp/elementwise_spans_isa.h"
#include "interp/span_loops.h"

#define NHLO_SPAN_CAT2(a, b) a##b
#define NHLO_SPAN_CAT(a, b) NHLO_SPAN_CAT2(a, b)
#define NHLO_SPAN_NS NHLO_SPAN_CAT(span_isa_, NHLO_SPAN_ISA)

namespace nhlo::NHLO_SPAN_NS {
namespace {

template <typename T>
const T* In(const uint8_t* p) {
  return reinterpret_cast<const T*>(p);
}
template <typename T>
T* Out(uint8_t* p) {
  return reinterpret_cast<T*>(p);
}

template <Opcode K, typename T>
__attribute__((flatten)) void Unary(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  UnarySpan<K, T>(In<T>(x[0]), Out<T>(z), m);
}

// f32 add keeps the second operand's NaN when both are NaN, as the baseline f32 loop does.
template <Opcode K, typename T>
__attribute__((flatten)) void Binary(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  BinarySpan<K, T, std::is_same_v<T, float> && K == Opcode::kAdd>(In<T>(x[0]), In<T>(x[1]), Out<T>(z), m);
}

template <int kCode, typename T>
__attribute__((flatten)) void Compare(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  CompareSpan<kCode, T>(In<T>(x[0]), In<T>(x[1]), z, m);
}

template <typename U>
__attribute__((flatten)) void Select(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  SelectSpan<U>(x[0], In<U>(x[1]), In<U>(x[2]), Out<U>(z), m);
}

template <typename T>
SpanFn UnaryOf(Opcode op) {
  SpanFn fn = nullptr;
#define NHLO_X(name)             \
  if (op == Opcode::name)        \
    fn = Unary<Opcode::name, T>; \
  else
  NHLO_UNARY_FLOAT_OPS(NHLO_X) {}
#undef NHLO_X
  return fn;
}

template <typename T>
SpanFn BinaryOf(Opcode op) {
  SpanFn fn = nullptr;
#define NHLO_X(name)              \
  if (op == Opcode::name)         \
    fn = Binary<Opcode::name, T>; \
  else
  NHLO_BINARY_FLOAT_OPS(NHLO_X) {}
#undef NHLO_X
  return fn;
}

template <typename T>
SpanFn CompareOf(int code) {
  switch (code) {
    case 0: return Compare<0, T>;
    case 1: return Compare<1, T>;
    case 2: return Compare<2, T>;
    case 3: return Compare<3, T>;
    case 4: return Compare<4, T>;
    case 5: return Compare<5, T>;
    default: return nullptr;
  }
}

}  // namespace

SpanFn UnaryFn(Opcode op, PrimitiveType t) {
  if (t == PrimitiveType::kF32) return UnaryOf<float>(op);
  if (t == PrimitiveType::kF64) return UnaryOf<double>(op);
  return nullptr;
}

SpanFn BinaryFn(Opcode op, PrimitiveType t) {
  if (t == PrimitiveType::kF32) return BinaryOf<float>(op);
  if (t == PrimitiveType::kF64) return BinaryOf<double>(op);
  return nullptr;
}

SpanFn CompareFn(int code, PrimitiveType t) {
  if (t == PrimitiveType::kF32) return CompareOf<float>(code);
  if (t == PrimitiveType::kF64) return CompareOf<double>(code);
  return nullptr;
}

SpanFn SelectFn(int element_bytes) {
  switch (element_bytes) {
    case 1: return Select<uint8_t>;
    case 2: return Select<uint16_t>;
    case 4: return Select<uint32_t>;
    case 8: return Select<uint64_t>;
    default: return nullptr;
  }
}

}  // namespace nhlo::NHLO_SPAN_NS
