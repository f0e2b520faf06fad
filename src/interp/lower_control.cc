// SPDX-License-Identifier: Apache-2.0
// Load-time lowering of the steps that run whole computations: call, fusion, a custom call of a
// computation, while, conditional and async-start. Each gets its computations resolved and every
// pair of buffer trees its run binds or copies (arguments to parameters, a root to the result,
// a while's state to its condition's and body's parameters) compared once, here; the run then
// binds and copies without comparing records (Frames::BindMatched, CopyMatchedFrom). A mismatch is
// kept as the error the run reports when it reaches the step (or, for a conditional, the branch
// it takes), with the message and at the point the executor gave it when it compared on every
// run, so a program whose bad branch is never taken still runs.
#include <string>

#include "interp/kernels.h"
#include "interp/lower.h"
#include "interp/native_callees.h"

namespace nhlo {

Status MatchTree(const ComputationRecord& fa, uint32_t from, const ComputationRecord& fb, uint32_t to, TreeUse use) {
  if (from >= fa.buffers.size() || to >= fb.buffers.size()) return Status::Error("a bundle names a missing buffer");
  const BufferRecord& a = fa.buffers[from];
  const BufferRecord& b = fb.buffers[to];
  if (a.type != b.type || a.tuple.size() != b.tuple.size() || a.size != b.size) {
    if (use == TreeUse::kBind)
      return Status::Error("argument '" + std::string(a.name) + "' does not match parameter '" + std::string(b.name) +
                           "'");
    return Status::Error("bundle copies between buffers '" + std::string(a.name) + "' and '" + std::string(b.name) +
                         "' of different shapes");
  }
  for (size_t i = 0; i < a.tuple.size(); ++i) NHLO_TRY(MatchTree(fa, a.tuple[i], fb, b.tuple[i], use));
  return OkStatus();
}

namespace {

// Call `f` with `args` of `comp` and copy its root into `result`: the argument count, each
// argument against its parameter, then the root against the result.
Status MatchCall(const ComputationRecord& comp, const ComputationRecord& f, const std::vector<uint32_t>& args,
                 uint32_t result) {
  if (args.size() != f.params.size())
    return Status::Error("computation '" + std::string(f.name) + "' takes " + std::to_string(f.params.size()) +
                         " arguments");
  for (size_t i = 0; i < args.size(); ++i) NHLO_TRY(MatchTree(comp, args[i], f, f.params[i], TreeUse::kBind));
  return MatchTree(f, f.root, comp, result, TreeUse::kCopy);
}

Status MissingComputation(const BundleRecord& b, AttrId id) {
  return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no " + std::string(AttrName(id)) +
                       " computation");
}

// The computations of attribute `id` in order, or an error when it is absent or names none
// (out-of-range indices are the reader's to refuse).
Status Computations(const BundleProgram& p, const Step& s, AttrId id, CalleeSignature& sig) {
  const AttrRecord* a = s.Find(id);
  if (!a || a->computations().empty()) return MissingComputation(*s.bundle, id);
  for (uint32_t c : a->computations()) {
    if (c >= p.computations.size()) return MissingComputation(*s.bundle, id);
    sig.computations.push_back(&p.computations[c]);
  }
  return OkStatus();
}

Status LowerCall(const BundleProgram& p, const ComputationRecord& comp, const Step& s, AttrId id,
                 CalleeSignature& sig) {
  const BundleRecord& b = *s.bundle;
  NHLO_TRY(Computations(p, s, id, sig));
  sig.computations.resize(1);
  return MatchCall(comp, *sig.computations[0], b.operands, b.result);
}

// The loop state lives in the result: the operand is copied in, the condition and the body
// take it as their parameter, and the body's root is copied back.
Status LowerWhile(const BundleProgram& p, const ComputationRecord& comp, const Step& s, CalleeSignature& sig) {
  const BundleRecord& b = *s.bundle;
  const ComputationRecord* cond = Called(p, s, AttrId::kCondition);
  if (!cond) return MissingComputation(b, AttrId::kCondition);
  const ComputationRecord* body = Called(p, s, AttrId::kBody);
  if (!body) return MissingComputation(b, AttrId::kBody);
  sig.computations = {cond, body};
  const BufferRecord& pred = cond->buffers[cond->root];
  if (cond->params.size() != 1 || body->params.size() != 1)
    return Status::Error("while computations take one parameter");
  if (pred.type != PrimitiveType::kPred || pred.size != 1) return Status::Error("while condition must return pred[]");
  if (b.operands.size() != 1) return Status::Error("while takes one operand");
  NHLO_TRY(MatchTree(comp, b.operands[0], comp, b.result, TreeUse::kCopy));
  NHLO_TRY(MatchTree(comp, b.result, *cond, cond->params[0], TreeUse::kBind));
  NHLO_TRY(MatchTree(comp, b.result, *body, body->params[0], TreeUse::kBind));
  return MatchTree(*body, body->root, comp, b.result, TreeUse::kCopy);
}

// A pred selector runs {true, false}, an s32 one its branch list; each branch's own mismatch is
// kept apart, for the run that takes that branch.
Status LowerConditional(const BundleProgram& p, const ComputationRecord& comp, const Step& s, CalleeSignature& sig) {
  const BundleRecord& b = *s.bundle;
  if (b.operands.empty()) return Status::Error("conditional needs a selector");
  const BufferRecord& sel = comp.buffers[b.operands[0]];
  if (sel.size == 0) return Status::Error("conditional selector is unbound");
  if (sel.type == PrimitiveType::kPred) {
    for (AttrId id : {AttrId::kTrueComputation, AttrId::kFalseComputation}) {
      const ComputationRecord* f = Called(p, s, id);
      sig.computations.push_back(f);
      sig.computation_errors.push_back(f ? OkStatus() : MissingComputation(b, id));
    }
  } else if (sel.type == PrimitiveType::kS32) {
    const AttrRecord* list = s.Find(AttrId::kBranchComputations);
    if (!list || list->computations().empty()) return Status::Error("conditional has no branch_computations");
    for (uint32_t c : list->computations()) {
      const bool known = c < p.computations.size();
      sig.computations.push_back(known ? &p.computations[c] : nullptr);
      sig.computation_errors.push_back(known ? OkStatus() : MissingComputation(b, AttrId::kBranchComputations));
    }
  } else {
    return Status::Error("conditional selector must be pred or s32");
  }
  for (size_t branch = 0; branch < sig.computations.size(); ++branch) {
    Status& error = sig.computation_errors[branch];
    if (!error.ok()) continue;
    if (branch + 1 >= b.operands.size())
      error = Status::Error("conditional has no operand for branch " + std::to_string(branch));
    else
      error = MatchCall(comp, *sig.computations[branch], {b.operands[branch + 1]}, b.result);
  }
  return OkStatus();
}

// async-start holds ((operands...), result, contexts...): the operands are copied into the held
// tuple, the computation runs on the operands and its root is copied into the held result.
Status LowerAsyncStart(const BundleProgram& p, const ComputationRecord& comp, const Step& s, CalleeSignature& sig) {
  const BundleRecord& b = *s.bundle;
  const BufferRecord& r = comp.buffers[b.result];
  if (r.type != PrimitiveType::kTuple || r.tuple.size() < 2)
    return Status::Error("'async-start' expects a tuple of at least 2 elements in buffer '" + std::string(r.name) +
                         "'");
  const BufferRecord& held = comp.buffers[r.tuple[0]];
  if (held.type != PrimitiveType::kTuple || held.tuple.size() != b.operands.size())
    return Status::Error("'async-start' must hold a tuple of its " + std::to_string(b.operands.size()) + " operands");
  for (size_t i = 0; i < b.operands.size(); ++i)
    NHLO_TRY(MatchTree(comp, b.operands[i], comp, held.tuple[i], TreeUse::kCopy));
  NHLO_TRY(Computations(p, s, AttrId::kCalls, sig));
  sig.computations.resize(1);
  return MatchCall(comp, *sig.computations[0], b.operands, r.tuple[1]);
}

// The signature kept on the step: its error, and its computations only when there is none.
CalleeSignature Kept(CalleeSignature sig, Status error) {
  sig.error = std::move(error);
  if (!sig.error.ok()) sig.computations.clear();
  return sig;
}

}  // namespace

CalleeSignature CallSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s, AttrId id) {
  CalleeSignature sig;
  Status error = LowerCall(p, comp, s, id, sig);
  return Kept(std::move(sig), std::move(error));
}

CalleeSignature WhileSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s) {
  CalleeSignature sig;
  Status error = LowerWhile(p, comp, s, sig);
  return Kept(std::move(sig), std::move(error));
}

CalleeSignature ConditionalSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s) {
  CalleeSignature sig;
  Status error = LowerConditional(p, comp, s, sig);
  if (!error.ok()) sig.computation_errors.clear();
  return Kept(std::move(sig), std::move(error));
}

CalleeSignature AsyncStartSignature(const BundleProgram& p, const ComputationRecord& comp, const Step& s) {
  CalleeSignature sig;
  Status error = LowerAsyncStart(p, comp, s, sig);
  return Kept(std::move(sig), std::move(error));
}

}  // namespace nhlo
