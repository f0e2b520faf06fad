// SPDX-License-Identifier: Apache-2.0
#include "ir/shape_inference.h"

#include <algorithm>

namespace nhlo {
namespace {

Inference Inferred(Shape s) { return Inference{InferOutcome::kInferred, s, {}}; }
Inference Error(std::string message) { return Inference{InferOutcome::kError, {}, std::move(message)}; }
Inference NotInferable() { return Inference{}; }

std::string Str(const Shape& s) { return ShapeToString(s, false); }

const Attribute* Attr(const Instruction& inst, AttrId id) { return inst.FindAttr(id); }

bool SameDims(const Shape& a, const Shape& b) {
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i] != b.dims[i] || a.IsDynamicDim(i) != b.IsDynamicDim(i)) return false;
  return true;
}

Shape WithType(const Shape& s, PrimitiveType t) {
  Shape out = s;
  out.type = t;
  return out;
}

PrimitiveType ComplexComponent(PrimitiveType t) {
  return t == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

Inference InferUnary(const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray()) return Error("operand of '" + std::string(OpcodeName(inst.opcode)) + "' must be an array, got " + Str(x));
  switch (inst.opcode) {
    case Opcode::kIsFinite:
      if (!IsFloat(x.type)) return Error("is-finite needs a floating-point operand, got " + Str(x));
      return Inferred(WithType(x, PrimitiveType::kPred));
    case Opcode::kReal:
    case Opcode::kImag:
      return Inferred(IsComplex(x.type) ? WithType(x, ComplexComponent(x.type)) : x);
    case Opcode::kAbs:
      return Inferred(IsComplex(x.type) ? WithType(x, ComplexComponent(x.type)) : x);
    case Opcode::kNot:
      if (IsFloat(x.type) || IsComplex(x.type)) return Error("not needs an integer or pred operand, got " + Str(x));
      return Inferred(x);
    case Opcode::kClz:
    case Opcode::kPopulationCount:
      if (!IsInteger(x.type)) return Error(std::string(OpcodeName(inst.opcode)) + " needs an integer operand, got " + Str(x));
      return Inferred(x);
    default:
      return Inferred(x);
  }
}

Inference InferBinary(Module& m, const Instruction& inst) {
  const Shape& a = inst.operands[0]->shape;
  const Shape& b = inst.operands[1]->shape;
  std::string op(OpcodeName(inst.opcode));
  if (!a.IsArray() || !b.IsArray())
    return Error("operands of '" + op + "' must be arrays, got " + Str(a) + " and " + Str(b));
  if (!SameDims(a, b))
    return Error("operands of '" + op + "' have different dimensions: " + Str(a) + " and " + Str(b));
  if (inst.opcode == Opcode::kComplex) {
    if (a.type != b.type || (a.type != PrimitiveType::kF32 && a.type != PrimitiveType::kF64))
      return Error("complex needs two f32 or two f64 operands, got " + Str(a) + " and " + Str(b));
    return Inferred(WithType(a, a.type == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128));
  }
  if (a.type != b.type)
    return Error("operands of '" + op + "' have different element types: " + Str(a) + " and " + Str(b));
  if (inst.opcode == Opcode::kCompare) return Inferred(WithType(a, PrimitiveType::kPred));
  (void)m;
  return Inferred(a);
}

Inference InferDot(Module& m, const Instruction& inst) {
  const Shape& lhs = inst.operands[0]->shape;
  const Shape& rhs = inst.operands[1]->shape;
  if (!lhs.IsArray() || !rhs.IsArray()) return Error("operands of 'dot' must be arrays");
  auto list = [&](AttrId id) {
    std::vector<int64_t> v;
    if (const Attribute* a = Attr(inst, id); a && a->kind == AttrKind::IntList) v.assign(a->ints.begin(), a->ints.end());
    return v;
  };
  std::vector<int64_t> lb = list(AttrId::kLhsBatchDims), lc = list(AttrId::kLhsContractingDims);
  std::vector<int64_t> rb = list(AttrId::kRhsBatchDims), rc = list(AttrId::kRhsContractingDims);
  if (lb.size() != rb.size()) return Error("dot has " + std::to_string(lb.size()) + " lhs batch dims but " + std::to_string(rb.size()) + " rhs batch dims");
  if (lc.size() != rc.size()) return Error("dot has " + std::to_string(lc.size()) + " lhs contracting dims but " + std::to_string(rc.size()) + " rhs contracting dims");
  auto check = [&](const std::vector<int64_t>& dims, const Shape& s, const char* what, std::vector<bool>& used) -> std::string {
    for (int64_t d : dims) {
      if (d < 0 || d >= static_cast<int64_t>(s.rank())) return std::string(what) + " dimension " + std::to_string(d) + " is out of range for " + Str(s);
      if (used[d]) return std::string(what) + " dimension " + std::to_string(d) + " is used twice";
      used[d] = true;
    }
    return {};
  };
  std::vector<bool> lused(lhs.rank(), false), rused(rhs.rank(), false);
  for (auto [dims, s, what, used] : {std::tuple{&lb, &lhs, "lhs batch", &lused}, std::tuple{&lc, &lhs, "lhs contracting", &lused},
                                     std::tuple{&rb, &rhs, "rhs batch", &rused}, std::tuple{&rc, &rhs, "rhs contracting", &rused}}) {
    std::string e = check(*dims, *s, what, *used);
    if (!e.empty()) return Error("dot: " + e);
  }
  for (size_t i = 0; i < lb.size(); ++i)
    if (lhs.dims[lb[i]] != rhs.dims[rb[i]])
      return Error("dot batch dimension sizes differ: lhs dim " + std::to_string(lb[i]) + " is " + std::to_string(lhs.dims[lb[i]]) +
                   ", rhs dim " + std::to_string(rb[i]) + " is " + std::to_string(rhs.dims[rb[i]]));
  for (size_t i = 0; i < lc.size(); ++i)
    if (lhs.dims[lc[i]] != rhs.dims[rc[i]])
      return Error("dot contracting dimension sizes differ: lhs dim " + std::to_string(lc[i]) + " is " + std::to_string(lhs.dims[lc[i]]) +
                   ", rhs dim " + std::to_string(rc[i]) + " is " + std::to_string(rhs.dims[rc[i]]));
  std::vector<int64_t> dims;
  for (int64_t d : lb) dims.push_back(lhs.dims[d]);
  for (size_t d = 0; d < lhs.rank(); ++d)
    if (!lused[d]) dims.push_back(lhs.dims[d]);
  for (size_t d = 0; d < rhs.rank(); ++d)
    if (!rused[d]) dims.push_back(rhs.dims[d]);
  // The element type of a dot's result is not derivable (XLA allows a wider accumulator), so
  // the operand type is the guess when the text omits the shape.
  if (lhs.type != rhs.type && inst.shape.type == PrimitiveType::kInvalid)
    return Error("dot operands have different element types; write the result shape");
  PrimitiveType type = inst.shape.type != PrimitiveType::kInvalid ? inst.shape.type : lhs.type;
  return Inferred(m.MakeArrayShape(type, dims));
}

}  // namespace

Inference InferShape(Module& m, const Instruction& inst) {
  int arity = OpcodeArity(inst.opcode);
  if (arity >= 0 && static_cast<int>(inst.operands.size()) != arity)
    return Error("'" + std::string(OpcodeName(inst.opcode)) + "' takes " + std::to_string(arity) + " operand" +
                 (arity == 1 ? "" : "s") + ", got " + std::to_string(inst.operands.size()));
  if (IsElementwiseUnary(inst.opcode)) return InferUnary(inst);
  if (IsElementwiseBinary(inst.opcode) || inst.opcode == Opcode::kCompare) return InferBinary(m, inst);
  switch (inst.opcode) {
    case Opcode::kSelect: {
      const Shape& p = inst.operands[0]->shape;
      const Shape& t = inst.operands[1]->shape;
      const Shape& f = inst.operands[2]->shape;
      if (p.type != PrimitiveType::kPred) return Error("select predicate must be pred, got " + Str(p));
      if (!SameShape(t, f)) return Error("select branches differ: " + Str(t) + " and " + Str(f));
      if (!p.IsScalar() && !SameDims(p, t))
        return Error("select predicate " + Str(p) + " does not match the branches " + Str(t));
      return Inferred(t);
    }
    case Opcode::kClamp: {
      const Shape& lo = inst.operands[0]->shape;
      const Shape& x = inst.operands[1]->shape;
      const Shape& hi = inst.operands[2]->shape;
      for (const Shape* bound : {&lo, &hi})
        if (bound->type != x.type || (!bound->IsScalar() && !SameDims(*bound, x)))
          return Error("clamp bound " + Str(*bound) + " does not match the operand " + Str(x));
      return Inferred(x);
    }
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* op : inst.operands) elements.push_back(op->shape);
      return Inferred(m.MakeTupleShape(elements));
    }
    case Opcode::kGetTupleElement: {
      const Shape& t = inst.operands[0]->shape;
      const Attribute* index = Attr(inst, AttrId::kIndex);
      if (!index) return Error("get-tuple-element needs index=");
      if (!t.IsTuple()) return Error("get-tuple-element operand must be a tuple, got " + Str(t));
      if (index->i < 0 || index->i >= static_cast<int64_t>(t.tuple.size()))
        return Error("tuple index " + std::to_string(index->i) + " is out of range for " + Str(t));
      return Inferred(t.tuple[index->i]);
    }
    case Opcode::kTranspose: {
      const Shape& x = inst.operands[0]->shape;
      const Attribute* perm = Attr(inst, AttrId::kDimensions);
      if (!perm || perm->kind != AttrKind::IntList) return Error("transpose needs dimensions=");
      if (perm->ints.size() != x.rank())
        return Error("transpose dimensions has " + std::to_string(perm->ints.size()) + " entries for an operand of rank " + std::to_string(x.rank()));
      std::vector<bool> seen(x.rank(), false);
      std::vector<int64_t> dims;
      for (int64_t d : perm->ints) {
        if (d < 0 || d >= static_cast<int64_t>(x.rank()) || seen[d]) return Error("transpose dimensions is not a permutation");
        seen[d] = true;
        dims.push_back(x.dims[d]);
      }
      return Inferred(m.MakeArrayShape(x.type, dims));
    }
    case Opcode::kDot:
      return InferDot(m, inst);
    case Opcode::kAfterAll:
      return Inferred(m.MakeArrayShape(PrimitiveType::kToken, {}));
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      return Inferred(m.MakeArrayShape(PrimitiveType::kU32, {}));
    default:
      return NotInferable();
  }
}

}  // namespace nhlo
