// SPDX-License-Identifier: Apache-2.0
// Load-time lowering (LowerBundle: a bundle's step family, arity, attribute slots and checks),
// custom calls (the target's kind from types/custom_call_targets.def, its
// backend_config decoded once, for TopK the order its comparator gives) and the signatures of
// the scalar computations ops call per element.
#include <string>

#include "interp/dynamic_steps.h"
#include "interp/fused_groups.h"
#include "interp/interp.h"
#include "interp/kernels.h"
#include "interp/lower.h"
#include "interp/native_callees.h"
#include "interp/op_table.h"
#include "interp/scan_step.h"

namespace nhlo {
namespace {

// The computation a custom call names (called_computations first, then to_apply), or null.
const ComputationRecord* NamedComputation(const BundleProgram& p, const Step& s) {
  for (AttrId id : {AttrId::kCalledComputations, AttrId::kToApply})
    if (const AttrRecord* a = s.Find(id); a && !a->computations().empty()) return &p.computations[a->computations()[0]];
  return nullptr;
}

// XLA's TopkDecomposer reads a comparator whose root is compare(p0, p1) GT (or compare(p1, p0) LT)
// as GtTotalOrder, and compare(p0, p1) LT (or compare(p1, p0) GT) as LtTotalOrder. Anything else
// runs as written. A comparator of (value, value, index, index) is read the same way.
TopKOrder ComparatorOrder(const ComputationRecord& f) {
  if (f.params.size() != 2 && f.params.size() != 4) return TopKOrder::kComparator;
  for (const BundleRecord& b : f.bundles) {
    if (b.result != f.root) continue;
    const AttrRecord* dir = b.Find(AttrId::kDirection);
    if (b.opcode != Opcode::kCompare || b.operands.size() != 2 || !dir) return TopKOrder::kComparator;
    bool straight = b.operands[0] == f.params[0] && b.operands[1] == f.params[1];
    bool swapped = b.operands[0] == f.params[1] && b.operands[1] == f.params[0];
    auto d = static_cast<ComparisonDirection>(dir->i());
    if ((straight && d == ComparisonDirection::kGt) || (swapped && d == ComparisonDirection::kLt))
      return TopKOrder::kDescending;
    if ((straight && d == ComparisonDirection::kLt) || (swapped && d == ComparisonDirection::kGt))
      return TopKOrder::kAscending;
    return TopKOrder::kComparator;
  }
  return TopKOrder::kComparator;
}

// A comparator that runs as written binds two scalars of the operand's type and returns pred[].
Status CheckComparator(const ComputationRecord& comp, const BundleRecord& b, const ComputationRecord& f) {
  if (b.operands.size() != 1) return Status::Error("TopK takes one operand");
  PrimitiveType t = comp.buffers[b.operands[0]].type;
  const BufferRecord& root = f.buffers[f.root];
  bool ok = IsArrayType(t) && f.params.size() == 2 && root.type == PrimitiveType::kPred && root.size == 1;
  for (size_t i = 0; ok && i < 2; ++i)
    ok = f.buffers[f.params[i]].type == t && f.buffers[f.params[i]].size == static_cast<uint64_t>(HostByteSize(t));
  if (!ok)
    return Status::Error("TopK comparator '" + std::string(f.name) + "' must take two " +
                         std::string(PrimitiveTypeName(t)) + " scalars and return pred[]");
  return OkStatus();
}

}  // namespace

namespace {

// The config the bundle reader decoded (every custom call read from a file has one).
const CustomCallConfig* DecodedConfig(const BundleRecord& b) {
  static const CustomCallConfig* const kNone = [] {
    auto* none = new CustomCallConfig;
    none->status = Status::Error("custom call was not read by the bundle reader: no decoded backend_config");
    return none;
  }();
  return b.config ? b.config.get() : kNone;
}

}  // namespace

Status LowerCustomCall(const BundleProgram& p, const ComputationRecord& comp, Step& s) {
  const AttrRecord* target = s.Find(AttrId::kCustomCallTarget);
  std::string_view name = target ? target->text() : std::string_view();
  const AttrRecord* config = s.Find(AttrId::kBackendConfig);
  const ComputationRecord* called = NamedComputation(p, s);
  s.custom_call = CustomCallKindOf(name, called != nullptr);
  auto configs = std::make_unique<Step::Configs>();
  switch (s.custom_call) {
    case CustomCallKind::kNone:
    case CustomCallKind::kUnknown:
      s.custom_call = CustomCallKind::kUnknown;
      return Status::Error("the interpreter does not know custom_call_target \"" + std::string(name) + "\"");
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kBlockScaledDot:
    case CustomCallKind::kCublasGemm:
    case CustomCallKind::kCudnnConv:
    case CustomCallKind::kCubSort:
    case CustomCallKind::kCudnnFmha:
    case CustomCallKind::kHostCallback:
      // The compiler binds their expansion (ir/block_scaling.h); a bundle holding one unbound was
      // not written by nhlo-compile.
      s.custom_call = CustomCallKind::kUnknown;
      return Status::Error("custom_call_target \"" + std::string(name) +
                           "\" names no expansion to run (nhlo-compile binds one)");
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize: {
      if (!config) return Status::Error("uniform quantize custom call has no backend_config");
      NHLO_ASSIGN_OR_RETURN(const UniformQuantConfig* decoded, DecodedConfig(*s.bundle)->As<UniformQuantConfig>());
      configs->uniform_quant = *decoded;
      break;
    }
    case CustomCallKind::kQuantizeMx: {
      if (!config) return Status::Error("QuantizeMX custom call has no backend_config");
      NHLO_ASSIGN_OR_RETURN(const QuantizeMxConfig* decoded, DecodedConfig(*s.bundle)->As<QuantizeMxConfig>());
      configs->quantize_mx = *decoded;
      break;
    }
    case CustomCallKind::kScaledMatmul: {
      if (!config) return Status::Error("ScaledMatmul custom call has no backend_config");
      NHLO_ASSIGN_OR_RETURN(const ScaledMatmulConfig* decoded, DecodedConfig(*s.bundle)->As<ScaledMatmulConfig>());
      configs->scaled_matmul = *decoded;
      break;
    }
    case CustomCallKind::kIdentity:
    case CustomCallKind::kShardShape:
      if (s.bundle->operands.size() != 1)
        return Status::Error("custom_call_target \"" + std::string(name) + "\" takes one operand");
      return OkStatus();
    case CustomCallKind::kTopK:
      s.topk_order = called ? ComparatorOrder(*called) : TopKOrder::kDescending;
      if (s.topk_order == TopKOrder::kComparator) return CheckComparator(comp, *s.bundle, *called);
      return OkStatus();
    case CustomCallKind::kBuilderMath:
      s.builder_math = FindBuilderMath(name)->fn;
      if (s.bundle->operands.size() != static_cast<size_t>(FindBuilderMath(name)->operands))
        return Status::Error("custom_call_target \"" + std::string(name) + "\" has the wrong number of operands");
      return OkStatus();
    case CustomCallKind::kEinsum: {
      if (!config || s.bundle->operands.size() != 2)
        return Status::Error("custom_call_target \"" + std::string(name) + "\" takes two operands and its einsum");
      NHLO_ASSIGN_OR_RETURN(const EinsumConfig* einsum, DecodedConfig(*s.bundle)->As<EinsumConfig>());
      configs->einsum = *einsum;
      auto dims = EinsumResultDims(configs->einsum, comp.buffers[s.bundle->operands[0]].dims,
                                   comp.buffers[s.bundle->operands[1]].dims);
      if (!dims.ok()) return dims.status();
      if (*dims != comp.buffers[s.bundle->result].dims)
        return Status::Error("custom_call_target \"" + std::string(name) + "\" result does not fit its einsum");
      s.scratch_bytes =
          EinsumScratchBytes(configs->einsum, comp.buffers[s.bundle->operands[0]].dims,
                             comp.buffers[s.bundle->operands[1]].dims, comp.buffers[s.bundle->result].type);
      break;
    }
    case CustomCallKind::kMatrixDiagonal:
    case CustomCallKind::kScramblePhiloxKey:
      if (s.bundle->operands.size() != 1)
        return Status::Error("custom_call_target \"" + std::string(name) + "\" takes one operand");
      return OkStatus();
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kPadToStatic: return OkStatus();  // their operands are checked when they run (interp.cc)
    case CustomCallKind::kTridiagonalSolve:
      if (s.bundle->operands.size() != 2 && s.bundle->operands.size() != 4)
        return Status::Error("custom_call_target \"" + std::string(name) + "\" takes two or four operands");
      return OkStatus();
    case CustomCallKind::kLu:
    case CustomCallKind::kCholesky:
    case CustomCallKind::kQr:
    case CustomCallKind::kQrQ:
    case CustomCallKind::kPivotsToPermutation:
    case CustomCallKind::kTriangularSolve:
    case CustomCallKind::kEigh:
    case CustomCallKind::kSvd:
    case CustomCallKind::kGtsv:
    case CustomCallKind::kEig: {
      NHLO_ASSIGN_OR_RETURN(const SolverConfig* solver, DecodedConfig(*s.bundle)->As<SolverConfig>());
      configs->solver = *solver;
      break;
    }
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin: {
      if (s.bundle->operands.empty())
        return Status::Error("custom_call_target \"" + std::string(name) + "\" needs an operand");
      NHLO_ASSIGN_OR_RETURN(const NeuronDimension* dim, DecodedConfig(*s.bundle)->As<NeuronDimension>());
      configs->neuron_dim = dim->dim;
      configs->neuron_op = s.custom_call == CustomCallKind::kNeuronSoftmax           ? NeuronOp::kSoftmax
                           : s.custom_call == CustomCallKind::kNeuronSoftmaxBackward ? NeuronOp::kSoftmaxBackward
                           : s.custom_call == CustomCallKind::kNeuronRmsNorm         ? NeuronOp::kRmsNorm
                           : s.custom_call == CustomCallKind::kNeuronArgMax          ? NeuronOp::kArgMax
                                                                                     : NeuronOp::kArgMin;
      break;
    }
    case CustomCallKind::kThreefry2x32: return OkStatus();  // its shapes are checked when it runs
    case CustomCallKind::kShadowProbe: return OkStatus();   // any operands; it only reads them
    case CustomCallKind::kCallComputation:
      if (!called) return Status::Error("custom_call_target \"" + std::string(name) + "\" names no computation to run");
      return OkStatus();
  }
  s.config = std::move(configs);
  return OkStatus();
}

// Ops that call a computation once per element (reduce, map, sort, reduce-window, scatter) bind
// scalars of known types to its parameters: checked here, once, instead of on every call.
Status CheckScalarCallee(const BundleProgram& p, const ComputationRecord& comp, const Step& s) {
  const BundleRecord& b = *s.bundle;
  std::vector<PrimitiveType> want;
  auto type_of = [&](size_t operand) { return comp.buffers[b.operands[operand]].type; };
  size_t n = b.operands.size();
  switch (s.family) {
    case OpFamily::kMap:
      for (size_t i = 0; i < n; ++i) want.push_back(type_of(i));
      break;
    case OpFamily::kSort:
      for (size_t i = 0; i < n; ++i) want.insert(want.end(), {type_of(i), type_of(i)});
      break;
    case OpFamily::kReduce:
    case OpFamily::kReduceWindow:         // inputs..., inits...: (accumulators, elements)
      if (n % 2 != 0) return OkStatus();  // RunReduce and RunReduceWindow report it
      for (size_t i = n / 2; i < n; ++i) want.push_back(type_of(i));
      for (size_t i = 0; i < n / 2; ++i) want.push_back(type_of(i));
      break;
    case OpFamily::kScatter:              // inputs..., indices, updates...: (current values, updates)
      if (n % 2 != 1) return OkStatus();  // RunScatter reports it
      for (size_t i = 0; i < n / 2; ++i) want.push_back(type_of(i));
      for (size_t i = n / 2 + 1; i < n; ++i) want.push_back(type_of(i));
      break;
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
    case OpFamily::kSelectAndScatter:
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
    case OpFamily::kCollective:  // the reducer is checked when it runs (Reduce)
    case OpFamily::kAsyncStart:
    case OpFamily::kAsyncUpdate:
    case OpFamily::kAsyncDone:
    case OpFamily::kCopyStart:
    case OpFamily::kCopyDone: return OkStatus();
  }
  const AttrRecord* to_apply = s.Find(AttrId::kToApply);
  if (!to_apply || to_apply->computations().empty())
    return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no to_apply computation");
  const ComputationRecord* f = &p.computations[to_apply->computations()[0]];
  if (f->params.size() != want.size())
    return Status::Error("computation '" + std::string(f->name) + "' takes " + std::to_string(f->params.size()) +
                         " parameters, '" + std::string(OpcodeName(b.opcode)) + "' passes " +
                         std::to_string(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const BufferRecord& pb = f->buffers[f->params[i]];
    if (pb.type != want[i] || !IsArrayType(want[i]) || pb.size != static_cast<uint64_t>(HostByteSize(want[i])))
      return Status::Error("parameter " + std::to_string(i) + " of '" + std::string(f->name) + "' is not a " +
                           std::string(PrimitiveTypeName(want[i])) + " scalar");
  }
  return OkStatus();
}

namespace {

// The root leaves a per-element call of `f` reads, one per result of `sizes` bytes (the
// accumulators, or the results), or the executor's error when the root does not give them.
CalleeSignature RootLeaves(const ComputationRecord& f, const std::vector<const BufferRecord*>& results,
                           const char* what) {
  CalleeSignature sig;
  const BufferRecord& root = f.buffers[f.root];
  if (results.size() == 1 && root.type != PrimitiveType::kTuple)
    sig.leaves.push_back(f.root);
  else if (root.type == PrimitiveType::kTuple && root.tuple.size() == results.size())
    sig.leaves = root.tuple;
  else
    sig.error = Status::Error(std::string(what) + " must return " + std::to_string(results.size()) + " values");
  for (size_t k = 0; sig.error.ok() && k < sig.leaves.size(); ++k)
    if (sig.leaves[k] >= f.buffers.size() ||
        f.buffers[sig.leaves[k]].size != static_cast<uint64_t>(HostByteSize(results[k]->type)))
      sig.error = Status::Error(std::string(what) + "'s result does not match the accumulator");
  if (!sig.error.ok()) sig.leaves.clear();
  return sig;
}

// The checks the executor made of a step's called computations on every run (ControlFlow:
// RunMap, RunSort, RunSelectAndScatter and the per-element Caller; the steps that run a
// computation whole, in lower_control.cc), made here once. A per-element step whose
// computations or records are missing gets none: the run reports that first.
void LowerCalleeSignature(const BundleProgram& p, const ComputationRecord& comp, Step& s) {
  const BundleRecord& b = *s.bundle;
  auto callee = [&](AttrId id) { return Called(p, s, id); };
  auto record = [&](uint32_t i) { return i < comp.buffers.size() ? &comp.buffers[i] : nullptr; };
  // The result, or its n leaves (Frames::ResultLeaves), or empty when they are not n.
  auto result_leaves = [&](size_t n) {
    std::vector<const BufferRecord*> out;
    const BufferRecord* r = record(b.result);
    if (!r) return out;
    if (n == 1) return std::vector<const BufferRecord*>{r};
    if (r->type != PrimitiveType::kTuple || r->tuple.size() != n) return out;
    for (uint32_t e : r->tuple) {
      if (!record(e)) return std::vector<const BufferRecord*>{};
      out.push_back(record(e));
    }
    return out;
  };
  auto operand_records = [&](size_t first, size_t count) {
    std::vector<const BufferRecord*> out;
    for (size_t i = first; i < first + count && i < b.operands.size(); ++i) {
      if (!record(b.operands[i])) return std::vector<const BufferRecord*>{};
      out.push_back(record(b.operands[i]));
    }
    return out;
  };
  auto keep = [&](CalleeSignature sig) { s.callee = std::make_unique<const CalleeSignature>(std::move(sig)); };
  const size_t operands = b.operands.size();
  switch (s.family) {
    case OpFamily::kReduce:
    case OpFamily::kReduceWindow: {
      const ComputationRecord* f = callee(AttrId::kToApply);
      const size_t n = operands / 2;
      if (!f || n == 0 || operands != 2 * n) return;
      // A reduce's accumulators are its init values; a reduce-window's, its results.
      const std::vector<const BufferRecord*> acc =
          s.family == OpFamily::kReduce ? operand_records(n, n) : result_leaves(n);
      if (acc.size() == n) keep(RootLeaves(*f, acc, "the reducer"));
      return;
    }
    case OpFamily::kScatter: {
      const ComputationRecord* f = callee(AttrId::kToApply);
      const size_t n = (operands - 1) / 2;
      if (!f || n == 0 || operands != 2 * n + 1) return;
      const std::vector<const BufferRecord*> out = result_leaves(n);
      if (out.size() == n) keep(RootLeaves(*f, out, "the scatter computation"));
      return;
    }
    case OpFamily::kMap: {
      const ComputationRecord* f = callee(AttrId::kToApply);
      const BufferRecord* out = record(b.result);
      if (!f || !out) return;
      if (f->buffers[f->root].type != out->type) {
        CalleeSignature sig;
        sig.error = Status::Error("map computation must return a scalar of the result type");
        return keep(std::move(sig));
      }
      return keep(RootLeaves(*f, {out}, "the map computation"));
    }
    case OpFamily::kSort: {
      const ComputationRecord* f = callee(AttrId::kToApply);
      if (!f) return;
      const BufferRecord& root = f->buffers[f->root];
      if (root.type != PrimitiveType::kPred) {
        CalleeSignature sig;
        sig.error = Status::Error("sort comparator must return pred[]");
        return keep(std::move(sig));
      }
      return keep(RootLeaves(*f, {&root}, "the sort comparator"));
    }
    case OpFamily::kWhile: return keep(WhileSignature(p, comp, s));
    case OpFamily::kCall: return keep(CallSignature(p, comp, s, AttrId::kToApply));
    case OpFamily::kFusion: return keep(CallSignature(p, comp, s, AttrId::kCalls));
    case OpFamily::kConditional: return keep(ConditionalSignature(p, comp, s));
    case OpFamily::kAsyncStart: return keep(AsyncStartSignature(p, comp, s));
    case OpFamily::kTupleResult:
      if (s.custom_call == CustomCallKind::kCallComputation)
        keep(CallSignature(p, comp, s,
                           s.Find(AttrId::kCalledComputations) ? AttrId::kCalledComputations : AttrId::kToApply));
      return;
    case OpFamily::kSelectAndScatter: {
      const ComputationRecord* select = callee(AttrId::kSelect);
      const ComputationRecord* scatter = callee(AttrId::kScatter);
      const std::vector<const BufferRecord*> in = operand_records(0, 3);
      if (!select || !scatter || in.size() != 3) return;
      const PrimitiveType t = in[0]->type;
      const uint64_t size = static_cast<uint64_t>(HostByteSize(t));
      CalleeSignature sig;
      for (const ComputationRecord* f : {select, scatter}) {
        const BufferRecord& root = f->buffers[f->root];
        const PrimitiveType want = f == select ? PrimitiveType::kPred : t;
        bool ok = f->params.size() == 2 && root.type == want && root.size == static_cast<uint64_t>(HostByteSize(want));
        for (size_t i = 0; ok && i < 2; ++i)
          ok = f->buffers[f->params[i]].type == t && f->buffers[f->params[i]].size == size;
        if (!ok && sig.error.ok())
          sig.error = Status::Error("select-and-scatter computation '" + std::string(f->name) + "' must take two " +
                                    std::string(PrimitiveTypeName(t)) + " scalars and return a " +
                                    std::string(PrimitiveTypeName(want)) + " scalar");
      }
      return keep(std::move(sig));
    }
    case OpFamily::kNotExecutable:
    case OpFamily::kBound:
    case OpFamily::kTuple:
    case OpFamily::kGetTupleElement:
    case OpFamily::kAfterAll:
    case OpFamily::kAddDependency:
    case OpFamily::kCopy:
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
    case OpFamily::kCollective:
    case OpFamily::kAsyncUpdate:
    case OpFamily::kAsyncDone:
    case OpFamily::kCopyStart:
    case OpFamily::kCopyDone: return;
  }
}

Status Arity(const BundleRecord& b, size_t n) {
  if (b.operands.size() != n)
    return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has " + std::to_string(b.operands.size()) +
                         " operands, expected " + std::to_string(n));
  return OkStatus();
}

// The operand and result-leaf counts the kernel of a tuple-result step takes, as RunTupleResult
// hands them over (one Buf per operand, one per leaf of the result), checked here once. `name`
// null: the kernel takes any counts or checks its own (batch norm's planner and kernel, the
// solvers, threefry), or the step runs no kernel (identity, a called computation, a probe).
struct KernelLeaves {
  const char* name = nullptr;
  int operands = -1;  // -1: any
  size_t min_results = 1, max_results = 1;
};

KernelLeaves KernelLeavesOf(const Step& s) {
  switch (s.custom_call) {
    case CustomCallKind::kNone:
      if (s.opcode() == Opcode::kTopK) return {"topk", 1, 2, 2};
      if (s.opcode() == Opcode::kRngBitGenerator) return {"rng-bit-generator", 1, 1, 2};
      return {};
    case CustomCallKind::kTopK: return {"TopK", 1, 2, 2};
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize: return {"uniform quantize", 1, 1, 1};
    case CustomCallKind::kQuantizeMx: return {"QuantizeMX", 1, 2, 2};
    case CustomCallKind::kScaledMatmul: return {"ScaledMatmul", 4, 1, 1};
    case CustomCallKind::kBuilderMath: return {"builder math", -1, 1, 1};
    case CustomCallKind::kEinsum: return {"Einsum", 2, 1, 1};
    case CustomCallKind::kMatrixDiagonal: return {"GetMatrixDiagonalViaGather", 1, 1, 1};
    case CustomCallKind::kScramblePhiloxKey: return {"ScramblePhiloxKey", 1, 1, 1};
    case CustomCallKind::kTridiagonalSolve: return {"TridiagonalSolver", -1, 1, 1};
    case CustomCallKind::kNeuronSoftmax: return {"AwsNeuronSoftmax", 1, 1, 1};
    case CustomCallKind::kNeuronSoftmaxBackward: return {"AwsNeuronSoftmaxBackward", 2, 1, 1};
    case CustomCallKind::kNeuronRmsNorm: return {"AwsNeuronRmsNorm", 3, 1, 1};
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin: return {"AwsNeuronArgMax/ArgMin", 1, 1, 1};
    case CustomCallKind::kUnknown:
    case CustomCallKind::kIdentity:
    case CustomCallKind::kShardShape:
    case CustomCallKind::kCallComputation:
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kPadToStatic:
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
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kBlockScaledDot:
    case CustomCallKind::kCublasGemm:
    case CustomCallKind::kCudnnConv:
    case CustomCallKind::kCubSort:
    case CustomCallKind::kCudnnFmha:
    case CustomCallKind::kHostCallback:
    case CustomCallKind::kShadowProbe: return {};
  }
  return {};
}

Status CheckKernelLeaves(const ComputationRecord& comp, const Step& s) {
  const KernelLeaves want = KernelLeavesOf(s);
  if (!want.name) return OkStatus();
  const BundleRecord& b = *s.bundle;
  const BufferRecord& out = comp.buffers[b.result];
  const size_t results = out.type == PrimitiveType::kTuple ? out.tuple.size() : 1;
  if ((want.operands >= 0 && b.operands.size() != static_cast<size_t>(want.operands)) || results < want.min_results ||
      results > want.max_results)
    return Status::Error(std::string("bundle '") + want.name + "' has " + std::to_string(b.operands.size()) +
                         " operands and " + std::to_string(results) + " results, which its kernel does not take");
  return OkStatus();
}

// A static step's plan (kernel_plans.h: every kernel it lists, from dot and convolution to batch
// norm, rng, scaled-dot and sub-byte bitcast-convert). One that fails its checks gets none: the
// run then reports the failure (KernelDot, KernelConvolution, KernelSlice...), as it would, for
// a step a program never reaches only if it reaches it.
void LowerKernelPlan(const ComputationRecord& comp, Step& s) {
  const BundleRecord& b = *s.bundle;
  for (const uint32_t i : b.operands)
    if (comp.buffers[i].type == PrimitiveType::kTuple) return;
  const BufferRecord& out = comp.buffers[b.result];
  const size_t operands = b.operands.size();
  auto keep = [&s](auto plan) {
    if (plan.ok()) s.plan = std::make_unique<const KernelPlan>(std::move(*plan));
  };
  auto operand_records = [&](size_t first, size_t count) {
    std::vector<const BufferRecord*> records;
    for (size_t k = first; k < first + count && k < operands; ++k) records.push_back(&comp.buffers[b.operands[k]]);
    return records;
  };
  // The result's leaves, as the run reads them: the result itself, or each element of its tuple.
  std::vector<const BufferRecord*> leaves;
  if (out.type != PrimitiveType::kTuple) leaves.push_back(&out);
  for (const uint32_t leaf : out.tuple)
    if (leaf < comp.buffers.size()) leaves.push_back(&comp.buffers[leaf]);
  const bool single = leaves.size() == 1;
  const OpFamily f = s.family;
  if (f == OpFamily::kReduce || f == OpFamily::kReduceWindow || f == OpFamily::kSort) {
    // inputs... (and for reduces, inits...); a tuple of results when there are several
    if (f == OpFamily::kSort) {
      const std::vector<int64_t>* dims = IntList(s, AttrId::kDimensions);
      if (dims && dims->size() == 1) keep(PlanSort(operand_records(0, operands), leaves, (*dims)[0], &s.pattern));
      return;
    }
    if (operands % 2 != 0) return;
    const std::vector<const BufferRecord*> inputs = operand_records(0, operands / 2);
    const std::vector<const BufferRecord*> inits = operand_records(operands / 2, operands / 2);
    if (f == OpFamily::kReduceWindow) return keep(PlanReduceWindow(s, inputs, inits, leaves));
    if (const std::vector<int64_t>* dims = IntList(s, AttrId::kDimensions))
      keep(PlanReduce(inputs, inits, leaves, *dims));
    return;
  }
  if (f == OpFamily::kScatter) {
    // One input with strides when its start dimensions allow; otherwise the evaluator's walk.
    if (operands == 3 && out.type != PrimitiveType::kTuple) {
      Result<ScatterPlan> strided = PlanScatter(s, operand_records(0, operands), out);
      if (strided.ok()) return keep(std::move(strided));
    }
    return keep(PlanScatterWalk(s, operand_records(0, operands), leaves));
  }
  if (b.opcode == Opcode::kBatchNormTraining || b.opcode == Opcode::kBatchNormInference ||
      b.opcode == Opcode::kBatchNormGrad)
    return keep(PlanBatchNorm(s, operand_records(0, operands), leaves));
  if (b.opcode == Opcode::kRngBitGenerator) {
    // (new state, bits), or bits alone: as a tuple of one or as the array itself.
    if (operands != 1 || leaves.empty() || leaves.size() > 2) return;
    return keep(
        PlanRngBitGenerator(s, comp.buffers[b.operands[0]], leaves.size() == 2 ? leaves[0] : nullptr, *leaves.back()));
  }
  if (b.opcode == Opcode::kTopK || s.custom_call == CustomCallKind::kTopK) {
    if (operands == 1 && leaves.size() == 2) keep(PlanTopK(comp.buffers[b.operands[0]], *leaves[0], *leaves[1]));
    return;
  }
  // A kernel with only checks to make: their verdict.
  auto checked = [](const Status& checks) -> Result<CheckedCallPlan> {
    NHLO_TRY(checks);
    return CheckedCallPlan{};
  };
  switch (s.custom_call) {
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin:
      if (s.config && operands >= 1 && single)
        keep(PlanNeuron(s.config->neuron_op, s.config->neuron_dim, operand_records(0, operands), *leaves[0]));
      return;
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize:
      if (s.config && operands == 1 && single)
        keep(PlanUniformQuantize(s.config->uniform_quant, comp.buffers[b.operands[0]], *leaves[0],
                                 s.custom_call == CustomCallKind::kUniformQuantize));
      return;
    case CustomCallKind::kQuantizeMx:
      if (s.config && operands == 1 && leaves.size() == 2)
        keep(PlanQuantizeMx(s.config->quantize_mx, comp.buffers[b.operands[0]], *leaves[0], *leaves[1]));
      return;
    case CustomCallKind::kScaledMatmul:
      if (s.config && operands == 4 && single)
        keep(PlanScaledMatmul(s.config->scaled_matmul, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]],
                              comp.buffers[b.operands[2]], comp.buffers[b.operands[3]], *leaves[0]));
      return;
    case CustomCallKind::kMatrixDiagonal:
      if (operands == 1 && single) keep(checked(CheckMatrixDiagonal(comp.buffers[b.operands[0]], *leaves[0])));
      return;
    case CustomCallKind::kScramblePhiloxKey:
      if (operands == 1 && single) keep(checked(CheckScramblePhiloxKey(comp.buffers[b.operands[0]], *leaves[0])));
      return;
    case CustomCallKind::kTridiagonalSolve:
      if (operands >= 1 && single) keep(checked(CheckTridiagonalSolve(operand_records(0, operands), *leaves[0])));
      return;
    case CustomCallKind::kBuilderMath:
      if (single) keep(checked(CheckBuilderMath(s.builder_math, operand_records(0, operands), *leaves[0])));
      return;
    case CustomCallKind::kThreefry2x32: keep(checked(CheckThreefry2x32(operand_records(0, operands), leaves))); return;
    case CustomCallKind::kEinsum:
      if (s.config && operands == 2 && single)
        keep(PlanEinsum(s.config->einsum, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], *leaves[0]));
      return;
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
      if (s.config) keep(checked(CheckSolver(s.config->solver, operand_records(0, operands), leaves)));
      return;
    case CustomCallKind::kNone:
    case CustomCallKind::kUnknown:
    case CustomCallKind::kIdentity:
    case CustomCallKind::kShardShape:
    case CustomCallKind::kTopK:
    case CustomCallKind::kCallComputation:
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kPadToStatic:
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kBlockScaledDot:
    case CustomCallKind::kCublasGemm:
    case CustomCallKind::kCudnnConv:
    case CustomCallKind::kCubSort:
    case CustomCallKind::kCudnnFmha:
    case CustomCallKind::kHostCallback:
    case CustomCallKind::kShadowProbe: break;
  }
  if (out.type == PrimitiveType::kTuple) return;
  if (f == OpFamily::kRng) {
    if (operands >= 2) keep(PlanRng(s, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], out));
    return;
  }
  if (f == OpFamily::kStochasticConvert) {
    if (operands == 2) keep(PlanStochasticConvert(comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], out));
    return;
  }
  if (f == OpFamily::kUnary || f == OpFamily::kBinary || f == OpFamily::kCompare || f == OpFamily::kSelect ||
      f == OpFamily::kClamp || f == OpFamily::kConvert || f == OpFamily::kReducePrecision) {
    keep(PlanElementwise(comp, s));
  } else if (f == OpFamily::kBroadcast || f == OpFamily::kTranspose || f == OpFamily::kSlice ||
             f == OpFamily::kReverse) {
    if (operands == 1) keep(PlanCopy(s, comp.buffers[b.operands[0]], nullptr, out));
  } else if (f == OpFamily::kPad) {
    if (operands == 2) keep(PlanCopy(s, comp.buffers[b.operands[0]], &comp.buffers[b.operands[1]], out));
  } else if (f == OpFamily::kCopy) {
    if (operands == 1 && b.opcode == Opcode::kCopy && comp.buffers[b.operands[0]].type != out.type &&
        IsFloat(comp.buffers[b.operands[0]].type) && IsFloat(out.type))
      keep(PlanConvertingCopy(comp.buffers[b.operands[0]], out));
  } else if (f == OpFamily::kMap) {
    keep(PlanMap(s.pattern, operand_records(0, operands), out));
  } else if (f == OpFamily::kRaggedDot) {
    if (operands == 3)
      keep(
          PlanRaggedDot(s, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], comp.buffers[b.operands[2]], out));
  } else if (f == OpFamily::kFft) {
    if (operands == 1) keep(PlanFft(s, comp.buffers[b.operands[0]], out));
  } else if (f == OpFamily::kCholesky) {
    if (operands == 1) keep(PlanCholesky(s, comp.buffers[b.operands[0]], out));
  } else if (f == OpFamily::kTriangularSolve) {
    if (operands == 2) keep(PlanTriangularSolve(s, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], out));
  } else if (f == OpFamily::kBitcastConvert) {
    if (operands == 1) keep(PlanBitcastConvert(comp.buffers[b.operands[0]], out));
    if (operands == 1 && !s.plan) keep(PlanBitFields(comp.buffers[b.operands[0]], out));
  } else if (f == OpFamily::kReshape) {
    // A bitcast between layouts permutes through a buffer of its own at the run (RunBitcast).
    const bool layouts = b.opcode == Opcode::kBitcast && IntList(s, AttrId::kBitcastLayouts);
    if (operands == 1 && !layouts) keep(PlanReshape(comp.buffers[b.operands[0]], out));
    if (operands == 1 && layouts) keep(PlanBitcast(s, comp.buffers[b.operands[0]], out));
  } else if (f == OpFamily::kIota) {
    if (operands == 0) keep(PlanIota(s, out));
  } else if (f == OpFamily::kConcatenate) {
    keep(PlanConcatenate(s, operand_records(0, operands), out));
  } else if (f == OpFamily::kDynamicSlice || f == OpFamily::kDynamicUpdateSlice) {
    keep(PlanDynamicSlice(f == OpFamily::kDynamicUpdateSlice, operand_records(0, operands), out));
  } else if (f == OpFamily::kGather) {
    if (operands == 2) keep(PlanGather(s, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], out));
  } else if (f == OpFamily::kSelectAndScatter) {
    if (operands == 3)
      keep(PlanSelectAndScatter(s, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]],
                                comp.buffers[b.operands[2]], out));
  } else if (f == OpFamily::kScaledDot) {
    if (operands == 4)
      keep(PlanScaledDot(s, comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], comp.buffers[b.operands[2]],
                         comp.buffers[b.operands[3]], out));
  } else if (f == OpFamily::kDot) {
    if (operands == 2) keep(PlanDot(DotDims(s), comp.buffers[b.operands[0]], comp.buffers[b.operands[1]], out));
  } else if (f == OpFamily::kConvolution) {
    if (operands == 2)
      keep(PlanConvolution(DimsOf<ConvolutionDimensionNumbers>(s), comp.buffers[b.operands[0]],
                           comp.buffers[b.operands[1]], out));
  }
}

// A map without a native span whose callee is a chain of scalar elementwise steps runs as a group
// over its arrays (fused_groups.h, LiftedCallee): the callee's bundles are lowered here to see.
void LiftMap(const BundleProgram& p, const ComputationRecord& comp, Step& s, const ExecuteOptions& options) {
  const MapPlan* plan = s.plan ? std::get_if<MapPlan>(s.plan.get()) : nullptr;
  const AttrRecord* to_apply = s.Find(AttrId::kToApply);
  if (!plan || plan->native.fn || !to_apply || to_apply->computations().empty() ||
      to_apply->computations()[0] >= p.computations.size())
    return;
  const ComputationRecord& callee = p.computations[to_apply->computations()[0]];
  // Nothing is lowered unless every step could lift: a callee holding a map of its own is not
  // lowered here, so nested maps are lowered once, not once per level.
  for (const BundleRecord& b : callee.bundles)
    if (OpFamily f = ExecutionOf(b.opcode).family; f != OpFamily::kBound && !LiftableFamily(f)) return;
  std::vector<Step> steps;
  steps.reserve(callee.bundles.size());
  for (const BundleRecord& b : callee.bundles) {
    Result<Step> step = LowerBundle(p, callee, b, options);
    if (!step.ok()) return;  // the per-element run reports it
    steps.push_back(std::move(*step));
  }
  std::shared_ptr<const LiftedCallee> lifted = LiftCallee(p, comp, *s.bundle, callee, steps);
  if (!lifted) return;
  MapPlan with = *plan;
  with.lifted = std::move(lifted);
  s.plan = std::make_unique<const KernelPlan>(std::move(with));
}

}  // namespace

// Lowers one bundle: its step family, attribute slots and custom call, and the checks that
// do not depend on values (operand counts, attributes each family reads).
Result<Step> LowerBundle(const BundleProgram& p, const ComputationRecord& comp, const BundleRecord& b,
                         const ExecuteOptions& options) {
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
    case OpFamily::kSend:
    case OpFamily::kTransferOut:
    case OpFamily::kRecvDone:
      arity = OpcodeArity(b.opcode);  // the op table's: a file may hold any operand count
      // A send or recv between devices runs with the collectives (CollectiveSteps::RunTransfer).
      if ((b.opcode == Opcode::kSend || b.opcode == Opcode::kRecv) && s.Find(AttrId::kSendRecvPairs)) {
        s.family = OpFamily::kCollective;
        break;
      }
      // The -done of a send or recv moves nothing: its start is refused (or runs) in its place.
      if (b.opcode == Opcode::kSendDone || b.opcode == Opcode::kRecvDone) break;
      if (options.host_data == HostData::kNone)
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
  if (s.family == OpFamily::kRngState) {
    const BufferRecord& out = comp.buffers[b.result];
    if (out.type != PrimitiveType::kU64 || out.ElementCount() != 2 || !s.Find(AttrId::kDelta))
      return Status::Error("rng-get-and-update-state returns u64[2] and needs delta=");
  }
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
  if (b.opcode == Opcode::kCustomCall) NHLO_TRY(LowerCustomCall(p, comp, s));
  if (s.family == OpFamily::kTupleResult) NHLO_TRY(CheckKernelLeaves(comp, s));
  if (b.opcode == Opcode::kTopK) {
    const AttrRecord* largest = s.Find(AttrId::kLargest);
    s.topk_order = !largest || largest->b() ? TopKOrder::kDescending : TopKOrder::kAscending;
  }
  NHLO_TRY(CheckScalarCallee(p, comp, s));
  LowerCalleePattern(p, comp, s);
  LowerCalleeSignature(p, comp, s);
  if (!s.dynamic) LowerKernelPlan(comp, s);  // after the pattern: a sort's native key depends on it
  if (s.family == OpFamily::kMap && !s.dynamic) LiftMap(p, comp, s, options);
  if (s.family == OpFamily::kScan && !s.dynamic) {
    const AttrRecord* to_apply = s.Find(AttrId::kToApply);
    if (to_apply && !to_apply->computations().empty() && to_apply->computations()[0] < p.computations.size())
      if (Result<ScanPlan> scan = PlanScan(comp, p.computations[to_apply->computations()[0]], s); scan.ok())
        s.plan = std::make_unique<const KernelPlan>(std::move(*scan));
  }
  if (s.family == OpFamily::kFft && b.operands.size() == 1)
    s.scratch_bytes = FftScratchBytes(s, comp.buffers[b.operands[0]], comp.buffers[b.result]);
  if (s.scratch_bytes > options.scratch_limit)
    return Status::Error("this step needs " + std::to_string(s.scratch_bytes) +
                         " bytes of working memory besides its operands and result, more than the " +
                         std::to_string(options.scratch_limit) + " the run's memory limit leaves");
  return s;
}

}  // namespace nhlo
