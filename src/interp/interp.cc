// SPDX-License-Identifier: Apache-2.0
// The interpreter's driver: binds buffers to memory (arena temps, constants unpacked from the
// file, parameters bound to argument bytes), then runs each bundle of the entry computation
// through one switch over opcodes.
#include "interp/interp.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "codegen/bundle_reader.h"
#include "interp/collective_steps.h"
#include "interp/devices.h"
#include "interp/dynamic_steps.h"
#include "interp/frame_checks.h"
#include "interp/fused_groups.h"
#include "interp/kernels.h"
#include "interp/native_callees.h"
#include "interp/op_table.h"
#include "interp/scan_step.h"
#include "support/small_vec.h"
#include "support/zeroed_memory.h"
#include "types/custom_call_configs.h"
#include "types/element.h"

namespace nhlo {
namespace {

class Machine : private StepMachine {
 public:
  explicit Machine(const BundleProgram& p, DeviceGrid grid = {}, uint32_t device = 0, Rendezvous* rendezvous = nullptr)
      : p_(p), collectives_(grid, device, rendezvous) {}

  // Load: pointer tables, the temps each computation places when it is entered, and the
  // constants unpacked once into host layout.
  Status Load() {
    size_t n = p_.computations.size();
    ptrs_.resize(n);
    sizes_.resize(n);
    temps_.resize(n);
    constants_.resize(n);
    steps_.resize(n);
    fusion_.resize(n);
    std::vector<uint64_t> frame_alignment;  // per computation (callees come first)
    for (size_t c = 0; c < n; ++c) {
      const ComputationRecord& comp = p_.computations[c];
      steps_[c].reserve(comp.bundles.size());
      NHLO_TRY(CheckFrameAlignment(comp));
      frame_alignment.push_back(FrameAlignment(comp));
      for (const BundleRecord& b : comp.bundles) {
        Result<Step> step = Lower(comp, b);
        if (!step.ok()) return Annotate(comp, b, step.status());
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
  // May run again: every run starts from the same state (its own rng stream, progress and
  // profile entries, no runtime sizes); what Load built stays.
  Result<Value> Run(std::vector<Value> args) {
    progress_ = {};
    annotated_ = false;
    profile_index_.clear();
    rng_engine_.seed(1);
    rng_state_ = 0;
    depth_ = 0;
    for (size_t c = 0; c < sizes_.size(); ++c) sizes_[c].assign(p_.computations[c].buffers.size(), {});
    if (p_.arena_size > SIZE_MAX || !arena_.Reset(static_cast<size_t>(p_.arena_size)))
      return Status::Error("cannot allocate the " + std::to_string(p_.arena_size) + "-byte arena this bundle needs");
    const ComputationRecord& entry = p_.computations[p_.entry];
    if (args.size() != entry.params.size())
      return Status::Error("the entry computation '" + std::string(entry.name) + "' takes " +
                           std::to_string(entry.params.size()) + " argument(s), got " + std::to_string(args.size()));
    args_ = std::move(args);
    SetCurrent(entry, arena_.data());
    for (size_t i = 0; i < args_.size(); ++i)
      NHLO_TRY(BindArgument(entry.params[i], args_[i], "argument " + std::to_string(i + 1)));
    NHLO_TRY(RunComputation(entry));
    return ReadValue(entry.root);
  }

 private:
  size_t IndexOf(const ComputationRecord& comp) const { return static_cast<size_t>(&comp - p_.computations.data()); }

  // Makes `comp` the running computation with its frame at `base`.
  void SetCurrent(const ComputationRecord& comp, uint8_t* base) {
    size_t index = IndexOf(comp);
    std::vector<uint8_t*>& ptrs = ptrs_[index];
    for (uint32_t t : temps_[index]) ptrs[t] = base + comp.buffers[t].location;
    cur_ = &comp;
    ptr_ = ptrs.data();
    base_ = base;
  }

  const BufferRecord& B(uint32_t buffer) const { return cur_->buffers[buffer]; }
  uint8_t*& P(const ComputationRecord& comp, uint32_t buffer) { return ptrs_[IndexOf(comp)][buffer]; }
  // Where the callees of bundle `b` place their frame.
  uint8_t* CalleeBase(const BundleRecord& b) const { return base_ + b.callee_frame; }

  Status BindArgument(uint32_t buffer, Value& v, const std::string& what) {
    const BufferRecord& b = B(buffer);
    if (b.type == PrimitiveType::kTuple) {
      if (!v.IsTuple() || v.tuple.size() != b.tuple.size())
        return Status::Error(what + " must be a tuple of " + std::to_string(b.tuple.size()) + " elements");
      for (size_t i = 0; i < b.tuple.size(); ++i)
        NHLO_TRY(BindArgument(b.tuple[i], v.tuple[i], what + "." + std::to_string(i)));
      return OkStatus();
    }
    if (v.type == b.type && v.dims != b.dims && FitsBound(b, v.dims)) {
      // A smaller value for a bounded parameter: laid out at the bound, its dims the runtime sizes.
      std::string padded(b.size, '\0');
      CopyBox(reinterpret_cast<const uint8_t*>(v.bytes.data()), v.dims, reinterpret_cast<uint8_t*>(padded.data()),
              b.dims, v.dims, HostByteSize(b.type));
      v.bytes = std::move(padded);
      SizesOf(*cur_, buffer) = v.dims;  // below the bound: FitsBound held and v.dims != b.dims
      ptr_[buffer] = reinterpret_cast<uint8_t*>(v.bytes.data());
      return OkStatus();
    }
    if (v.type != b.type || v.dims != b.dims) {
      std::string want = std::string(PrimitiveTypeName(b.type)) + "[";
      for (size_t i = 0; i < b.dims.size(); ++i)
        want += (i ? "," : "") + std::string(i < b.dim_kinds.size() && b.dim_kinds[i] ? "<=" : "") +
                std::to_string(b.dims[i]);
      return Status::Error(what + " has shape " + ValueShapeText(v) + ", expected " + want + "]");
    }
    ptr_[buffer] = reinterpret_cast<uint8_t*>(v.bytes.data());
    return OkStatus();
  }

  Value ReadValue(uint32_t buffer) const {
    const BufferRecord& b = B(buffer);
    Value v;
    v.type = b.type;
    if (b.type == PrimitiveType::kTuple) {
      for (uint32_t e : b.tuple) v.tuple.push_back(ReadValue(e));
      return v;
    }
    v.dims = b.dims;
    if (!IsBounded(b)) {
      if (ptr_[buffer]) v.bytes.assign(reinterpret_cast<const char*>(ptr_[buffer]), b.size);
      return v;
    }
    // A bounded dynamic value: its runtime sizes and only the elements inside them.
    for (size_t d = 0; d < b.dims.size(); ++d) v.bounds.push_back(b.dim_kinds[d] != 0 ? b.dims[d] : -1);
    if (!sizes_[IndexOf(*cur_)][buffer].empty()) v.dims = sizes_[IndexOf(*cur_)][buffer];
    int size = HostByteSize(b.type);
    v.bytes.assign(static_cast<size_t>(CheckedElementCount(v.dims)) * static_cast<size_t>(size), '\0');
    if (ptr_[buffer]) CopyBox(ptr_[buffer], b.dims, reinterpret_cast<uint8_t*>(v.bytes.data()), v.dims, v.dims, size);
    return v;
  }

  // Copies the value tree of buffer `from` of computation `src` into buffer `to` of the running
  // computation (same structure).
  Status CopyTreeFrom(const ComputationRecord& src, uint32_t from, uint32_t to) {
    const BufferRecord& a = src.buffers[from];
    const BufferRecord& b = B(to);
    if (a.type != b.type || a.tuple.size() != b.tuple.size() || a.size != b.size)
      return Status::Error("bundle copies between buffers '" + std::string(a.name) + "' and '" + std::string(b.name) +
                           "' of different shapes");
    if (a.type == PrimitiveType::kTuple) {
      for (size_t i = 0; i < a.tuple.size(); ++i) NHLO_TRY(CopyTreeFrom(src, a.tuple[i], b.tuple[i]));
      return OkStatus();
    }
    NHLO_TRY(CarrySizes(SizesOf(src, from), b, SizesOf(*cur_, to)));
    uint8_t* source = P(src, from);
    if (a.size > 0) {
      if (!source || !ptr_[to]) return Status::Error("bundle reads an unbound buffer '" + std::string(a.name) + "'");
      if (source != ptr_[to]) std::memmove(ptr_[to], source, a.size);
    }
    return OkStatus();
  }
  Status CopyTree(uint32_t from, uint32_t to) { return CopyTreeFrom(*cur_, from, to); }

  Result<Buf> Array(uint32_t buffer) const {
    const BufferRecord& b = B(buffer);
    if (!IsArrayType(b.type)) return Status::Error("buffer '" + std::string(b.name) + "' is not an array");
    if (!ptr_[buffer] && b.size > 0)
      return Status::Error("buffer '" + std::string(b.name) + "' is read before it is bound");
    return Buf{&b, ptr_[buffer]};
  }

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

  // Lowers one bundle: its step family, attribute slots and custom call, and the checks that
  // do not depend on values (operand counts, attributes each family reads).
  Result<Step> Lower(const ComputationRecord& comp, const BundleRecord& b) {
    Step s = StepFor(b);
    OpExecution exec = ExecutionOf(b.opcode);
    s.family = exec.family;
    if (exec.family == OpFamily::kNotExecutable)
      return Status::Error("the interpreter cannot execute '" + std::string(OpcodeName(b.opcode)) +
                           "': " + std::string(exec.not_executable));
    int arity = -1;
    switch (exec.family) {
      case OpFamily::kGetTupleElement:
      case OpFamily::kCopy:
      case OpFamily::kUnary:
      case OpFamily::kConvert:
      case OpFamily::kBitcastConvert:
      case OpFamily::kBroadcast:
      case OpFamily::kReshape:
      case OpFamily::kTranspose:
      case OpFamily::kSlice:
      case OpFamily::kReverse:
      case OpFamily::kWhile:
      case OpFamily::kReducePrecision:
      case OpFamily::kCholesky:
      case OpFamily::kFft: arity = 1; break;
      case OpFamily::kBinary:
      case OpFamily::kCompare:
      case OpFamily::kPad:
      case OpFamily::kDot:
      case OpFamily::kGather:
      case OpFamily::kConvolution:
      case OpFamily::kTriangularSolve:
      case OpFamily::kStochasticConvert:
      case OpFamily::kAddDependency: arity = 2; break;
      case OpFamily::kSelect:
      case OpFamily::kClamp:
      case OpFamily::kSelectAndScatter: arity = 3; break;
      case OpFamily::kScaledDot: arity = 4; break;
      case OpFamily::kRaggedDot: arity = 3; break;
      case OpFamily::kIota:
      case OpFamily::kRngState: arity = 0; break;
      case OpFamily::kDynamicShape:
        if (b.opcode == Opcode::kGetDimensionSize) arity = 1;
        if (b.opcode == Opcode::kSetDimensionSize) arity = 2;
        break;
      case OpFamily::kNotExecutable:
      case OpFamily::kBound:
      case OpFamily::kTuple:
      case OpFamily::kTupleResult:
      case OpFamily::kAfterAll:
      case OpFamily::kCall:
      case OpFamily::kFusion:
      case OpFamily::kConditional:
      case OpFamily::kScan:
      case OpFamily::kReduce:
      case OpFamily::kMap:
      case OpFamily::kScatter:
      case OpFamily::kSort:
      case OpFamily::kReduceWindow:
      case OpFamily::kConcatenate:
      case OpFamily::kDynamicSlice:
      case OpFamily::kDynamicUpdateSlice:
      case OpFamily::kCollective: break;
      case OpFamily::kTransferIn:
      case OpFamily::kTransferOut:
      case OpFamily::kSend:
      case OpFamily::kRecvDone:
        if (options_.host_data == HostData::kNone)
          return Status::Error("the interpreter cannot execute '" + std::string(OpcodeName(b.opcode)) +
                               "': it moves data to or from outside the program (the host or another program); "
                               "nhlo-run --host-data=zeros runs it with zeros received and sent data dropped");
        break;
      case OpFamily::kAsyncStart:
      case OpFamily::kAsyncUpdate:
      case OpFamily::kAsyncDone:
      case OpFamily::kCopyStart:
      case OpFamily::kCopyDone:
        if (b.opcode != Opcode::kAsyncStart) arity = 1;
        break;
      case OpFamily::kRng:
        // A third operand (a shape, in XLA's rng_expander tests) is ignored, as XLA's
        // RngExpander ignores it [inferred from the corpus CHECK lines].
        arity = b.operands.size() == 3 ? 3 : 2;
        break;
    }
    if (arity >= 0) NHLO_TRY(Arity(b, static_cast<size_t>(arity)));
    if (b.opcode == Opcode::kRngBitGenerator) {
      // XLA's builder takes only a u64 state; refused before the run rather than at it.
      const BufferRecord* state = b.operands.size() == 1 ? &comp.buffers[b.operands[0]] : nullptr;
      if (!state || state->type != PrimitiveType::kU64 || state->dims.size() != 1)
        return Status::Error("rng-bit-generator state must be u64[N]");
    }
    if (s.family == OpFamily::kRaggedDot)
      NHLO_TRY(CheckRaggedDotShapes(s, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]],
                                    comp.buffers[b.operands[2]], comp.buffers[b.result]));
    if (const BufferRecord* r = UnboundedLeaf(comp, b.result))
      return Status::Error("'" + std::string(r->name) +
                           "' has an unbounded dynamic dimension (`?`): it has no "
                           "size to store or compute, so it cannot be executed (a bound, `<=N`, can)");
    s.dynamic = HasBoundedLeaf(comp, b.result);
    for (uint32_t o : b.operands) s.dynamic = s.dynamic || HasBoundedLeaf(comp, o);
    if (b.opcode == Opcode::kCustomCall) NHLO_TRY(LowerCustomCall(p_, comp, s));
    NHLO_TRY(CheckScalarCallee(p_, comp, s));
    LowerCalleePattern(p_, comp, s);
    if (s.family == OpFamily::kCollective) NHLO_TRY(collectives_.Load(comp, s));
    if (s.family == OpFamily::kFft && b.operands.size() == 1)
      s.scratch_bytes = FftScratchBytes(s, comp.buffers[b.operands[0]], comp.buffers[b.result]);
    if (s.scratch_bytes > options_.scratch_limit)
      return Status::Error("this step needs " + std::to_string(s.scratch_bytes) +
                           " bytes of working memory besides its operands and result, more than the " +
                           std::to_string(options_.scratch_limit) + " the run's memory limit leaves");
    return s;
  }

  Status Arity(const BundleRecord& b, size_t n) const {
    if (b.operands.size() != n)
      return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has " +
                           std::to_string(b.operands.size()) + " operands, expected " + std::to_string(n));
    return OkStatus();
  }

  // ---- dispatch ------------------------------------------------------------------------
  // One switch over the step families that Load fixed for every bundle (op_table.cc).

  Status RunStep(const Step& s) { return s.dynamic ? RunWithSizes(s, *this) : RunPlain(s); }

  Status RunPlain(const Step& s) override {
    const BundleRecord& b = *s.bundle;
    switch (s.family) {
      case OpFamily::kNotExecutable:
        return Status::Error("the interpreter cannot execute '" + std::string(OpcodeName(b.opcode)) + "'");
      case OpFamily::kBound: return OkStatus();     // bound before the run
      case OpFamily::kAfterAll: return OkStatus();  // a token holds no data
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
          return KernelConvert(in, out);
        }
        return CopyTree(b.operands[0], b.result);
      }
      case OpFamily::kTupleResult: return RunTupleResult(s);
      case OpFamily::kCall: return RunCall(s, AttrId::kToApply);
      case OpFamily::kFusion: return RunCall(s, AttrId::kCalls);  // a fusion computes its fused computation
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
    switch (s.family) {
      case OpFamily::kUnary: return KernelUnary(b.opcode, in[0], out);
      case OpFamily::kBinary: return KernelBinary(b.opcode, in[0], in[1], out);
      case OpFamily::kCompare: return KernelCompare(s, in[0], in[1], out);
      case OpFamily::kSelect: return KernelSelect(in[0], in[1], in[2], out);
      case OpFamily::kClamp: return KernelClamp(in[0], in[1], in[2], out);
      case OpFamily::kConvert: return KernelConvert(in[0], out);
      case OpFamily::kBitcastConvert: return KernelBitcastConvert(in[0], out);
      case OpFamily::kBroadcast: return KernelBroadcast(s, in[0], out);
      case OpFamily::kReshape:
        return b.opcode == Opcode::kBitcast ? KernelBitcast(s, in[0], out) : KernelReshape(in[0], out);
      case OpFamily::kTranspose: return KernelTranspose(s, in[0], out);
      case OpFamily::kIota: return KernelIota(s, out);
      case OpFamily::kSlice: return KernelSlice(s, in[0], out);
      case OpFamily::kConcatenate: return KernelConcatenate(s, std::vector<Buf>(in.begin(), in.end()), out);
      case OpFamily::kPad: return KernelPad(s, in[0], in[1], out);
      case OpFamily::kReverse: return KernelReverse(s, in[0], out);
      case OpFamily::kDynamicSlice: return KernelDynamicSlice(std::vector<Buf>(in.begin(), in.end()), out);
      case OpFamily::kDynamicUpdateSlice: return KernelDynamicUpdateSlice(std::vector<Buf>(in.begin(), in.end()), out);
      case OpFamily::kDot: return KernelDot(DotDims(s), in[0], in[1], out);
      case OpFamily::kGather: return KernelGather(s, in[0], in[1], out);
      case OpFamily::kConvolution: return KernelConvolution(s, in[0], in[1], out);
      case OpFamily::kScaledDot: return KernelScaledDot(s, in[0], in[1], in[2], in[3], out);
      case OpFamily::kRaggedDot: return KernelRaggedDot(s, in[0], in[1], in[2], out);
      case OpFamily::kReducePrecision: return KernelReducePrecision(s, in[0], out);
      case OpFamily::kRng: return KernelRng(s, in[0], in[1], out, rng_engine_);
      case OpFamily::kCholesky: return KernelCholesky(s, in[0], out);
      case OpFamily::kTriangularSolve: return KernelTriangularSolve(s, in[0], in[1], out);
      case OpFamily::kStochasticConvert: return KernelStochasticConvert(in[0], in[1], out);
      case OpFamily::kFft: return KernelFft(s, in[0], out);
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
      case CustomCallKind::kCallComputation:
        return RunCall(s, s.Find(AttrId::kCalledComputations) ? AttrId::kCalledComputations : AttrId::kToApply);
      case CustomCallKind::kShadowProbe: {
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
    auto shape_error = [&](const char* what) {
      return Status::Error(std::string("bundle '") + what + "' has " + std::to_string(in.size()) + " operands and " +
                           std::to_string(out.size()) + " results, which its kernel does not take");
    };
    switch (s.custom_call) {
      case CustomCallKind::kTopK:
        if (in.size() != 1 || out.size() != 2) return shape_error("TopK");
        return RunTopK(s, in[0], out[0], out[1]);
      case CustomCallKind::kNone:
        if (b.opcode == Opcode::kTopK) {
          if (in.size() != 1 || out.size() != 2) return shape_error("topk");
          return RunTopK(s, in[0], out[0], out[1]);
        }
        if (b.opcode == Opcode::kRngBitGenerator) {
          if (in.size() != 1 || out.empty() || out.size() > 2) return shape_error("rng-bit-generator");
          return KernelRngBitGenerator(s, in[0], out.size() == 2 ? &out[0] : nullptr, out.back());
        }
        if (b.opcode == Opcode::kBatchNormInference) {
          if (in.size() != 5 || out.size() != 1) return shape_error("batch-norm-inference");
          return KernelBatchNormInference(s, in[0], in[1], in[2], in[3], in[4], out[0]);
        }
        if (b.opcode == Opcode::kBatchNormGrad) {
          if (in.size() != 5 || out.size() != 3) return shape_error("batch-norm-grad");
          return KernelBatchNormGrad(s, in[0], in[1], in[2], in[3], in[4], out[0], out[1], out[2]);
        }
        if (in.size() != 3 || out.size() != 3) return shape_error("batch-norm-training");
        return KernelBatchNormTraining(s, in[0], in[1], in[2], out[0], out[1], out[2]);
      case CustomCallKind::kUniformQuantize:
      case CustomCallKind::kUniformDequantize:
        if (in.size() != 1 || out.size() != 1) return shape_error("uniform quantize");
        return KernelUniformQuantize(s, in[0], out[0], s.custom_call == CustomCallKind::kUniformQuantize);
      case CustomCallKind::kQuantizeMx:
        if (in.size() != 1 || out.size() != 2) return shape_error("QuantizeMX");
        return KernelQuantizeMx(s, in[0], out[0], out[1]);
      case CustomCallKind::kScaledMatmul:
        if (in.size() != 4 || out.size() != 1) return shape_error("ScaledMatmul");
        return KernelScaledMatmul(s, in[0], in[1], in[2], in[3], out[0]);
      case CustomCallKind::kBuilderMath:
        if (out.size() != 1) return shape_error("builder math");
        return KernelBuilderMath(s.builder_math, in, out[0]);
      case CustomCallKind::kEinsum:
        if (in.size() != 2 || out.size() != 1) return shape_error("Einsum");
        return KernelEinsum(s.config->einsum, in[0], in[1], out[0]);
      case CustomCallKind::kMatrixDiagonal:
        if (in.size() != 1 || out.size() != 1) return shape_error("GetMatrixDiagonalViaGather");
        return KernelMatrixDiagonal(in[0], out[0]);
      case CustomCallKind::kScramblePhiloxKey:
        if (in.size() != 1 || out.size() != 1) return shape_error("ScramblePhiloxKey");
        return KernelScramblePhiloxKey(in[0], out[0]);
      case CustomCallKind::kTridiagonalSolve:
        if (out.size() != 1) return shape_error("TridiagonalSolver");
        return KernelTridiagonalSolve(in, out[0]);
      case CustomCallKind::kThreefry2x32: return KernelThreefry2x32(in, out);
      case CustomCallKind::kLu:
      case CustomCallKind::kCholesky:
      case CustomCallKind::kQr:
      case CustomCallKind::kQrQ:
      case CustomCallKind::kPivotsToPermutation:
      case CustomCallKind::kTriangularSolve:
      case CustomCallKind::kEigh: return KernelSolver(s.config->solver, in, out);
      case CustomCallKind::kNeuronSoftmax:
        if (in.size() != 1 || out.size() != 1) return shape_error("AwsNeuronSoftmax");
        return KernelNeuronSoftmax(s.config->neuron_dim, in[0], out[0]);
      case CustomCallKind::kNeuronSoftmaxBackward:
        if (in.size() != 2 || out.size() != 1) return shape_error("AwsNeuronSoftmaxBackward");
        return KernelNeuronSoftmaxBackward(s.config->neuron_dim, in[0], in[1], out[0]);
      case CustomCallKind::kNeuronRmsNorm:
        if (in.size() != 3 || out.size() != 1) return shape_error("AwsNeuronRmsNorm");
        return KernelNeuronRmsNorm(s.config->neuron_dim, in[0], in[1], in[2], out[0]);
      case CustomCallKind::kNeuronArgMax:
      case CustomCallKind::kNeuronArgMin:
        if (in.size() != 1 || out.size() != 1) return shape_error("AwsNeuronArgMax/ArgMin");
        return KernelNeuronArgReduce(s.config->neuron_dim, s.custom_call == CustomCallKind::kNeuronArgMax, in[0],
                                     out[0]);
      case CustomCallKind::kIdentity:
      case CustomCallKind::kShardShape:
      case CustomCallKind::kCallComputation:
      case CustomCallKind::kUnknown:
      case CustomCallKind::kSliceToDynamic:
      case CustomCallKind::kShadowProbe:
      case CustomCallKind::kPadToStatic: break;
    }
    return Status::Error("bundle has an unknown custom call kind");
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

  void ZeroTree(uint32_t buffer) {
    const BufferRecord& b = B(buffer);
    if (b.type == PrimitiveType::kTuple) {
      for (uint32_t e : b.tuple) ZeroTree(e);
    } else if (b.size > 0 && ptr_[buffer]) {
      std::memset(ptr_[buffer], 0, b.size);
    }
  }

  // ---- asynchronous pairs, run at the start -------------------------------------------------
  // async-start runs its computation at once and holds ((operands...), result, contexts...);
  // async-update passes that on, async-done takes the result out. copy-start holds
  // (destination, source, context), both copies of the operand, and copy-done takes the
  // destination. Contexts are u32/s32 scalars nhlo leaves zero.
  // Element i of tuple buffer `buffer`, for the asynchronous pairs' held values.
  Result<uint32_t> HeldElement(const BundleRecord& b, uint32_t buffer, size_t i) {
    const BufferRecord& t = B(buffer);
    if (t.type != PrimitiveType::kTuple || t.tuple.size() <= i)
      return Status::Error("'" + std::string(OpcodeName(b.opcode)) + "' expects a tuple of at least " +
                           std::to_string(i + 1) + " elements in buffer '" + std::string(t.name) + "'");
    return t.tuple[i];
  }
  Status RunAsyncStart(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(uint32_t held, HeldElement(b, b.result, 0));
    NHLO_ASSIGN_OR_RETURN(uint32_t result, HeldElement(b, b.result, 1));
    if (B(held).type != PrimitiveType::kTuple || B(held).tuple.size() != b.operands.size())
      return Status::Error("'async-start' must hold a tuple of its " + std::to_string(b.operands.size()) + " operands");
    ZeroTree(b.result);
    for (size_t i = 0; i < b.operands.size(); ++i) NHLO_TRY(CopyTree(b.operands[i], B(held).tuple[i]));
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kCalls));
    NHLO_TRY(CallWithBuffers(b, *f, b.operands));
    return CopyTreeFrom(*f, f->root, result);
  }
  Status RunAsyncUpdate(const Step& s) { return CopyTree(s.bundle->operands[0], s.bundle->result); }
  Status RunAsyncDone(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(uint32_t result, HeldElement(b, b.operands[0], 1));
    return CopyTree(result, b.result);
  }
  Status RunCopyStart(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(uint32_t destination, HeldElement(b, b.result, 0));
    NHLO_ASSIGN_OR_RETURN(uint32_t source, HeldElement(b, b.result, 1));
    const BufferRecord& r = B(b.result);
    if (r.tuple.size() > 2) ZeroTree(r.tuple[2]);
    NHLO_TRY(CopyTree(b.operands[0], source));
    return CopyTree(b.operands[0], destination);
  }
  Status RunCopyDone(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(uint32_t destination, HeldElement(b, b.operands[0], 0));
    return CopyTree(destination, b.result);
  }

  // Transfers with --host-data=zeros: infeed and recv receive zeros (recv-done takes them out
  // of the recv), send holds its operand as a send would, outfeed and send-done drop the data.
  // The u32 contexts are 0; tokens hold nothing.
  Status RunTransferIn(const Step& s) {
    ZeroTree(s.bundle->result);
    return OkStatus();
  }
  Status RunTransferOut(const Step&) { return OkStatus(); }
  Status RunRecvDone(const Step& s) {
    const BundleRecord& b = *s.bundle;
    const BufferRecord& r = B(b.result);
    const BufferRecord& recv = B(b.operands[0]);
    if (recv.type != PrimitiveType::kTuple || recv.tuple.empty() || r.type != PrimitiveType::kTuple || r.tuple.empty())
      return Status::Error("recv-done takes a recv's (data, context, token) and returns (data, token)");
    return CopyTree(recv.tuple[0], r.tuple[0]);
  }
  Status RunSend(const Step& s) {
    const BundleRecord& b = *s.bundle;
    const BufferRecord& r = B(b.result);
    if (b.operands.empty() || r.type != PrimitiveType::kTuple || r.tuple.empty())
      return Status::Error("send returns (data, context, token)");
    ZeroTree(b.result);
    return CopyTree(b.operands[0], r.tuple[0]);
  }

  // rng-get-and-update-state(), delta=N: the state before, as u64[2] {low, high}, then the state
  // advances by N. XLA seeds the state per module and process; nhlo starts every run (and every
  // device) at 0, so runs repeat.
  Status RunRngState(const Step& s) {
    NHLO_ASSIGN_OR_RETURN(Buf out, Array(s.bundle->result));
    const AttrRecord* delta = s.Find(AttrId::kDelta);
    if (out.type() != PrimitiveType::kU64 || out.count() != 2 || !delta)
      return Status::Error("rng-get-and-update-state returns u64[2] and needs delta=");
    uint64_t words[2] = {static_cast<uint64_t>(rng_state_), static_cast<uint64_t>(rng_state_ >> 64)};
    std::memcpy(out.data, words, 16);
    rng_state_ += static_cast<unsigned __int128>(static_cast<uint64_t>(delta->i()));
    return OkStatus();
  }

  // topk(x), largest=true|false, and the TopK custom call (order fixed at load from its comparator).
  Status RunTopK(const Step& s, const Buf& x, const Buf& values, const Buf& indices) {
    const BundleRecord& b = *s.bundle;
    TopKOrder order = s.topk_order;
    if (b.opcode == Opcode::kTopK) {
      const AttrRecord* largest = s.Find(AttrId::kLargest);
      order = !largest || largest->b() ? TopKOrder::kDescending : TopKOrder::kAscending;
    }
    if (order != TopKOrder::kComparator) return KernelTopK(x, values, indices, order, {});
    // The comparator's signature was checked at load (LowerCustomCall).
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kCalledComputations));
    return KernelTopK(x, values, indices, order,
                      [this, &b, f](const uint8_t* x0, const uint8_t* x1) { return CallScalar(b, *f, x0, x1); });
  }

  // ---- bounded dynamic shapes (dynamic_steps.cc) ---------------------------------------
  std::vector<int64_t>& SizesOf(const ComputationRecord& comp, uint32_t buffer) {
    return sizes_[IndexOf(comp)][buffer];
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
  // A value's runtime sizes follow it into buffer `to` (record `to_rec`), which must hold them.
  static Status CarrySizes(const std::vector<int64_t>& from, const BufferRecord& to_rec, std::vector<int64_t>& to) {
    if (from.empty()) {
      to.clear();
      return OkStatus();
    }
    if (!FitsBound(to_rec, from))
      return Status::Error("a value below its bounds cannot move into '" + std::string(to_rec.name) +
                           "', whose shape does not hold its runtime sizes");
    if (&from != &to) to = from;
    return OkStatus();
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

  // Binds parameter buffer `param` of callee `f` to buffer `arg` of the running computation.
  Status BindTree(const ComputationRecord& f, uint32_t param, uint32_t arg) {
    const BufferRecord& pb = f.buffers[param];
    const BufferRecord& ab = B(arg);
    if (pb.type != ab.type || pb.tuple.size() != ab.tuple.size() || pb.size != ab.size)
      return Status::Error("argument '" + std::string(ab.name) + "' does not match parameter '" + std::string(pb.name) +
                           "'");
    if (pb.type == PrimitiveType::kTuple) {
      for (size_t i = 0; i < pb.tuple.size(); ++i) NHLO_TRY(BindTree(f, pb.tuple[i], ab.tuple[i]));
      return OkStatus();
    }
    P(f, param) = ptr_[arg];
    NHLO_TRY(CarrySizes(SizesOf(*cur_, arg), pb, SizesOf(f, param)));
    return OkStatus();
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

  Status CallWithBuffers(const BundleRecord& b, const ComputationRecord& f, const std::vector<uint32_t>& args) {
    if (args.size() != f.params.size())
      return Status::Error("computation '" + std::string(f.name) + "' takes " + std::to_string(f.params.size()) +
                           " arguments");
    for (size_t i = 0; i < args.size(); ++i) NHLO_TRY(BindTree(f, f.params[i], args[i]));
    return Enter(f, CalleeBase(b));
  }

  Status RunCall(const Step& s, AttrId computation) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, computation));
    NHLO_TRY(CallWithBuffers(b, *f, b.operands));
    return CopyTreeFrom(*f, f->root, b.result);
  }

  // The loop state lives in the result buffer: it starts as the operand, each condition and
  // body run reads it through their parameter, and the body's root is copied back into it.
  Status RunWhile(const Step& s) {
    const BundleRecord& b = *s.bundle;  // one operand: Lower checked it
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* cond, Callee(s, AttrId::kCondition));
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* body, Callee(s, AttrId::kBody));
    if (cond->params.size() != 1 || body->params.size() != 1)
      return Status::Error("while computations take one parameter");
    const BufferRecord& pred = cond->buffers[cond->root];
    if (pred.type != PrimitiveType::kPred || pred.size != 1) return Status::Error("while condition must return pred[]");
    NHLO_TRY(CopyTree(b.operands[0], b.result));
    for (;;) {
      NHLO_TRY(BindTree(*cond, cond->params[0], b.result));
      NHLO_TRY(Enter(*cond, CalleeBase(b)));
      const uint8_t* go = P(*cond, cond->root);
      if (!go || go[0] == 0) break;
      NHLO_TRY(BindTree(*body, body->params[0], b.result));
      NHLO_TRY(Enter(*body, CalleeBase(b)));
      NHLO_TRY(CopyTreeFrom(*body, body->root, b.result));
      // Every 256th iteration: a report costs a clock read, as much as a small loop body.
      if ((++progress_.loop_iterations & 255) == 0 && options_.progress) options_.progress(progress_);
    }
    return OkStatus();
  }

  Status RunConditional(const Step& s) {
    const BundleRecord& b = *s.bundle;
    if (b.operands.empty()) return Status::Error("conditional needs a selector");
    const BufferRecord& sel = B(b.operands[0]);
    if (!ptr_[b.operands[0]] || sel.size == 0) return Status::Error("conditional selector is unbound");
    size_t branch;
    const ComputationRecord* f;
    if (sel.type == PrimitiveType::kPred) {
      branch = ptr_[b.operands[0]][0] ? 0 : 1;
      NHLO_ASSIGN_OR_RETURN(f, Callee(s, branch == 0 ? AttrId::kTrueComputation : AttrId::kFalseComputation));
    } else if (sel.type == PrimitiveType::kS32) {
      const AttrRecord* list = s.Find(AttrId::kBranchComputations);
      if (!list || list->computations().empty()) return Status::Error("conditional has no branch_computations");
      int32_t index;
      std::memcpy(&index, ptr_[b.operands[0]], 4);
      // XLA: an out-of-range index runs the last branch.
      branch = index < 0 || static_cast<size_t>(index) >= list->computations().size() ? list->computations().size() - 1
                                                                                      : static_cast<size_t>(index);
      NHLO_ASSIGN_OR_RETURN(f, Callee(s, AttrId::kBranchComputations, branch));
    } else {
      return Status::Error("conditional selector must be pred or s32");
    }
    if (branch + 1 >= b.operands.size())
      return Status::Error("conditional has no operand for branch " + std::to_string(branch));
    NHLO_TRY(CallWithBuffers(b, *f, {b.operands[branch + 1]}));
    return CopyTreeFrom(*f, f->root, b.result);
  }

  // The result buffers of an op that returns one array for n == 1 and an n-tuple otherwise
  // (reduce, reduce-window, sort, scatter).
  Result<std::vector<Buf>> ResultLeaves(const BundleRecord& b, size_t n, const char* op) {
    std::vector<Buf> out;
    const BufferRecord& r = B(b.result);
    if (n == 1) {
      NHLO_ASSIGN_OR_RETURN(Buf o, Array(b.result));
      out.push_back(o);
      return out;
    }
    if (r.type != PrimitiveType::kTuple || r.tuple.size() != n)
      return Status::Error(std::string(op) + " of several inputs returns a tuple");
    for (uint32_t e : r.tuple) {
      NHLO_ASSIGN_OR_RETURN(Buf o, Array(e));
      out.push_back(o);
    }
    return out;
  }

  // Array views of operands [first, first + count).
  Result<std::vector<Buf>> OperandArrays(const BundleRecord& b, size_t first, size_t count) {
    std::vector<Buf> bufs;
    for (size_t i = first; i < first + count; ++i) {
      NHLO_ASSIGN_OR_RETURN(Buf x, Array(b.operands[i]));
      bufs.push_back(x);
    }
    return bufs;
  }

  // The per-element call of `f` for bundle `b`, whose root gives one scalar leaf per result
  // (of the results' sizes): checked here, once, not on every call.
  Result<CalleeCall> Caller(const BundleRecord& b, const ComputationRecord& f, const std::vector<Buf>& results,
                            const char* what) {
    const BufferRecord& root = f.buffers[f.root];
    std::vector<uint32_t> leaves;
    if (results.size() == 1 && root.type != PrimitiveType::kTuple)
      leaves.push_back(f.root);
    else if (root.type == PrimitiveType::kTuple && root.tuple.size() == results.size())
      leaves = root.tuple;
    else
      return Status::Error(std::string(what) + " must return " + std::to_string(results.size()) + " values");
    for (size_t k = 0; k < leaves.size(); ++k)
      if (f.buffers[leaves[k]].size != static_cast<uint64_t>(HostByteSize(results[k].type())))
        return Status::Error(std::string(what) + "'s result does not match the accumulator");
    auto taken = std::make_shared<std::vector<const uint8_t*>>(leaves.size());
    return CalleeCall(
        [this, &b, &f, leaves = std::move(leaves), taken](const uint8_t* const* args) -> Result<const uint8_t* const*> {
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
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(b, *f, init, "the reducer"));
    return KernelReduce(s.pattern, in, init, out, dims->ints(), call);
  }

  Status RunMap(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, Callee(s, AttrId::kToApply));
    NHLO_ASSIGN_OR_RETURN(Buf out, Array(b.result));
    NHLO_ASSIGN_OR_RETURN(std::vector<Buf> in, OperandArrays(b, 0, b.operands.size()));
    if (f->buffers[f->root].type != out.type())
      return Status::Error("map computation must return a scalar of the result type");
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(b, *f, {out}, "the map computation"));
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
    if (f->buffers[f->root].type != PrimitiveType::kPred) return Status::Error("sort comparator must return pred[]");
    Buf pred{&f->buffers[f->root], nullptr};
    NHLO_ASSIGN_OR_RETURN(CalleeCall less, Caller(b, *f, {pred}, "the sort comparator"));
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
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(b, *f, out, "the reducer"));
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
    NHLO_ASSIGN_OR_RETURN(CalleeCall call, Caller(b, *f, out, "the scatter computation"));
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
    for (const ComputationRecord* f : {select, scatter}) {
      const BufferRecord& root = f->buffers[f->root];
      PrimitiveType want = f == select ? PrimitiveType::kPred : t;
      bool ok = f->params.size() == 2 && root.type == want && root.size == static_cast<uint64_t>(HostByteSize(want));
      for (size_t i = 0; ok && i < 2; ++i)
        ok = f->buffers[f->params[i]].type == t && f->buffers[f->params[i]].size == size;
      if (!ok)
        return Status::Error("select-and-scatter computation '" + std::string(f->name) + "' must take two " +
                             std::string(PrimitiveTypeName(t)) + " scalars and return a " +
                             std::string(PrimitiveTypeName(want)) + " scalar");
    }
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
    return KernelSelectAndScatter(s, in[0], in[1], in[2], out, s.pattern.compare_known ? native_select : call(select),
                                  s.pattern.op != ScalarOp::kNone ? native_scatter : call(scatter));
  }

  const BundleProgram& p_;
  CollectiveSteps collectives_;                           // this device's groups and meetings
  std::vector<std::vector<std::vector<int64_t>>> sizes_;  // runtime sizes (docs: bounded dynamic shapes)
  std::vector<std::vector<uint8_t*>> ptrs_;               // per computation: where each buffer's bytes are
  std::vector<std::vector<uint32_t>> temps_;              // per computation: its temp buffers
  std::vector<std::vector<std::string>> constants_;       // per computation: unpacked constants
  std::vector<std::vector<Step>> steps_;                  // per computation: its bundles lowered
  std::vector<FusionPlan> fusion_;                        // per computation: its fused groups
  const ComputationRecord* cur_ = nullptr;                // the running computation
  uint8_t** ptr_ = nullptr;                               // its pointer table
  uint8_t* base_ = nullptr;                               // its frame
  int depth_ = 0;
  ExecuteOptions options_;
  ExecutionProgress progress_;
  bool annotated_ = false;  // the failing bundle's location is in the Status already
  std::unordered_map<const BundleRecord*, size_t> profile_index_;  // into options_.profile
  ZeroedMemory arena_;
  std::vector<Value> args_;
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
  if (ProgramDevices(program).count() > 1)
    return Status::Error("the module runs on " + std::to_string(program.replicas) + " x " +
                         std::to_string(program.partitions) +
                         " devices (replica_count x num_partitions); this tool runs one (nhlo-run runs them all)");
  Machine machine(program);
  machine.set_options(options);
  NHLO_TRY(machine.Load());
  return machine.Run(std::move(args));
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
                         " devices (replica_count x num_partitions); an Executable runs one");
  auto impl = std::make_unique<Impl>(program);
  impl->machine.set_options(options);
  NHLO_TRY(impl->machine.Load());
  return std::unique_ptr<Executable>(new Executable(std::move(impl)));
}

void Executable::set_options(const ExecuteOptions& options) { impl_->machine.set_options(options); }

Result<Value> Executable::Run(std::vector<Value> args) { return impl_->machine.Run(std::move(args)); }

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
  auto run = [&](uint32_t d) {
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
    for (uint32_t d = 0; d < n; ++d) {
      try {
        threads.emplace_back(run, d);
      } catch (const std::system_error& e) {
        // A process or address-space limit refused the thread: the devices not started fail, and
        // the started ones, finding their groups can never fill, stop at their next collective.
        for (uint32_t rest = d; rest < n; ++rest) {
          results[rest] = Status::Error("cannot start a thread for device " + std::to_string(rest) + " of " +
                                        std::to_string(n) + " (" + e.what() + "; fewer --devices may run)");
          rendezvous.Finish(rest, true);
        }
        break;
      }
    }
    for (std::thread& t : threads) t.join();
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
