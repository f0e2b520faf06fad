// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: unary, binary, compare, select, clamp, convert and bitcast-convert, with
// XLA's HloEvaluator rules (shared/reference/HLO_SEMANTICS.md, "General" and "convert").
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "interp/element_traits.h"
#include "interp/elementwise_ops.h"
#include "interp/elementwise_spans.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

Status Unimplemented(Opcode op, PrimitiveType t) {
  return Status::Error("the interpreter does not implement '" + std::string(OpcodeName(op)) + "' on " +
                       std::string(PrimitiveTypeName(t)));
}

Status CheckSameCount(Opcode op, std::initializer_list<const Buf*> bufs) {
  int64_t n = (*bufs.begin())->count();
  for (const Buf* b : bufs)
    if (b->count() != n || !IsArrayType(b->type()))
      return Status::Error("bundle '" + std::string(OpcodeName(op)) + "' has operands whose element counts differ");
  return OkStatus();
}

// XLA's evaluator on pred operands: and/min/multiply are and, or/max/add are or, xor/subtract
// are xor, power is x || !y; the rest do not take pred.
template <typename C>
C BinaryPred(BinaryOp op, C x, C y, bool* ok) {
  switch (op) {
    case BinaryOp::kAnd:
    case BinaryOp::kMinimum:
    case BinaryOp::kMultiply: return x && y;
    case BinaryOp::kOr:
    case BinaryOp::kMaximum:
    case BinaryOp::kAdd: return x || y;
    case BinaryOp::kXor:
    case BinaryOp::kSubtract: return x != y;
    case BinaryOp::kPower: return x || !y;
    case BinaryOp::kAtan2:
    case BinaryOp::kComplex:
    case BinaryOp::kDivide:
    case BinaryOp::kMulhi:
    case BinaryOp::kRemainder:
    case BinaryOp::kShiftLeft:
    case BinaryOp::kShiftRightArithmetic:
    case BinaryOp::kShiftRightLogical: break;
  }
  *ok = false;
  return x;
}

}  // namespace

Status KernelUnary(Opcode op, const Buf& in, const Buf& out) {
  NHLO_TRY(CheckSameCount(op, {&in, &out}));
  if (IsComplex(in.type())) return KernelComplexUnary(op, in, out);
  if (FastUnary(op, in, out)) return OkStatus();
  int64_t n = in.count();
  if (op == Opcode::kIsFinite) {
    return DispatchType(in.type(), [&](auto t) -> Status {
      using C = typename decltype(t)::Compute;
      if constexpr (!std::is_floating_point_v<C>)
        return Unimplemented(op, in.type());
      else {
        for (int64_t i = 0; i < n; ++i) out.data[i] = std::isfinite(t.Load(in.data, i));
        return OkStatus();
      }
    });
  }
  const std::optional<UnaryOp> unary = AsUnaryOp(op);
  if (in.type() != out.type() || !unary) return Unimplemented(op, in.type());
  int bits = BitWidth(in.type());
  return DispatchType(in.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    bool ok = true;
    for (int64_t i = 0; i < n && ok; ++i) {
      C x = t.Load(in.data, i);
      if constexpr (std::is_floating_point_v<C>)
        t.Store(out.data, i, UnaryFloat<C>(*unary, x, &ok));
      else if (in.type() == PrimitiveType::kPred) {
        if (op == Opcode::kNot)
          t.Store(out.data, i, !x);
        else if (op == Opcode::kCopy)
          t.Store(out.data, i, x);
        else
          ok = false;
      } else {
        t.Store(out.data, i, UnaryInt<C>(*unary, x, bits, &ok));
      }
    }
    return ok ? OkStatus() : Unimplemented(op, in.type());
  });
}

Status KernelBinary(Opcode op, const Buf& a, const Buf& b, const Buf& out) {
  NHLO_TRY(CheckSameCount(op, {&a, &b, &out}));
  if (IsComplex(out.type())) return KernelComplexBinary(op, a, b, out);
  const std::optional<BinaryOp> binary = AsBinaryOp(op);
  if (a.type() != b.type() || a.type() != out.type() || !binary) return Unimplemented(op, a.type());
  int64_t n = out.count();
  int bits = BitWidth(a.type());
  if (FastBinary(op, a, b, out)) return OkStatus();
  return DispatchType(a.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    bool ok = true;
    for (int64_t i = 0; i < n && ok; ++i) {
      C x = t.Load(a.data, i), y = t.Load(b.data, i);
      if constexpr (std::is_floating_point_v<C>) {
        t.Store(out.data, i, BinaryFloat<C>(*binary, x, y, &ok));
      } else if (a.type() == PrimitiveType::kPred) {
        t.Store(out.data, i, BinaryPred(*binary, x, y, &ok));
      } else {
        t.Store(out.data, i, BinaryInt<C>(*binary, x, y, bits, &ok));
      }
    }
    return ok ? OkStatus() : Unimplemented(op, a.type());
  });
}

Status KernelCompare(const Step& bundle, const Buf& a, const Buf& b, const Buf& out) {
  NHLO_TRY(CheckSameCount(Opcode::kCompare, {&a, &b, &out}));
  if (a.type() != b.type() || out.type() != PrimitiveType::kPred)
    return Status::Error("bundle 'compare' has mismatched operand or result types");
  const AttrRecord* dir = bundle.Find(AttrId::kDirection);
  const AttrRecord* type = bundle.Find(AttrId::kType);
  if (!dir) return Status::Error("bundle 'compare' has no direction");
  int code = -1;
  switch (static_cast<ComparisonDirection>(dir->i())) {
    case ComparisonDirection::kEq: code = 0; break;
    case ComparisonDirection::kNe: code = 1; break;
    case ComparisonDirection::kLt: code = 2; break;
    case ComparisonDirection::kLe: code = 3; break;
    case ComparisonDirection::kGt: code = 4; break;
    case ComparisonDirection::kGe: code = 5; break;
  }
  if (code < 0) return Status::Error("unknown comparison direction code " + std::to_string(dir->i()));
  if (IsComplex(a.type())) {
    if (code > 1) return Status::Error("complex values compare only with EQ and NE");
    return KernelComplexCompare(code == 0, a, b, out);
  }
  bool total_order = type && type->i() == static_cast<int64_t>(ComparisonType::kTotalOrder);
  if (FastCompare(code, total_order, a, b, out)) return OkStatus();
  int64_t n = out.count();
  auto cmp = [code](auto x, auto y) {
    switch (code) {
      case 0: return x == y;
      case 1: return x != y;
      case 2: return x < y;
      case 3: return x <= y;
      case 4: return x > y;
      default: return x >= y;
    }
  };
  if (total_order && IsFloat(a.type())) {
    // Sign-magnitude image of the bits: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
    int width = BitWidth(a.type());
    for (int64_t i = 0; i < n; ++i) {
      auto key = [&](const uint8_t* p) {
        uint64_t bits = LoadBits(a.type(), p + i * HostByteSize(a.type()));
        uint64_t sign = uint64_t(1) << (width - 1);
        int64_t mag = static_cast<int64_t>(bits & (sign - 1));
        return (bits & sign) ? -mag - 1 : mag;
      };
      out.data[i] = cmp(key(a.data), key(b.data));
    }
    return OkStatus();
  }
  return DispatchType(a.type(), [&](auto t) -> Status {
    for (int64_t i = 0; i < n; ++i) out.data[i] = cmp(t.Load(a.data, i), t.Load(b.data, i));
    return OkStatus();
  });
}

Status KernelSelect(const Buf& pred, const Buf& on_true, const Buf& on_false, const Buf& out) {
  NHLO_TRY(CheckSameCount(Opcode::kSelect, {&on_true, &on_false, &out}));
  if (pred.type() != PrimitiveType::kPred || (pred.count() != 1 && pred.count() != out.count()) ||
      on_true.type() != out.type() || on_false.type() != out.type())
    return Status::Error("bundle 'select' has mismatched operands");
  if (FastSelect(pred, on_true, on_false, out)) return OkStatus();
  int64_t n = out.count();
  int size = HostByteSize(out.type());
  bool scalar = pred.count() != out.count();  // a scalar predicate (checked above: one element)
  for (int64_t i = 0; i < n; ++i) {
    bool p = pred.data[scalar ? 0 : i] != 0;
    std::memcpy(out.data + i * size, (p ? on_true.data : on_false.data) + i * size, size);
  }
  return OkStatus();
}

Status KernelClamp(const Buf& lo, const Buf& x, const Buf& hi, const Buf& out) {
  NHLO_TRY(CheckSameCount(Opcode::kClamp, {&x, &out}));
  for (const Buf* bound : {&lo, &hi})
    if (bound->type() != x.type() || (bound->count() != 1 && bound->count() != x.count()))
      return Status::Error("bundle 'clamp' has mismatched operands");
  if (x.type() != out.type()) return Status::Error("bundle 'clamp' has mismatched operands");
  if (FastClamp(lo, x, hi, out)) return OkStatus();
  int64_t n = out.count();
  return DispatchType(x.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    for (int64_t i = 0; i < n; ++i) {
      C l = t.Load(lo.data, lo.count() == 1 ? 0 : i), v = t.Load(x.data, i),
        h = t.Load(hi.data, hi.count() == 1 ? 0 : i);
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(l)) {
          t.Store(out.data, i, l);
          continue;
        }
        if (std::isnan(v)) {
          t.Store(out.data, i, v);
          continue;
        }
        if (std::isnan(h)) {
          t.Store(out.data, i, h);
          continue;
        }
      }
      C m = v < l ? l : v;  // std::max(value, low) as XLA writes it: value when they compare equal (-0 vs +0)
      t.Store(out.data, i, m < h ? m : h);
    }
    return OkStatus();
  });
}

Status KernelConvert(const Buf& in, const Buf& out) {
  NHLO_TRY(CheckSameCount(Opcode::kConvert, {&in, &out}));
  PrimitiveType from = in.type(), to = out.type();
  if (IsComplex(from) || IsComplex(to)) return KernelComplexConvert(in, out);
  if (FastConvert(in, out)) return OkStatus();
  int64_t n = out.count();
  int in_size = HostByteSize(from), out_size = HostByteSize(to);
  for (int64_t i = 0; i < n; ++i) ConvertElement(from, in.data + i * in_size, to, out.data + i * out_size);
  return OkStatus();
}

bool ReducePrecisionWidths(const Step& step, int* exponent_bits, int* mantissa_bits) {
  const AttrRecord* e = step.Find(AttrId::kExponentBits);
  const AttrRecord* m = step.Find(AttrId::kMantissaBits);
  if (!e || !m || e->i() < 1 || m->i() < 0) return false;
  *exponent_bits = static_cast<int>(std::min<int64_t>(e->i(), 64));
  *mantissa_bits = static_cast<int>(std::min<int64_t>(m->i(), 64));
  return true;
}

Status KernelReducePrecision(const Step& bundle, const Buf& in, const Buf& out) {
  NHLO_TRY(CheckSameCount(Opcode::kReducePrecision, {&in, &out}));
  int exponent_bits = 0, mantissa_bits = 0;
  if (!ReducePrecisionWidths(bundle, &exponent_bits, &mantissa_bits))
    return Status::Error("bundle 'reduce-precision' needs exponent_bits >= 1 and mantissa_bits >= 0");
  if (in.type() != out.type() || !IsFloat(in.type())) return Unimplemented(Opcode::kReducePrecision, in.type());
  int64_t n = in.count();
  if (SpanOp span = ReducePrecisionSpanOp(in.type(), exponent_bits, mantissa_bits); span.fn) {
    const uint8_t* data[3] = {in.data, nullptr, nullptr};
    const int64_t element[3] = {HostByteSize(in.type()), 0, 0};
    RunSpanChunks(span, data, element, out.data, n);
    return OkStatus();
  }
  // Types narrower than f32 are reduced in f32's layout and rounded back once, as XLA computes them.
  return DispatchType(in.type(), [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Unimplemented(Opcode::kReducePrecision, in.type());
    } else {
      for (int64_t i = 0; i < n; ++i)
        t.Store(out.data, i, ReducePrecisionValue<C>(t.Load(in.data, i), exponent_bits, mantissa_bits));
      return OkStatus();
    }
  });
}

namespace {

// KernelBitcastConvert's checks on the records, shared by its plan and the kernel.
Status CheckBitcastConvert(const BufferRecord& in, const BufferRecord& out) {
  const PrimitiveType from = in.type, to = out.type;
  const int in_bits = BitWidth(from), out_bits = BitWidth(to);
  // Bit counts in 128 bits: a record's element count times 64 may pass 64 bits.
  if (in_bits == 0 || out_bits == 0 ||
      static_cast<__int128>(in_bits) * in.ElementCount() != static_cast<__int128>(out_bits) * out.ElementCount())
    return Status::Error("bundle 'bitcast-convert' changes the number of bits");
  if (IsComplex(from) || IsComplex(to)) return Unimplemented(Opcode::kBitcastConvert, IsComplex(from) ? from : to);
  return OkStatus();
}

bool WholeBytes(PrimitiveType from, PrimitiveType to) { return BitWidth(from) % 8 == 0 && BitWidth(to) % 8 == 0; }

}  // namespace

Result<ReshapePlan> PlanBitcastConvert(const BufferRecord& in, const BufferRecord& out) {
  NHLO_TRY(CheckBitcastConvert(in, out));
  if (!WholeBytes(in.type, out.type)) return Status::Error("sub-byte fields are split or joined by the kernel");
  return ReshapePlan{out.ElementCount() * HostByteSize(out.type)};
}

Result<BitFieldPlan> PlanBitFields(const BufferRecord& in, const BufferRecord& out) {
  NHLO_TRY(CheckBitcastConvert(in, out));
  if (WholeBytes(in.type, out.type)) return Status::Error("whole bytes are copied as a reshape");
  const int in_bits = BitWidth(in.type), out_bits = BitWidth(out.type);
  // Fields are split or joined whole: a 6-bit type against 8 bits is neither (ratio 1 would copy
  // 3 of 4 elements and leave the last unwritten).
  if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0)
    return Status::Error("bitcast-convert between " + std::string(PrimitiveTypeName(in.type)) + " and " +
                         std::string(PrimitiveTypeName(out.type)) +
                         " is not implemented: neither bit width divides the other");
  BitFieldPlan plan;
  plan.split = in_bits >= out_bits;
  plan.ratio = plan.split ? in_bits / out_bits : out_bits / in_bits;
  plan.wide_count = plan.split ? in.ElementCount() : out.ElementCount();
  return plan;
}

void RunBitFields(const BitFieldPlan& plan, const Buf& in, const Buf& out) {
  const PrimitiveType from = in.type(), to = out.type();
  const int in_bits = BitWidth(from), out_bits = BitWidth(to);
  const int in_size = HostByteSize(from), out_size = HostByteSize(to), ratio = plan.ratio;
  // Sub-byte types: split or join bit fields, lane 0 in the low bits.
  if (plan.split) {
    for (int64_t i = 0; i < plan.wide_count; ++i) {
      uint64_t bits = LoadBits(from, in.data + i * in_size);
      for (int j = 0; j < ratio; ++j)
        StoreBits(to, out.data + (i * ratio + j) * out_size,
                  (bits >> (j * out_bits)) & ((uint64_t(1) << out_bits) - 1));
    }
    return;
  }
  for (int64_t i = 0; i < plan.wide_count; ++i) {
    uint64_t bits = 0;
    for (int j = 0; j < ratio; ++j)
      bits |= (LoadBits(from, in.data + (i * ratio + j) * in_size) & ((uint64_t(1) << in_bits) - 1)) << (j * in_bits);
    StoreBits(to, out.data + i * out_size, bits);
  }
}

Status KernelBitcastConvert(const Buf& in, const Buf& out) {
  if (WholeBytes(in.type(), out.type())) {
    NHLO_ASSIGN_OR_RETURN(ReshapePlan bytes, PlanBitcastConvert(*in.rec, *out.rec));
    RunReshape(bytes, in, out);
    return OkStatus();
  }
  NHLO_ASSIGN_OR_RETURN(BitFieldPlan fields, PlanBitFields(*in.rec, *out.rec));
  RunBitFields(fields, in, out);
  return OkStatus();
}

}  // namespace nhlo
