// SPDX-License-Identifier: Apache-2.0
// Shape rules of control flow (call, while, conditional, fusion, async), collectives, channels
// and I/O, and the opcodes whose result is one of their operands.
#include "ir/shape_inference_internal.h"
#include "ir/verifier.h"

namespace nhlo::infer {
namespace {

bool IsToken(const Shape& s) { return s.type == PrimitiveType::kToken; }

// Operand i against parameter i of `c`, as for call and fusion. Empty if all match.
std::string CheckArguments(const Instruction& inst, const Computation& c) {
  Signature sig = SignatureOf(c);
  if (sig.params.size() != inst.operands.size())
    return Op(inst) + " has " + Count(inst.operands.size(), "operand") + " but computation " + Describe(c) + " takes " +
           Num(sig.params.size());
  for (size_t i = 0; i < sig.params.size(); ++i)
    if (sig.params[i] && !Compatible(*sig.params[i], inst.operands[i]->shape))
      return Op(inst) + " operand " + Num(i) + " is " + Str(inst.operands[i]->shape) + " but computation " +
             Describe(c) + " takes " + Str(*sig.params[i]);
  return {};
}

// A computation called with one argument of shape `arg` (while, conditional branches).
std::string CheckSingleParameter(const std::string& what, const Computation& c, const Shape& arg) {
  Signature sig = SignatureOf(c);
  if (sig.params.size() != 1)
    return what + " " + Describe(c) + " must take 1 parameter, it takes " + Num(sig.params.size());
  if (sig.params[0] && !Compatible(*sig.params[0], arg))
    return what + " " + Describe(c) + " takes " + Str(*sig.params[0]) + " but is given " + Str(arg);
  return {};
}

Shape TupleOrSingle(Module& m, const Instruction& inst) {
  if (inst.operands.size() == 1) return inst.operands[0]->shape;
  std::vector<Shape> elements;
  for (const Instruction* op : inst.operands) elements.push_back(op->shape);
  return m.MakeTupleShape(elements);
}

std::string CheckArrays(const Instruction& inst) {
  for (const Instruction* op : inst.operands)
    if (!op->shape.IsArray()) return Op(inst) + " operands must be arrays, got " + Str(op->shape);
  return {};
}

// lenient: collectives' reduction computations are only checked for taking two parameters;
// XLA's importer tests use one returning a one-element tuple.
std::string CheckCollectiveReducer(const Instruction& inst) {
  const Computation* f = Called(inst, AttrId::kToApply);
  if (!f) return Op(inst) + " needs to_apply=";
  Signature sig = SignatureOf(*f);
  if (sig.params.size() != 2) return Op(inst) + " computation " + Describe(*f) + " must take 2 parameters";
  return {};
}

// The result of a *-done: the second element of a (operand, result, ...) start tuple, or the
// start's own shape when it is an array (older dumps write array-shaped starts).
Inference DoneOf(const Instruction& inst) {
  const Instruction& start_inst = *inst.operands[0];
  const Shape& start = start_inst.shape;
  // An all-reduce-start of several operands is the tuple of their results, and its done gives
  // that tuple (XLA's InferAllReduceDoneShape); only the old one-operand form is (operand, result).
  if (inst.opcode == Opcode::kAllReduceDone && start_inst.opcode == Opcode::kAllReduceStart &&
      start_inst.operands.size() > 1)
    return Inferred(start);
  if (start.IsTuple()) {
    if (start.tuple.size() < 2) return Error(Op(inst) + " operand must be a start tuple, got " + Str(start));
    return Inferred(start.tuple[1]);
  }
  return Inferred(start);
}

}  // namespace

Inference InferCall(Module&, const Instruction& inst) {
  const Computation* f = Called(inst, AttrId::kToApply);
  if (!f) return Error("call needs to_apply=");
  std::string e = CheckArguments(inst, *f);
  if (!e.empty()) return Error(e);
  if (!f->root) return NotInferable();
  return Inferred(f->root->shape);
}

Inference InferFusion(Module&, const Instruction& inst) {
  const Computation* f = Called(inst, AttrId::kCalls);
  if (!f) return Error("fusion needs calls=");
  std::string e = CheckArguments(inst, *f);
  if (!e.empty()) return Error(e);
  if (!f->root) return NotInferable();
  return Inferred(f->root->shape);
}

Inference InferWhile(Module&, const Instruction& inst) {
  const Shape& init = inst.operands[0]->shape;
  const Computation* cond = Called(inst, AttrId::kCondition);
  const Computation* body = Called(inst, AttrId::kBody);
  if (!cond || !body) return Error("while needs condition= and body=");
  std::string e = CheckSingleParameter("while condition", *cond, init);
  if (e.empty()) e = CheckSingleParameter("while body", *body, init);
  if (!e.empty()) return Error(e);
  const Shape* cond_result = SignatureOf(*cond).result;
  if (cond_result && !(cond_result->IsScalar() && cond_result->type == PrimitiveType::kPred))
    return Error("while condition " + Describe(*cond) + " must return pred[]");
  const Shape* body_result = SignatureOf(*body).result;
  if (body_result && !Compatible(*body_result, init))
    return Error("while body " + Describe(*body) + " must return its parameter shape " + Str(init));
  return Inferred(init);
}

Inference InferConditional(Module& m, const Instruction& inst) {
  if (inst.operands.empty()) return Error("conditional needs a branch index operand");
  const Shape& index = inst.operands[0]->shape;
  bool pred = index.IsScalar() && index.type == PrimitiveType::kPred;
  if (!pred && !(index.IsScalar() && index.type == PrimitiveType::kS32))
    return Error("conditional branch index must be pred[] or s32[], got " + Str(index));
  std::vector<const Computation*> branches;
  if (const Attribute* list = inst.FindAttr(AttrId::kBranchComputations)) {
    for (const Computation* c : list->computations) branches.push_back(c);
  } else {
    const Computation* t = Called(inst, AttrId::kTrueComputation);
    const Computation* f = Called(inst, AttrId::kFalseComputation);
    if (!t || !f) return Error("conditional needs branch_computations= or true_computation= and false_computation=");
    branches = {t, f};
  }
  if (branches.empty()) return Error("conditional needs at least one branch computation");
  if (pred && branches.size() != 2)
    return Error("conditional with a pred index needs 2 branch computations, got " + Num(branches.size()));
  if (inst.operands.size() != branches.size() + 1)
    return Error("conditional has " + Count(branches.size(), "branch computation") + " but " +
                 Count(inst.operands.size() - 1, "branch operand"));
  const Shape* first = nullptr;
  for (size_t i = 0; i < branches.size(); ++i) {
    std::string e = CheckSingleParameter("conditional branch " + Num(i), *branches[i], inst.operands[i + 1]->shape);
    if (!e.empty()) return Error(e);
    const Shape* result = SignatureOf(*branches[i]).result;
    if (!result) return NotInferable();
    if (!first)
      first = result;
    else if (!Compatible(*first, *result))
      return Error("conditional branches return different shapes: " + Describe(*branches[0]) + " and " +
                   Describe(*branches[i]));
  }
  // A dimension dynamic in any branch is dynamic in the result (XLA); only arrays at the top
  // level are merged here, which is all the parser needs.
  if (first->IsArray()) {
    DimList dims;
    for (size_t d = 0; d < first->rank(); ++d) {
      bool dynamic = false;
      for (const Computation* c : branches) dynamic = dynamic || c->root->shape.IsDynamicDim(d);
      if (dynamic && !first->IsDynamicDim(d))
        dims.Add(first->dims[d], DimKind::kBounded);
      else
        dims.Take(*first, d);
    }
    return Inferred(dims.Build(m, first->type));
  }
  return Inferred(*first);
}

// lenient: the async wrappers' context elements are free; start checks its operand tuple and
// wrapped computation when they are written the usual way, update and done follow the start.
Inference InferAsync(Module&, const Instruction& inst) {
  if (inst.opcode == Opcode::kAsyncUpdate) return Inferred(inst.operands[0]->shape);
  if (inst.opcode == Opcode::kAsyncDone) return DoneOf(inst);
  if (const Computation* f = Called(inst, AttrId::kCalls)) {
    std::string e = CheckArguments(inst, *f);
    if (!e.empty()) return Error(e);
  }
  return NotInferable();
}

Inference InferCollective(Module& m, const Instruction& inst) {
  std::string e;
  switch (OpcodeCollective(inst.opcode)) {
    case CollectiveKind::kAllReduce:
      e = CheckArrays(inst);
      if (e.empty()) e = CheckCollectiveReducer(inst);
      if (!e.empty()) return Error(e);
      if (inst.operands.empty()) return NotInferable();
      // lenient: older dumps write all-reduce-start as an (operand, result) tuple.
      if (inst.opcode == Opcode::kAllReduceStart) return NotInferable();
      return Inferred(TupleOrSingle(m, inst));
    case CollectiveKind::kReduceScatter:
      e = CheckCollectiveReducer(inst);
      if (!e.empty()) return Error(e);
      [[fallthrough]];
    case CollectiveKind::kAllGather: {
      // The result's gathered (scattered) dimension depends on the replica groups and the
      // device count, so only the dimension is checked here; the verifier checks the rest.
      // lenient: the participant count is not derived from replica_groups (iota, mesh and empty
      // groups need the module's replica and partition counts).
      e = CheckArrays(inst);
      if (!e.empty()) return Error(e);
      auto dim = SingleDimension(inst, e);
      if (!dim) return Error(e);
      for (const Instruction* op : inst.operands) {
        // torch-xla on Neuron passes a scalar token as one more operand of a variadic all-gather
        // or reduce-scatter (upstream XLA refuses it: InferAllGatherShape); it passes through.
        if (op->shape.IsScalar() && inst.operands.size() > 1 && inst.opcode != Opcode::kAllGatherStart) {
          std::string note = "Neuron's form: a scalar token operand of a variadic " + Op(inst) +
                             " (torch-xla's ordering token on Neuron; today's XLA refuses it), passed through";
          if (!m.RecountOldForm(note)) m.NoteOldForm(DiagnosticFor(m, inst, std::move(note)));
          continue;
        }
        if (*dim < 0 || *dim >= static_cast<int64_t>(op->shape.rank()))
          return Error(Op(inst) + " dimension " + Num(*dim) + " is out of range for " + Str(op->shape));
      }
      return NotInferable();
    }
    case CollectiveKind::kAllToAll: {
      e = CheckArrays(inst);
      if (!e.empty()) return Error(e);
      if (inst.operands.empty()) return NotInferable();
      if (auto dims = IntList(inst, AttrId::kDimensions)) {
        if (dims->size() > 1) return Error("all-to-all dimensions may have at most one entry, got " + List(*dims));
        for (int64_t d : *dims)
          for (const Instruction* op : inst.operands)
            if (d < 0 || d >= static_cast<int64_t>(op->shape.rank()))
              return Error("all-to-all dimension " + Num(d) + " is out of range for " + Str(op->shape));
        // The array form splits and concatenates along the same dimension: shape unchanged.
        if (!dims->empty()) return Inferred(TupleOrSingle(m, inst));
      }
      // lenient: a tuple all-to-all of one operand may be written as the array or the 1-tuple.
      if (inst.operands.size() == 1) return NotInferable();
      return Inferred(TupleOrSingle(m, inst));
    }
    case CollectiveKind::kRaggedAllToAll:
      for (size_t i = 2; i < inst.operands.size(); ++i)
        if (!inst.operands[i]->shape.IsArray() || !IsInteger(inst.operands[i]->shape.type))
          return Error("ragged-all-to-all offsets and sizes must be integer arrays, got " +
                       Str(inst.operands[i]->shape));
      if (inst.operands[0]->shape.type != inst.operands[1]->shape.type)
        return Error("ragged-all-to-all input " + Str(inst.operands[0]->shape) + " and output " +
                     Str(inst.operands[1]->shape) + " have different element types");
      return Inferred(inst.operands[1]->shape);
    case CollectiveKind::kBroadcast:
      e = CheckArrays(inst);
      if (!e.empty()) return Error(e);
      if (inst.operands.empty()) return NotInferable();
      return Inferred(TupleOrSingle(m, inst));
    case CollectiveKind::kPermute:
      if (inst.opcode == Opcode::kCollectivePermuteStart)
        return NotInferable();  // lenient: array or (operand, result, contexts...) tuple
      // XLA's InferCollectivePermuteShape: with slice_sizes the in-place form (input, output,
      // input offsets, output offsets) gives the output's shape; without, every operand is
      // permuted on its own: one operand's shape, or the tuple of them (the combined form).
      if (inst.FindAttr(AttrId::kSliceSizes)) {
        if (inst.operands.size() != 4)
          return Error("collective-permute with slice_sizes takes (input, output, input offsets, output offsets)");
        return Inferred(inst.operands[1]->shape);
      }
      e = CheckArrays(inst);
      if (!e.empty()) return Error(e);
      if (inst.operands.empty()) return NotInferable();
      return Inferred(TupleOrSingle(m, inst));
    case CollectiveKind::kDone: return DoneOf(inst);
    case CollectiveKind::kNo:
    case CollectiveKind::kId: break;  // not collectives that exchange data
  }
  return NotInferable();
}

// Both only order: XLA's parser tests give them operands of any shape (after-all of arrays,
// add-dependency after an array), and its verifier checks the result shape alone.
Inference InferAfterAll(Module& m, const Instruction&) { return Inferred(m.MakeArrayShape(PrimitiveType::kToken, {})); }

Inference InferAddDependency(Module&, const Instruction& inst) { return Inferred(inst.operands[0]->shape); }

Inference InferSend(Module& m, const Instruction& inst) {
  Shape token = m.MakeArrayShape(PrimitiveType::kToken, {});
  if (!IsToken(inst.operands[1]->shape))
    return Error("send operand 1 must be a token, got " + Str(inst.operands[1]->shape));
  return Inferred(m.MakeTupleShape({inst.operands[0]->shape, m.MakeArrayShape(PrimitiveType::kU32, {}), token}));
}

Inference InferSendDone(Module& m, const Instruction& inst) {
  Shape token = m.MakeArrayShape(PrimitiveType::kToken, {});
  if (!inst.operands[0]->shape.IsTuple())
    return Error("send-done operand must be a send, got " + Str(inst.operands[0]->shape));
  return Inferred(token);
}

// recv and infeed.
Inference InferRecv(Module&, const Instruction& inst) {
  if (!IsToken(inst.operands[0]->shape))
    return Error(Op(inst) + " operand must be a token, got " + Str(inst.operands[0]->shape));
  return NotInferable();  // the received shape is only in the result
}

Inference InferRecvDone(Module& m, const Instruction& inst) {
  Shape token = m.MakeArrayShape(PrimitiveType::kToken, {});
  const Shape& recv = inst.operands[0]->shape;
  if (!recv.IsTuple() || recv.tuple.size() != 3) return Error("recv-done operand must be a recv, got " + Str(recv));
  return Inferred(m.MakeTupleShape({recv.tuple[0], token}));
}

Inference InferOutfeed(Module& m, const Instruction& inst) {
  Shape token = m.MakeArrayShape(PrimitiveType::kToken, {});
  if (!IsToken(inst.operands[1]->shape))
    return Error("outfeed operand 1 must be a token, got " + Str(inst.operands[1]->shape));
  const Attribute* declared = inst.FindAttr(AttrId::kOutfeedShape);
  if (declared && declared->shape && !Compatible(*declared->shape, inst.operands[0]->shape))
    return Error("outfeed_shape " + Str(*declared->shape) + " does not match the operand " +
                 Str(inst.operands[0]->shape));
  return Inferred(token);
}

// replica-id and partition-id.
Inference InferReplicaId(Module& m, const Instruction&) { return Inferred(m.MakeArrayShape(PrimitiveType::kU32, {})); }

// domain and opt-barrier.
Inference InferDomain(Module&, const Instruction& inst) { return Inferred(inst.operands[0]->shape); }

Inference InferRngGetAndUpdateState(Module& m, const Instruction& inst) {
  // The 128-bit generator state (XLA's HloVerifier).
  if (!IntAttr(inst, AttrId::kDelta)) return Error("rng-get-and-update-state needs delta=");
  return Inferred(m.MakeArrayShape(PrimitiveType::kU64, {2}));
}

Inference InferCopyStart(Module& m, const Instruction& inst) {
  // (destination, source, context); the context is a u32[] (XLA).
  const Shape& x = inst.operands[0]->shape;
  return Inferred(m.MakeTupleShape({x, x, m.MakeArrayShape(PrimitiveType::kU32, {})}));
}

Inference InferCopyDone(Module&, const Instruction& inst) {
  const Shape& start = inst.operands[0]->shape;
  if (!start.IsTuple() || start.tuple.empty())
    return Error("copy-done operand must be a copy-start, got " + Str(start));
  return Inferred(start.tuple[0]);
}

Inference InferRng(Module&, const Instruction& inst) {
  // lenient: XLA's rng takes exactly 2 operands; the corpus has old rng_normal tests with a
  // third (shape) operand, which is accepted and ignored.
  if (inst.operands.size() < 2) return Error("rng takes 2 operands, got " + Num(inst.operands.size()));
  const Shape& a = inst.operands[0]->shape;
  const Shape& b = inst.operands[1]->shape;
  if (!a.IsScalar() || !b.IsScalar() || a.type != b.type)
    return Error("rng parameters must be two scalars of one type, got " + Str(a) + " and " + Str(b));
  const Attribute* dist = inst.FindAttr(AttrId::kDistribution);
  if (!dist) return Error("rng needs distribution=");
  if (dist->i == static_cast<int64_t>(Distribution::kNormal) && !IsFloat(a.type))
    return Error("rng_normal needs floating-point parameters, got " + Str(a));
  return NotInferable();
}

Inference InferDynamicReshape(Module&, const Instruction& inst) {
  if (inst.operands.empty()) return Error("dynamic-reshape needs an operand");
  if (!inst.operands[0]->shape.IsArray())
    return Error("operand of 'dynamic-reshape' must be an array, got " + Str(inst.operands[0]->shape));
  for (size_t i = 1; i < inst.operands.size(); ++i) {
    const Shape& s = inst.operands[i]->shape;
    if (!s.IsScalar() || !IsInteger(s.type))
      return Error("dynamic-reshape sizes must be integer scalars, got " + Str(s));
  }
  return NotInferable();
}

Inference InferStochasticConvert(Module&, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  const Shape& r = inst.operands[1]->shape;
  if (!x.IsArray() || !IsFloat(x.type))
    return Error("stochastic-convert needs a floating-point operand, got " + Str(x));
  if (!r.IsArray() || !IsUnsignedInt(r.type) || BitWidth(r.type) != BitWidth(x.type))
    return Error("stochastic-convert random bits " + Str(r) + " must be unsigned integers as wide as " + Str(x));
  if (!SameDims(x, r)) return Error("stochastic-convert operand " + Str(x) + " and random bits " + Str(r) + " differ");
  return NotInferable();
}

}  // namespace nhlo::infer
