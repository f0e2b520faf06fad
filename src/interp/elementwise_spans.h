// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels resolved once for their opcode and element types (at load), then run on
// any range of elements: the fused executor (fused_groups.h) runs a group of them tile by tile.
// Each is the loop the op-by-op kernel (kernels_elementwise_fast.cc) runs over the same elements,
// so a fused result is bit-identical to the op-by-op one.
#pragma once

#include <cstdint>

#include "types/opcode.h"
#include "types/primitive_type.h"

namespace nhlo {

struct SpanOp;
/// Runs the op on `m` elements: in[i] points at operand i's first element of the range, `out`
/// at the result's.
using SpanFn = void (*)(const SpanOp& op, const uint8_t* const* in, uint8_t* out, int64_t m);

struct SpanOp {
  SpanFn fn = nullptr;  // null: the op has no span form for these types (it runs op by op)
  PrimitiveType in_type = PrimitiveType::kInvalid, out_type = PrimitiveType::kInvalid;
  int operands = 0;
  int exponent_bits = 0, mantissa_bits = 0;  // reduce-precision's widths
  // For the spans that read them (the element-at-a-time and complex forms, kernels.h): the op,
  // and a compare's direction as KernelCompare codes it.
  Opcode opcode = Opcode::kAbs;
  int code = 0;
};

/// A span that reads its op from the SpanOp (the element-at-a-time and complex forms).
inline SpanOp OpSpan(SpanFn fn, Opcode op, PrimitiveType in, PrimitiveType out, int operands) {
  SpanOp span{fn, in, out, operands};
  span.opcode = op;
  return span;
}

SpanOp UnarySpanOp(Opcode op, PrimitiveType in, PrimitiveType out);
SpanOp BinarySpanOp(Opcode op, PrimitiveType a, PrimitiveType b, PrimitiveType out);
/// The binary span the op-by-op kernel runs over `elements` elements of type t: BinarySpanOp's,
/// except that add, subtract and multiply of f32, f64 and native integers over 8 MiB and more
/// store past the cache (the same values; only the stores differ).
SpanOp BinaryKernelSpanOp(Opcode op, PrimitiveType t, int64_t elements);
/// `code` is KernelCompare's: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE.
SpanOp CompareSpanOp(int code, bool total_order, PrimitiveType t);
/// A select whose predicate has one element per result element.
SpanOp SelectSpanOp(PrimitiveType t);
SpanOp ConvertSpanOp(PrimitiveType from, PrimitiveType to);
/// clamp(lo, x, hi) as KernelClamp computes it, for f32, f64 and native integers; a scalar bound
/// is in[0] or in[2]'s one element.
SpanOp ClampSpanOp(PrimitiveType t, bool lo_scalar, bool hi_scalar);
/// reduce-precision of a float type to `exponent_bits` (>= 1) and `mantissa_bits` (>= 0), each
/// at most 64, as KernelReducePrecision computes it.
SpanOp ReducePrecisionSpanOp(PrimitiveType t, int exponent_bits, int mantissa_bits);
/// Every result element is in[0]'s one element (a broadcast of a scalar).
SpanOp FillSpanOp(PrimitiveType t);
/// The result is the operand's bytes (reshape: the same elements in the same order).
SpanOp CopySpanOp(PrimitiveType t);

/// Runs `span` over n elements in the op-by-op kernels' parallel chunks (a cut that depends on n
/// alone): in[k] is operand k's first element, element[k] its bytes per element, 0 for an
/// operand whose one element every result element reads.
void RunSpanChunks(const SpanOp& span, const uint8_t* const* in, const int64_t* element, uint8_t* out, int64_t n);

}  // namespace nhlo
