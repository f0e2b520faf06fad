// SPDX-License-Identifier: Apache-2.0
#include "ir/verifier.h"

#include <array>
#include <unordered_map>
#include <unordered_set>

#include "ir/custom_calls.h"
#include "ir/expanded_calls.h"
#include "ir/shape_inference.h"
#include "ir/shape_inference_internal.h"

namespace nhlo {

const std::string_view kLateBindingRefusal =
    ": nhlo binds every operand and the result at the async-start and does not support binding them later at "
    "async-update or async-done (XLA's late binding; docs/interpreter.md, deliberate deviations)";

Diagnostic DiagnosticFor(const Module& module, const Instruction& inst, std::string message) {
  if (inst.source_offset != Instruction::kNoLocation && inst.source_id < module.sources.size()) {
    const SourceBuffer& src = *module.sources[inst.source_id];
    return src.At(inst.source_offset, std::move(message));
  }
  Diagnostic d;
  if (!module.sources.empty()) d.file = module.sources.front()->name;
  d.message = "in '" + std::string(inst.name) + "' (created by a pass): " + message;
  return d;
}

namespace {

// The ops whose written shape gets a check beyond shape inference (a result shape the parser
// took as written, or a form XLA's verifier judges); every other op gets none, so a new opcode
// needs no entry here.
enum class WrittenShapeRule : uint8_t {
  kNone,
  kBroadcast,
  kReshape,
  kConvert,
  kBitcastConvert,
  kCustomCall,
  kDoneOperand,
  kBitcast,
  kIota,
  kConstant,
  kCompare,
  kRng,
  kRngBitGenerator,
  kRecv,
  kInfeed,
  kDynamicReshape,
  kStochasticConvert,
  kGatherOrScatter,
  kAllToAll,
  kAsyncStart
};

WrittenShapeRule WrittenShapeRuleOf(Opcode op) {
  static constexpr std::pair<Opcode, WrittenShapeRule> kRules[] = {
      {Opcode::kBroadcast, WrittenShapeRule::kBroadcast},
      {Opcode::kReshape, WrittenShapeRule::kReshape},
      {Opcode::kConvert, WrittenShapeRule::kConvert},
      {Opcode::kBitcastConvert, WrittenShapeRule::kBitcastConvert},
      {Opcode::kCustomCall, WrittenShapeRule::kCustomCall},
      {Opcode::kAsyncUpdate, WrittenShapeRule::kDoneOperand},
      {Opcode::kAsyncDone, WrittenShapeRule::kDoneOperand},
      {Opcode::kAllGatherDone, WrittenShapeRule::kDoneOperand},
      {Opcode::kAllReduceDone, WrittenShapeRule::kDoneOperand},
      {Opcode::kCollectivePermuteDone, WrittenShapeRule::kDoneOperand},
      {Opcode::kCopyDone, WrittenShapeRule::kDoneOperand},
      {Opcode::kSendDone, WrittenShapeRule::kDoneOperand},
      {Opcode::kRecvDone, WrittenShapeRule::kDoneOperand},
      {Opcode::kBitcast, WrittenShapeRule::kBitcast},
      {Opcode::kIota, WrittenShapeRule::kIota},
      {Opcode::kConstant, WrittenShapeRule::kConstant},
      {Opcode::kCompare, WrittenShapeRule::kCompare},
      {Opcode::kRng, WrittenShapeRule::kRng},
      {Opcode::kRngBitGenerator, WrittenShapeRule::kRngBitGenerator},
      {Opcode::kRecv, WrittenShapeRule::kRecv},
      {Opcode::kInfeed, WrittenShapeRule::kInfeed},
      {Opcode::kDynamicReshape, WrittenShapeRule::kDynamicReshape},
      {Opcode::kStochasticConvert, WrittenShapeRule::kStochasticConvert},
      {Opcode::kAllGather, WrittenShapeRule::kGatherOrScatter},
      {Opcode::kAllGatherStart, WrittenShapeRule::kGatherOrScatter},
      {Opcode::kReduceScatter, WrittenShapeRule::kGatherOrScatter},
      {Opcode::kAllToAll, WrittenShapeRule::kAllToAll},
      {Opcode::kAsyncStart, WrittenShapeRule::kAsyncStart},
  };
  static const auto table = [] {
    std::array<WrittenShapeRule, kOpcodeCount> t{};
    for (auto [opcode, rule] : kRules) t[static_cast<size_t>(opcode)] = rule;
    return t;
  }();
  return table[static_cast<size_t>(op)];
}

class Verifier {
 public:
  explicit Verifier(Module& m) : m_(m) {}

  Status Run() {
    if (m_.computations.empty()) {
      Fail("module has no computations");
      return std::move(status_);
    }
    if (!m_.entry) Fail("module has no entry computation");
    infer::SignatureCache signatures(m_.computations.size());  // nothing below changes a computation
    for (auto& comp : m_.computations) VerifyComputation(*comp);
    CheckAsyncComputationsUnshared();
    return std::move(status_);
  }

 private:
  void Fail(std::string message) {
    status_.diagnostics().push_back(Diagnostic{Severity::kError, {}, 0, 0, std::move(message), {}});
  }
  void Fail(const Instruction& inst, std::string message) {
    status_.diagnostics().push_back(DiagnosticFor(m_, inst, std::move(message)));
  }

  void VerifyComputation(const Computation& comp) {
    if (comp.instructions.empty() || !comp.root) {
      Fail("computation '" + std::string(comp.name) + "' has no root");
      return;
    }
    // Instructions seen so far carry this mark: "defined before use" without a hash set.
    const uint32_t defined = m_.NewMark();
    for (const Instruction* inst : comp.instructions) {
      if (inst->parent != &comp) Fail(*inst, "instruction belongs to another computation");
      for (const Instruction* op : inst->operands)
        if (op->mark != defined)
          Fail(*inst, "operand '" + std::string(op->name) + "' of '" + std::string(inst->name) +
                          "' is not defined before it in computation '" + std::string(comp.name) + "'");
      VerifyInstruction(*inst);
      inst->mark = defined;
    }
    // Parameter numbers must be 0..N-1; the first gap is reported once (a text may write any
    // number, so nothing here is sized by it).
    SmallVec<const Instruction*, 8> params;  // once per computation: no allocation for the usual few
    comp.AppendParameters(params);
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i]->parameter_number != static_cast<int64_t>(i)) {
        Fail(*params[i], "computation '" + std::string(comp.name) + "' has no parameter(" + std::to_string(i) +
                             ") but has higher-numbered ones");
        break;
      }
    if (comp.root->mark != defined)
      Fail("root of computation '" + std::string(comp.name) + "' is not one of its instructions");
  }

  void VerifyInstruction(const Instruction& inst) {
    if (ReportLateBinding(inst)) return;
    std::string_view op = OpcodeName(inst.opcode);
    int arity = OpcodeArity(inst.opcode);
    if (arity >= 0 && static_cast<int>(inst.operands.size()) != arity) {
      Fail(inst, "'" + std::string(op) + "' takes " + std::to_string(arity) + " operand" + (arity == 1 ? "" : "s") +
                     ", got " + std::to_string(inst.operands.size()));
      return;
    }
    for (size_t i = 0; i < inst.shape.dims.size(); ++i)
      if (inst.shape.dims[i] < -1) Fail(inst, "negative dimension in the result shape");
    if (inst.opcode == Opcode::kParameter) CheckParameterReplication(inst);
    Inference inf = InferShape(m_, inst, InferMode::kVerify);
    if (inf.outcome == InferOutcome::kError) {
      Fail(inst, inf.message);
      return;
    }
    // A reduce may give another float precision than its reducer (XLA's mixed-precision
    // reduction: ShapeVerifier::HandleReduce with allow_mixed_precision, as its evaluator tests
    // verify; the evaluator converts the reducer's result once).
    const bool mixed_opcode = inst.opcode == Opcode::kReduce || (inst.opcode == Opcode::kCopy && inst.shape.IsArray());
    const bool mixed_precision_ok = mixed_opcode && infer::CompatibleIgnoringFp(inf.shape, inst.shape);
    if (inf.outcome == InferOutcome::kInferred && !infer::Compatible(inf.shape, inst.shape) && !mixed_precision_ok &&
        !DynamicRootBroadcastFits(inst)) {
      Fail(inst, "'" + std::string(op) + "' result shape is " + Str(inst.shape) + " but " + Source(inst) + " " +
                     Str(inf.shape));
      return;
    }
    CheckWrittenShape(inst);
  }

  // The custom calls nhlo gives meaning to (ir/custom_calls.h) carry contracts; any other
  // target is opaque, as in XLA.
  // XLA's parser judges these on every custom call: the api_version is one of the known
  // versions, and operand_layout_constraints give one shape per operand, of that operand's shape
  // (a shape written without a layout gets the default one, as XLA's parser fills it in).
  void CheckCustomCallAttributes(const Instruction& inst, const std::string& prefix) {
    if (const Attribute* v = inst.FindAttr(AttrId::kApiVersion)) {
      static constexpr std::string_view kVersions[] = {"API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                                                       "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
      // The proto's default value: torch-xla and the Neuron toolchain built custom calls without
      // setting the field, and XLA printed it as written until its parser began refusing it.
      static constexpr std::string_view kUnspecified =
          "old form: api_version=API_VERSION_UNSPECIFIED (the proto's unset value, which XLA prints but its "
          "parser has refused since the field came in c641b2b206, 2021-07-30), read as API_VERSION_ORIGINAL";
      if (v->text == "API_VERSION_UNSPECIFIED") {
        if (!m_.RecountOldForm(kUnspecified)) m_.NoteOldForm(DiagnosticFor(m_, inst, std::string(kUnspecified)));
      } else if (std::find(std::begin(kVersions), std::end(kVersions), v->text) == std::end(kVersions))
        Fail(inst, prefix + "unknown custom-call api_version '" + std::string(v->text) +
                       "' (API_VERSION_ORIGINAL, _STATUS_RETURNING, _STATUS_RETURNING_UNIFIED or _TYPED_FFI)");
    }
    const Attribute* constraints = inst.FindAttr(AttrId::kOperandLayoutConstraints);
    if (!constraints) return;
    // One shape per operand, compared without layouts (XLA's verifier checks
    // ShapeUtil::Compatible; the layouts constrain layout assignment, not the values).
    if (constraints->shapes.size() != inst.operands.size())
      return Fail(inst, prefix + "operand_layout_constraints give " + std::to_string(constraints->shapes.size()) +
                            " shapes for " + std::to_string(inst.operands.size()) + " operands");
    for (size_t i = 0; i < constraints->shapes.size(); ++i) {
      const Shape& given = constraints->shapes[i];
      if (!SameShape(given, inst.operands[i]->shape))
        return Fail(inst, prefix + "operand_layout_constraints give operand " + std::to_string(i) + " the shape " +
                              ShapeToString(given, /*print_layout=*/false) + ", but it is " +
                              ShapeToString(inst.operands[i]->shape, /*print_layout=*/false));
    }
  }

  void CheckKnownCustomCall(const Instruction& inst) {
    std::string_view target = CustomCallTarget(inst);
    std::string prefix = "'" + std::string(inst.name) + "': ";
    CheckCustomCallAttributes(inst, prefix);
    if (target == kQuantizeMxTarget) {
      Result<const QuantizeMxConfig*> c = CustomCallConfigOf(inst).As<QuantizeMxConfig>();
      bool device = false;
      Status s = c.ok() ? CheckQuantizeMx(inst, **c, &device) : c.status();
      if (!s.ok()) Fail(inst, prefix + s.message());
    } else if (target == kScaledMatmulTarget) {
      Result<const ScaledMatmulConfig*> c = CustomCallConfigOf(inst).As<ScaledMatmulConfig>();
      Status s = c.ok() ? CheckScaledMatmul(inst, **c) : c.status();
      if (!s.ok()) Fail(inst, prefix + s.message());
    } else if (ExpandsBeforeRun(CustomCallKindOf(inst))) {
      if (Status s = CheckExpandedCall(inst); !s.ok()) Fail(inst, prefix + s.message());
    } else if (target == kUniformQuantizeTarget || target == kUniformDequantizeTarget) {
      Result<const UniformQuantConfig*> decoded = CustomCallConfigOf(inst).As<UniformQuantConfig>();
      if (!decoded.ok()) return Fail(inst, prefix + decoded.status().message());
      const UniformQuantConfig* c = *decoded;
      if (inst.operands.size() != 1) return Fail(inst, prefix + "uniform quantize custom calls take one operand");
      bool quantize = target == kUniformQuantizeTarget;
      const Shape& real = quantize ? inst.operands[0]->shape : inst.shape;
      const Shape& stored = quantize ? inst.shape : inst.operands[0]->shape;
      if (Status s = CheckUniformQuantShape(*c, real); !s.ok()) return Fail(inst, prefix + s.message());
      if (real.type != c->expressed_type || stored.type != c->storage_type ||
          real.ElementCount() != stored.ElementCount())
        Fail(inst, prefix + "operand and result must be " +
                       std::string(PrimitiveTypeName(quantize ? c->expressed_type : c->storage_type)) + " and " +
                       std::string(PrimitiveTypeName(quantize ? c->storage_type : c->expressed_type)) +
                       " of the same dimensions, as the config says");
    }
  }

  // A -done (or async-update) takes what its -start made, as XLA's verifier requires: the
  // matching start opcode, and for async ops the same wrapped computation (or sugared opcode).
  void CheckDoneOperand(const Instruction& inst) {
    if (inst.operands.empty()) return;
    const Instruction& from = *inst.operands[0];
    const Opcode want = AsyncStartOf(inst.opcode);
    bool async = want == Opcode::kAsyncStart;
    bool ok = from.opcode == want || (async && from.opcode == Opcode::kAsyncUpdate);
    // Pipelined send/recv: the done reads the send or recv through a get-tuple-element of a loop
    // result (XLA's verifier allows exactly that).
    bool transfer = inst.opcode == Opcode::kSendDone || inst.opcode == Opcode::kRecvDone;
    if (transfer && from.opcode == Opcode::kGetTupleElement) return;
    if (!ok)
      return Fail(inst,
                  "'" + std::string(inst.name) + "' takes the result of " +
                      (async ? std::string("async-start or async-update") : "'" + std::string(OpcodeName(want)) + "'") +
                      (transfer ? " (or a get-tuple-element of one)" : "") + ", not of '" +
                      std::string(OpcodeName(from.opcode)) + "' ('" + std::string(from.name) + "')");
    if (!async) return;
    if (inst.async_sugar != from.async_sugar || (inst.async_sugar && inst.async_wrapped != from.async_wrapped))
      return Fail(inst, "'" + std::string(inst.name) + "' does not wrap the op its start '" + std::string(from.name) +
                            "' wraps");
    // An update or done inherits the computation and thread of its chain's start; written again,
    // they must be the same (XLA's parser: "Expect async_wrapped_computation to be ...").
    const Instruction* start = &from;
    for (int steps = 0; start->opcode == Opcode::kAsyncUpdate && !start->operands.empty() && steps < 1 << 20; ++steps)
      start = start->operands[0];
    if (start->opcode != Opcode::kAsyncStart) return;
    const Computation* mine = infer::Called(inst, AttrId::kCalls);
    const Computation* theirs = infer::Called(*start, AttrId::kCalls);
    if (mine && theirs && mine != theirs)
      return Fail(inst, "'" + std::string(inst.name) + "' names computation '" + std::string(mine->name) +
                            "', but its start '" + std::string(start->name) + "' wraps '" + std::string(theirs->name) +
                            "'");
    if (const Attribute* thread = inst.FindAttr(AttrId::kAsyncExecutionThread)) {
      const Attribute* start_thread = start->FindAttr(AttrId::kAsyncExecutionThread);
      std::string_view expected = start_thread ? start_thread->text : "main";
      if (thread->text != expected)
        Fail(inst, "'" + std::string(inst.name) + "' names async_execution_thread \"" + std::string(thread->text) +
                       "\", but its start '" + std::string(start->name) + "' runs on \"" + std::string(expected) +
                       "\"");
    }
  }

  // XLA's late binding: an async-start that leaves operands (or its result) for async-update or
  // async-done to bind. nhlo refuses it, saying so (docs/interpreter.md, "Deliberate deviations
  // from XLA"); true when reported, and the usual checks, whose messages would not say why, are
  // skipped.
  bool ReportLateBinding(const Instruction& inst) {
    const std::string name(inst.name);
    if ((inst.opcode == Opcode::kAsyncUpdate || inst.opcode == Opcode::kAsyncDone) && inst.operands.size() > 1) {
      Fail(inst, "'" + name + "' binds " + std::to_string(inst.operands.size() - 1) + " more operand" +
                     (inst.operands.size() > 2 ? "s" : "") + std::string(kLateBindingRefusal));
      return true;
    }
    if (inst.opcode != Opcode::kAsyncStart) return false;
    const Computation* f = infer::Called(inst, AttrId::kCalls);
    if (!f || !f->root) return false;
    size_t params = 0;
    for (const Instruction* p : f->instructions) params += p->opcode == Opcode::kParameter;
    if (inst.operands.size() < params) {
      Fail(inst, "'" + name + "' gives " + std::to_string(inst.operands.size()) + " of the " + std::to_string(params) +
                     (params == 1 ? " operand" : " operands") + " computation '" + std::string(f->name) + "' takes" +
                     std::string(kLateBindingRefusal));
      return true;
    }
    const Shape& s = inst.shape;
    if (s.IsTuple() && s.tuple.size() >= 2 && s.tuple[1].IsTuple() && s.tuple[1].tuple.empty() &&
        !(f->root->shape.IsTuple() && f->root->shape.tuple.empty())) {
      Fail(inst, "'" + name + "' leaves its result unbound (`()` where computation '" + std::string(f->name) +
                     "' returns " + Str(f->root->shape) + ")" + std::string(kLateBindingRefusal));
      return true;
    }
    return false;
  }

  // XLA's parser gives every async-start a computation of its own: one called by two starts is
  // refused ("Computation X is called by more than one async op").
  void CheckAsyncComputationsUnshared() {
    std::unordered_map<const Computation*, const Instruction*> first_start;
    for (const auto& comp : m_.computations)
      for (const Instruction* inst : comp->instructions) {
        if (inst->opcode != Opcode::kAsyncStart) continue;
        const Computation* f = infer::Called(*inst, AttrId::kCalls);
        if (!f) continue;
        auto [it, first] = first_start.emplace(f, inst);
        if (!first)
          Fail(*inst, "computation '" + std::string(f->name) + "' is called by more than one async-start ('" +
                          std::string(it->second->name) + "' and '" + std::string(inst->name) +
                          "'); each async-start needs a computation of its own");
      }
  }

  // `parameter_replication={true,false}` gives one flag per leaf buffer of the parameter.
  void CheckParameterReplication(const Instruction& inst) {
    const Attribute* replication = inst.FindAttr(AttrId::kParameterReplication);
    if (!replication) return;
    const auto flags = static_cast<int64_t>(replication->bools.size());
    int64_t leaves = LeafCount(inst.shape);
    if (flags != leaves)
      Fail(inst, "parameter has " + std::to_string(leaves) + " leaf buffer" + (leaves == 1 ? "" : "s") +
                     ", but parameter_replication gives " + std::to_string(flags) + " flag" + (flags == 1 ? "" : "s"));
  }

  static int64_t LeafCount(const Shape& s) {
    if (!s.IsTuple()) return 1;
    int64_t n = 0;
    for (const Shape& e : s.tuple) n += LeafCount(e);
    return n;
  }

  // collective-broadcast with has_dynamic_root=true: the last operand names the root device, and
  // the result is the other operands (XLA's InferCollectiveBroadcastShape with a dynamic root).
  bool DynamicRootBroadcastFits(const Instruction& inst) {
    if (inst.opcode != Opcode::kCollectiveBroadcast || inst.operands.size() < 2) return false;
    const Attribute* dynamic = inst.FindAttr(AttrId::kHasDynamicRoot);
    if (!dynamic || !dynamic->b) return false;
    if (inst.operands.size() == 2) return infer::Compatible(inst.operands[0]->shape, inst.shape);
    if (!inst.shape.IsTuple() || inst.shape.tuple.size() != inst.operands.size() - 1) return false;
    for (size_t i = 0; i + 1 < inst.operands.size(); ++i)
      if (!infer::Compatible(inst.operands[i]->shape, inst.shape.tuple[i])) return false;
    return true;
  }

  // What the inferred shape comes from, for the mismatch message.
  static std::string Source(const Instruction& inst) {
    if (inst.opcode == Opcode::kCall || inst.opcode == Opcode::kFusion) {
      const Computation* c = infer::Called(inst, inst.opcode == Opcode::kCall ? AttrId::kToApply : AttrId::kCalls);
      return "computation '" + std::string(c ? c->name : "?") + "' returns";
    }
    if (inst.opcode == Opcode::kConditional) return "its branches return";
    return inst.operands.empty() ? "it must be" : "its operands give";
  }

  // Rules for results that do not follow from the operands alone: the written shape is checked
  // against what the opcode allows.
  void CheckWrittenShape(const Instruction& inst) {
    const Shape& s = inst.shape;
    const Shape* x = inst.operands.empty() ? nullptr : &inst.operands[0]->shape;
    switch (WrittenShapeRuleOf(inst.opcode)) {
      case WrittenShapeRule::kBroadcast: CheckBroadcast(inst, *x); break;
      case WrittenShapeRule::kReshape:
        if (!x->IsArray() || !s.IsArray() || x->type != s.type)
          Fail(inst, "reshape changes the element type or has a non-array operand");
        else if (x->ElementCount() >= 0 && s.ElementCount() >= 0 && x->ElementCount() != s.ElementCount())
          Fail(inst, "reshape from " + Str(*x) + " to " + Str(s) + " changes the element count");
        break;
      case WrittenShapeRule::kConvert:
        if (!x->IsArray() || !s.IsArray() || !infer::SameDims(*x, s))
          Fail(inst, "convert from " + Str(*x) + " to " + Str(s) + " changes the dimensions");
        break;
      case WrittenShapeRule::kBitcastConvert: CheckBitcastConvert(inst, *x); break;
      case WrittenShapeRule::kCustomCall: CheckKnownCustomCall(inst); break;
      case WrittenShapeRule::kDoneOperand: CheckDoneOperand(inst); break;
      case WrittenShapeRule::kBitcast:
        // lenient: XLA compares byte sizes only in layout-sensitive mode; here only when no
        // layout detail (tiling, element size) can change them.
        if (x->IsArray() && s.IsArray() && !HasLayoutTail(*x) && !HasLayoutTail(s) && !infer::HasDynamicDim(*x) &&
            !infer::HasDynamicDim(s) && x->ElementCount() >= 0 && s.ElementCount() >= 0 &&
            static_cast<__int128>(x->ElementCount()) * HostByteSize(x->type) !=
                static_cast<__int128>(s.ElementCount()) * HostByteSize(s.type))
          Fail(inst, "bitcast from " + Str(*x) + " to " + Str(s) + " changes the size in bytes");
        break;
      case WrittenShapeRule::kIota: {
        auto dim = infer::IntAttr(inst, AttrId::kIotaDimension);
        if (!s.IsArray() || s.rank() == 0)
          Fail(inst, "iota result must be an array of rank 1 or more, got " + Str(s));
        else if (!dim)
          Fail(inst, "iota needs iota_dimension=");
        else if (*dim < 0 || *dim >= static_cast<int64_t>(s.rank()))
          Fail(inst, "iota dimension " + std::to_string(*dim) + " is out of range for " + Str(s));
        break;
      }
      case WrittenShapeRule::kConstant:
        if (!inst.literal) Fail(inst, "constant has no literal");
        break;
      case WrittenShapeRule::kCompare:
        if (!inst.FindAttr(AttrId::kDirection)) Fail(inst, "compare needs direction=");
        break;
      case WrittenShapeRule::kRng:
        if (!s.IsArray() || s.type != x->type)
          Fail(inst, "rng result " + Str(s) + " must be an array of its parameters' type " +
                         std::string(PrimitiveTypeName(x->type)));
        break;
      case WrittenShapeRule::kRngBitGenerator:
        // An array result is the random bits alone (XLA accepts it; the new state is dropped).
        if (s.IsArray()) break;
        if (!s.IsTuple() || s.tuple.size() != 2 || !infer::Compatible(s.tuple[0], *x) || !s.tuple[1].IsArray())
          Fail(inst, "rng-bit-generator result " + Str(s) + " must be (" + Str(*x) + ", random bits)");
        break;
      case WrittenShapeRule::kRecv:
        if (!s.IsTuple() || s.tuple.size() != 3 || !IsU32Scalar(s.tuple[1]) || s.tuple[2].type != PrimitiveType::kToken)
          Fail(inst, "recv result " + Str(s) + " must be (data, u32[], token[])");
        break;
      case WrittenShapeRule::kInfeed:
        if (!s.IsTuple() || s.tuple.size() != 2 || s.tuple[1].type != PrimitiveType::kToken)
          Fail(inst, "infeed result " + Str(s) + " must be (data, token[])");
        break;
      case WrittenShapeRule::kDynamicReshape:
        if (!s.IsArray() || s.type != x->type || s.rank() != inst.operands.size() - 1)
          Fail(inst, "dynamic-reshape result " + Str(s) + " must be a " + std::string(PrimitiveTypeName(x->type)) +
                         " array of rank " + std::to_string(inst.operands.size() - 1) + ", one per size operand");
        break;
      case WrittenShapeRule::kStochasticConvert:
        if (!s.IsArray() || !infer::SameDims(*x, s))
          Fail(inst, "stochastic-convert from " + Str(*x) + " to " + Str(s) + " changes the dimensions");
        break;
      case WrittenShapeRule::kGatherOrScatter: CheckGatherOrScatter(inst); break;
      case WrittenShapeRule::kAllToAll:
        if (inst.operands.size() == 1 && !infer::Compatible(s, *x) &&
            !(s.IsTuple() && s.tuple.size() == 1 && infer::Compatible(s.tuple[0], *x)))
          Fail(inst, "'all-to-all' result shape is " + Str(s) + " but its operand is " + Str(*x));
        break;
      case WrittenShapeRule::kAsyncStart: CheckAsyncStart(inst); break;
      case WrittenShapeRule::kNone: break;  // nothing beyond the shape rule and the operand checks
    }
  }

  void CheckBroadcast(const Instruction& inst, const Shape& x) {
    const Shape& s = inst.shape;
    const Attribute* dims = inst.FindAttr(AttrId::kDimensions);
    std::vector<int64_t> map;
    if (dims && dims->kind == AttrKind::IntList) {
      map.assign(dims->ints.begin(), dims->ints.end());
    } else if (!x.IsScalar()) {
      Fail(inst, "broadcast of a non-scalar needs dimensions=");
      return;
    }
    if (!x.IsArray() || !s.IsArray()) {
      Fail(inst, "broadcast needs an array operand and result, got " + Str(x) + " and " + Str(s));
      return;
    }
    if (x.type != s.type)
      Fail(inst, "broadcast changes the element type from " + std::string(PrimitiveTypeName(x.type)) + " to " +
                     std::string(PrimitiveTypeName(s.type)));
    if (map.size() != x.rank()) {
      Fail(inst, "broadcast dimensions has " + std::to_string(map.size()) + " entries for an operand of rank " +
                     std::to_string(x.rank()));
      return;
    }
    for (size_t i = 0; i < map.size(); ++i) {
      if (map[i] < 0 || map[i] >= static_cast<int64_t>(s.rank())) {
        Fail(inst, "broadcast dimension " + std::to_string(map[i]) + " is out of range for the result " + Str(s));
        return;
      }
      if (i > 0 && map[i] <= map[i - 1]) {
        Fail(inst, "broadcast dimensions must be strictly increasing");
        return;
      }
      size_t d = static_cast<size_t>(map[i]);
      if (x.dims[i] != 1 && !infer::DimMatches(x, i, s, d)) {
        Fail(inst, "broadcast maps operand dimension " + std::to_string(i) + " (size " + std::to_string(x.dims[i]) +
                       ") to result dimension " + std::to_string(map[i]) + " (size " + std::to_string(s.dims[d]) + ")");
        return;
      }
    }
  }

  void CheckBitcastConvert(const Instruction& inst, const Shape& x) {
    const Shape& s = inst.shape;
    if (!x.IsArray() || !s.IsArray()) {
      Fail(inst, "bitcast-convert needs array shapes");
      return;
    }
    if (IsComplex(x.type) != IsComplex(s.type)) {
      Fail(inst, "bitcast-convert from " + Str(x) + " to " + Str(s) + " mixes complex and real types");
      return;
    }
    int in_bits = BitWidth(x.type), out_bits = BitWidth(s.type);
    // Same width: same dims. Narrower result: one extra minor dim of in/out.
    // Wider result: the operand's minor dim of out/in is folded away.
    bool ok;
    if (in_bits == out_bits) {
      ok = infer::SameDims(x, s);
    } else if (in_bits > out_bits) {
      ok = s.rank() == x.rank() + 1 && s.dims[s.rank() - 1] * out_bits == in_bits;
      for (size_t i = 0; ok && i < x.rank(); ++i) ok = infer::DimMatches(x, i, s, i);
    } else {
      ok = x.rank() == s.rank() + 1 && x.dims[x.rank() - 1] * in_bits == out_bits;
      for (size_t i = 0; ok && i < s.rank(); ++i) ok = infer::DimMatches(x, i, s, i);
    }
    if (!ok) Fail(inst, "bitcast-convert from " + Str(x) + " to " + Str(s) + " does not preserve the bits");
  }

  // all-gather grows dimension d of each operand by the number of participants, reduce-scatter
  // shrinks it by that number; every other dimension and the element type stay.
  void CheckGatherOrScatter(const Instruction& inst) {
    std::string op(OpcodeName(inst.opcode));
    std::vector<const Shape*> results;
    const Shape& s = inst.shape;
    const Shape* out = &s;
    // all-gather-start: (operands, results) in current XLA; older dumps write the result alone.
    if (inst.opcode == Opcode::kAllGatherStart && s.IsTuple() && s.tuple.size() == 2) out = &s.tuple[1];
    if (inst.operands.size() == 1) {
      results.push_back(out);
    } else if (out->IsTuple() && out->tuple.size() == inst.operands.size()) {
      for (const Shape& e : out->tuple) results.push_back(&e);
    } else {
      Fail(inst, "'" + op + "' result shape " + Str(s) + " must have one array per operand");
      return;
    }
    auto dims = infer::IntList(inst, AttrId::kDimensions);
    if (!dims || dims->size() != 1) return;  // reported by InferShape
    size_t d = static_cast<size_t>((*dims)[0]);
    int64_t participants = 0;
    for (size_t k = 0; k < results.size(); ++k) {
      const Shape& x = inst.operands[k]->shape;
      const Shape& r = *results[k];
      // Neuron's scalar token operand of a variadic form (InferCollective notes it): unchanged.
      if (x.IsScalar() && results.size() > 1) {
        if (!r.IsScalar() || r.type != x.type)
          Fail(inst, "'" + op + "' gives its scalar operand " + std::to_string(k) + " as " + Str(r));
        continue;
      }
      bool ok = r.IsArray() && r.type == x.type && r.rank() == x.rank() && d < x.rank();
      for (size_t i = 0; ok && i < x.rank(); ++i)
        if (i != d) ok = infer::DimMatches(x, i, r, i);
      if (ok && !infer::Unbounded(x, d) && !infer::Unbounded(r, d)) {
        bool gather = inst.opcode != Opcode::kReduceScatter;
        int64_t big = gather ? r.dims[d] : x.dims[d], small = gather ? x.dims[d] : r.dims[d];
        if (small == 0) {
          ok = big == 0;
        } else {
          ok = big % small == 0 && big / small >= 1 && (participants == 0 || participants == big / small);
          participants = big / small;
        }
      }
      if (!ok) {
        Fail(inst, "'" + op + "' result " + Str(r) + " does not " +
                       (inst.opcode == Opcode::kReduceScatter ? "split" : "gather") + " operand " + Str(x) +
                       " along dimension " + std::to_string(d));
        return;
      }
    }
  }

  // lenient: async-start is (operand tuple, wrapped result, context...); only the two parts that
  // follow from operands and the wrapped computation are checked.
  void CheckAsyncStart(const Instruction& inst) {
    const Shape& s = inst.shape;
    if (!s.IsTuple() || s.tuple.size() < 2) {
      Fail(inst, "async-start result " + Str(s) + " must be a tuple of (operands, result, context...)");
      return;
    }
    const Shape& args = s.tuple[0];
    bool ok = args.IsTuple() && args.tuple.size() == inst.operands.size();
    for (size_t i = 0; ok && i < inst.operands.size(); ++i)
      ok = infer::Compatible(args.tuple[i], inst.operands[i]->shape);
    if (!ok) {
      Fail(inst, "async-start result " + Str(s) + " must start with its operands' shapes");
      return;
    }
    const Computation* f = infer::Called(inst, AttrId::kCalls);
    if (f && f->root && !infer::Compatible(s.tuple[1], f->root->shape))
      Fail(inst, "async-start result " + Str(s) + " must hold the result of computation '" + std::string(f->name) +
                     "', " + Str(f->root->shape));
  }

  static bool HasLayoutTail(const Shape& s) { return s.layout && !s.layout->tail.empty(); }
  static bool IsU32Scalar(const Shape& s) { return s.IsScalar() && s.type == PrimitiveType::kU32; }
  static std::string Str(const Shape& s) { return ShapeToString(s, false); }

  Module& m_;
  Status status_;
};

}  // namespace

Status VerifyModule(Module& module) { return Verifier(module).Run(); }

}  // namespace nhlo
