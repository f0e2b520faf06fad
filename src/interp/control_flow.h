// SPDX-License-Identifier: Apache-2.0
// Running computations (issue 32's split of the machine): a computation's steps in order, its
// fused groups tile by tile (fused_groups.h), profiles and error sites, calls, while loops,
// conditionals, asynchronous starts, and the ops that call a computation per element (reduce,
// map, sort, reduce-window, scatter, select-and-scatter, top-k), through Frames' memory. Each
// step goes to RunStep, the Machine's dispatch (interp.cc).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/frames.h"
#include "interp/fused_groups.h"
#include "interp/interp.h"
#include "interp/native_callees.h"

namespace nhlo::machine_internal {

class ControlFlow : public Frames {
 public:
  explicit ControlFlow(const BundleProgram& p) : Frames(p) {}
  virtual ~ControlFlow() = default;

 protected:
  /// Runs one step (the Machine's dispatch).
  virtual Status RunStep(const Step& s) = 0;

  Status RunComputation(const ComputationRecord& comp) {
    const std::vector<Step>& steps = steps_[IndexOf(comp)];
    const FusionPlan& fusion = fusion_[IndexOf(comp)];
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      uint64_t before = progress_.steps;
      if (int32_t g = fusion.group_at[i]; g >= 0 && options_.fusion) {
        const FusedGroup& group = fusion.groups[static_cast<size_t>(g)];
        // A group that --max-steps would stop inside runs op by op, to stop where it says.
        if (options_.max_steps == 0 || before + group.step_count <= options_.max_steps) {
          progress_.steps += group.step_count;
          if (options_.progress && (progress_.steps >> 12) != (before >> 12)) options_.progress(progress_);
          Status s = options_.profile ? RunGroupTimed(comp, group, steps) : RunFusedGroup(comp, group, ptr_);
          if (!s.ok()) return Annotate(comp, *step.bundle, s);
          i += group.step_count - 1;
          continue;
        }
      }
      if (fusion.elided[i] && options_.fusion && options_.max_steps == 0) {
        // Its readers fill their tiles from its scalar (fused_groups.h): a run of no time.
        ++progress_.steps;
        if (options_.profile) ++ProfileEntry(comp, step).runs;
        continue;
      }
      ++progress_.steps;
      if (options_.max_steps != 0 && progress_.steps > options_.max_steps)
        return Annotate(comp, *step.bundle,
                        Status::Error("stopped after " + std::to_string(options_.max_steps) + " steps (--max-steps)"));
      if (options_.progress && (progress_.steps & 4095) == 0) options_.progress(progress_);
      Status s = options_.profile ? RunStepTimed(comp, step) : RunStep(step);
      if (!s.ok()) return Annotate(comp, *step.bundle, s);
    }
    return OkStatus();
  }

  // The entry of `step` in the profile, added on its first run.
  BundleProfile& ProfileEntry(const ComputationRecord& comp, const Step& step) {
    auto [it, added] = profile_index_.try_emplace(step.bundle, options_.profile->bundles.size());
    if (added)
      options_.profile->bundles.push_back(
          {std::string(comp.name), std::string(comp.buffers[step.bundle->result].name), step.opcode(), 0, 0});
    return options_.profile->bundles[it->second];
  }

  // A fused group's time is its last member's (the one whose result the group ends with); the
  // other members count a run of no time (docs/interpreter.md).
  Status RunGroupTimed(const ComputationRecord& comp, const FusedGroup& group, const std::vector<Step>& steps) {
    auto start = std::chrono::steady_clock::now();
    Status s = RunFusedGroup(comp, group, ptr_);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (uint32_t k = 0; k < group.step_count; ++k) {
      BundleProfile& entry = ProfileEntry(comp, steps[group.first_step + k]);
      ++entry.runs;
      if (k + 1 == group.step_count) entry.seconds += seconds;
    }
    return s;
  }

  Status RunStepTimed(const ComputationRecord& comp, const Step& step) {
    auto start = std::chrono::steady_clock::now();
    Status s = RunStep(step);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BundleProfile& entry = ProfileEntry(comp, step);
    ++entry.runs;
    entry.seconds += seconds;
    return s;
  }

  // Adds where a failing bundle is to each diagnostic, once: the innermost bundle (a reducer's,
  // a loop body's) is where the error is, and the callers only pass it on.
  Status Annotate(const ComputationRecord& comp, const BundleRecord& bundle, const Status& s) {
    if (annotated_) return s;
    annotated_ = true;
    std::string result(comp.buffers[bundle.result].name);
    if (options_.error_site) *options_.error_site = {std::string(comp.name), result, s.message()};
    Status out;
    for (Diagnostic d : s.diagnostics()) {
      char where[48];
      std::snprintf(where, sizeof(where), " (bundle at 0x%08x, result '", bundle.file_offset);
      d.message += where + result + "')";
      out.diagnostics().push_back(d);
    }
    return out;
  }

  // ---- called computations -------------------------------------------------------------
  // A computation's temps have their own arena slots and its parameters are bound by pointer
  // to the caller's values; HLO has no recursion, and a file that asks for it (or nests calls
  // absurdly deep) is rejected rather than allowed to corrupt a running frame.

  Result<const ComputationRecord*> Callee(const Step& s, AttrId id, size_t index = 0) {
    const BundleRecord& b = *s.bundle;
    const AttrRecord* a = s.Find(id);
    if (!a || index >= a->computations().size())
      return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no " + std::string(AttrName(id)) +
                           " computation");
    return &p_.computations[a->computations()[index]];
  }

  // Runs `f` with its parameters already bound and its frame at `base`, then returns to the
  // running computation. Callees precede their callers in the file (the reader checks), so a
  // computation never re-enters itself; the depth bound keeps the native stack small.
  Status Enter(const ComputationRecord& f, uint8_t* base) {
    if (++depth_ > 256) {
      --depth_;
      return Status::Error("calls nested deeper than 256");
    }
    const ComputationRecord* saved = cur_;
    uint8_t** saved_ptr = ptr_;
    uint8_t* saved_base = base_;
    SetCurrent(f, base);
    Status s = RunComputation(f);
    cur_ = saved;
    ptr_ = saved_ptr;
    base_ = saved_base;
    --depth_;
    return s;
  }

  // Binds `f`'s parameters to `args` and runs it: the load matched them (lower_control.cc).
  Status CallMatched(const BundleRecord& b, const ComputationRecord& f, const std::vector<uint32_t>& args) {
    for (size_t i = 0; i < args.size(); ++i) NHLO_TRY(BindMatched(f, f.params[i], args[i]));
    return Enter(f, CalleeBase(b));
  }

  // call, fusion and a custom call of a computation.
  Status RunCall(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_TRY(CalleeChecked(s));
    const ComputationRecord& f = *s.callee->computations[0];
    NHLO_TRY(CallMatched(b, f, b.operands));
    return CopyMatchedFrom(f, f.root, b.result);
  }

  // The loop state lives in the result buffer: it starts as the operand, each condition and
  // body run reads it through their parameter, and the body's root is copied back into it.
  Status RunWhile(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_TRY(CalleeChecked(s));  // one parameter each, a pred[] condition, matching trees
    const ComputationRecord& cond = *s.callee->computations[0];
    const ComputationRecord& body = *s.callee->computations[1];
    NHLO_TRY(CopyMatchedFrom(*cur_, b.operands[0], b.result));
    for (;;) {
      NHLO_TRY(BindMatched(cond, cond.params[0], b.result));
      NHLO_TRY(Enter(cond, CalleeBase(b)));
      const uint8_t* go = P(cond, cond.root);
      if (!go || go[0] == 0) break;
      NHLO_TRY(BindMatched(body, body.params[0], b.result));
      NHLO_TRY(Enter(body, CalleeBase(b)));
      NHLO_TRY(CopyMatchedFrom(body, body.root, b.result));
      // Every 256th iteration: a report costs a clock read, as much as a small loop body.
      if ((++progress_.loop_iterations & 255) == 0 && options_.progress) options_.progress(progress_);
    }
    return OkStatus();
  }

  // The selector's value picks the branch; the load checked its type and each branch's trees.
  Status RunConditional(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_TRY(CalleeChecked(s));
    const uint8_t* selector = ptr_[b.operands[0]];
    if (!selector) return Status::Error("conditional selector is unbound");
    const std::vector<const ComputationRecord*>& branches = s.callee->computations;
    size_t branch;
    if (B(b.operands[0]).type == PrimitiveType::kPred) {
      branch = selector[0] ? 0 : 1;
    } else {  // s32, as the load checked
      int32_t index;
      std::memcpy(&index, selector, 4);
      // XLA: an out-of-range index runs the last branch.
      branch =
          index < 0 || static_cast<size_t>(index) >= branches.size() ? branches.size() - 1 : static_cast<size_t>(index);
    }
    NHLO_TRY(s.callee->computation_errors[branch]);
    const ComputationRecord& f = *branches[branch];
    NHLO_TRY(CallMatched(b, f, {b.operands[branch + 1]}));
    return CopyMatchedFrom(f, f.root, b.result);
  }

  Status RunAsyncStart(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_TRY(CalleeChecked(s));  // the held tuple's shape, the computation's trees
    const BufferRecord& r = B(b.result);
    const BufferRecord& held = B(r.tuple[0]);
    ZeroTree(b.result);
    for (size_t i = 0; i < b.operands.size(); ++i) NHLO_TRY(CopyMatchedFrom(*cur_, b.operands[i], held.tuple[i]));
    const ComputationRecord& f = *s.callee->computations[0];
    NHLO_TRY(CallMatched(b, f, b.operands));
    return CopyMatchedFrom(f, f.root, r.tuple[1]);
  }

  // What LowerCalleeSignature found of step s's called computations at load: OK, or the error
  // the executor reported here when it checked them on every run.
  static Status CalleeChecked(const Step& s) {
    if (!s.callee)  // not reached: the load checks every step whose computations a run reaches
      return Status::Error("bundle '" + std::string(OpcodeName(s.opcode())) + "' has unchecked computations");
    return s.callee->error;
  }

  // The per-element call of `f` for step `s`, reading the root's leaves found at load.
  Result<CalleeCall> Caller(const Step& s, const ComputationRecord& f) {
    NHLO_TRY(CalleeChecked(s));
    const BundleRecord& b = *s.bundle;
    const std::vector<uint32_t>& leaves = s.callee->leaves;
    auto taken = std::make_shared<std::vector<const uint8_t*>>(leaves.size());
    return CalleeCall([this, &b, &f, &leaves, taken](const uint8_t* const* args) -> Result<const uint8_t* const*> {
      // The loader checked that `f` takes these scalars (CheckScalarCallee).
      for (size_t i = 0; i < f.params.size(); ++i) P(f, f.params[i]) = const_cast<uint8_t*>(args[i]);
      NHLO_TRY(Enter(f, CalleeBase(b)));
      for (size_t k = 0; k < leaves.size(); ++k) {
        (*taken)[k] = P(f, leaves[k]);
        if (!(*taken)[k]) return Status::Error("computation '" + std::string(f.name) + "' has no result");
      }
      return static_cast<const uint8_t* const*>(taken->data());
    });
  }

  // The ops that call a computation per element (exec_callees.cc): their operands and a call.
  Status RunReduce(const Step& s) {
    const BundleRecord& b = *s.bundle;
    size_t n = b.operands.size() / 2;
    if (n == 0 || b.operands.size() != 2 * n) return Status::Error("reduce needs inputs and as many init values");
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kToApply));
    const AttrRecord* dims = s.Find(AttrId::kDimensions);
    if (!dims) return Status::Error("reduce needs dimensions");
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> in, OperandArrays(b, 0, n));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> init, OperandArrays(b, n, n));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> out, ResultLeaves(b, n, "reduce"));
    // The accumulators are the init values' types: a mixed-precision result converts after.
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(s, *f));
    if (const auto* plan = PlanOf<ReducePlan>(s)) return RunPlannedReduce(*plan, s.pattern, in, init, out, call);
    return KernelReduce(s.pattern, in, init, out, dims->ints(), call);
  }

  Status RunMap(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kToApply));
    NHLO_ASSIGN_OR_RETURN(Buf out, Array(b.result));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> in, OperandArrays(b, 0, b.operands.size()));
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(s, *f));  // its root's type checked at load
    if (const auto* plan = PlanOf<MapPlan>(s)) return ::nhlo::RunMap(*plan, in, out, call);
    return KernelMap(s.pattern, in, out, call);
  }

  // sort(operands...) along one dimension with a comparator of 2N scalars (lhs_0, rhs_0, ...);
  // stable, which also satisfies is_stable=false.
  Status RunSort(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kToApply));
    const AttrRecord* dims = s.Find(AttrId::kDimensions);
    size_t n = b.operands.size();
    if (n == 0 || !dims || dims->ints().size() != 1) return Status::Error("sort needs operands and one dimension");
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> in, OperandArrays(b, 0, n));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> out, ResultLeaves(b, n, "sort"));
    NHLO_ASSIGN_OR_RETURN(CalleeCall less, Caller(s, *f));  // a pred[] root, checked at load
    if (const auto* plan = PlanOf<SortPlan>(s)) return RunPlannedSort(*plan, in, out, less);
    return KernelSort(s.pattern, in, out, dims->ints()[0], less);
  }

  // reduce-window(inputs..., inits...) with window={size stride pad lhs_dilate rhs_dilate}:
  // each output element folds the window's in-range, non-hole input elements into the inits.
  Status RunReduceWindow(const Step& s) {
    const BundleRecord& b = *s.bundle;
    size_t n = b.operands.size() / 2;
    if (n == 0 || b.operands.size() != 2 * n)
      return Status::Error("reduce-window needs inputs and as many init values");
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kToApply));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> in, OperandArrays(b, 0, n));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> init, OperandArrays(b, n, n));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> out, ResultLeaves(b, n, "reduce-window"));
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(s, *f));
    if (const auto* plan = PlanOf<ReduceWindowPlan>(s)) return RunPlannedReduceWindow(s, *plan, in, init, out, call);
    return KernelReduceWindow(s, in, init, out, call);
  }

  // scatter(inputs..., indices, updates...): the result starts as the inputs; each update
  // element is combined with the result element it lands on by the to_apply computation.
  Status RunScatter(const Step& s) {
    const BundleRecord& b = *s.bundle;
    size_t n = (b.operands.size() - 1) / 2;
    if (n == 0 || b.operands.size() != 2 * n + 1)
      return Status::Error("scatter takes inputs, indices and as many updates");
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kToApply));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> in, OperandArrays(b, 0, n));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> upd, OperandArrays(b, n + 1, n));
    NHLO_ASSIGN_OR_RETURN(Buf indices, Array(b.operands[n]));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> out, ResultLeaves(b, n, "scatter"));
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(s, *f));
    if (const auto* plan = PlanOf<ScatterPlan>(s))
      return RunPlannedScatter(*plan, s.pattern, in[0], indices, upd[0], out[0], call);
    if (const auto* walk = PlanOf<ScatterWalkPlan>(s)) return RunScatterWalk(s, *walk, in, indices, upd, out, call);
    return KernelScatter(s, in, indices, upd, out, call);
  }

  // Binds the two scalar parameters of `f` to x and y (one element each), runs it and returns
  // its root's bytes. The loader (or the caller) checked that `f` takes two such scalars.
  Result<const uint8_t*> CallScalar(const BundleRecord& b, const ComputationRecord& f, const uint8_t* x,
                                    const uint8_t* y) {
    P(f, f.params[0]) = const_cast<uint8_t*>(x);
    P(f, f.params[1]) = const_cast<uint8_t*>(y);
    NHLO_TRY(Enter(f, CalleeBase(b)));
    if (!P(f, f.root)) return Status::Error("computation '" + std::string(f.name) + "' has no result");
    return static_cast<const uint8_t*>(P(f, f.root));
  }

  // select-and-scatter(operand, source, init): the kernel walks the windows and calls back for
  // select(selected, candidate) -> pred[] and scatter(source value, result value) -> T.
  Status RunSelectAndScatter(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* select, Callee(s, AttrId::kSelect));
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* scatter, Callee(s, AttrId::kScatter));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> in, OperandArrays(b, 0, 3));
    NHLO_ASSIGN_OR_RETURN(Buf out, Array(b.result));
    PrimitiveType t = in[0].type();
    uint64_t size = static_cast<uint64_t>(HostByteSize(t));
    NHLO_TRY(CalleeChecked(s));  // select and scatter take two scalars of t, checked at load
    auto call = [&](const ComputationRecord* f) {
      return [this, &b, f](const uint8_t* x, const uint8_t* y) { return CallScalar(b, *f, x, y); };
    };
    uint8_t selected = 0;
    std::string value(size, '\0');
    ScalarCall native_select = [&](const uint8_t* x, const uint8_t* y) -> Result<const uint8_t*> {
      selected = CompareScalar(s.pattern, t, x, y);
      return static_cast<const uint8_t*>(&selected);
    };
    ScalarCall native_scatter = [&](const uint8_t* x, const uint8_t* y) -> Result<const uint8_t*> {
      std::memcpy(value.data(), x, size);  // scatter(source value, result value) = op(x, y)
      if (!ApplyScalarOp(s.pattern, t, reinterpret_cast<uint8_t*>(value.data()), y))
        return Status::Error("select-and-scatter's scatter has no native form for this type");
      return reinterpret_cast<const uint8_t*>(value.data());
    };
    const ScalarCall select_call = s.pattern.compare_known ? native_select : call(select);
    const ScalarCall scatter_call = s.pattern.op != ScalarOp::kNone ? native_scatter : call(scatter);
    if (const auto* plan = PlanOf<SelectAndScatterPlan>(s))
      return RunPlannedSelectAndScatter(s, *plan, in[0], in[1], in[2], out, select_call, scatter_call);
    return KernelSelectAndScatter(s, in[0], in[1], in[2], out, select_call, scatter_call);
  }

  // topk(x), largest=true|false, and the TopK custom call: the order fixed at load (LowerBundle),
  // from `largest` or the comparator, whose signature was checked there too.
  Status RunTopK(const Step& s, const Buf& x, const Buf& values, const Buf& indices) {
    const BundleRecord& b = *s.bundle;
    ScalarCall less;
    if (s.topk_order == TopKOrder::kComparator) {
      NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kCalledComputations));
      less = [this, &b, f](const uint8_t* x0, const uint8_t* x1) { return CallScalar(b, *f, x0, x1); };
    }
    if (const auto* plan = PlanOf<TopKPlan>(s)) return ::nhlo::RunTopK(*plan, x, values, indices, s.topk_order, less);
    return KernelTopK(x, values, indices, s.topk_order, less);
  }

  std::vector<std::vector<Step>> steps_;  // per computation: its bundles lowered
  std::vector<FusionPlan> fusion_;        // per computation: its fused groups
  int depth_ = 0;
  ExecuteOptions options_;
  ExecutionProgress progress_;
  bool annotated_ = false;  // the failing bundle's location is in the Status already
  std::unordered_map<const BundleRecord*, size_t> profile_index_;  // into options_.profile
};

}  // namespace nhlo::machine_internal
