// SPDX-License-Identifier: Apache-2.0
// Builds the computation a custom call expands into (ir/expanded_calls.h), one instruction at a
// time, as XLA's XlaBuilder would emit it: the call's operands become parameters, and each helper
// appends one instruction with its shape and attributes set. The computation is implied (never
// printed) and every instruction in it points at the call's source line.
#pragma once

#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"

namespace nhlo {

/// An array shape's dimensions as a vector.
inline std::vector<int64_t> ShapeDims(const Shape& s) { return {s.dims.begin(), s.dims.end()}; }
/// An array whose dimensions are all static: the only operands the expansions take.
inline bool IsStaticArray(const Shape& s) { return s.IsArray() && s.dim_kinds.empty(); }

class ExpansionBuilder {
 public:
  /// A new implied computation `<call>.<suffix>` (made unique) in `module`.
  static Computation* NewComputation(Module& module, const Instruction& call, const std::string& suffix) {
    std::string base = std::string(call.name) + "." + suffix;
    std::string_view name = module.arena.CopyString(base);
    for (int i = 1; module.FindComputation(name); ++i) name = module.arena.CopyString(base + "." + std::to_string(i));
    Computation* comp = module.AddComputation(name);
    comp->implied = true;
    return comp;
  }

  ExpansionBuilder(Module& module, const Instruction& call, Computation* comp) : m_(module), call_(call), comp_(comp) {}

  Module& module() { return m_; }
  Computation* computation() { return comp_; }

  /// Parameter `i`, of the call's operand i's shape.
  Instruction* Parameter(size_t i, const char* name) {
    Instruction* p = m_.NewInstruction(comp_, Opcode::kParameter, call_.operands[i]->shape, {}, name);
    p->parameter_number = static_cast<int64_t>(i);
    return p;
  }

  /// `x` converted to `type`; `x` itself when it has that type (XlaBuilder adds nothing then).
  Instruction* Convert(Instruction* x, PrimitiveType type) {
    if (x->shape.type == type) return x;
    return MakeConvert(m_, comp_, x, m_.MakeArrayShape(type, Dims(x)));
  }

  /// An instruction of an array result `type[dims]`.
  Instruction* Array(Opcode op, PrimitiveType type, const std::vector<int64_t>& dims,
                     const std::vector<Instruction*>& operands) {
    return m_.NewInstruction(comp_, op, m_.MakeArrayShape(type, dims), operands);
  }

  /// An elementwise op of operands of one shape, giving that shape.
  Instruction* Elementwise(Opcode op, const std::vector<Instruction*>& operands) {
    return Array(op, operands[0]->shape.type, Dims(operands[0]), operands);
  }

  /// The scalar `value` of `type`, broadcast to `like`'s dimensions.
  Instruction* Splat(double value, PrimitiveType type, const Instruction* like) {
    Instruction* c = MakeScalarConstant(m_, comp_, type, value);
    if (like->shape.rank() == 0) return c;
    return MakeBroadcast(m_, comp_, c, m_.MakeArrayShape(type, Dims(like)), {});
  }

  Instruction* Broadcast(Instruction* x, const std::vector<int64_t>& dims, const std::vector<int64_t>& mapped) {
    return MakeBroadcast(m_, comp_, x, m_.MakeArrayShape(x->shape.type, dims), mapped);
  }

  Instruction* Slice(Instruction* x, const std::vector<SliceDim>& ranges) {
    std::vector<int64_t> dims;
    for (const SliceDim& r : ranges) dims.push_back((r.limit - r.start + r.stride - 1) / r.stride);
    Instruction* cut = Array(Opcode::kSlice, x->shape.type, dims, {x});
    Attribute a;
    a.id = AttrId::kSlice;
    a.kind = AttrKind::SliceRanges;
    a.slices = m_.arena.Copy(ranges);
    SetAttr(m_, cut, a);
    return cut;
  }

  Instruction* Dot(Instruction* lhs, Instruction* rhs, PrimitiveType type, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& lhs_batch, const std::vector<int64_t>& lhs_contracting,
                   const std::vector<int64_t>& rhs_batch, const std::vector<int64_t>& rhs_contracting) {
    Instruction* dot = Array(Opcode::kDot, type, dims, {lhs, rhs});
    if (!lhs_batch.empty()) SetAttr(m_, dot, IntListAttr(m_, AttrId::kLhsBatchDims, lhs_batch));
    SetAttr(m_, dot, IntListAttr(m_, AttrId::kLhsContractingDims, lhs_contracting));
    if (!rhs_batch.empty()) SetAttr(m_, dot, IntListAttr(m_, AttrId::kRhsBatchDims, rhs_batch));
    SetAttr(m_, dot, IntListAttr(m_, AttrId::kRhsContractingDims, rhs_contracting));
    return dot;
  }

  Instruction* Reduce(Instruction* x, Instruction* init, int64_t dim, Computation* reducer) {
    std::vector<int64_t> dims = Dims(x);
    dims.erase(dims.begin() + dim);
    Instruction* r = Array(Opcode::kReduce, x->shape.type, dims, {x, init});
    SetAttr(m_, r, IntListAttr(m_, AttrId::kDimensions, {dim}));
    SetAttr(m_, r, ComputationAttr(AttrId::kToApply, reducer));
    return r;
  }

  /// op(a, b) over scalars of `type` (add, maximum), a reducer the expansion calls.
  Computation* BinaryReducer(Opcode op, PrimitiveType type) {
    Computation* comp = NewComputation(m_, call_, std::string(OpcodeName(op)));
    const Shape scalar = m_.MakeArrayShape(type, {});
    Instruction* a = m_.NewInstruction(comp, Opcode::kParameter, scalar, {}, "a");
    a->parameter_number = 0;
    Instruction* b = m_.NewInstruction(comp, Opcode::kParameter, scalar, {}, "b");
    b->parameter_number = 1;
    comp->root = m_.NewInstruction(comp, op, scalar, {a, b});
    callees_.push_back(comp);
    return comp;
  }

  /// An s32 iota of `dims` counting along `dim`.
  Instruction* Iota(const std::vector<int64_t>& dims, int64_t dim) {
    Instruction* iota = Array(Opcode::kIota, PrimitiveType::kS32, dims, {});
    Attribute a;
    a.id = AttrId::kIotaDimension;
    a.kind = AttrKind::Int;
    a.i = dim;
    SetAttr(m_, iota, a);
    return iota;
  }

  /// max(|a|, |b|) over scalars of `type` (XLA's BuildQuantize reducer; from 0 it gives max |x|), a
  /// computation the expansion calls: Finish lists it before the expansion.
  Computation* AbsMaxReducer(PrimitiveType type) {
    Computation* comp = NewComputation(m_, call_, "amax");
    const Shape scalar = m_.MakeArrayShape(type, {});
    Instruction* a = m_.NewInstruction(comp, Opcode::kParameter, scalar, {}, "a");
    a->parameter_number = 0;
    Instruction* b = m_.NewInstruction(comp, Opcode::kParameter, scalar, {}, "b");
    b->parameter_number = 1;
    Instruction* abs_a = m_.NewInstruction(comp, Opcode::kAbs, scalar, {a});
    Instruction* abs_b = m_.NewInstruction(comp, Opcode::kAbs, scalar, {b});
    comp->root = m_.NewInstruction(comp, Opcode::kMaximum, scalar, {abs_a, abs_b});
    callees_.push_back(comp);
    return comp;
  }

  /// `a direction b` elementwise (operands of one shape), a pred array.
  Instruction* Compare(Instruction* a, Instruction* b, ComparisonDirection direction) {
    Instruction* cmp = Array(Opcode::kCompare, PrimitiveType::kPred, Dims(a), {a, b});
    SetDirection(cmp, direction);
    return cmp;
  }

  /// A sort comparator over scalars of `types` (each twice: lhs_i, rhs_i) that compares operand 0's
  /// pair in `direction`, by XLA's total order for floats when `total_order` (-NaN < -inf < -0 <
  /// +0 < inf < +NaN, NaNs by their bits); a computation the expansion calls.
  Computation* SortComparator(const std::vector<PrimitiveType>& types, ComparisonDirection direction,
                              bool total_order) {
    Computation* comp = NewComputation(m_, call_, "compare");
    std::vector<Instruction*> params;
    for (size_t i = 0; i < 2 * types.size(); ++i) {
      Instruction* p =
          m_.NewInstruction(comp, Opcode::kParameter, m_.MakeArrayShape(types[i / 2], {}), {}, i % 2 ? "rhs" : "lhs");
      p->parameter_number = static_cast<int64_t>(i);
      params.push_back(p);
    }
    Instruction* cmp =
        m_.NewInstruction(comp, Opcode::kCompare, m_.MakeArrayShape(PrimitiveType::kPred, {}), {params[0], params[1]});
    SetDirection(cmp, direction);
    if (total_order) {
      Attribute type;
      type.id = AttrId::kType;
      type.kind = AttrKind::Enum;
      type.i = static_cast<int64_t>(ComparisonType::kTotalOrder);
      SetAttr(m_, cmp, type);
    }
    comp->root = cmp;
    callees_.push_back(comp);
    return comp;
  }

  /// A stable sort of `operands` (arrays of one shape) along `dim` by `comparator`: an array for one
  /// operand, a tuple of their sorted copies for more.
  Instruction* StableSort(const std::vector<Instruction*>& operands, int64_t dim, Computation* comparator) {
    std::vector<Shape> shapes;
    for (const Instruction* op : operands) shapes.push_back(op->shape);
    const Shape shape = operands.size() == 1 ? shapes[0] : m_.MakeTupleShape(shapes);
    Instruction* sort = m_.NewInstruction(comp_, Opcode::kSort, shape, operands);
    SetAttr(m_, sort, IntListAttr(m_, AttrId::kDimensions, {dim}));
    Attribute stable;
    stable.id = AttrId::kIsStable;
    stable.kind = AttrKind::Bool;
    stable.b = true;
    SetAttr(m_, sort, stable);
    SetAttr(m_, sort, ComputationAttr(AttrId::kToApply, comparator));
    return sort;
  }

  Attribute ComputationAttr(AttrId id, Computation* callee) {
    Attribute a;
    a.id = id;
    a.kind = AttrKind::Computation;
    Computation* list[1] = {callee};
    a.computations = m_.arena.Copy(list, 1);
    return a;
  }

  /// Makes `root` (given the call's result shape, layout included) the computation's root,
  /// appends the computations made to `added` (callees first) and points every instruction in them
  /// at the call's source.
  void Finish(Instruction* root, std::vector<Computation*>& added) {
    root->shape = call_.shape;
    comp_->root = root;
    std::vector<Computation*> made = callees_;
    made.push_back(comp_);
    for (Computation* c : made)
      for (Instruction* inst : c->instructions) {
        inst->source_offset = call_.source_offset;
        inst->source_id = call_.source_id;
      }
    added.insert(added.end(), made.begin(), made.end());
  }

  static std::vector<int64_t> Dims(const Instruction* x) { return {x->shape.dims.begin(), x->shape.dims.end()}; }

 private:
  void SetDirection(Instruction* cmp, ComparisonDirection direction) {
    Attribute d;
    d.id = AttrId::kDirection;
    d.kind = AttrKind::Enum;
    d.i = static_cast<int64_t>(direction);
    SetAttr(m_, cmp, d);
  }

  Module& m_;
  const Instruction& call_;
  Computation* comp_;
  std::vector<Computation*> callees_;
};

}  // namespace nhlo
