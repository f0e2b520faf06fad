// SPDX-License-Identifier: Apache-2.0
#include "ir/ir.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/uses.h"
#include "support/checked_math.h"
#include "support/name_table.h"
#include "support/status.h"

namespace nhlo {

const Layout kLayoutNotWritten{};

// ---------------------------------------------------------------------------------------
// Shapes

int64_t Shape::ElementCount() const {
  if (!IsArray()) return -1;
  return CheckedElementCount(dims);
}

bool SameShape(const Shape& a, const Shape& b) {
  if (a.type != b.type) return false;
  if (a.IsTuple()) {
    if (a.tuple.size() != b.tuple.size()) return false;
    for (size_t i = 0; i < a.tuple.size(); ++i)
      if (!SameShape(a.tuple[i], b.tuple[i])) return false;
    return true;
  }
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] != b.dims[i]) return false;
    if (a.IsDynamicDim(i) != b.IsDynamicDim(i)) return false;
  }
  return true;
}

void AppendShape(std::string& out, const Shape& s, bool print_layout, bool index_comments) {
  if (s.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < s.tuple.size(); ++i) {
      if (i) out += ", ";
      if (index_comments && i % 5 == 0 && i > 0) out += "/*index=" + std::to_string(i) + "*/";
      AppendShape(out, s.tuple[i], print_layout, index_comments);
    }
    out += ')';
    return;
  }
  if (s.type == PrimitiveType::kBuffer) {
    out += "b(";
    if (!s.tuple.empty()) AppendShape(out, s.tuple[0], print_layout, index_comments);
    out += ')';
    return;
  }
  out += PrimitiveTypeName(s.type);
  out += '[';
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i) out += ',';
    DimKind kind = s.dim_kinds.empty() ? DimKind::kStatic : s.dim_kinds[i];
    if (kind == DimKind::kUnbounded) {
      out += '?';
    } else {
      if (kind == DimKind::kBounded) out += "<=";
      out += std::to_string(s.dims[i]);
    }
  }
  out += ']';
  if (!print_layout || !s.IsArray() || s.layout == &kLayoutNotWritten) return;
  if (s.dims.empty() && (s.layout == nullptr || s.layout->tail.empty())) return;
  out += '{';
  if (s.layout) {
    for (size_t i = 0; i < s.layout->minor_to_major.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(s.layout->minor_to_major[i]);
    }
    if (!s.layout->tail.empty()) {
      out += ':';
      out += s.layout->tail;
    }
  } else {
    for (size_t i = s.dims.size(); i-- > 0;) {
      out += std::to_string(i);
      if (i) out += ',';
    }
  }
  out += '}';
}

std::vector<int64_t> MinorToMajor(const Shape& s) {
  std::vector<int64_t> order;
  if (!s.HasDefaultLayout() && s.layout->minor_to_major.size() == s.dims.size()) {
    order.assign(s.layout->minor_to_major.begin(), s.layout->minor_to_major.end());
    return order;
  }
  for (size_t i = s.dims.size(); i-- > 0;) order.push_back(static_cast<int64_t>(i));
  return order;
}

std::string ShapeToString(const Shape& s, bool print_layout) {
  std::string out;
  AppendShape(out, s, print_layout);
  return out;
}

// ---------------------------------------------------------------------------------------
// Instructions and modules

const Attribute* Instruction::FindAttr(AttrId id) const {
  for (const Attribute& a : attrs)
    if (a.id == id) return &a;
  return nullptr;
}

std::vector<Instruction*> Computation::Parameters() const {
  std::vector<Instruction*> params;
  AppendParameters(params);
  return params;
}

// Built on first use (passes), not while parsing: parsing a module must not pay for a second
// hash table of every name.
struct Module::NameSet {
  bool built = false;
  std::unordered_set<std::string_view> names;
  std::unordered_map<std::string_view, int64_t> next_suffix;
};

// Computation names to computations, keyed by the computations' own names.
struct Module::ComputationIndex {
  NameTable<Computation> by_name;
};

Module::Module() : names_(std::make_unique<NameSet>()), computation_index_(std::make_unique<ComputationIndex>()) {}
// The computations first: those an expansion brought (Adopt) live in the arenas of the adopted
// modules, which adopted_ frees before `computations` would otherwise be destroyed.
Module::~Module() { computations.clear(); }

Computation* Module::NewComputation() {
  return new (arena.Allocate(sizeof(Computation), alignof(Computation))) Computation(arena);
}

Computation* Module::AddComputation(std::string_view comp_name) {
  computations.emplace_back(NewComputation());
  Computation* comp = computations.back().get();
  comp->name = comp_name;
  comp->parent = this;
  computation_index_->by_name.InsertUnique(comp);  // a taken name keeps its first owner
  return comp;
}

Computation* Module::TryAddComputation(std::string_view comp_name) {
  computations.emplace_back(NewComputation());
  Computation* comp = computations.back().get();
  comp->name = comp_name;
  comp->parent = this;
  if (computation_index_->by_name.InsertUnique(comp) != nullptr) {  // one probe finds an owner
    computations.pop_back();
    return nullptr;
  }
  return comp;
}

Computation* Module::Adopt(std::unique_ptr<Module> other, std::string_view prefix) {
  const uint32_t source_base = static_cast<uint32_t>(sources.size());
  for (auto& source : other->sources) sources.push_back(std::move(source));
  other->sources.clear();
  Computation* entry = other->entry;
  std::vector<ComputationPtr, LargeAllocator<ComputationPtr>> moved;
  for (auto& owned : other->computations) {
    Computation* comp = owned.get();
    std::string base = std::string(prefix) + "." + std::string(comp->name);
    std::string_view name = arena.CopyString(base);
    for (int i = 1; FindComputation(name); ++i) name = arena.CopyString(base + "." + std::to_string(i));
    comp->name = name;
    comp->parent = this;
    comp->implied = true;
    comp->is_entry = false;
    comp->source_id += source_base;
    for (Instruction* inst : comp->instructions) inst->source_id += source_base;
    computation_index_->by_name.InsertUnique(comp);
    moved.push_back(std::move(owned));
  }
  other->computations.clear();
  other->entry = nullptr;
  custom_call_configs.merge(other->custom_call_configs);
  computations.insert(computations.begin(), std::make_move_iterator(moved.begin()),
                      std::make_move_iterator(moved.end()));
  adopted_.push_back(std::move(other));
  return entry;
}

std::vector<std::string> Module::RemoveDeadComputations() {
  std::vector<std::string> removed;
  if (!entry) return removed;
  std::unordered_set<const Computation*> live{entry};
  std::vector<const Computation*> work{entry};
  while (!work.empty()) {
    const Computation* comp = work.back();
    work.pop_back();
    for (const Instruction* inst : comp->instructions)
      for (const Attribute& a : inst->attrs)
        if (a.kind == AttrKind::Computation || a.kind == AttrKind::ComputationList)
          for (const Computation* callee : a.computations)
            if (callee && live.insert(callee).second) work.push_back(callee);
  }
  if (live.size() == computations.size()) return removed;
  for (const ComputationPtr& comp : computations)
    if (!live.count(comp.get())) removed.emplace_back(comp->name);
  std::erase_if(computations, [&](const ComputationPtr& comp) { return !live.count(comp.get()); });
  // The name table has no erase: it is rebuilt from the computations that stay.
  computation_index_->by_name.clear();
  for (const ComputationPtr& comp : computations) computation_index_->by_name.InsertUnique(comp.get());
  return removed;
}

Computation* Module::FindComputation(std::string_view comp_name) const {
  return computation_index_->by_name.find(comp_name);
}

void Module::ForgetNames() {
  names_->built = false;
  names_->names.clear();
}

bool Module::RecountOldForm(std::string_view message) {
  for (OldForm& form : old_forms)  // a handful of distinct forms at most
    if (form.first.message == message) {
      ++form.more;
      return true;
    }
  return false;
}

void Module::NoteOldForm(Diagnostic diag) {
  if (RecountOldForm(diag.message)) return;
  diag.severity = Severity::kWarning;
  old_forms.push_back(OldForm{std::move(diag), 0});
}

std::string_view Module::UniqueName(std::string_view base) {
  // Strip a numeric ".N" suffix so that convert.3 begets convert.4, not convert.3.1.
  size_t dot = base.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < base.size() &&
      std::all_of(base.begin() + dot + 1, base.end(), [](char c) { return c >= '0' && c <= '9'; }))
    base = base.substr(0, dot);
  if (base.empty()) base = "inst";
  if (!names_->built) {
    for (const auto& comp : computations)
      for (const Instruction* inst : comp->instructions) names_->names.insert(inst->name);
    names_->built = true;
  }
  std::string_view stable_base = arena.CopyString(base);
  int64_t& suffix = names_->next_suffix[stable_base];
  for (;;) {
    std::string candidate = std::string(stable_base) + "." + std::to_string(++suffix);
    if (!names_->names.count(candidate)) {
      std::string_view stored = arena.CopyString(candidate);
      names_->names.insert(stored);
      return stored;
    }
  }
}

Instruction* Module::NewInstruction(Computation* comp, Opcode op, const Shape& shape,
                                    const std::vector<Instruction*>& operands, std::string_view base_name) {
  Instruction* inst = arena.New<Instruction>();
  inst->opcode = op;
  inst->shape = shape;
  inst->operands = arena.Copy(operands);
  inst->parent = comp;
  inst->name = UniqueName(base_name.empty() ? OpcodeName(op) : base_name);
  comp->instructions.push_back(inst);
  if (comp->uses) comp->uses->Add(inst);
  return inst;
}

Shape Module::MakeArrayShape(PrimitiveType type, const std::vector<int64_t>& dims) {
  Shape s;
  s.type = type;
  s.dims = arena.Copy(dims);
  return s;
}

Shape Module::MakeTupleShape(const std::vector<Shape>& elements) {
  Shape s;
  s.type = PrimitiveType::kTuple;
  s.tuple = arena.Copy(elements);
  return s;
}

std::vector<int> CountUsers(const Computation& comp) {
  std::unordered_map<const Instruction*, int> index;
  index.reserve(comp.instructions.size());
  for (size_t i = 0; i < comp.instructions.size(); ++i) index[comp.instructions[i]] = int(i);
  std::vector<int> users(comp.instructions.size(), 0);
  for (const Instruction* inst : comp.instructions)
    for (const Instruction* op : inst->operands) {
      auto it = index.find(op);
      if (it != index.end()) ++users[it->second];
    }
  return users;
}

std::vector<const Computation*> CalledComputations(const Instruction& inst) {
  std::vector<const Computation*> called;
  for (const Attribute& a : inst.attrs)
    if (a.kind == AttrKind::Computation || a.kind == AttrKind::ComputationList)
      called.insert(called.end(), a.computations.begin(), a.computations.end());
  return called;
}

bool HasSideEffectNoRecurse(const Instruction& inst) {
  auto flag = [&](AttrId id) {
    const Attribute* a = inst.FindAttr(id);
    return a && a->b;
  };
  switch (OpcodeSideEffect(inst.opcode)) {
    case SideEffect::kNone: return false;
    case SideEffect::kAlways: return true;
    case SideEffect::kCollective: return flag(AttrId::kConstrainLayout) || inst.FindAttr(AttrId::kChannelId) != nullptr;
    case SideEffect::kChannelId: return inst.FindAttr(AttrId::kChannelId) != nullptr;
    case SideEffect::kFlagged: return flag(AttrId::kCustomCallHasSideEffect);
  }
  return false;
}

SideEffects::SideEffects(const Module& module) {
  for (const auto& comp : module.computations) {
    bool any = false;
    for (const Instruction* inst : comp->instructions)
      if (Of(*inst)) {
        any = true;
        break;
      }
    computations_[comp.get()] = any;
  }
}

bool SideEffects::Of(const Instruction& inst) const {
  if (HasSideEffectNoRecurse(inst)) return true;
  for (const Computation* c : CalledComputations(inst))
    if (Of(*c)) return true;
  return false;
}

// A computation not judged yet (only possible out of the callees-first order) counts as having
// side effects: keeping an instruction is always safe.
bool SideEffects::Of(const Computation& comp) const {
  auto it = computations_.find(&comp);
  return it == computations_.end() || it->second;
}

}  // namespace nhlo
