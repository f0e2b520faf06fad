// SPDX-License-Identifier: Apache-2.0
// The dispatcher, shared helpers, attribute-text readers and the elementwise rules. The other
// families live in shape_inference_{data,compute,control}.cc. Rules follow XLA's ShapeInference
// and HloVerifier; where XLA's rule is unclear the rule here accepts (marked `lenient:`).
#include "ir/shape_inference.h"

#include <algorithm>
#include <atomic>
#include <charconv>

#include "ir/shape_inference_internal.h"

namespace nhlo {
namespace infer {

// ----------------------------------------------------------------------------------------
// Shapes

std::string Str(const Shape& s) { return ShapeToString(s, false); }

std::string List(const std::vector<int64_t>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  return out + "}";
}

bool DimMatches(const Shape& a, size_t i, const Shape& b, size_t j) {
  return Unbounded(a, i) || Unbounded(b, j) || a.dims[i] == b.dims[j];
}

bool SameDims(const Shape& a, const Shape& b) {
  if (a.dims.size() != b.dims.size()) return false;
  // Shapes parsed from the same text share their dimension spans (the parser's shape cache), so
  // most pairs compared here are one span: equal whatever the kinds, as a dimension matches itself.
  if (a.dims.data() == b.dims.data()) return true;
  if (a.dim_kinds.empty() && b.dim_kinds.empty()) {
    for (size_t i = 0; i < a.dims.size(); ++i)
      if (a.dims[i] != b.dims[i]) return false;
    return true;
  }
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (!DimMatches(a, i, b, i)) return false;
  return true;
}

bool SameTypeIgnoringFp(PrimitiveType a, PrimitiveType b) { return a == b || (IsFloat(a) && IsFloat(b)); }

static bool CompatibleImpl(const Shape& a, const Shape& b, bool ignore_fp) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple.size() != b.tuple.size()) return false;
    for (size_t i = 0; i < a.tuple.size(); ++i)
      if (!CompatibleImpl(a.tuple[i], b.tuple[i], ignore_fp)) return false;
    return true;
  }
  if (ignore_fp ? !SameTypeIgnoringFp(a.type, b.type) : a.type != b.type) return false;
  return !a.IsArray() || SameDims(a, b);
}

bool Compatible(const Shape& a, const Shape& b) { return CompatibleImpl(a, b, false); }
bool CompatibleIgnoringFp(const Shape& a, const Shape& b) { return CompatibleImpl(a, b, true); }

bool HasDynamicDim(const Shape& s) {
  if (s.IsTuple()) return std::any_of(s.tuple.begin(), s.tuple.end(), HasDynamicDim);
  for (size_t i = 0; i < s.dims.size(); ++i)
    if (s.IsDynamicDim(i)) return true;
  return false;
}

Shape WithType(const Shape& s, PrimitiveType t) {
  Shape out = s;
  out.type = t;
  return out;
}

PrimitiveType ComplexComponent(PrimitiveType t) {
  return t == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

Shape DimList::Build(Module& m, PrimitiveType type) const {
  Shape s;
  s.type = type;
  s.dims = m.arena.Copy(sizes_.data(), sizes_.size());
  if (std::any_of(kinds_.begin(), kinds_.end(), [](DimKind k) { return k != DimKind::kStatic; }))
    s.dim_kinds = m.arena.Copy(kinds_.data(), kinds_.size());
  return s;
}

// ----------------------------------------------------------------------------------------
// Attributes and called computations

std::optional<std::vector<int64_t>> IntList(const Instruction& inst, AttrId id) {
  const Attribute* a = inst.FindAttr(id);
  if (!a || a->kind != AttrKind::IntList) return std::nullopt;
  return std::vector<int64_t>(a->ints.begin(), a->ints.end());
}

std::optional<int64_t> IntAttr(const Instruction& inst, AttrId id) {
  const Attribute* a = inst.FindAttr(id);
  if (!a || a->kind != AttrKind::Int) return std::nullopt;
  return a->i;
}

const Computation* Called(const Instruction& inst, AttrId id) {
  const Attribute* a = inst.FindAttr(id);
  if (!a || a->computations.empty()) return nullptr;
  return a->computations[0];
}

std::optional<int64_t> SingleDimension(const Instruction& inst, std::string& error) {
  auto dims = IntList(inst, AttrId::kDimensions);
  if (!dims) {
    error = Op(inst) + " needs dimensions=";
    return std::nullopt;
  }
  if (dims->size() != 1) {
    error = Op(inst) + " dimensions must have exactly one entry, got " + List(*dims);
    return std::nullopt;
  }
  return (*dims)[0];
}

namespace {

thread_local SignatureCache* active_signatures = nullptr;

Signature ScanSignature(const Computation& c) {
  Signature sig;
  SmallVec<const Instruction*, 8> params;
  c.AppendParameters(params);
  for (const Instruction* p : params) sig.params.push_back(&p->shape);
  sig.result = c.root ? &c.root->shape : nullptr;
  return sig;
}

}  // namespace

SignatureCache::SignatureCache(size_t computations) : outer_(active_signatures) {
  static std::atomic<uint32_t> last_id{0};
  id_ = ++last_id;
  if (id_ == 0) id_ = ++last_id;  // 0 marks a computation no cache has seen
  entries_.reserve(computations);
  params_.reserve(2 * computations);
  active_signatures = this;
}
SignatureCache::~SignatureCache() { active_signatures = outer_; }

Signature SignatureCache::Get(const Computation& c) {
  if (c.signature_cache_id != id_) {
    Signature sig = ScanSignature(c);
    c.signature_cache_id = id_;
    c.signature_index = static_cast<uint32_t>(entries_.size());
    entries_.push_back(
        Entry{static_cast<uint32_t>(params_.size()), static_cast<uint32_t>(sig.params.size()), sig.result});
    params_.insert(params_.end(), sig.params.begin(), sig.params.end());
    return sig;
  }
  const Entry& e = entries_[c.signature_index];
  Signature sig;
  for (uint32_t i = 0; i < e.param_count; ++i) sig.params.push_back(params_[e.first_param + i]);
  sig.result = e.result;
  return sig;
}

Signature SignatureOf(const Computation& c) { return active_signatures ? active_signatures->Get(c) : ScanSignature(c); }

std::string Describe(const Computation& c) {
  Signature sig = SignatureOf(c);
  std::string out = "'" + std::string(c.name) + "' (";
  for (size_t i = 0; i < sig.params.size(); ++i) {
    if (i) out += ", ";
    out += sig.params[i] ? Str(*sig.params[i]) : "?";
  }
  out += ") -> ";
  out += sig.result ? Str(*sig.result) : "?";
  return out;
}

std::string CheckReducer(const char* what, const Computation& reducer, std::span<const Shape* const> inits,
                         std::span<const PrimitiveType> input_types, const char* init_name) {
  Signature sig = SignatureOf(reducer);
  size_t n = inits.size();
  // Built only on failure: reducers are checked for every reduce of a module.
  auto fail = [&](const std::string& why) { return std::string(what) + " computation " + Describe(reducer) + why; };
  if (sig.params.size() != 2 * n)
    return fail(" must take " + Count(2 * n, "parameter") + ", it takes " + Num(sig.params.size()));
  if (!sig.result) return {};
  SmallVec<const Shape*, 8> accumulators;
  if (sig.result->IsTuple()) {
    if (sig.result->tuple.size() != n)
      return fail(" must return " + Count(n, "scalar") + ", it returns " + Num(sig.result->tuple.size()));
    for (const Shape& s : sig.result->tuple) accumulators.push_back(&s);
  } else {
    if (n != 1) return fail(" must return a tuple of " + Count(n, "scalar"));
    accumulators.push_back(sig.result);
  }
  for (const Shape* acc : accumulators)
    if (!acc->IsScalar()) return fail(" must return scalars");
  for (size_t i = 0; i < n; ++i) {
    const Shape* acc_param = sig.params[i];
    const Shape* value_param = sig.params[n + i];
    if (!acc_param || !value_param) return {};  // the verifier reports the missing parameter
    auto acc_text = [&] { return " but accumulator " + Num(i) + " is "; };
    if (!Compatible(*acc_param, *accumulators[i]))
      return fail(": parameter " + Num(i) + " is " + Str(*acc_param) + acc_text() + Str(*accumulators[i]));
    if (!CompatibleIgnoringFp(*inits[i], *accumulators[i]))
      return fail(": " + std::string(init_name) + " " + Num(i) + " is " + Str(*inits[i]) + acc_text() +
                  Str(*accumulators[i]));
    if (!value_param->IsScalar() || !SameTypeIgnoringFp(value_param->type, input_types[i]))
      return fail(": parameter " + Num(n + i) + " is " + Str(*value_param) + " but the input elements are " +
                  std::string(PrimitiveTypeName(input_types[i])));
    if (!SameTypeIgnoringFp(value_param->type, accumulators[i]->type))
      return fail(": parameter " + Num(n + i) + " is " + Str(*value_param) + acc_text() + Str(*accumulators[i]));
  }
  return {};
}

// ----------------------------------------------------------------------------------------
// Windows

namespace {

// Window fields past this are nonsense for any real program; refusing them (and computing in
// 128 bits) keeps the arithmetic below free of overflow for any dimension size.
constexpr int64_t kMaxWindowValue = int64_t{1} << 40;

bool InWindowRange(int64_t v) { return v >= -kMaxWindowValue && v <= kMaxWindowValue; }

__int128 DilatedBound(__int128 bound, __int128 dilation) { return bound == 0 ? 0 : (bound - 1) * dilation + 1; }

}  // namespace

std::string WindowOutput(const std::string& what, const Shape& base, const std::vector<WindowDim>& window,
                         DimList& out) {
  if (window.size() != base.rank())
    return what + " window has " + Count(window.size(), "dimension") + " but the operand " + Str(base) + " has rank " +
           Num(base.rank());
  for (size_t i = 0; i < window.size(); ++i) {
    const WindowDim& w = window[i];
    if (w.size <= 0) return what + " window size in dimension " + Num(i) + " must be positive, got " + Num(w.size);
    if (w.stride <= 0)
      return what + " window stride in dimension " + Num(i) + " must be positive, got " + Num(w.stride);
    if (w.base_dilation < 1 || w.window_dilation < 1)
      return what + " window dilation in dimension " + Num(i) + " must be at least 1";
    for (int64_t v : {w.size, w.stride, w.pad_low, w.pad_high, w.base_dilation, w.window_dilation})
      if (!InWindowRange(v)) return what + " window value " + Num(v) + " is out of range";
    if (Unbounded(base, i)) {
      out.Add(-1, DimKind::kUnbounded);
      continue;
    }
    __int128 padded = w.pad_low + DilatedBound(base.dims[i], w.base_dilation) + w.pad_high;
    __int128 span = DilatedBound(w.size, w.window_dilation);
    if (padded < 0)
      return what + " window padding " + Num(w.pad_low) + "_" + Num(w.pad_high) + " leaves dimension " + Num(i) +
             " of " + Str(base) + " with a negative size";
    __int128 size = span > padded ? 0 : (padded - span) / w.stride + 1;
    if (size > INT64_MAX / 2) return what + " window output dimension " + Num(i) + " is too large";
    out.Add(static_cast<int64_t>(size), base.IsDynamicDim(i) ? DimKind::kBounded : DimKind::kStatic);
  }
  return {};
}

std::vector<WindowDim> WindowOf(const Instruction& inst, std::string& error) {
  const Attribute* a = inst.FindAttr(AttrId::kWindow);
  if (!a) return {};
  (void)error;  // the parser checked the window's form; the rules check its values
  return std::vector<WindowDim>(a->window.begin(), a->window.end());
}

// ----------------------------------------------------------------------------------------
// Elementwise rules

Inference InferUnary(Module&, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  std::string op = Op(inst);
  // XLA's copy is not an array op: it copies tuples and tokens as they are.
  if (inst.opcode == Opcode::kCopy) return Inferred(x);
  if (!x.IsArray()) return Error("operand of '" + op + "' must be an array, got " + Str(x));
  PrimitiveType t = x.type;
  bool fp = IsFloat(t), cx = IsComplex(t);
  const std::optional<UnaryOp> unary = AsUnaryOp(inst.opcode);
  if (!unary) return NotInferable();  // only the elementwise column's Unary rows come here
  switch (*unary) {
    case UnaryOp::kCopy: return Inferred(x);
    case UnaryOp::kIsFinite:
      if (!fp) return Error("is-finite needs a floating-point operand, got " + Str(x));
      return Inferred(WithType(x, PrimitiveType::kPred));
    case UnaryOp::kReal:
    case UnaryOp::kImag:
      if (!fp && !cx) return Error(op + " needs a floating-point or complex operand, got " + Str(x));
      return Inferred(cx ? WithType(x, ComplexComponent(t)) : x);
    case UnaryOp::kAbs:
      if (cx) return Inferred(WithType(x, ComplexComponent(t)));
      if (!fp && !IsSignedInt(t)) return Error("abs needs a signed, floating-point or complex operand, got " + Str(x));
      return Inferred(x);
    case UnaryOp::kSign:
      if (!fp && !cx && !IsSignedInt(t))
        return Error("sign needs a signed, floating-point or complex operand, got " + Str(x));
      return Inferred(x);
    case UnaryOp::kNegate:
      if (!fp && !cx && !IsInteger(t)) return Error("negate needs a numeric operand, got " + Str(x));
      return Inferred(x);
    case UnaryOp::kNot:
      if (fp || cx) return Error("not needs an integer or pred operand, got " + Str(x));
      return Inferred(x);
    case UnaryOp::kClz:
    case UnaryOp::kPopulationCount:
      if (!IsInteger(t)) return Error(op + " needs an integer operand, got " + Str(x));
      return Inferred(x);
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRoundNearestAfz:
    case UnaryOp::kRoundNearestEven:
      if (!fp) return Error(op + " needs a floating-point operand, got " + Str(x));
      return Inferred(x);
    // The transcendental functions. lenient: XLA lists some (erf, the inverse trigonometric
    // ones) as float-only in places; complex is accepted for all of them here.
    case UnaryOp::kAcos:
    case UnaryOp::kAcosh:
    case UnaryOp::kAsin:
    case UnaryOp::kAsinh:
    case UnaryOp::kAtanh:
    case UnaryOp::kCbrt:
    case UnaryOp::kCosh:
    case UnaryOp::kCos:
    case UnaryOp::kErf:
    case UnaryOp::kExp:
    case UnaryOp::kExpm1:
    case UnaryOp::kLog:
    case UnaryOp::kLog1p:
    case UnaryOp::kLogistic:
    case UnaryOp::kRsqrt:
    case UnaryOp::kSin:
    case UnaryOp::kSinh:
    case UnaryOp::kSqrt:
    case UnaryOp::kTan:
    case UnaryOp::kTanh:
      if (!fp && !cx) return Error(op + " needs a floating-point or complex operand, got " + Str(x));
      return Inferred(x);
  }
  return NotInferable();
}

// Dimension i of an elementwise result: an unbounded operand dimension defers to the other
// operand, and a bounded-dynamic one makes the result dynamic (XLA merges dynamism).
static void MergeDim(const Shape& a, const Shape& b, size_t i, DimList& out) {
  if (Unbounded(a, i)) {
    out.Take(b, i);
    return;
  }
  DimKind kind = KindAt(a, i);
  if (kind == DimKind::kStatic && KindAt(b, i) == DimKind::kBounded) kind = DimKind::kBounded;
  out.Add(a.dims[i], kind);
}

static Shape MergeDims(Module& m, const Shape& a, const Shape& b, PrimitiveType type) {
  if (!HasDynamicDim(a) && !HasDynamicDim(b)) return WithType(a, type);
  DimList dims;
  for (size_t i = 0; i < a.rank(); ++i) MergeDim(a, b, i, dims);
  return dims.Build(m, type);
}

Inference InferBinary(Module& m, const Instruction& inst) {
  const Shape& a = inst.operands[0]->shape;
  const Shape& b = inst.operands[1]->shape;
  std::string op = Op(inst);
  if (!a.IsArray() || !b.IsArray())
    return Error("operands of '" + op + "' must be arrays, got " + Str(a) + " and " + Str(b));
  if (!SameDims(a, b)) return Error("operands of '" + op + "' have different dimensions: " + Str(a) + " and " + Str(b));
  if (inst.opcode == Opcode::kComplex) {
    if (a.type != b.type || (a.type != PrimitiveType::kF32 && a.type != PrimitiveType::kF64))
      return Error("complex needs two f32 or two f64 operands, got " + Str(a) + " and " + Str(b));
    return Inferred(MergeDims(m, a, b, a.type == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128));
  }
  if (a.type != b.type)
    return Error("operands of '" + op + "' have different element types: " + Str(a) + " and " + Str(b));
  PrimitiveType t = a.type;
  // compare (the other user of this rule) takes every element type.
  if (const std::optional<BinaryOp> binary = AsBinaryOp(inst.opcode)) switch (*binary) {
      case BinaryOp::kSubtract:
      case BinaryOp::kDivide:
      case BinaryOp::kRemainder:
      case BinaryOp::kPower:
      case BinaryOp::kAtan2:
        if (t == PrimitiveType::kPred) return Error(op + " does not take pred operands, got " + Str(a));
        break;
      case BinaryOp::kShiftLeft:
      case BinaryOp::kShiftRightArithmetic:
      case BinaryOp::kShiftRightLogical:
      case BinaryOp::kMulhi:
        if (!IsInteger(t)) return Error(op + " needs integer operands, got " + Str(a));
        break;
      case BinaryOp::kAnd:
      case BinaryOp::kOr:
      case BinaryOp::kXor:
        if (IsFloat(t) || IsComplex(t)) return Error(op + " needs integer or pred operands, got " + Str(a));
        break;
      case BinaryOp::kAdd:
      case BinaryOp::kComplex:
      case BinaryOp::kMaximum:
      case BinaryOp::kMinimum:
      case BinaryOp::kMultiply: break;
    }
  return Inferred(MergeDims(m, a, b, inst.opcode == Opcode::kCompare ? PrimitiveType::kPred : t));
}

Inference InferSelect(Module& m, const Instruction& inst) {
  const Shape& p = inst.operands[0]->shape;
  const Shape& t = inst.operands[1]->shape;
  const Shape& f = inst.operands[2]->shape;
  if (p.type != PrimitiveType::kPred) return Error("select predicate must be pred, got " + Str(p));
  if (!Compatible(t, f)) return Error("select branches differ: " + Str(t) + " and " + Str(f));
  // lenient: XLA dropped the scalar-predicate form (it was tuple-select); old dumps still use it.
  if (p.IsScalar()) return Inferred(t);
  if (!t.IsArray() || !SameDims(p, t))
    return Error("select predicate " + Str(p) + " does not match the branches " + Str(t));
  return Inferred(MergeDims(m, t, f, t.type));
}

Inference InferClamp(Module&, const Instruction& inst) {
  const Shape& lo = inst.operands[0]->shape;
  const Shape& x = inst.operands[1]->shape;
  const Shape& hi = inst.operands[2]->shape;
  if (!x.IsArray()) return Error("clamp operand must be an array, got " + Str(x));
  for (const Shape* bound : {&lo, &hi})
    if (bound->type != x.type || (!bound->IsScalar() && !SameDims(*bound, x)))
      return Error("clamp bound " + Str(*bound) + " does not match the operand " + Str(x));
  return Inferred(x);
}

Inference InferMap(Module& m, const Instruction& inst) {
  if (inst.operands.empty()) return Error("map needs at least one operand");
  const Computation* f = Called(inst, AttrId::kToApply);
  if (!f) return Error("map needs to_apply=");
  const Shape* shape = &inst.operands[0]->shape;
  for (const Instruction* op : inst.operands) {
    const Shape& s = op->shape;
    if (!s.IsArray()) return Error("map operands must be arrays, got " + Str(s));
    if (SameDims(s, *shape)) continue;
    if (s.IsScalar()) continue;
    if (shape->IsScalar()) {
      shape = &s;
      continue;
    }
    return Error("map operands have different dimensions: " + Str(*shape) + " and " + Str(s));
  }
  if (auto dims = IntList(inst, AttrId::kDimensions)) {
    bool identity = dims->size() == shape->rank();
    for (size_t i = 0; identity && i < dims->size(); ++i) identity = (*dims)[i] == static_cast<int64_t>(i);
    if (!identity)
      return Error("map dimensions must be every dimension in order (" + Num(shape->rank()) + " for " + Str(*shape) +
                   "), got " + List(*dims));
  }
  Signature sig = SignatureOf(*f);
  if (sig.params.size() != inst.operands.size())
    return Error("map computation " + Describe(*f) + " takes " + Count(sig.params.size(), "parameter") +
                 " but map has " + Count(inst.operands.size(), "operand"));
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const Shape* p = sig.params[i];
    if (!p) continue;
    if (!p->IsScalar() || !SameTypeIgnoringFp(p->type, inst.operands[i]->shape.type))
      return Error("map computation " + Describe(*f) + " parameter " + Num(i) + " must be a " +
                   std::string(PrimitiveTypeName(inst.operands[i]->shape.type)) + " scalar");
  }
  if (!sig.result) return NotInferable();
  const Shape* out = sig.result;
  if (!out->IsScalar()) return Error("map computation " + Describe(*f) + " must return a scalar");
  DimList dims;
  for (size_t i = 0; i < shape->rank(); ++i) dims.Take(*shape, i);
  return Inferred(dims.Build(m, out->type));
}

}  // namespace infer

// ----------------------------------------------------------------------------------------
// Dispatch

namespace infer {

Inference Dispatch(Module& m, const Instruction& inst, InferMode mode) {
  int arity = OpcodeArity(inst.opcode);
  if (arity >= 0 && static_cast<int>(inst.operands.size()) != arity)
    return Error("'" + Op(inst) + "' takes " + std::to_string(arity) + " operand" + (arity == 1 ? "" : "s") + ", got " +
                 std::to_string(inst.operands.size()));
  if (mode == InferMode::kParse && !ParserMayInferShape(inst.opcode)) return NotInferable();
  // One case per row of opcodes.def: a new opcode does not compile until it names its rule here.
  switch (inst.opcode) {
    case Opcode::kAbs:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kCopy:
    case Opcode::kCosh:
    case Opcode::kCos:
    case Opcode::kClz:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh: return InferUnary(m, inst);
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kComplex:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMulhi:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor: return InferBinary(m, inst);
    case Opcode::kCompare: return InferBinary(m, inst);
    case Opcode::kSelect: return InferSelect(m, inst);
    case Opcode::kClamp: return InferClamp(m, inst);
    case Opcode::kMap: return InferMap(m, inst);
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* op : inst.operands) elements.push_back(op->shape);
      return Inferred(m.MakeTupleShape(elements));
    }
    case Opcode::kGetTupleElement: {
      const Shape& t = inst.operands[0]->shape;
      auto index = IntAttr(inst, AttrId::kIndex);
      if (!index) return Error("get-tuple-element needs index=");
      if (!t.IsTuple()) return Error("get-tuple-element operand must be a tuple, got " + Str(t));
      if (*index < 0 || *index >= static_cast<int64_t>(t.tuple.size()))
        return Error("tuple index " + std::to_string(*index) + " is out of range for " + Str(t));
      return Inferred(t.tuple[*index]);
    }
    case Opcode::kSlice: return InferSlice(m, inst);
    case Opcode::kDynamicSlice: return InferDynamicSlice(m, inst);
    case Opcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(m, inst);
    case Opcode::kConcatenate: return InferConcatenate(m, inst);
    case Opcode::kPad: return InferPad(m, inst);
    case Opcode::kGather: return InferGather(m, inst);
    case Opcode::kScatter: return InferScatter(m, inst);
    case Opcode::kReverse: return InferReverse(m, inst);
    case Opcode::kTranspose: return InferTranspose(m, inst);
    case Opcode::kSort: return InferSort(m, inst);
    case Opcode::kTopK: return InferTopK(m, inst);
    case Opcode::kGetDimensionSize: return InferGetDimensionSize(m, inst);
    case Opcode::kSetDimensionSize: return InferSetDimensionSize(m, inst);
    case Opcode::kReduce: return InferReduce(m, inst);
    case Opcode::kReduceWindow: return InferReduceWindow(m, inst);
    case Opcode::kSelectAndScatter: return InferSelectAndScatter(m, inst);
    case Opcode::kScan: return InferScan(m, inst);
    case Opcode::kDot: return InferDot(m, inst);
    case Opcode::kRaggedDot: return InferRaggedDot(m, inst);
    case Opcode::kScaledDot: return InferScaledDot(m, inst);
    case Opcode::kConvolution: return InferConvolution(m, inst);
    case Opcode::kFft: return InferFft(m, inst);
    case Opcode::kTriangularSolve: return InferTriangularSolve(m, inst);
    case Opcode::kCholesky: return InferCholesky(m, inst);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: return InferBatchNorm(m, inst);
    case Opcode::kReducePrecision: return InferReducePrecision(m, inst);
    case Opcode::kCall: return InferCall(m, inst);
    case Opcode::kWhile: return InferWhile(m, inst);
    case Opcode::kConditional: return InferConditional(m, inst);
    case Opcode::kFusion: return InferFusion(m, inst);
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone: return InferAsync(m, inst);
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone: return InferCollective(m, inst);
    case Opcode::kAfterAll: return InferAfterAll(m, inst);
    case Opcode::kAddDependency: return InferAddDependency(m, inst);
    case Opcode::kSend: return InferSend(m, inst);
    case Opcode::kSendDone: return InferSendDone(m, inst);
    case Opcode::kRecv:
    case Opcode::kInfeed: return InferRecv(m, inst);
    case Opcode::kRecvDone: return InferRecvDone(m, inst);
    case Opcode::kOutfeed: return InferOutfeed(m, inst);
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: return InferReplicaId(m, inst);
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier: return InferDomain(m, inst);
    case Opcode::kRngGetAndUpdateState: return InferRngGetAndUpdateState(m, inst);
    case Opcode::kCopyStart: return InferCopyStart(m, inst);
    case Opcode::kCopyDone: return InferCopyDone(m, inst);
    case Opcode::kRng: return InferRng(m, inst);
    case Opcode::kDynamicReshape: return InferDynamicReshape(m, inst);
    case Opcode::kStochasticConvert: return InferStochasticConvert(m, inst);
    // The result shape is only in the text (or the op has no rule yet).
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kBroadcast:
    case Opcode::kConstant:
    case Opcode::kConvert:
    case Opcode::kCustomCall:
    case Opcode::kIota:
    case Opcode::kParameter:
    case Opcode::kReshape:
    case Opcode::kRngBitGenerator: return NotInferable();
  }
  return NotInferable();  // not an Opcode value
}

}  // namespace infer

Inference InferShape(Module& m, const Instruction& inst, InferMode mode) { return infer::Dispatch(m, inst, mode); }

}  // namespace nhlo
