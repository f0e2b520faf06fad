// SPDX-License-Identifier: Apache-2.0
#include "driver/custom_call_expansions.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "driver/common.h"
#include "driver/embedded_files.h"
#include "ir/expanded_calls.h"
#include "ir/verifier.h"
#include "parser/parser.h"
#include "support/escape.h"

namespace nhlo {
namespace {

// Whether the computation takes scalars and returns one array scalar: the elementwise form.
bool IsScalarComputation(const Computation& comp) {
  if (!comp.root || !comp.root->shape.IsScalar()) return false;
  for (const Instruction* p : comp.Parameters())
    if (!p->shape.IsScalar()) return false;
  return true;
}

Attribute ComputationAttr(Module& m, AttrId id, Computation* comp) {
  Attribute a;
  a.id = id;
  a.kind = id == AttrId::kCalledComputations ? AttrKind::ComputationList : AttrKind::Computation;
  Computation* list[1] = {comp};
  a.computations = m.arena.Copy(list, 1);
  return a;
}

// The computation `call` runs for an elementwise expansion `scalar`: its operands converted to
// the scalar parameters' types, mapped, the result converted to the call's type.
Result<Computation*> ElementwiseWrapper(Module& m, const Instruction& call, Computation* scalar,
                                        const std::string& target) {
  std::vector<Instruction*> params = scalar->Parameters();
  const Shape& result = call.shape;
  auto mismatch = [&](const std::string& why) {
    return Status::FromDiagnostic(DiagnosticFor(m, call, "the expansion of '" + target + "' " + why));
  };
  if (!result.IsArray() || result.dim_kinds.size() > 0) return mismatch("needs an array result of a static shape");
  if (call.operands.size() != params.size())
    return mismatch("takes " + std::to_string(params.size()) + " operands, the custom call passes " +
                    std::to_string(call.operands.size()));
  std::vector<int64_t> dims(result.dims.begin(), result.dims.end());
  for (const Instruction* op : call.operands)
    if (!op->shape.IsArray() || std::vector<int64_t>(op->shape.dims.begin(), op->shape.dims.end()) != dims ||
        op->shape.dim_kinds.size() > 0)
      return mismatch("is elementwise: every operand must have the result's dimensions " + ShapeToString(result));
  std::string base = std::string(call.name) + ".expansion";
  std::string_view name = m.arena.CopyString(base);
  for (int i = 1; m.FindComputation(name); ++i) name = m.arena.CopyString(base + "." + std::to_string(i));
  Computation* comp = m.AddComputation(name);
  comp->implied = true;
  std::vector<Instruction*> mapped;
  for (size_t i = 0; i < params.size(); ++i) {
    Instruction* p = m.NewInstruction(comp, Opcode::kParameter, call.operands[i]->shape, {}, "operand");
    p->parameter_number = static_cast<int64_t>(i);
    Instruction* in = p;
    if (p->shape.type != params[i]->shape.type)
      in = m.NewInstruction(comp, Opcode::kConvert, m.MakeArrayShape(params[i]->shape.type, dims), {p});
    mapped.push_back(in);
  }
  Instruction* map = m.NewInstruction(comp, Opcode::kMap, m.MakeArrayShape(scalar->root->shape.type, dims), mapped);
  std::vector<int64_t> all(dims.size());
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  Attribute dimensions;
  dimensions.id = AttrId::kDimensions;
  dimensions.kind = AttrKind::IntList;
  dimensions.ints = m.arena.Copy(all);
  Attribute attrs[2] = {dimensions, ComputationAttr(m, AttrId::kToApply, scalar)};
  map->attrs = m.arena.Copy(attrs, 2);
  Instruction* root = map;
  if (map->shape.type != result.type)
    root = m.NewInstruction(comp, Opcode::kConvert, m.MakeArrayShape(result.type, dims), {map});
  comp->root = root;
  for (Instruction* inst : comp->instructions) {
    inst->source_offset = call.source_offset;
    inst->source_id = call.source_id;
  }
  return comp;
}

// Whether a whole expansion takes the call's operand shapes and returns its result shape.
bool FitsWhole(const Computation& entry, const Instruction& call) {
  std::vector<Instruction*> params = entry.Parameters();
  if (params.size() != call.operands.size() || !entry.root || !SameShape(entry.root->shape, call.shape)) return false;
  for (size_t i = 0; i < params.size(); ++i)
    if (!SameShape(params[i]->shape, call.operands[i]->shape)) return false;
  return true;
}

struct Source {
  const CustomCallExpansion* expansion;
  bool user;
};

}  // namespace

std::optional<CustomCallFlag> SplitCustomCallFlag(const std::string& value) {
  size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= value.size() || value[eq + 1] != '@') return std::nullopt;
  return CustomCallFlag{value.substr(0, eq), value.substr(eq + 2)};
}

Result<CustomCallExpansion> ReadCustomCallFlag(const std::string& value) {
  std::optional<CustomCallFlag> flag = SplitCustomCallFlag(value);
  if (!flag) return Status::Error("--custom-call: '" + value + "' is not TARGET=@FILE");
  CustomCallExpansion e;
  e.target = std::move(flag->target);
  e.file = std::move(flag->file);
  CustomCallKind kind = CustomCallKindOf(e.target, false);
  if (kind != CustomCallKind::kUnknown && kind != CustomCallKind::kCallComputation)
    return Status::Error("--custom-call: custom_call_target '" + e.target +
                         "' runs natively; an expansion cannot replace it");
  std::istringstream no_stdin;
  Result<std::string> text = ReadInput(e.file, no_stdin);
  if (!text.ok()) return Status::Error("--custom-call: " + text.status().message());
  e.text = std::move(*text);
  return e;
}

Status BindCustomCallExpansions(Module& module, const std::vector<CustomCallExpansion>& user) {
  static const std::vector<CustomCallExpansion> builtin = [] {
    std::vector<CustomCallExpansion> list;
    for (const EmbeddedFile& f : BuiltinExpansionFiles())
      list.push_back({std::string(f.name), "custom-calls/" + std::string(f.name) + ".hlo", std::string(f.text)});
    return list;
  }();
  std::map<std::string, Source, std::less<>> by_target;
  for (const CustomCallExpansion& e : builtin) by_target[e.target] = {&e, false};
  for (const CustomCallExpansion& e : user) by_target[e.target] = {&e, true};
  // The custom calls to bind, found first: binding adds computations to the list walked. Those
  // of a kind that ExpandsBeforeRun get an expansion built for their shapes (ir/expanded_calls.h),
  // the others the expansion file of their target.
  std::vector<Instruction*> calls;
  for (const auto& comp : module.computations)
    for (Instruction* inst : comp->instructions)
      if (inst->opcode == Opcode::kCustomCall && !CustomCallComputation(*inst) &&
          (ExpandsBeforeRun(CustomCallKindOf(*inst)) || by_target.count(CustomCallTarget(*inst)) > 0))
        calls.push_back(inst);
  std::map<std::string, Computation*, std::less<>> entries;  // per target, once adopted
  // The computations binding adds, in the order they must come: each expansion's own (callees
  // first, as parsed), then the wrappers that call them; all before the module's own.
  std::vector<const Computation*> front;
  std::vector<const Computation*> wrappers;
  bool built = false;  // an expansion was built for some call's shapes
  for (Instruction* call : calls) {
    std::string target(CustomCallTarget(*call));
    if (ExpandsBeforeRun(CustomCallKindOf(*call))) {
      std::vector<Computation*> added;
      Result<Computation*> run = ExpandCall(module, *call, added);
      if (!run.ok()) return Status::FromDiagnostic(DiagnosticFor(module, *call, run.status().message()));
      wrappers.insert(wrappers.end(), added.begin(), added.end());
      built = true;
      std::vector<Attribute> attrs(call->attrs.begin(), call->attrs.end());
      attrs.push_back(ComputationAttr(module, AttrId::kCalledComputations, *run));
      call->attrs = module.arena.Copy(attrs);
      continue;
    }
    const Source& source = by_target.at(target);
    if (source.user && CustomCallKindOf(target, false) != CustomCallKind::kUnknown &&
        CustomCallKindOf(target, false) != CustomCallKind::kCallComputation)
      return Status::FromDiagnostic(DiagnosticFor(
          module, *call, "custom_call_target '" + target + "' runs natively; --custom-call cannot replace it"));
    auto [it, fresh] = entries.try_emplace(target, nullptr);
    if (fresh) {
      Result<std::unique_ptr<Module>> parsed = ParseModule(source.expansion->file, source.expansion->text);
      if (!parsed.ok()) return parsed.status();
      NHLO_TRY(VerifyModule(**parsed));
      for (const auto& c : (*parsed)->computations) front.push_back(c.get());
      it->second = (*parsed)->entry;
      module.Adopt(std::move(*parsed), target);
    }
    Computation* entry = it->second;
    Computation* run = entry;
    if (IsScalarComputation(*entry) && !call->shape.IsScalar()) {
      NHLO_ASSIGN_OR_RETURN(run, ElementwiseWrapper(module, *call, entry, target));
      wrappers.push_back(run);
    } else if (!FitsWhole(*entry, *call)) {
      return Status::FromDiagnostic(
          DiagnosticFor(module, *call,
                        "the expansion of '" + target + "' (" + source.expansion->file +
                            ") takes other shapes than this custom call: give its entry the call's operand "
                            "shapes and result, or write it for scalars to run on every element"));
    }
    std::vector<Attribute> attrs(call->attrs.begin(), call->attrs.end());
    attrs.push_back(ComputationAttr(module, AttrId::kCalledComputations, run));
    call->attrs = module.arena.Copy(attrs);
  }
  front.insert(front.end(), wrappers.begin(), wrappers.end());
  std::unordered_map<const Computation*, size_t> rank;
  for (size_t i = 0; i < front.size(); ++i) rank[front[i]] = i;
  auto first_own = std::stable_partition(module.computations.begin(), module.computations.end(),
                                         [&](const ComputationPtr& c) { return rank.count(c.get()) > 0; });
  std::stable_sort(module.computations.begin(), first_own, [&](const ComputationPtr& a, const ComputationPtr& b) {
    return rank.at(a.get()) < rank.at(b.get());
  });
  // A built expansion is checked as a whole once: its own checks cover what users write, this
  // covers nhlo's construction (an error here is an nhlo bug, reported at the call's line).
  if (built) {
    if (Status s = VerifyModule(module); !s.ok()) {
      Status bug = Status::Error("the HLO nhlo built for a custom call does not verify (an nhlo bug)");
      bug.Append(s);
      return bug;
    }
  }
  return OkStatus();
}

}  // namespace nhlo
