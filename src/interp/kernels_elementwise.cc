// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: unary, binary, compare, select, clamp, convert and bitcast-convert, with
// XLA's HloEvaluator rules (shared/reference/HLO_SEMANTICS.md, "General" and "convert").
//
// Each kernel is its checks on the records, which pick the span it runs (XStepSpan), then the
// span. A span is the fast form of elementwise_spans.h where the op and types have one, the
// complex form (kernels_complex.cc) for c64/c128, or else the element-at-a-time form below: the
// evaluator's scalar rules (elementwise_ops.h) over DispatchType's traits, for the types with no
// native array form (sub-byte integers, pred's unary ops). The checks decide everything the run
// could refuse, so PlanElementwise keeps the span at load and the run only runs it.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
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

Status CheckSameCount(Opcode op, std::initializer_list<const BufferRecord*> records) {
  int64_t n = (*records.begin())->ElementCount();
  for (const BufferRecord* r : records)
    if (r->ElementCount() != n || !IsArrayType(r->type))
      return Status::Error("bundle '" + std::string(OpcodeName(op)) + "' has operands whose element counts differ");
  return OkStatus();
}

// DispatchType's refusal of a type it has no traits for, or OK.
Status CheckDispatchable(PrimitiveType t) {
  return DispatchType(t, [](auto) { return OkStatus(); });
}

// Whether UnaryFloat / UnaryInt / BinaryFloat / BinaryInt implement `op` (their X-macro lists,
// which name exactly the cases of their switches that return a value).
bool InUnaryFloatOps(Opcode op) {
#define NHLO_X(name) op == Opcode::name ||
  return NHLO_UNARY_FLOAT_OPS(NHLO_X) false;
#undef NHLO_X
}
bool InUnaryIntOps(Opcode op) {
#define NHLO_X(name) op == Opcode::name ||
  return NHLO_UNARY_INT_OPS(NHLO_X) false;
#undef NHLO_X
}
bool InBinaryFloatOps(Opcode op) {
#define NHLO_X(name) op == Opcode::name ||
  return NHLO_BINARY_FLOAT_OPS(NHLO_X) false;
#undef NHLO_X
}
bool InBinaryIntOps(Opcode op) {
#define NHLO_X(name) op == Opcode::name ||
  return NHLO_BINARY_INT_OPS(NHLO_X) false;
#undef NHLO_X
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

bool InBinaryPredOps(BinaryOp op) {
  bool ok = true;
  (void)BinaryPred<bool>(op, false, false, &ok);  // `ok` depends on the op alone
  return ok;
}

// ---- the element-at-a-time spans: one DispatchType per call, the checked op per element ----

void IsFiniteLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  (void)DispatchType(o.in_type, [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (std::is_floating_point_v<C>)
      for (int64_t i = 0; i < m; ++i) z[i] = std::isfinite(t.Load(x[0], i));
    return OkStatus();
  });
}

void UnaryLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const UnaryOp unary = *AsUnaryOp(o.opcode);
  const int bits = BitWidth(o.in_type);
  (void)DispatchType(o.in_type, [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    bool ok = true;  // UnaryStepSpan checked the op: `ok` stays true
    for (int64_t i = 0; i < m; ++i) {
      C v = t.Load(x[0], i);
      if constexpr (std::is_floating_point_v<C>)
        t.Store(z, i, UnaryFloat<C>(unary, v, &ok));
      else if (o.in_type == PrimitiveType::kPred)
        t.Store(z, i, unary == UnaryOp::kNot ? C(!v) : v);
      else
        t.Store(z, i, UnaryInt<C>(unary, v, bits, &ok));
    }
    return OkStatus();
  });
}

void BinaryLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const BinaryOp binary = *AsBinaryOp(o.opcode);
  const int bits = BitWidth(o.out_type);
  (void)DispatchType(o.out_type, [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    bool ok = true;  // BinaryStepSpan checked the op: `ok` stays true
    for (int64_t i = 0; i < m; ++i) {
      C a = t.Load(x[0], i), b = t.Load(x[1], i);
      if constexpr (std::is_floating_point_v<C>)
        t.Store(z, i, BinaryFloat<C>(binary, a, b, &ok));
      else if (o.out_type == PrimitiveType::kPred)
        t.Store(z, i, BinaryPred(binary, a, b, &ok));
      else
        t.Store(z, i, BinaryInt<C>(binary, a, b, bits, &ok));
    }
    return OkStatus();
  });
}

template <typename X>
bool CompareBy(int code, X x, X y) {
  switch (code) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    case 5: return x >= y;
  }
  return false;
}

// Sign-magnitude image of a float's bits: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
void TotalOrderLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const PrimitiveType t = o.in_type;
  const int width = BitWidth(t), size = HostByteSize(t);
  const uint64_t sign = uint64_t(1) << (width - 1);
  auto key = [&](const uint8_t* p) {
    uint64_t bits = LoadBits(t, p);
    int64_t mag = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) ? -mag - 1 : mag;
  };
  for (int64_t i = 0; i < m; ++i) z[i] = CompareBy(o.code, key(x[0] + i * size), key(x[1] + i * size));
}

void CompareLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  (void)DispatchType(o.in_type, [&](auto t) -> Status {
    for (int64_t i = 0; i < m; ++i) z[i] = CompareBy(o.code, t.Load(x[0], i), t.Load(x[1], i));
    return OkStatus();
  });
}

void SelectLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const size_t size = static_cast<size_t>(HostByteSize(o.out_type));
  for (int64_t i = 0; i < m; ++i) std::memcpy(z + i * size, (x[0][i] != 0 ? x[1] : x[2]) + i * size, size);
}

// A bound of one element is read for every element (its span operand has a stride of 0 bytes,
// but the traits index by element, so the loop reads element 0 itself).
template <bool kLoScalar, bool kHiScalar>
void ClampLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  (void)DispatchType(o.out_type, [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    for (int64_t i = 0; i < m; ++i) {
      C l = t.Load(x[0], kLoScalar ? 0 : i), v = t.Load(x[1], i), h = t.Load(x[2], kHiScalar ? 0 : i);
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(l) || std::isnan(v) || std::isnan(h)) {
          t.Store(z, i, std::isnan(l) ? l : std::isnan(v) ? v : h);
          continue;
        }
      }
      C r = v < l ? l : v;  // std::max(value, low) as XLA writes it: value when they compare equal (-0 vs +0)
      t.Store(z, i, r < h ? r : h);
    }
    return OkStatus();
  });
}

void ConvertLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const int in_size = HostByteSize(o.in_type), out_size = HostByteSize(o.out_type);
  for (int64_t i = 0; i < m; ++i) ConvertElement(o.in_type, x[0] + i * in_size, o.out_type, z + i * out_size);
}

// Types narrower than f32 are reduced in f32's layout and rounded back once, as XLA computes them.
void ReducePrecisionLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  (void)DispatchType(o.in_type, [&](auto t) -> Status {
    using C = typename decltype(t)::Compute;
    if constexpr (std::is_floating_point_v<C>)
      for (int64_t i = 0; i < m; ++i)
        t.Store(z, i, ReducePrecisionValue<C>(t.Load(x[0], i), o.exponent_bits, o.mantissa_bits));
    return OkStatus();
  });
}

}  // namespace

// Runs a step's span over its Bufs: an operand with the result's count is read element by
// element, one of another count (a clamp's scalar bound) as one element for all.
void RunStepSpan(const SpanOp& span, std::initializer_list<const Buf*> in, const Buf& out) {
  const uint8_t* data[3] = {nullptr, nullptr, nullptr};
  int64_t element[3] = {0, 0, 0};
  const int64_t n = out.count();
  int k = 0;
  for (const Buf* b : in) {
    data[k] = b->data;
    element[k++] = b->count() == n ? HostByteSize(b->type()) : 0;
  }
  RunSpanChunks(span, data, element, out.data, n);
}

Result<SpanOp> UnaryStepSpan(Opcode op, const BufferRecord& in, const BufferRecord& out) {
  NHLO_TRY(CheckSameCount(op, {&in, &out}));
  if (IsComplex(in.type)) return ComplexUnarySpan(op, in.type, out.type);
  if (SpanOp fast = UnarySpanOp(op, in.type, out.type); fast.fn) return fast;
  NHLO_TRY(CheckDispatchable(in.type));
  const bool floating = HasFloatCompute(in.type);
  if (op == Opcode::kIsFinite) {
    if (!floating || out.type != PrimitiveType::kPred) return Unimplemented(op, in.type);
    return OpSpan(IsFiniteLoop, op, in.type, out.type, 1);
  }
  const bool implemented = floating                          ? InUnaryFloatOps(op)
                           : in.type == PrimitiveType::kPred ? op == Opcode::kNot || op == Opcode::kCopy
                                                             : InUnaryIntOps(op);
  if (in.type != out.type || !AsUnaryOp(op) || !implemented) return Unimplemented(op, in.type);
  return OpSpan(UnaryLoop, op, in.type, out.type, 1);
}

Result<SpanOp> BinaryStepSpan(Opcode op, const BufferRecord& a, const BufferRecord& b, const BufferRecord& out) {
  NHLO_TRY(CheckSameCount(op, {&a, &b, &out}));
  if (IsComplex(out.type)) return ComplexBinarySpan(op, a.type, b.type, out.type);
  const std::optional<BinaryOp> binary = AsBinaryOp(op);
  if (a.type != b.type || a.type != out.type || !binary) return Unimplemented(op, a.type);
  if (SpanOp fast = BinaryKernelSpanOp(op, out.type, out.ElementCount()); fast.fn) return fast;
  NHLO_TRY(CheckDispatchable(out.type));
  const bool implemented = HasFloatCompute(out.type)          ? InBinaryFloatOps(op)
                           : out.type == PrimitiveType::kPred ? InBinaryPredOps(*binary)
                                                              : InBinaryIntOps(op);
  if (!implemented) return Unimplemented(op, a.type);
  return OpSpan(BinaryLoop, op, out.type, out.type, 2);
}

Result<SpanOp> CompareStepSpan(const Step& s, const BufferRecord& a, const BufferRecord& b, const BufferRecord& out) {
  NHLO_TRY(CheckSameCount(Opcode::kCompare, {&a, &b, &out}));
  if (a.type != b.type || out.type != PrimitiveType::kPred)
    return Status::Error("bundle 'compare' has mismatched operand or result types");
  const AttrRecord* dir = s.Find(AttrId::kDirection);
  const AttrRecord* type = s.Find(AttrId::kType);
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
  if (IsComplex(a.type)) {
    if (code > 1) return Status::Error("complex values compare only with EQ and NE");
    return ComplexCompareSpan(code == 0, a.type);
  }
  const bool total_order = type && type->i() == static_cast<int64_t>(ComparisonType::kTotalOrder);
  if (SpanOp fast = CompareSpanOp(code, total_order, a.type); fast.fn) return fast;
  SpanOp span{nullptr, a.type, PrimitiveType::kPred, 2};
  span.code = code;
  if (total_order && IsFloat(a.type)) {
    span.fn = TotalOrderLoop;
    return span;
  }
  NHLO_TRY(CheckDispatchable(a.type));
  span.fn = CompareLoop;
  return span;
}

namespace {

Status CheckSelect(const BufferRecord& pred, const BufferRecord& on_true, const BufferRecord& on_false,
                   const BufferRecord& out) {
  NHLO_TRY(CheckSameCount(Opcode::kSelect, {&on_true, &on_false, &out}));
  if (pred.type != PrimitiveType::kPred || (pred.ElementCount() != 1 && pred.ElementCount() != out.ElementCount()) ||
      on_true.type != out.type || on_false.type != out.type)
    return Status::Error("bundle 'select' has mismatched operands");
  return OkStatus();
}

}  // namespace

Result<SpanOp> SelectStepSpan(const BufferRecord& pred, const BufferRecord& on_true, const BufferRecord& on_false,
                              const BufferRecord& out) {
  NHLO_TRY(CheckSelect(pred, on_true, on_false, out));
  if (pred.ElementCount() != out.ElementCount())
    return Status::Error("a select of one predicate picks an operand: it has no span");
  if (SpanOp fast = SelectSpanOp(out.type); fast.fn) return fast;
  return OpSpan(SelectLoop, Opcode::kSelect, out.type, out.type, 3);
}

Result<SpanOp> ClampStepSpan(const BufferRecord& lo, const BufferRecord& x, const BufferRecord& hi,
                             const BufferRecord& out) {
  NHLO_TRY(CheckSameCount(Opcode::kClamp, {&x, &out}));
  for (const BufferRecord* bound : {&lo, &hi})
    if (bound->type != x.type || (bound->ElementCount() != 1 && bound->ElementCount() != x.ElementCount()))
      return Status::Error("bundle 'clamp' has mismatched operands");
  if (x.type != out.type) return Status::Error("bundle 'clamp' has mismatched operands");
  const bool lo_scalar = lo.ElementCount() == 1, hi_scalar = hi.ElementCount() == 1;
  if (SpanOp fast = ClampSpanOp(x.type, lo_scalar, hi_scalar); fast.fn) return fast;
  NHLO_TRY(CheckDispatchable(x.type));
  const SpanFn fn = lo_scalar ? (hi_scalar ? ClampLoop<true, true> : ClampLoop<true, false>)
                              : (hi_scalar ? ClampLoop<false, true> : ClampLoop<false, false>);
  return OpSpan(fn, Opcode::kClamp, x.type, x.type, 3);
}

Result<SpanOp> ConvertStepSpan(const BufferRecord& in, const BufferRecord& out) {
  NHLO_TRY(CheckSameCount(Opcode::kConvert, {&in, &out}));
  if (IsComplex(in.type) || IsComplex(out.type)) return ComplexConvertSpan(in.type, out.type);
  if (SpanOp fast = ConvertSpanOp(in.type, out.type); fast.fn) return fast;
  return OpSpan(ConvertLoop, Opcode::kConvert, in.type, out.type, 1);
}

bool ReducePrecisionWidths(const Step& step, int* exponent_bits, int* mantissa_bits) {
  const AttrRecord* e = step.Find(AttrId::kExponentBits);
  const AttrRecord* m = step.Find(AttrId::kMantissaBits);
  if (!e || !m || e->i() < 1 || m->i() < 0) return false;
  *exponent_bits = static_cast<int>(std::min<int64_t>(e->i(), 64));
  *mantissa_bits = static_cast<int>(std::min<int64_t>(m->i(), 64));
  return true;
}

Result<SpanOp> ReducePrecisionStepSpan(const Step& s, const BufferRecord& in, const BufferRecord& out) {
  NHLO_TRY(CheckSameCount(Opcode::kReducePrecision, {&in, &out}));
  int exponent_bits = 0, mantissa_bits = 0;
  if (!ReducePrecisionWidths(s, &exponent_bits, &mantissa_bits))
    return Status::Error("bundle 'reduce-precision' needs exponent_bits >= 1 and mantissa_bits >= 0");
  if (in.type != out.type || !IsFloat(in.type)) return Unimplemented(Opcode::kReducePrecision, in.type);
  if (SpanOp fast = ReducePrecisionSpanOp(in.type, exponent_bits, mantissa_bits); fast.fn) return fast;
  NHLO_TRY(CheckDispatchable(in.type));
  SpanOp span = OpSpan(ReducePrecisionLoop, Opcode::kReducePrecision, in.type, out.type, 1);
  span.exponent_bits = exponent_bits;
  span.mantissa_bits = mantissa_bits;
  return span;
}

Result<SpanOp> ElementwiseStepSpan(const ComputationRecord& comp, const Step& s) {
  const BundleRecord& b = *s.bundle;
  const size_t arity = b.operands.size();
  auto rec = [&](size_t i) -> const BufferRecord& { return comp.buffers[b.operands[i]]; };
  const BufferRecord& out = comp.buffers[b.result];
  const OpFamily f = s.family;
  if (f == OpFamily::kUnary && arity == 1) return UnaryStepSpan(b.opcode, rec(0), out);
  if (f == OpFamily::kBinary && arity == 2) return BinaryStepSpan(b.opcode, rec(0), rec(1), out);
  if (f == OpFamily::kCompare && arity == 2) return CompareStepSpan(s, rec(0), rec(1), out);
  if (f == OpFamily::kSelect && arity == 3) return SelectStepSpan(rec(0), rec(1), rec(2), out);
  if (f == OpFamily::kClamp && arity == 3) return ClampStepSpan(rec(0), rec(1), rec(2), out);
  if (f == OpFamily::kConvert && arity == 1) return ConvertStepSpan(rec(0), out);
  if (f == OpFamily::kReducePrecision && arity == 1) return ReducePrecisionStepSpan(s, rec(0), out);
  return Status::Error("not an elementwise step of its family's arity");
}

Status KernelUnary(Opcode op, const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(SpanOp span, UnaryStepSpan(op, *in.rec, *out.rec));
  RunStepSpan(span, {&in}, out);
  return OkStatus();
}

Status KernelBinary(Opcode op, const Buf& a, const Buf& b, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(SpanOp span, BinaryStepSpan(op, *a.rec, *b.rec, *out.rec));
  RunStepSpan(span, {&a, &b}, out);
  return OkStatus();
}

Status KernelCompare(const Step& bundle, const Buf& a, const Buf& b, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(SpanOp span, CompareStepSpan(bundle, *a.rec, *b.rec, *out.rec));
  RunStepSpan(span, {&a, &b}, out);
  return OkStatus();
}

Status KernelSelect(const Buf& pred, const Buf& on_true, const Buf& on_false, const Buf& out) {
  NHLO_TRY(CheckSelect(*pred.rec, *on_true.rec, *on_false.rec, *out.rec));
  if (pred.count() != out.count()) {  // one predicate: the result is the operand it picks
    const Buf& pick = pred.data[0] != 0 ? on_true : on_false;
    const size_t bytes = static_cast<size_t>(out.count()) * HostByteSize(out.type());
    if (pick.data != out.data && bytes > 0) std::memmove(out.data, pick.data, bytes);
    return OkStatus();
  }
  NHLO_ASSIGN_OR_RETURN(SpanOp span, SelectStepSpan(*pred.rec, *on_true.rec, *on_false.rec, *out.rec));
  RunStepSpan(span, {&pred, &on_true, &on_false}, out);
  return OkStatus();
}

Status KernelClamp(const Buf& lo, const Buf& x, const Buf& hi, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(SpanOp span, ClampStepSpan(*lo.rec, *x.rec, *hi.rec, *out.rec));
  RunStepSpan(span, {&lo, &x, &hi}, out);
  return OkStatus();
}

Status KernelConvert(const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(SpanOp span, ConvertStepSpan(*in.rec, *out.rec));
  RunStepSpan(span, {&in}, out);
  return OkStatus();
}

Status KernelReducePrecision(const Step& bundle, const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(SpanOp span, ReducePrecisionStepSpan(bundle, *in.rec, *out.rec));
  RunStepSpan(span, {&in}, out);
  return OkStatus();
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
