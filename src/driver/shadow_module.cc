// SPDX-License-Identifier: Apache-2.0
#include "driver/shadow_module.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "types/opcode.h"

namespace nhlo {
namespace {

// How the shadow twin of an op is made (the file comment says why each).
enum class ShadowRule : uint8_t {
  kWiden,     // the same op in the shadow types
  kIsland,    // the op in its own types on the rounded shadow operands; the result widened
  kFollow,    // the op runs once; the shadow is its real value widened
  kControl,   // while, conditional, call, fusion: the callee carries real and shadow values
  kIdentity,  // reduce-precision: the shadow of its operand
  kBound,     // parameter, constant: the real value widened
};

bool IsIntegerBitOp(Opcode op) {
  return op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kXor || op == Opcode::kNot ||
         op == Opcode::kShiftLeft || op == Opcode::kShiftRightArithmetic || op == Opcode::kShiftRightLogical ||
         op == Opcode::kPopulationCount || op == Opcode::kClz;
}

ShadowRule RuleOf(const Instruction& inst) {
  switch (OpcodeFamily(inst.opcode)) {
    case OpFamily::kBound: return ShadowRule::kBound;
    case OpFamily::kCall:
    case OpFamily::kFusion:
    case OpFamily::kWhile:
    case OpFamily::kConditional: return ShadowRule::kControl;
    case OpFamily::kUnary:
    case OpFamily::kBinary:
      // Bit patterns depend on the width (not(u8 0) is 255, not s64's -1).
      if (IsIntegerBitOp(inst.opcode) && !inst.operands.empty() && IsInteger(inst.operands[0]->shape.type))
        return ShadowRule::kIsland;
      return ShadowRule::kWiden;
    case OpFamily::kTupleResult:
      if (inst.opcode == Opcode::kRngBitGenerator) return ShadowRule::kFollow;
      if (inst.opcode == Opcode::kCustomCall)
        return HasSideEffectNoRecurse(inst) ? ShadowRule::kFollow : ShadowRule::kIsland;
      return ShadowRule::kWiden;  // batch-norm-*, topk
    case OpFamily::kTuple:
    case OpFamily::kGetTupleElement:
    case OpFamily::kCopy:
    case OpFamily::kScan:
    case OpFamily::kReduce:
    case OpFamily::kMap:
    case OpFamily::kScatter:
    case OpFamily::kSort:
    case OpFamily::kReduceWindow:
    case OpFamily::kCompare:
    case OpFamily::kSelect:
    case OpFamily::kClamp:
    case OpFamily::kConvert:
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
    case OpFamily::kRaggedDot:
    case OpFamily::kSelectAndScatter:
    case OpFamily::kAfterAll:
    case OpFamily::kAddDependency:
    case OpFamily::kCholesky:
    case OpFamily::kTriangularSolve:
    case OpFamily::kFft: return ShadowRule::kWiden;
    case OpFamily::kCollective:
      return OpcodeCollective(inst.opcode) == CollectiveKind::kId ? ShadowRule::kFollow : ShadowRule::kWiden;
    case OpFamily::kReducePrecision: return ShadowRule::kIdentity;
    case OpFamily::kBitcastConvert:
    case OpFamily::kScaledDot:
    case OpFamily::kDynamicShape:
    case OpFamily::kStochasticConvert: return ShadowRule::kIsland;
    case OpFamily::kNotExecutable:
    case OpFamily::kRng:
    case OpFamily::kRngState:
    case OpFamily::kTransferIn:
    case OpFamily::kTransferOut:
    case OpFamily::kSend:
    case OpFamily::kRecvDone:
    case OpFamily::kAsyncStart:
    case OpFamily::kAsyncUpdate:
    case OpFamily::kAsyncDone:
    case OpFamily::kCopyStart:
    case OpFamily::kCopyDone: return ShadowRule::kFollow;
  }
  return ShadowRule::kFollow;
}

// Ops that only move, pick or select elements (or return what a callee computed): no error of
// their own, so no local value and no table row.
bool MovesData(const Instruction& inst) {
  switch (OpcodeFamily(inst.opcode)) {
    case OpFamily::kBound:
    case OpFamily::kTuple:
    case OpFamily::kGetTupleElement:
    case OpFamily::kCopy:
    case OpFamily::kSelect:
    case OpFamily::kClamp:
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
    case OpFamily::kGather:
    case OpFamily::kAfterAll:
    case OpFamily::kAddDependency:
    case OpFamily::kReducePrecision:
    case OpFamily::kCall:  // control flow returns what its callee computed (probed there)
    case OpFamily::kFusion:
    case OpFamily::kWhile:
    case OpFamily::kConditional: return true;
    case OpFamily::kNotExecutable:
    case OpFamily::kTupleResult:
    case OpFamily::kScan:
    case OpFamily::kReduce:
    case OpFamily::kMap:
    case OpFamily::kScatter:
    case OpFamily::kSort:
    case OpFamily::kReduceWindow:
    case OpFamily::kUnary:
    case OpFamily::kBinary:
    case OpFamily::kCompare:
    case OpFamily::kConvert:
    case OpFamily::kBitcastConvert:
    case OpFamily::kDot:
    case OpFamily::kConvolution:
    case OpFamily::kScaledDot:
    case OpFamily::kRaggedDot:
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
    case OpFamily::kCollective:
    case OpFamily::kAsyncStart:
    case OpFamily::kAsyncUpdate:
    case OpFamily::kAsyncDone:
    case OpFamily::kCopyStart:
    case OpFamily::kCopyDone: return false;
  }
  return false;
}

bool IsComputationAttr(AttrKind kind) { return kind == AttrKind::Computation || kind == AttrKind::ComputationList; }

// How a control computation's copy takes and returns its values.
enum class Frame : uint8_t {
  kEntry,      // the entry's parameters; returns the real root
  kPacked,     // one parameter (real, shadow); returns (real root, shadow root): while body, branch
  kCondition,  // one parameter (real, shadow); returns the real root (a while condition)
  kSplit,      // the real parameters, then the shadow ones; returns (real root, shadow root): call, fusion
};

class ShadowBuilder {
 public:
  ShadowBuilder(Module& module, PrimitiveType float_type) : m_(module), float_type_(float_type) {}

  ShadowPlan plan;

  // The type a value of `type` has in the shadow.
  PrimitiveType Wide(PrimitiveType type) const {
    if (IsFloat(type)) return BitWidth(type) >= BitWidth(float_type_) ? type : float_type_;
    if (IsComplex(type)) return float_type_ == PrimitiveType::kF64 ? PrimitiveType::kC128 : type;
    if (IsInteger(type)) return BitWidth(type) >= 64 ? type : PrimitiveType::kS64;
    return type;
  }
  Shape Wide(const Shape& shape) {
    if (shape.IsTuple()) {
      std::vector<Shape> elements;
      for (const Shape& e : shape.tuple) elements.push_back(Wide(e));
      Shape wide = m_.MakeTupleShape(elements);
      wide.layout = shape.layout;
      return wide;
    }
    Shape wide = shape;
    wide.type = Wide(shape.type);
    return wide;
  }

  // `value` converted leaf by leaf to the element types of `shape` (same structure).
  Instruction* ConvertTo(Computation* comp, Instruction* value, const Shape& shape) {
    if (value->shape.IsTuple()) {
      std::vector<Instruction*> elements;
      for (size_t i = 0; i < shape.tuple.size(); ++i)
        elements.push_back(
            ConvertTo(comp, MakeGetTupleElement(m_, comp, value, static_cast<int64_t>(i)), shape.tuple[i]));
      return MakeTuple(m_, comp, elements);
    }
    if (!value->shape.IsArray() || value->shape.type == shape.type) return value;
    return MakeConvert(m_, comp, value, shape);
  }

  // The copy of control computation `comp` framed as `frame`.
  Computation* Twin(const Computation* comp, Frame frame) {
    auto key = std::make_pair(comp, frame);
    if (auto it = twins_.find(key); it != twins_.end()) return it->second;
    Computation* out = NewComputation(std::string(comp->name) + ".shadowed");
    twins_[key] = out;
    std::unordered_map<const Instruction*, std::pair<Instruction*, Instruction*>> values;  // real, shadow
    // The probes whose values reach each instruction: its own, or (for an instruction without
    // one) those of its operands, so amplification looks through broadcasts and reshapes.
    std::unordered_map<const Instruction*, std::vector<size_t>> probes_in;
    std::unordered_map<const Instruction*, Instruction*> locals;  // L(x) where made
    Instruction* packed = nullptr;
    const size_t params = comp->Parameters().size();
    for (const Instruction* x : comp->instructions) {
      Instruction* real = nullptr;
      Instruction* shadow = nullptr;
      auto R = [&](const Instruction* o) { return values.at(o).first; };
      auto S = [&](const Instruction* o) { return values.at(o).second; };
      if (x->opcode == Opcode::kParameter) {
        if (frame == Frame::kEntry) {
          real = Clone(out, x, {}, x->shape);
          shadow = ConvertTo(out, real, Wide(x->shape));
        } else if (frame == Frame::kSplit) {
          real = Clone(out, x, {}, x->shape);
          shadow = Clone(out, x, {}, Wide(x->shape));
          shadow->parameter_number = x->parameter_number + static_cast<int64_t>(params);
        } else {
          if (!packed) {
            packed = m_.NewInstruction(out, Opcode::kParameter, m_.MakeTupleShape({x->shape, Wide(x->shape)}), {},
                                       std::string(x->name) + ".packed");
            packed->parameter_number = 0;
          }
          real = MakeGetTupleElement(m_, out, packed, 0);
          shadow = MakeGetTupleElement(m_, out, packed, 1);
        }
        values[x] = {real, shadow};
        continue;
      }
      std::vector<Instruction*> real_operands, shadow_operands;
      for (const Instruction* o : x->operands) {
        real_operands.push_back(R(o));
        shadow_operands.push_back(S(o));
      }
      ShadowRule rule = RuleOf(*x);
      Instruction* local = nullptr;
      switch (rule) {
        case ShadowRule::kControl: {
          auto [r, s] = TwinControl(out, x, real_operands, shadow_operands);
          real = r;
          shadow = s;
          break;
        }
        case ShadowRule::kBound:
        case ShadowRule::kFollow:
          real = Clone(out, x, real_operands, x->shape);
          shadow = ConvertTo(out, real, Wide(x->shape));
          break;
        case ShadowRule::kIdentity:
          real = Clone(out, x, real_operands, x->shape);
          shadow = shadow_operands[0];
          break;
        case ShadowRule::kIsland:
          real = Clone(out, x, real_operands, x->shape);
          shadow = Island(out, x, shadow_operands);
          break;
        case ShadowRule::kWiden:
          real = Clone(out, x, real_operands, x->shape);
          shadow = WidenOrIsland(out, x, shadow_operands);
          if (WantsLocal(*x)) local = Clone(out, x, Narrowed(out, x, shadow_operands), x->shape);
          // An element of a computing op's tuple (batch-norm-training, a variadic reduce or
          // sort): its own row, with the element of the op's local value.
          if (const Instruction* producer = TupleOpOf(*x); producer && locals.count(producer))
            local = MakeGetTupleElement(m_, out, locals.at(producer), x->FindAttr(AttrId::kIndex)->i);
          break;
      }
      values[x] = {real, shadow};
      if (local) locals[x] = local;
      std::vector<size_t> inflow;
      for (const Instruction* o : x->operands)
        if (auto it = probes_in.find(o); it != probes_in.end())
          for (size_t p : it->second)
            if (std::find(inflow.begin(), inflow.end(), p) == inflow.end()) inflow.push_back(p);
      if (!Probed(*x, frame)) {
        if (!inflow.empty()) probes_in[x] = std::move(inflow);
      } else {
        std::vector<Instruction*> operands = {real, shadow};
        if (local) operands.push_back(local);
        Instruction* probe =
            m_.NewInstruction(out, Opcode::kCustomCall, m_.MakeTupleShape({}), operands, "shadow.probe");
        SetAttr(m_, probe, TextAttr(m_, AttrId::kCustomCallTarget, AttrKind::String, "nhlo.shadow_probe"));
        Attribute effect;
        effect.id = AttrId::kCustomCallHasSideEffect;
        effect.kind = AttrKind::Bool;
        effect.b = true;
        SetAttr(m_, probe, effect);
        DecodeCustomCallConfig(m_, *probe);
        ShadowProbe info;
        info.name = std::string(probe->name);
        info.inst = x;
        info.computation = std::string(comp->name);
        info.has_local = local != nullptr && local->shape.IsArray();
        info.moves_data = MovesData(*x) && !TupleOpOf(*x);
        info.op = std::string(OpcodeName(x->opcode));
        if (const Instruction* producer = TupleOpOf(*x))
          info.op = std::string(OpcodeName(producer->opcode)) + "#" + std::to_string(x->FindAttr(AttrId::kIndex)->i);
        info.operand_probes = std::move(inflow);
        probes_in[x] = {plan.probes.size()};
        plan.probes.push_back(std::move(info));
      }
    }
    auto [root_real, root_shadow] = values.at(comp->root);
    if (frame == Frame::kEntry || frame == Frame::kCondition)
      out->root = root_real;
    else
      out->root = MakeTuple(m_, out, {root_real, root_shadow});
    SortTopologically(out);
    return out;
  }

  // The copy of an applied computation (reducer, comparator, ...) in the shadow types.
  Computation* Widened(const Computation* comp) {
    if (auto it = widened_.find(comp); it != widened_.end()) return it->second;
    Computation* out = NewComputation(std::string(comp->name) + ".wide");
    widened_[comp] = out;
    std::unordered_map<const Instruction*, Instruction*> shadow;
    for (const Instruction* x : comp->instructions) {
      std::vector<Instruction*> operands;
      for (const Instruction* o : x->operands) operands.push_back(shadow.at(o));
      Instruction* s = nullptr;
      switch (RuleOf(*x)) {
        case ShadowRule::kBound:
          if (x->opcode == Opcode::kParameter) {
            s = Clone(out, x, {}, Wide(x->shape));
          } else {
            s = ConvertTo(out, Clone(out, x, {}, x->shape), Wide(x->shape));
          }
          break;
        case ShadowRule::kIdentity: s = operands[0]; break;
        case ShadowRule::kIsland:
        case ShadowRule::kFollow: s = Island(out, x, operands); break;
        case ShadowRule::kControl:
        case ShadowRule::kWiden: s = WidenOrIsland(out, x, operands); break;
      }
      shadow[x] = s;
    }
    out->root = shadow.at(comp->root);
    SortTopologically(out);
    return out;
  }

  Module& m_;

 private:
  Computation* NewComputation(const std::string& base) {
    std::string name = base;
    for (int i = 1; m_.FindComputation(name) != nullptr; ++i) name = base + "." + std::to_string(i);
    return m_.AddComputation(m_.arena.CopyString(name));
  }

  // A copy of `x` in `comp` with `operands` and `shape`; its called computations as in x.
  Instruction* Clone(Computation* comp, const Instruction* x, const std::vector<Instruction*>& operands,
                     const Shape& shape) {
    Instruction* c = m_.NewInstruction(comp, x->opcode, shape, operands, x->name);
    CopyAttrs(m_, x, c);
    RemoveAttr(m_, c, AttrId::kControlPredecessors);
    c->literal = x->literal;
    c->parameter_number = x->parameter_number;
    c->async_sugar = x->async_sugar;
    c->async_wrapped = x->async_wrapped;
    c->source_offset = x->source_offset;
    c->source_id = x->source_id;
    if (x->opcode == Opcode::kCustomCall) DecodeCustomCallConfig(m_, *c);
    return c;
  }

  // Replaces every called computation of `c` by `map`(it).
  void MapComputations(Instruction* c, const std::function<Computation*(const Computation*)>& map) {
    for (const Attribute& a : std::vector<Attribute>(c->attrs.begin(), c->attrs.end())) {
      if (!IsComputationAttr(a.kind)) continue;
      std::vector<Computation*> mapped;
      for (Computation* callee : a.computations) mapped.push_back(map(callee));
      Attribute b = a;
      b.computations = m_.arena.Copy(mapped);
      SetAttr(m_, c, b);
    }
  }

  // x's op in its own types on `shadow_operands` rounded to them, the result widened.
  Instruction* Island(Computation* comp, const Instruction* x, const std::vector<Instruction*>& shadow_operands) {
    return ConvertTo(comp, Clone(comp, x, Narrowed(comp, x, shadow_operands), x->shape), Wide(x->shape));
  }

  std::vector<Instruction*> Narrowed(Computation* comp, const Instruction* x,
                                     const std::vector<Instruction*>& shadow_operands) {
    std::vector<Instruction*> narrowed;
    for (size_t i = 0; i < shadow_operands.size(); ++i)
      narrowed.push_back(ConvertTo(comp, shadow_operands[i], x->operands[i]->shape));
    return narrowed;
  }

  // x in the shadow types when shape inference accepts it there (a dot whose operand types must
  // match, say), else x as an island.
  Instruction* WidenOrIsland(Computation* comp, const Instruction* x,
                             const std::vector<Instruction*>& shadow_operands) {
    Instruction* wide = Clone(comp, x, shadow_operands, Wide(x->shape));
    MapComputations(wide, [this](const Computation* c) { return Widened(c); });
    if (x->opcode == Opcode::kCustomCall) DecodeCustomCallConfig(m_, *wide);
    Inference inferred = InferShape(m_, *wide, InferMode::kVerify);
    bool fits = inferred.outcome == InferOutcome::kNotInferable ||
                (inferred.outcome == InferOutcome::kInferred && SameShape(inferred.shape, wide->shape));
    if (fits) return wide;
    RemoveInstruction(comp, wide);
    return Island(comp, x, shadow_operands);
  }

  // The op a get-tuple-element takes an element of, when that op computes (not a parameter,
  // tuple or control flow, whose elements come from elsewhere).
  static const Instruction* TupleOpOf(const Instruction& x) {
    if (x.opcode != Opcode::kGetTupleElement || x.operands.empty()) return nullptr;
    const Instruction* producer = x.operands[0];
    return MovesData(*producer) || producer->opcode == Opcode::kCustomCall ? nullptr : producer;
  }

  bool WantsLocal(const Instruction& x) const {
    if (MovesData(x) || !x.shape.dim_kinds.empty()) return false;
    bool computes_floats = x.shape.IsTuple() ? !x.shape.tuple.empty() : x.shape.IsArray();
    std::vector<Shape> leaves = {x.shape};
    if (x.shape.IsTuple()) leaves.assign(x.shape.tuple.begin(), x.shape.tuple.end());
    for (const Shape& leaf : leaves)
      computes_floats = computes_floats && leaf.IsArray() && (IsFloat(leaf.type) || IsComplex(leaf.type)) &&
                        leaf.type != Wide(leaf.type);  // already in the shadow type: nothing to learn
    if (!computes_floats) return false;
    for (const Instruction* o : x.operands)
      if (!o->shape.IsArray()) return false;
    return true;
  }

  bool Probed(const Instruction& x, Frame frame) const {
    if (!x.shape.IsArray() || !x.shape.dim_kinds.empty() || x.shape.type == PrimitiveType::kPred) return false;
    if (x.opcode == Opcode::kConstant || x.opcode == Opcode::kIota) return false;
    if (x.opcode == Opcode::kParameter && frame == Frame::kEntry) return false;
    // Data movement is exact: its error is its operand's (probes_in looks through it). A value
    // taken from a tuple or returned by control flow is probed: a loop's, a branch's or a
    // callee's values arrive that way, computed in another computation.
    if (MovesData(x) && x.opcode != Opcode::kGetTupleElement && RuleOf(x) != ShadowRule::kControl) return false;
    return IsFloat(x.shape.type) || IsComplex(x.shape.type) || IsInteger(x.shape.type);
  }

  // A control op: one op over (real, shadow) values; returns its real and shadow results.
  std::pair<Instruction*, Instruction*> TwinControl(Computation* comp, const Instruction* x,
                                                    const std::vector<Instruction*>& real,
                                                    const std::vector<Instruction*>& shadow) {
    Shape both = m_.MakeTupleShape({x->shape, Wide(x->shape)});
    Instruction* op = nullptr;
    if (x->opcode == Opcode::kWhile) {
      op = Clone(comp, x, {MakeTuple(m_, comp, {real[0], shadow[0]})}, both);
      const Attribute* cond = x->FindAttr(AttrId::kCondition);
      const Attribute* body = x->FindAttr(AttrId::kBody);
      SetComputation(op, *cond, Twin(cond->computations[0], Frame::kCondition));
      SetComputation(op, *body, Twin(body->computations[0], Frame::kPacked));
    } else if (x->opcode == Opcode::kConditional) {
      std::vector<Instruction*> operands = {real[0]};
      for (size_t i = 1; i < real.size(); ++i) operands.push_back(MakeTuple(m_, comp, {real[i], shadow[i]}));
      op = Clone(comp, x, operands, both);
      MapComputations(op, [this](const Computation* c) { return Twin(c, Frame::kPacked); });
    } else {  // call, fusion: a call of the callee taking the real, then the shadow arguments
      std::vector<Instruction*> operands = real;
      operands.insert(operands.end(), shadow.begin(), shadow.end());
      const Computation* callee = CalledComputations(*x).at(0);
      op = m_.NewInstruction(comp, Opcode::kCall, both, operands, x->name);
      op->source_offset = x->source_offset;
      op->source_id = x->source_id;
      Attribute to_apply;
      to_apply.id = AttrId::kToApply;
      to_apply.kind = AttrKind::Computation;
      SetComputation(op, to_apply, Twin(callee, Frame::kSplit));
    }
    return {MakeGetTupleElement(m_, comp, op, 0), MakeGetTupleElement(m_, comp, op, 1)};
  }

  void SetComputation(Instruction* inst, const Attribute& like, Computation* callee) {
    Attribute a = like;
    a.computations = m_.arena.Copy(std::vector<Computation*>{callee});
    SetAttr(m_, inst, a);
  }

  PrimitiveType float_type_;
  std::map<std::pair<const Computation*, Frame>, Computation*> twins_;
  std::unordered_map<const Computation*, Computation*> widened_;
};

// Callees before callers (the module's order rule), after the builder appended callers first.
void OrderCalleesFirst(Module& module) {
  std::unordered_map<const Computation*, size_t> index;
  for (size_t i = 0; i < module.computations.size(); ++i) index[module.computations[i].get()] = i;
  std::vector<char> state(module.computations.size(), 0);  // 0 new, 1 open, 2 placed
  std::vector<size_t> order;
  std::function<void(size_t)> visit = [&](size_t i) {
    if (state[i]) return;
    state[i] = 1;
    for (const Instruction* inst : module.computations[i]->instructions)
      for (const Computation* callee : CalledComputations(*inst))
        if (auto it = index.find(callee); it != index.end()) visit(it->second);
    state[i] = 2;
    order.push_back(i);
  };
  for (size_t i = 0; i < module.computations.size(); ++i) visit(i);
  decltype(module.computations) sorted;
  for (size_t i : order) sorted.push_back(std::move(module.computations[i]));
  module.computations = std::move(sorted);
}

}  // namespace

Result<ShadowPlan> BuildShadowModule(Module& module, PrimitiveType float_type) {
  if (!module.entry) return Status::Error("the module has no entry computation");
  for (const auto& comp : module.computations)
    for (const Instruction* inst : comp->instructions)
      if (!inst->shape.dim_kinds.empty())
        return Status::Error("--shadow does not run bounded dynamic shapes ('" + std::string(inst->name) + "')");
  ShadowBuilder builder(module, float_type);
  builder.plan.float_type = float_type;
  Computation* old_entry = module.entry;
  Computation* entry = builder.Twin(old_entry, Frame::kEntry);
  old_entry->is_entry = false;
  entry->is_entry = true;
  module.entry = entry;
  std::erase_if(module.header_attrs, [](const auto& attr) { return attr.first == "entry_computation_layout"; });
  OrderCalleesFirst(module);
  if (Status verified = VerifyModule(module); !verified.ok())
    return Status::Error("nhlo bug: the shadowed module does not verify: " + verified.message());
  return std::move(builder.plan);
}

}  // namespace nhlo
