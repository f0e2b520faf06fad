// SPDX-License-Identifier: Apache-2.0
// The interpreter's machine: Load lowers every bundle once (LowerBundle, lower.cc), plans the
// fused groups (fused_groups.h) and unpacks the constants; a run binds the arguments and runs the
// entry computation, dispatching each step through one switch over its family. Memory and value
// moves are Frames' (frames.h); running computations, calls, loops and the per-element callee
// ops are ControlFlow's (control_flow.h). Execute, ExecuteOnDevices and Executable drive it.
#include "interp/interp.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "codegen/bundle_reader.h"
#include "interp/call_kernels.h"
#include "interp/collective_steps.h"
#include "interp/control_flow.h"
#include "interp/devices.h"
#include "interp/dynamic_steps.h"
#include "interp/frame_checks.h"
#include "interp/fused_groups.h"
#include "interp/kernels.h"
#include "interp/lower.h"
#include "interp/native_callees.h"
#include "interp/op_table.h"
#include "interp/scan_step.h"
#include "support/mapped_arena.h"
#include "support/small_vec.h"
#include "types/custom_call_configs.h"
#include "types/element.h"

namespace nhlo {
namespace {

using machine_internal::ControlFlow;
using machine_internal::Frames;

class Machine : public ControlFlow, private StepMachine {
 public:
  explicit Machine(const BundleProgram& p, DeviceGrid grid = {}, uint32_t device = 0, Rendezvous* rendezvous = nullptr)
      : ControlFlow(p), collectives_(grid, device, rendezvous) {}

  // Load: pointer tables, the temps each computation places when it is entered, and the
  // constants unpacked once into host layout.
  Status Load() {
    size_t n = p_.computations.size();
    ptrs_.resize(n);
    sizes_.resize(n);
    temps_.resize(n);
    aliases_.resize(n);
    constants_.resize(n);
    steps_.resize(n);
    fusion_.resize(n);
    std::vector<uint64_t> frame_alignment;  // per computation (callees come first)
    collectives_.ScanTransfers(p_);
    for (size_t c = 0; c < n; ++c) {
      const ComputationRecord& comp = p_.computations[c];
      steps_[c].reserve(comp.bundles.size());
      NHLO_TRY(CheckFrameAlignment(comp));
      frame_alignment.push_back(FrameAlignment(comp));
      for (const BundleRecord& b : comp.bundles) {
        Result<Step> step = LowerBundle(p_, comp, b, options_);
        if (!step.ok()) return Annotate(comp, b, step.status());
        if (collectives_.CompletesTransfer(b)) step->family = OpFamily::kCollective;  // a recv between devices
        if (step->family == OpFamily::kCollective)
          if (Status loaded = collectives_.Load(p_, comp, *step); !loaded.ok()) return Annotate(comp, b, loaded);
        if (Status placed = CheckBundlePlacement(p_, comp, b, step->family); !placed.ok())
          return Annotate(comp, b, placed);
        Result<uint64_t> callee_need = CheckCalleeFrameAlignment(b, frame_alignment);
        if (!callee_need.ok()) return Annotate(comp, b, callee_need.status());
        frame_alignment[c] = std::max(frame_alignment[c], *callee_need);
        steps_[c].push_back(std::move(*step));
      }
      fusion_[c] = PlanFusion(comp, steps_[c]);
      ptrs_[c].assign(comp.buffers.size(), nullptr);
      sizes_[c].assign(comp.buffers.size(), {});
      constants_[c].resize(comp.buffers.size());
      for (uint32_t i = 0; i < comp.buffers.size(); ++i) {
        const BufferRecord& b = comp.buffers[i];
        if (b.type == PrimitiveType::kTuple) continue;
        if (b.kind == BufferKind::kTemp) temps_[c].push_back(i);
        if (b.kind == BufferKind::kAlias) aliases_[c].emplace_back(i, static_cast<uint32_t>(b.location));
        if (b.kind == BufferKind::kConstant) {
          constants_[c][i] = UnpackConstant(p_, b);
          ptrs_[c][i] = reinterpret_cast<uint8_t*>(constants_[c][i].data());
        }
      }
    }
    return OkStatus();
  }

  void set_options(const ExecuteOptions& options) { options_ = options; }

  // Takes the arguments over: entry parameters are bound to their bytes, so they are not copied.
  Result<Value> Run(std::vector<Value> args) {
    args_ = std::move(args);
    return RunBorrowed(args_);
  }

  Result<Value> RunBorrowed(const std::vector<Value>& args) {
    NHLO_TRY(RunInPlace(args));
    return ReadResult();
  }

  // Binds the entry parameters to `args`' bytes, which must stay unchanged until the result is
  // read. May run again: every run starts from the same state (its own rng stream, progress and
  // profile entries, no runtime sizes); what Load built stays. The arena is not cleared between
  // runs: every kernel writes all of its result (docs/interpreter.md, "Memory a run touches").
  Status RunInPlace(const std::vector<Value>& args) {
    has_result_ = false;
    progress_ = {};
    annotated_ = false;
    profile_index_.clear();
    rng_engine_.seed(1);
    rng_state_ = 0;
    depth_ = 0;
    collectives_.BeginRun();
    for (size_t c = 0; c < sizes_.size(); ++c) sizes_[c].assign(p_.computations[c].buffers.size(), {});
    if (p_.arena_size > SIZE_MAX || !arena_.Reset(static_cast<size_t>(p_.arena_size)))
      return Status::Error("cannot allocate the " + std::to_string(p_.arena_size) + "-byte arena this bundle needs");
    const ComputationRecord& entry = p_.computations[p_.entry];
    if (args.size() != entry.params.size())
      return Status::Error("the entry computation '" + std::string(entry.name) + "' takes " +
                           std::to_string(entry.params.size()) + " argument(s), got " + std::to_string(args.size()));
    padded_args_.clear();
    SetCurrent(entry, arena_.data());
    for (size_t i = 0; i < args.size(); ++i)
      NHLO_TRY(BindArgument(entry.params[i], args[i], "argument " + std::to_string(i + 1)));
    ResolveAliases(p_.entry);
    NHLO_TRY(RunComputation(entry));
    has_result_ = true;
    return OkStatus();
  }

  // The last run's result, copied out of the arena (and the arguments it may be bound to).
  Result<Value> ReadResult() const {
    if (!has_result_) return Status::Error("no run has completed, so there is no result to read");
    return ReadValue(p_.computations[p_.entry].root);
  }

 private:
  using Frames::SizesOf;

  // ---- dispatch ------------------------------------------------------------------------
  // One switch over the step families that Load fixed for every bundle (op_table.cc).

  Status RunStep(const Step& s) override { return s.dynamic ? RunWithSizes(s, *this) : RunPlain(s); }

  Status RunPlain(const Step& s) override {
    const BundleRecord& b = *s.bundle;
    switch (s.family) {
      case OpFamily::kNotExecutable:
        return Status::Error("the interpreter cannot execute '" + std::string(OpcodeName(b.opcode)) + "'");
      case OpFamily::kBound: return OkStatus();  // bound before the run
      case OpFamily::kAfterAll:                  // a token holds no data; a file that gives it some gets zeros
        ZeroTree(b.result);
        return OkStatus();
      case OpFamily::kAddDependency: return CopyTree(b.operands[0], b.result);
      case OpFamily::kTuple: {
        const BufferRecord& r = B(b.result);
        if (r.type != PrimitiveType::kTuple || r.tuple.size() != b.operands.size())
          return Status::Error("bundle 'tuple' does not match its result buffer");
        for (size_t i = 0; i < b.operands.size(); ++i) NHLO_TRY(CopyTree(b.operands[i], r.tuple[i]));
        return OkStatus();
      }
      case OpFamily::kGetTupleElement: {
        const BufferRecord& t = B(b.operands[0]);
        const AttrRecord* index = s.Find(AttrId::kIndex);
        if (t.type != PrimitiveType::kTuple || !index || index->i() < 0 ||
            index->i() >= static_cast<int64_t>(t.tuple.size()))
          return Status::Error("bundle 'get-tuple-element' has an invalid index");
        return CopyTree(t.tuple[index->i()], b.result);
      }
      case OpFamily::kCopy: {
        // A copy to another float precision (XLA's mixed-precision verifier allows it) converts.
        const BufferRecord& from = B(b.operands[0]);
        const BufferRecord& to = B(b.result);
        if (b.opcode == Opcode::kCopy && from.type != to.type && IsFloat(from.type) && IsFloat(to.type)) {
          NHLO_ASSIGN_OR_RETURN(Buf in, Array(b.operands[0]));
          NHLO_ASSIGN_OR_RETURN(Buf out, Array(b.result));
          if (const auto* convert = PlanOf<ElementwisePlan>(s)) {
            RunElementwise(*convert, &in, out);
            return OkStatus();
          }
          return KernelConvert(in, out);
        }
        return CopyTree(b.operands[0], b.result);
      }
      case OpFamily::kTupleResult: return RunTupleResult(s);
      case OpFamily::kCall: return RunCall(s);
      case OpFamily::kFusion: return RunCall(s);  // a fusion computes its fused computation
      case OpFamily::kWhile: return RunWhile(s);
      case OpFamily::kConditional: return RunConditional(s);
      case OpFamily::kScan: return RunScan(s, *this);
      case OpFamily::kReduce: return RunReduce(s);
      case OpFamily::kMap: return RunMap(s);
      case OpFamily::kScatter: return RunScatter(s);
      case OpFamily::kSort: return RunSort(s);
      case OpFamily::kReduceWindow: return RunReduceWindow(s);
      case OpFamily::kSelectAndScatter: return RunSelectAndScatter(s);
      case OpFamily::kCollective: return collectives_.Run(s, *this);
      case OpFamily::kAsyncStart: return RunAsyncStart(s);
      case OpFamily::kAsyncUpdate: return RunAsyncUpdate(s);
      case OpFamily::kAsyncDone: return RunAsyncDone(s);
      case OpFamily::kCopyStart: return RunCopyStart(s);
      case OpFamily::kCopyDone: return RunCopyDone(s);
      case OpFamily::kRngState: return RunRngState(s);
      case OpFamily::kDynamicShape: return RunDynamicShape(s, *this);
      case OpFamily::kTransferIn: return RunTransferIn(s);
      case OpFamily::kTransferOut: return RunTransferOut(s);
      case OpFamily::kSend: return RunSend(s);
      case OpFamily::kRecvDone: return RunRecvDone(s);
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
      case OpFamily::kStochasticConvert:
      case OpFamily::kFft: return RunArrayStep(s);
    }
    return Status::Error("bundle has an unknown step family");
  }

  // Steps whose operands and result are arrays: one kernel call.
  Status RunArrayStep(const Step& s) {
    const BundleRecord& b = *s.bundle;
    SmallVec<Buf, 4> in;
    for (uint32_t o : b.operands) {
      NHLO_ASSIGN_OR_RETURN(Buf buf, Array(o));
      in.push_back(buf);
    }
    NHLO_ASSIGN_OR_RETURN(Buf out, Array(b.result));
    if (const auto* elementwise = PlanOf<ElementwisePlan>(s)) {
      RunElementwise(*elementwise, in.data(), out);
      return OkStatus();
    }
    const CopyPlan* copy = PlanOf<CopyPlan>(s);
    switch (s.family) {
      case OpFamily::kUnary: return KernelUnary(b.opcode, in[0], out);
      case OpFamily::kBinary: return KernelBinary(b.opcode, in[0], in[1], out);
      case OpFamily::kCompare: return KernelCompare(s, in[0], in[1], out);
      case OpFamily::kSelect: return KernelSelect(in[0], in[1], in[2], out);
      case OpFamily::kClamp: return KernelClamp(in[0], in[1], in[2], out);
      case OpFamily::kConvert: return KernelConvert(in[0], out);
      case OpFamily::kBitcastConvert:
        if (const auto* bytes = PlanOf<ReshapePlan>(s)) {
          RunReshape(*bytes, in[0], out);
          return OkStatus();
        }
        if (const auto* fields = PlanOf<BitFieldPlan>(s)) {
          RunBitFields(*fields, in[0], out);
          return OkStatus();
        }
        return KernelBitcastConvert(in[0], out);
      case OpFamily::kBroadcast: return copy ? RunCopy(*copy, in[0], nullptr, out) : KernelBroadcast(s, in[0], out);
      case OpFamily::kReshape:
        if (const auto* reshape = PlanOf<ReshapePlan>(s)) {
          RunReshape(*reshape, in[0], out);
          return OkStatus();
        }
        if (const auto* bitcast = PlanOf<BitcastPlan>(s)) {
          RunBitcast(*bitcast, in[0], out);
          return OkStatus();
        }
        return b.opcode == Opcode::kBitcast ? KernelBitcast(s, in[0], out) : KernelReshape(in[0], out);
      case OpFamily::kTranspose: return copy ? RunCopy(*copy, in[0], nullptr, out) : KernelTranspose(s, in[0], out);
      case OpFamily::kIota:
        if (const auto* iota = PlanOf<IotaPlan>(s)) {
          RunIota(*iota, out);
          return OkStatus();
        }
        return KernelIota(s, out);
      case OpFamily::kSlice: return copy ? RunCopy(*copy, in[0], nullptr, out) : KernelSlice(s, in[0], out);
      case OpFamily::kConcatenate:
        if (const auto* concat = PlanOf<ConcatPlan>(s)) {
          RunConcatenate(*concat, in.data(), out);
          return OkStatus();
        }
        return KernelConcatenate(s, std::vector<Buf>(in.begin(), in.end()), out);
      case OpFamily::kPad: return copy ? RunCopy(*copy, in[0], &in[1], out) : KernelPad(s, in[0], in[1], out);
      case OpFamily::kReverse: return copy ? RunCopy(*copy, in[0], nullptr, out) : KernelReverse(s, in[0], out);
      case OpFamily::kDynamicSlice:
      case OpFamily::kDynamicUpdateSlice:
        if (const auto* slice = PlanOf<DynamicSlicePlan>(s)) {
          RunDynamicSlice(*slice, in.data(), out);
          return OkStatus();
        }
        if (s.family == OpFamily::kDynamicSlice) return KernelDynamicSlice(std::vector<Buf>(in.begin(), in.end()), out);
        return KernelDynamicUpdateSlice(std::vector<Buf>(in.begin(), in.end()), out);
      case OpFamily::kDot:
        if (s.plan) return RunDot(std::get<DotPlan>(*s.plan), in[0], in[1], out);
        return KernelDot(DotDims(s), in[0], in[1], out);
      case OpFamily::kGather:
        if (const auto* gather = PlanOf<GatherPlan>(s)) {
          RunGather(*gather, in[0], in[1], out);
          return OkStatus();
        }
        return KernelGather(s, in[0], in[1], out);
      case OpFamily::kConvolution:
        if (s.plan) return RunConvolution(std::get<ConvPlan>(*s.plan), in[0], in[1], out);
        return KernelConvolution(s, in[0], in[1], out);
      case OpFamily::kScaledDot:
        if (const auto* scaled = PlanOf<ScaledDotPlan>(s))
          return RunScaledDot(*scaled, in[0], in[1], in[2], in[3], out);
        return KernelScaledDot(s, in[0], in[1], in[2], in[3], out);
      case OpFamily::kRaggedDot:
        if (const auto* ragged = PlanOf<RaggedDotPlan>(s)) return RunRaggedDot(*ragged, in[0], in[1], in[2], out);
        return KernelRaggedDot(s, in[0], in[1], in[2], out);
      case OpFamily::kReducePrecision: return KernelReducePrecision(s, in[0], out);
      case OpFamily::kRng:
        if (const auto* rng = PlanOf<RngPlan>(s)) return RunRng(*rng, in[0], in[1], out, rng_engine_);
        return KernelRng(s, in[0], in[1], out, rng_engine_);
      case OpFamily::kCholesky:
        if (const auto* plan = PlanOf<LinalgPlan>(s)) return RunCholesky(*plan, in[0], out);
        return KernelCholesky(s, in[0], out);
      case OpFamily::kTriangularSolve:
        if (const auto* plan = PlanOf<LinalgPlan>(s)) return RunTriangularSolve(*plan, in[0], in[1], out);
        return KernelTriangularSolve(s, in[0], in[1], out);
      case OpFamily::kStochasticConvert:
        if (const auto* convert = PlanOf<StochasticConvertPlan>(s)) {
          RunStochasticConvert(*convert, in[0], in[1], out);
          return OkStatus();
        }
        return KernelStochasticConvert(in[0], in[1], out);
      case OpFamily::kFft:
        if (const auto* plan = PlanOf<FftPlan>(s)) return RunFft(*plan, in[0], out);
        return KernelFft(s, in[0], out);
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
      case OpFamily::kReduce:
      case OpFamily::kMap:
      case OpFamily::kScatter:
      case OpFamily::kSort:
      case OpFamily::kReduceWindow:
      case OpFamily::kSelectAndScatter:
      case OpFamily::kCollective:
      case OpFamily::kAsyncStart:
      case OpFamily::kAsyncUpdate:
      case OpFamily::kAsyncDone:
      case OpFamily::kCopyStart:
      case OpFamily::kCopyDone:
      case OpFamily::kRngState:
      case OpFamily::kDynamicShape:
      case OpFamily::kTransferIn:
      case OpFamily::kTransferOut:
      case OpFamily::kSend:
      case OpFamily::kRecvDone: break;
    }
    return Status::Error("bundle is not an array step");
  }

  // Ops whose result may be a tuple: the kernels get one Buf per result leaf.
  Status RunTupleResult(const Step& s) {
    const BundleRecord& b = *s.bundle;
    // Custom calls whose operands and result may be tuples (or tokens) of any depth.
    switch (s.custom_call) {
      case CustomCallKind::kIdentity:
      case CustomCallKind::kShardShape: return CopyTree(b.operands[0], b.result);
      case CustomCallKind::kSliceToDynamic: return RunSliceToDynamic(s, *this);
      case CustomCallKind::kPadToStatic: return RunPadToStatic(s, *this);
      case CustomCallKind::kCallComputation: return RunCall(s);
      case CustomCallKind::kShadowProbe: {
        ZeroTree(b.result);  // a token or () from nhlo's own pass; zeros for whatever a file gives it
        if (!options_.probe) return OkStatus();
        std::vector<ArrayView> views;
        for (uint32_t o : b.operands) {
          NHLO_ASSIGN_OR_RETURN(Buf buf, Array(o));
          views.push_back({buf.type(), buf.rec->dims, buf.data, static_cast<size_t>(buf.rec->size)});
        }
        options_.probe(B(b.result).name, views);
        return OkStatus();
      }
      case CustomCallKind::kUnknown: return Status::Error("the interpreter does not know this custom_call_target");
      case CustomCallKind::kNone:
      case CustomCallKind::kBlockQuantize:
      case CustomCallKind::kBlockDequantize:
      case CustomCallKind::kBlockScaledDot:
      case CustomCallKind::kCublasGemm:
      case CustomCallKind::kCudnnConv:
      case CustomCallKind::kCubSort:
      case CustomCallKind::kCudnnFmha:
      case CustomCallKind::kHostCallback:
      case CustomCallKind::kUniformQuantize:
      case CustomCallKind::kUniformDequantize:
      case CustomCallKind::kQuantizeMx:
      case CustomCallKind::kScaledMatmul:
      case CustomCallKind::kTopK:
      case CustomCallKind::kBuilderMath:
      case CustomCallKind::kEinsum:
      case CustomCallKind::kMatrixDiagonal:
      case CustomCallKind::kScramblePhiloxKey:
      case CustomCallKind::kTridiagonalSolve:
      case CustomCallKind::kThreefry2x32:
      case CustomCallKind::kLu:
      case CustomCallKind::kCholesky:
      case CustomCallKind::kQr:
      case CustomCallKind::kQrQ:
      case CustomCallKind::kPivotsToPermutation:
      case CustomCallKind::kTriangularSolve:
      case CustomCallKind::kEigh:
      case CustomCallKind::kSvd:
      case CustomCallKind::kGtsv:
      case CustomCallKind::kEig:
      case CustomCallKind::kNeuronSoftmax:
      case CustomCallKind::kNeuronSoftmaxBackward:
      case CustomCallKind::kNeuronRmsNorm:
      case CustomCallKind::kNeuronArgMax:
      case CustomCallKind::kNeuronArgMin: break;
    }
    std::vector<Buf> in, out;
    for (uint32_t o : b.operands) {
      NHLO_ASSIGN_OR_RETURN(Buf buf, Array(o));
      in.push_back(buf);
    }
    const BufferRecord& r = B(b.result);
    if (r.type == PrimitiveType::kTuple) {
      for (uint32_t e : r.tuple) {
        NHLO_ASSIGN_OR_RETURN(Buf buf, Array(e));
        out.push_back(buf);
      }
    } else {
      NHLO_ASSIGN_OR_RETURN(Buf buf, Array(b.result));
      out.push_back(buf);
    }
    // topk may call its comparator, so it runs here; every other kernel needs no machine state.
    if (s.custom_call == CustomCallKind::kTopK || b.opcode == Opcode::kTopK) return RunTopK(s, in[0], out[0], out[1]);
    return RunLeafKernel(s, in, out);
  }

  // ---- collectives (collective_steps.cc), through the StepMachine interface ---------------
  const ComputationRecord& Running() const override { return *cur_; }
  Result<Buf> ArrayOf(uint32_t buffer) const override { return Array(buffer); }
  Status CopyBuffer(uint32_t from, uint32_t to) override { return CopyTree(from, to); }
  void ZeroBuffer(uint32_t buffer) override { ZeroTree(buffer); }
  Result<const ComputationRecord*> CalledComputation(const Step& s, AttrId id) override { return Callee(s, id); }
  Result<const uint8_t*> CallOnScalars(const BundleRecord& b, const ComputationRecord& f, const uint8_t* x,
                                       const uint8_t* y) override {
    return CallScalar(b, f, x, y);
  }

  // rng-get-and-update-state(), delta=N: the state before, as u64[2] {low, high}, then the state
  // advances by N. XLA seeds the state per module and process; nhlo starts every run (and every
  // device) at 0, so runs repeat.
  Status RunRngState(const Step& s) {
    NHLO_ASSIGN_OR_RETURN(Buf out, Array(s.bundle->result));
    const AttrRecord* delta = s.Find(AttrId::kDelta);  // LowerBundle checked it and the u64[2] result
    uint64_t words[2] = {static_cast<uint64_t>(rng_state_), static_cast<uint64_t>(rng_state_ >> 64)};
    std::memcpy(out.data, words, 16);
    rng_state_ += static_cast<unsigned __int128>(static_cast<uint64_t>(delta->i()));
    return OkStatus();
  }
  std::vector<int64_t>& SizesOf(uint32_t buffer) override { return SizesOf(*cur_, buffer); }
  uint8_t*& DataOf(uint32_t buffer) override { return ptr_[buffer]; }
  Status CallWithPointers(const BundleRecord& b, const ComputationRecord& f, const std::vector<uint8_t*>& params,
                          const std::vector<uint32_t>& root_leaves, std::vector<const uint8_t*>& got) override {
    if (params.size() != f.params.size())
      return Status::Error("computation '" + std::string(f.name) + "' takes " + std::to_string(f.params.size()) +
                           " arguments");
    for (size_t i = 0; i < params.size(); ++i) {
      P(f, f.params[i]) = params[i];
      SizesOf(f, f.params[i]).clear();  // scratch values are at their bounds
    }
    NHLO_TRY(Enter(f, CalleeBase(b)));
    got.assign(root_leaves.size(), nullptr);
    for (size_t k = 0; k < root_leaves.size(); ++k) {
      got[k] = P(f, root_leaves[k]);
      if (!got[k] && f.buffers[root_leaves[k]].size)
        return Status::Error("computation '" + std::string(f.name) + "' has no result");
      if (!SizesOf(f, root_leaves[k]).empty())
        return Status::Error("computation '" + std::string(f.name) +
                             "' returns a value below its bounds, which a "
                             "scan does not carry yet");
    }
    return OkStatus();
  }

  CollectiveSteps collectives_;  // this device's groups and meetings
  // rng's engine, one per run: XLA's evaluator draws from one std::minstd_rand0 seeded with the
  // module's seed; nhlo's runs are as with seed 1.
  std::minstd_rand0 rng_engine_{1};
  unsigned __int128 rng_state_ = 0;  // rng-get-and-update-state
};

}  // namespace

DeviceGrid ProgramDevices(const BundleProgram& program) { return {program.replicas, program.partitions}; }

Status LoadForExecution(const BundleProgram& program, DeviceGrid grid, const ExecuteOptions& options) {
  if (grid.count() == 0 || grid.count() > kMaxDevices)
    return Status::Error("cannot load for " + std::to_string(grid.count()) + " devices (at most " +
                         std::to_string(kMaxDevices) + ")");
  // One machine at a time: each device resolves its own groups.
  for (uint32_t d = 0; d < grid.count(); ++d) {
    Machine machine(program, grid, d);
    machine.set_options(options);
    if (Status loaded = machine.Load(); !loaded.ok()) return loaded;
  }
  return OkStatus();
}

Status LoadForExecution(const BundleProgram& program) { return LoadForExecution(program, ProgramDevices(program), {}); }

Result<Value> Execute(const BundleProgram& program, std::vector<Value> args, const ExecuteOptions& options) {
  NHLO_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, Executable::Load(program, options));
  return executable->Run(std::move(args));
}

struct Executable::Impl {
  explicit Impl(const BundleProgram& program) : machine(program) {}
  Machine machine;
};

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

Result<std::unique_ptr<Executable>> Executable::Load(const BundleProgram& program, const ExecuteOptions& options) {
  if (ProgramDevices(program).count() > 1)
    return Status::Error("the module runs on " + std::to_string(program.replicas) + " x " +
                         std::to_string(program.partitions) +
                         " devices (replica_count x num_partitions); this tool runs one (nhlo-run runs them all)");
  auto impl = std::make_unique<Impl>(program);
  impl->machine.set_options(options);
  NHLO_TRY(impl->machine.Load());
  return std::unique_ptr<Executable>(new Executable(std::move(impl)));
}

void Executable::set_options(const ExecuteOptions& options) { impl_->machine.set_options(options); }

Result<Value> Executable::Run(std::vector<Value> args) { return impl_->machine.Run(std::move(args)); }

Result<Value> Executable::RunBorrowed(const std::vector<Value>& args) { return impl_->machine.RunBorrowed(args); }

Status Executable::RunInPlace(const std::vector<Value>& args) { return impl_->machine.RunInPlace(args); }

Result<Value> Executable::ReadResult() const { return impl_->machine.ReadResult(); }

Result<std::vector<Value>> ExecuteOnDevices(const BundleProgram& program, DeviceGrid grid,
                                            std::vector<std::vector<Value>> args, const ExecuteOptions& options) {
  const uint64_t count = grid.count();
  if (count == 0 || grid.replicas == 0 || count > kMaxDevices)
    return Status::Error("cannot run " + std::to_string(grid.replicas) + " x " + std::to_string(grid.partitions) +
                         " devices (at most " + std::to_string(kMaxDevices) + ")");
  if (args.size() != count)
    return Status::Error("got arguments for " + std::to_string(args.size()) + " devices, expected " +
                         std::to_string(count));
  const uint32_t n = static_cast<uint32_t>(count);
  auto device_text = [&](uint32_t d) {
    return "device " + std::to_string(d) + " (replica " + std::to_string(grid.replica_of(d)) + ", partition " +
           std::to_string(grid.partition_of(d)) + "): ";
  };
  auto prefixed = [&](uint32_t d, const Status& s) {
    Status out;
    for (Diagnostic diag : s.diagnostics()) {
      if (diag.severity == Severity::kError && n > 1) diag.message = device_text(d) + diag.message;
      out.diagnostics().push_back(std::move(diag));
    }
    return out;
  };
  Rendezvous rendezvous(n);
  std::vector<std::unique_ptr<Machine>> machines;
  std::vector<ExecutionErrorSite> sites(n);
  for (uint32_t d = 0; d < n; ++d) {
    machines.push_back(std::make_unique<Machine>(program, grid, d, n > 1 ? &rendezvous : nullptr));
    // Progress and the profile are device 0's: the devices run the same program side by side.
    ExecuteOptions device_options = options;
    if (d > 0) {
      device_options.progress = nullptr;
      device_options.profile = nullptr;
      device_options.probe = nullptr;
    }
    device_options.error_site = &sites[d];
    machines[d]->set_options(device_options);
    if (Status loaded = machines[d]->Load(); !loaded.ok()) {
      if (options.error_site) {
        *options.error_site = sites[d];
        if (n > 1) options.error_site->message = device_text(d) + sites[d].message;
      }
      return prefixed(d, loaded);
    }
  }
  std::vector<Result<Value>> results(n, Status::Error("not run"));
  std::vector<char> stopped(n, 0);  // failed only because another device failed first
  // Every device thread starts before any runs: a device that allocated its arena while later
  // threads were still starting would take the address space they need, and which error the run
  // reports (a thread refused, an arena refused) would depend on timing.
  enum class Gate { kWaiting, kRun, kAbandon };
  Gate gate = Gate::kWaiting;
  std::mutex gate_mutex;
  std::condition_variable gate_opened;
  auto open_gate = [&](Gate to) {
    {
      std::lock_guard<std::mutex> lock(gate_mutex);
      gate = to;
    }
    gate_opened.notify_all();
  };
  auto run = [&](uint32_t d) {
    if (n > 1) {
      std::unique_lock<std::mutex> lock(gate_mutex);
      gate_opened.wait(lock, [&] { return gate != Gate::kWaiting; });
      if (gate == Gate::kAbandon) return;  // the caller records why, once the threads are gone
    }
    // An exception must not leave a device thread (std::terminate): it becomes the device's error.
    try {
      results[d] = machines[d]->Run(std::move(args[d]));
    } catch (const std::bad_alloc&) {
      results[d] = Status::Error("out of memory");
    } catch (const std::exception& e) {
      results[d] = Status::Error(std::string("internal error (an interpreter bug): ") + e.what());
    }
    stopped[d] = !results[d].ok() && results[d].status().message().find(kStoppedByOtherDevice) != std::string::npos;
    rendezvous.Finish(d, !results[d].ok() && !stopped[d]);
  };
  if (n == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(n);  // so that only starting a thread can fail below
    // Why a thread was refused, kept without allocating: the address space may be full until the
    // started threads are joined and their stacks freed.
    char refusal[160] = {};
    for (uint32_t d = 0; d < n; ++d) {
      try {
        threads.emplace_back(run, d);
      } catch (const std::system_error& e) {
        std::snprintf(refusal, sizeof refusal, "%s", e.what());
        break;
      } catch (const std::bad_alloc&) {
        std::snprintf(refusal, sizeof refusal, "out of memory");
        break;
      }
    }
    const uint32_t started = static_cast<uint32_t>(threads.size());
    open_gate(started == n ? Gate::kRun : Gate::kAbandon);
    for (std::thread& t : threads) t.join();
    if (started < n) {
      // A process or address-space limit refused a thread: the devices not started fail, and the
      // started ones, which waited at the gate, stop without running.
      for (uint32_t d = 0; d < started; ++d) {
        results[d] = Status::Error(kStoppedByOtherDevice);
        stopped[d] = 1;
      }
      for (uint32_t rest = started; rest < n; ++rest)
        results[rest] = Status::Error("cannot start a thread for device " + std::to_string(rest) + " of " +
                                      std::to_string(n) + " (" + refusal + "; fewer --devices may run)");
    }
  }
  // Report the lowest device that failed on its own; the others stopped because of it.
  for (int pass = 0; pass < 2; ++pass)
    for (uint32_t d = 0; d < n; ++d)
      if (!results[d].ok() && (pass == 1 || !stopped[d])) {
        if (options.error_site) {
          *options.error_site = sites[d];
          if (n > 1) options.error_site->message = device_text(d) + sites[d].message;
        }
        return prefixed(d, results[d].status());
      }
  std::vector<Value> values;
  for (Result<Value>& r : results) values.push_back(std::move(*r));
  return values;
}

std::string ValueShapeText(const Value& v) {
  std::string out;
  if (v.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < v.tuple.size(); ++i) {
      if (i) out += ", ";
      out += ValueShapeText(v.tuple[i]);
    }
    return out + ')';
  }
  out += PrimitiveTypeName(v.type);
  out += '[';
  const bool bounded = v.bounds.size() == v.dims.size() && !v.bounds.empty();
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) out += ',';
    out += bounded && v.bounds[i] >= 0 ? "<=" + std::to_string(v.bounds[i]) : std::to_string(v.dims[i]);
  }
  out += ']';
  if (!bounded) return out;
  // XLA's literal text: the bounded shape, then every dimension's runtime size.
  out += '(';
  for (size_t i = 0; i < v.dims.size(); ++i) out += (i ? "," : "") + std::to_string(v.dims[i]);
  return out + ')';
}

}  // namespace nhlo
