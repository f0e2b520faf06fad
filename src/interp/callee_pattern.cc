// SPDX-License-Identifier: Apache-2.0
// Load-time recognition of the computations ops call once per element: a reducer or combiner
// that is one binary op of its two parameters, JAX's argmax/argmin reducer, a sort comparator
// that compares one operand's pair of parameters (directly, or after JAX's canonicalisation of
// NaNs and zeros), and a select-and-scatter select that compares its two parameters. Every bundle of the computation
// must belong to the pattern, so a computation that does anything more runs as written.
#include <string>
#include <utility>
#include <vector>

#include "codegen/bundle_reader.h"
#include "interp/native_callees.h"
#include "interp/op_table.h"
#include "types/element.h"

namespace nhlo {
namespace {

constexpr std::pair<Opcode, ScalarOp> kScalarOps[] = {
    {Opcode::kAdd, ScalarOp::kAdd},         {Opcode::kMultiply, ScalarOp::kMultiply},
    {Opcode::kMaximum, ScalarOp::kMaximum}, {Opcode::kMinimum, ScalarOp::kMinimum},
    {Opcode::kAnd, ScalarOp::kAnd},         {Opcode::kOr, ScalarOp::kOr},
    {Opcode::kXor, ScalarOp::kXor},
};

ScalarOp ScalarOpOf(Opcode op) {
  for (auto [opcode, scalar] : kScalarOps)
    if (opcode == op) return scalar;
  return ScalarOp::kNone;
}

bool IsScalarOf(const BufferRecord& b, PrimitiveType t) {
  return b.type == t && b.size == static_cast<uint64_t>(HostByteSize(t));
}

// A computation's bundles by the buffer they write, and how many are not parameters or constants.
struct Indexed {
  std::vector<const BundleRecord*> producer;
  size_t body = 0;
};

Indexed IndexOf(const ComputationRecord& f) {
  Indexed x;
  x.producer.assign(f.buffers.size(), nullptr);
  for (const BundleRecord& b : f.bundles) {
    if (b.result < x.producer.size()) x.producer[b.result] = &b;
    if (ExecutionOf(b.opcode).family != OpFamily::kBound) ++x.body;
  }
  return x;
}

// Whether running `b` may do more than write its result (opcodes.def's effect column; a custom
// call's flag). A step that calls a computation counts as one: what it calls may have one.
bool MayHaveSideEffect(const BundleRecord& b) {
  for (const AttrRecord& a : b.attrs)
    if (!a.computations().empty()) return true;
  switch (OpcodeSideEffect(b.opcode)) {
    case SideEffect::kNone: return false;
    case SideEffect::kFlagged: {
      const AttrRecord* flag = b.Find(AttrId::kCustomCallHasSideEffect);
      return flag && flag->b();
    }
    case SideEffect::kAlways:
    case SideEffect::kCollective:
    case SideEffect::kChannelId: return true;
  }
  return true;
}

// root = op(p0, p1) or op(p1, p0), every buffer a scalar of type t; other steps dead and free of
// side effects.
CalleePattern BinaryPattern(const ComputationRecord& f, PrimitiveType t) {
  CalleePattern none, p;
  if (f.params.size() != 2 || f.params[0] == f.params[1] || !NativeScalarType(t)) return none;
  if (f.root >= f.buffers.size() || !IsScalarOf(f.buffers[f.root], t)) return none;
  for (uint32_t param : f.params)
    if (param >= f.buffers.size() || !IsScalarOf(f.buffers[param], t)) return none;
  Indexed x = IndexOf(f);
  const BundleRecord* root = x.producer[f.root];
  if (!root || root->operands.size() != 2) return none;
  // Any other step is dead (the root reads only parameters): XLA's evaluator knows a reducer by
  // its root alone (IsScalarAdd), so dead steps must not turn its double-sum add path off. One
  // with a side effect keeps the computation running as written.
  for (const BundleRecord& b : f.bundles)
    if (&b != root && MayHaveSideEffect(b)) return none;
  p.op = ScalarOpOf(root->opcode);
  bool bitwise = p.op == ScalarOp::kAnd || p.op == ScalarOp::kOr || p.op == ScalarOp::kXor;
  if (p.op == ScalarOp::kNone || (bitwise && IsFloat(t))) return none;
  if (root->operands[0] == f.params[0] && root->operands[1] == f.params[1]) {
    p.swapped = false;
  } else if (root->operands[0] == f.params[1] && root->operands[1] == f.params[0]) {
    p.swapped = IsFloat(t);  // integer and pred ops commute exactly
  } else {
    return none;
  }
  return p;
}

bool PlainCompare(const BundleRecord& b) {
  const AttrRecord* type = b.Find(AttrId::kType);
  return !type || type->i() == static_cast<int64_t>(ComparisonType::kFloat);
}

bool IsCompare(const BundleRecord* b, ComparisonDirection d) {
  if (!b || b->opcode != Opcode::kCompare || b->operands.size() != 2) return false;
  const AttrRecord* dir = b->Find(AttrId::kDirection);
  return dir && dir->i() == static_cast<int64_t>(d);
}

// What a comparator operand is: parameter `param` itself, or JAX's canonicalisation of it,
// select(ne(p, p), NAN, select(eq(p, Z), Z, p)) with NAN and Z scalar constants (4 bundles).
struct KeyRef {
  int64_t param = -1;
  bool canonical = false;
  uint64_t nan_bits = 0, zero_bits = 0;
  size_t bundles = 0;
};

class ComparatorMatcher {
 public:
  ComparatorMatcher(const BundleProgram& p, const ComputationRecord& f) : p_(p), f_(f), x_(IndexOf(f)) {}

  const Indexed& indexed() const { return x_; }

  KeyRef Match(uint32_t buffer) const {
    KeyRef none, k;
    for (size_t i = 0; i < f_.params.size(); ++i)
      if (f_.params[i] == buffer) {
        k.param = static_cast<int64_t>(i);
        return k;
      }
    if (buffer >= f_.buffers.size()) return none;
    PrimitiveType t = f_.buffers[buffer].type;
    const BundleRecord* outer = x_.producer[buffer];
    if (!IsFloat(t) || !IsScalarOf(f_.buffers[buffer], t) || !IsSelect(outer)) return none;
    const BundleRecord* ne = Producer(outer->operands[0]);
    const BundleRecord* inner = Producer(outer->operands[2]);
    if (!IsCompare(ne, ComparisonDirection::kNe) || !PlainCompare(*ne) || !IsSelect(inner)) return none;
    uint32_t param = ne->operands[0];
    if (ne->operands[1] != param || inner->operands[2] != param) return none;
    const BundleRecord* eq = Producer(inner->operands[0]);
    if (!IsCompare(eq, ComparisonDirection::kEq) || !PlainCompare(*eq)) return none;
    uint32_t zero = eq->operands[0] == param ? eq->operands[1] : eq->operands[0];
    if ((eq->operands[0] != param && eq->operands[1] != param) || zero == param) return none;
    auto nan_bits = ConstantBits(outer->operands[1], t);
    auto eq_bits = ConstantBits(zero, t);
    auto zero_bits = ConstantBits(inner->operands[1], t);
    if (!nan_bits.first || !eq_bits.first || !zero_bits.first || eq_bits.second != zero_bits.second) return none;
    for (size_t i = 0; i < f_.params.size(); ++i)
      if (f_.params[i] == param) k.param = static_cast<int64_t>(i);
    if (k.param < 0 || !IsScalarOf(f_.buffers[param], t)) return none;
    k.canonical = true;
    k.nan_bits = nan_bits.second;
    k.zero_bits = zero_bits.second;
    k.bundles = 4;
    return k;
  }

 private:
  const BundleRecord* Producer(uint32_t buffer) const {
    return buffer < x_.producer.size() ? x_.producer[buffer] : nullptr;
  }
  static bool IsSelect(const BundleRecord* b) { return b && b->opcode == Opcode::kSelect && b->operands.size() == 3; }
  // The bits of a scalar constant of type t.
  std::pair<bool, uint64_t> ConstantBits(uint32_t buffer, PrimitiveType t) const {
    if (buffer >= f_.buffers.size()) return {false, 0};
    const BufferRecord& b = f_.buffers[buffer];
    if (b.kind != BufferKind::kConstant || !IsScalarOf(b, t)) return {false, 0};
    std::string bytes = UnpackConstant(p_, b);
    if (bytes.size() != static_cast<size_t>(HostByteSize(t))) return {false, 0};
    return {true, LoadBits(t, reinterpret_cast<const uint8_t*>(bytes.data()))};
  }

  const BundleProgram& p_;
  const ComputationRecord& f_;
  Indexed x_;
};

// compare(key(p[2k]), key(p[2k+1])) LT or GT, the other parameters unused.
CalleePattern SortPattern(const BundleProgram& prog, const ComputationRecord& f) {
  CalleePattern none, p;
  if (f.params.empty() || f.params.size() % 2 != 0 || f.root >= f.buffers.size()) return none;
  ComparatorMatcher m(prog, f);
  const BundleRecord* root = m.indexed().producer[f.root];
  bool lt = IsCompare(root, ComparisonDirection::kLt), gt = IsCompare(root, ComparisonDirection::kGt);
  if (!lt && !gt) return none;
  KeyRef a = m.Match(root->operands[0]), b = m.Match(root->operands[1]);
  if (a.param < 0 || b.param < 0 || a.canonical != b.canonical || a.nan_bits != b.nan_bits ||
      a.zero_bits != b.zero_bits || m.indexed().body != 1 + a.bundles + b.bundles || a.param / 2 != b.param / 2 ||
      a.param == b.param)
    return none;
  PrimitiveType t = f.buffers[f.params[a.param]].type;
  if (!NativeScalarType(t) || !IsScalarOf(f.buffers[f.params[b.param]], t)) return none;
  const AttrRecord* type = root->Find(AttrId::kType);
  p.compare_known = true;
  p.total_order = IsFloat(t) && type && type->i() == static_cast<int64_t>(ComparisonType::kTotalOrder);
  p.descending = (a.param % 2 == 0) == gt;  // compare(p1, p0) LT is descending
  p.canonical = a.canonical;
  p.nan_bits = a.nan_bits;
  p.zero_bits = a.zero_bits;
  p.key_operand = static_cast<uint32_t>(a.param / 2);
  return p;
}

// JAX's argmax/argmin reducer of (v0, i0, v1, i1) -> (v, i):
//   keep = or(compare(v0, v1) GT|LT, compare(v0, v0) NE)
//   v = select(keep, v0, v1); i = select(or(keep, and(compare(v0, v1) EQ, compare(i0, i1) LT)), i0, i1)
// (the operands of or and and in either order; every compare plain).
CalleePattern ArgReducePattern(const ComputationRecord& f, PrimitiveType vt, PrimitiveType it) {
  CalleePattern none, p;
  if (f.params.size() != 4 || !NativeScalarType(vt) || !IsInteger(it) || f.root >= f.buffers.size()) return none;
  const PrimitiveType types[4] = {vt, it, vt, it};
  for (size_t i = 0; i < 4; ++i)
    if (f.params[i] >= f.buffers.size() || !IsScalarOf(f.buffers[f.params[i]], types[i])) return none;
  uint32_t v0 = f.params[0], i0 = f.params[1], v1 = f.params[2], i1 = f.params[3];
  Indexed x = IndexOf(f);
  auto producer = [&](uint32_t buffer) { return buffer < x.producer.size() ? x.producer[buffer] : nullptr; };
  auto is = [&](uint32_t buffer, Opcode op, size_t operands) {
    const BundleRecord* b = producer(buffer);
    return b && b->opcode == op && b->operands.size() == operands ? b : nullptr;
  };
  auto compare_of = [&](uint32_t buffer, ComparisonDirection d, uint32_t lhs, uint32_t rhs) {
    const BundleRecord* b = producer(buffer);
    return IsCompare(b, d) && PlainCompare(*b) && b->operands[0] == lhs && b->operands[1] == rhs;
  };
  // either(b, f): f(b->operands[0], b->operands[1]) or f(b->operands[1], b->operands[0]).
  auto either = [](const BundleRecord* b, auto&& match) {
    return match(b->operands[0], b->operands[1]) || match(b->operands[1], b->operands[0]);
  };
  const BundleRecord* root = producer(f.root);
  const BufferRecord& rb = f.buffers[f.root];
  if (!root || root->opcode != Opcode::kTuple || root->operands.size() != 2 || rb.type != PrimitiveType::kTuple ||
      rb.tuple.size() != 2 || x.body != 10)
    return none;
  const BundleRecord* sv = is(root->operands[0], Opcode::kSelect, 3);
  const BundleRecord* si = is(root->operands[1], Opcode::kSelect, 3);
  if (!sv || !si || sv->operands[1] != v0 || sv->operands[2] != v1 || si->operands[1] != i0 || si->operands[2] != i1)
    return none;
  uint32_t keep = sv->operands[0];
  const BundleRecord* keep_or = is(keep, Opcode::kOr, 2);
  const BundleRecord* index_or = is(si->operands[0], Opcode::kOr, 2);
  if (!keep_or || !index_or) return none;
  for (ComparisonDirection d : {ComparisonDirection::kGt, ComparisonDirection::kLt}) {
    bool keep_ok = either(keep_or, [&](uint32_t a, uint32_t b) {
      return compare_of(a, d, v0, v1) && compare_of(b, ComparisonDirection::kNe, v0, v0);
    });
    bool index_ok = either(index_or, [&](uint32_t a, uint32_t b) {
      const BundleRecord* tie = a == keep ? is(b, Opcode::kAnd, 2) : nullptr;
      return tie && either(tie, [&](uint32_t e, uint32_t l) {
               return compare_of(e, ComparisonDirection::kEq, v0, v1) &&
                      compare_of(l, ComparisonDirection::kLt, i0, i1);
             });
    });
    if (keep_ok && index_ok) {
      p.arg_reduce = true;
      p.direction = static_cast<uint8_t>(d);
      return p;
    }
  }
  return none;
}

// select-and-scatter's select: root = compare(p0, p1) (or compare(p1, p0), direction mirrored).
CalleePattern SelectPattern(const ComputationRecord& f, PrimitiveType t) {
  CalleePattern none, p;
  if (f.params.size() != 2 || f.root >= f.buffers.size() || !NativeScalarType(t)) return none;
  for (uint32_t param : f.params)
    if (param >= f.buffers.size() || !IsScalarOf(f.buffers[param], t)) return none;
  Indexed x = IndexOf(f);
  const BundleRecord* root = x.producer[f.root];
  if (x.body != 1 || !root || root->opcode != Opcode::kCompare || root->operands.size() != 2) return none;
  const AttrRecord* dir = root->Find(AttrId::kDirection);
  if (!dir || dir->i() < 0 || dir->i() > static_cast<int64_t>(ComparisonDirection::kLt)) return none;
  auto d = static_cast<ComparisonDirection>(dir->i());
  if (root->operands[0] == f.params[1] && root->operands[1] == f.params[0]) {
    switch (d) {
      case ComparisonDirection::kEq:
      case ComparisonDirection::kNe: break;
      case ComparisonDirection::kGe: d = ComparisonDirection::kLe; break;
      case ComparisonDirection::kGt: d = ComparisonDirection::kLt; break;
      case ComparisonDirection::kLe: d = ComparisonDirection::kGe; break;
      case ComparisonDirection::kLt: d = ComparisonDirection::kGt; break;
    }
  } else if (root->operands[0] != f.params[0] || root->operands[1] != f.params[1]) {
    return none;
  }
  const AttrRecord* type = root->Find(AttrId::kType);
  p.compare_known = true;
  p.direction = static_cast<uint8_t>(d);
  p.total_order = IsFloat(t) && type && type->i() == static_cast<int64_t>(ComparisonType::kTotalOrder);
  return p;
}

}  // namespace

const ComputationRecord* Called(const BundleProgram& p, const Step& s, AttrId id) {
  const AttrRecord* a = s.Find(id);
  if (!a || a->computations().empty() || a->computations()[0] >= p.computations.size()) return nullptr;
  return &p.computations[a->computations()[0]];
}

Opcode ScalarOpcode(ScalarOp op) {
  for (auto [opcode, scalar] : kScalarOps)
    if (scalar == op) return opcode;
  return Opcode::kAdd;  // not reached for a recognised op
}

void LowerCalleePattern(const BundleProgram& p, const ComputationRecord& comp, Step& s) {
  const BundleRecord& b = *s.bundle;
  auto type_of = [&](size_t operand) {
    return operand < b.operands.size() && b.operands[operand] < comp.buffers.size()
               ? comp.buffers[b.operands[operand]].type
               : PrimitiveType::kInvalid;
  };
  const ComputationRecord* f = Called(p, s, AttrId::kToApply);
  switch (s.family) {
    case OpFamily::kReduce:
      if (f && b.operands.size() == 4) s.pattern = ArgReducePattern(*f, type_of(0), type_of(1));
      [[fallthrough]];
    case OpFamily::kReduceWindow:  // one input and its init
      if (f && b.operands.size() == 2) s.pattern = BinaryPattern(*f, type_of(0));
      return;
    case OpFamily::kCollective:  // all-reduce, reduce-scatter: the reducer, applied per operand
      if (f && !b.operands.empty()) s.pattern = BinaryPattern(*f, type_of(0));
      return;
    case OpFamily::kScatter:  // one input, indices, one update
      if (f && b.operands.size() == 3) s.pattern = BinaryPattern(*f, type_of(0));
      return;
    case OpFamily::kMap:
      if (f && b.operands.size() == 2 && type_of(0) == type_of(1)) s.pattern = BinaryPattern(*f, type_of(0));
      return;
    case OpFamily::kSort:
      if (f) s.pattern = SortPattern(p, *f);
      return;
    case OpFamily::kSelectAndScatter: {
      const ComputationRecord* select = Called(p, s, AttrId::kSelect);
      const ComputationRecord* scatter = Called(p, s, AttrId::kScatter);
      if (!select || !scatter || b.operands.size() != 3) return;
      CalleePattern sel = SelectPattern(*select, type_of(0));
      s.pattern = BinaryPattern(*scatter, type_of(0));
      s.pattern.compare_known = sel.compare_known;
      s.pattern.direction = sel.direction;
      s.pattern.total_order = sel.total_order;
      return;
    }
    case OpFamily::kNotExecutable:
    case OpFamily::kBound:
    case OpFamily::kTuple:
    case OpFamily::kGetTupleElement:
    case OpFamily::kAfterAll:
    case OpFamily::kAddDependency:
    case OpFamily::kCopy:
    case OpFamily::kTupleResult:
    case OpFamily::kCall:
    case OpFamily::kFusion:
    case OpFamily::kWhile:
    case OpFamily::kConditional:
    case OpFamily::kScan:
    case OpFamily::kUnary:
    case OpFamily::kBinary:
    case OpFamily::kCompare:
    case OpFamily::kSelect:
    case OpFamily::kClamp:
    case OpFamily::kConvert:
    case OpFamily::kBitcastConvert:
    case OpFamily::kBroadcast:
    case OpFamily::kReshape:
    case OpFamily::kTranspose:
    case OpFamily::kIota:
    case OpFamily::kSlice:
    case OpFamily::kConcatenate:
    case OpFamily::kPad:
    case OpFamily::kReverse:
    case OpFamily::kDynamicSlice:
    case OpFamily::kDynamicUpdateSlice:
    case OpFamily::kDot:
    case OpFamily::kGather:
    case OpFamily::kConvolution:
    case OpFamily::kScaledDot:
    case OpFamily::kRaggedDot:
    case OpFamily::kReducePrecision:
    case OpFamily::kRng:
    case OpFamily::kCholesky:
    case OpFamily::kTriangularSolve:
    case OpFamily::kFft:
    case OpFamily::kRngState:
    case OpFamily::kDynamicShape:
    case OpFamily::kTransferIn:
    case OpFamily::kTransferOut:
    case OpFamily::kSend:
    case OpFamily::kRecvDone:
    case OpFamily::kStochasticConvert:
    case OpFamily::kAsyncStart:
    case OpFamily::kAsyncUpdate:
    case OpFamily::kAsyncDone:
    case OpFamily::kCopyStart:
    case OpFamily::kCopyDone: return;
  }
}

}  // namespace nhlo
