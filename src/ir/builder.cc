// SPDX-License-Identifier: Apache-2.0
#include "ir/builder.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/custom_calls.h"
#include "ir/literal.h"
#include "ir/uses.h"

namespace nhlo {

Shape ChangeElementType(Module& module, const Shape& shape, PrimitiveType type) {
  if (shape.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& e : shape.tuple) elements.push_back(ChangeElementType(module, e, type));
    return module.MakeTupleShape(elements);
  }
  if (!shape.IsArray()) return shape;
  Shape out = shape;
  out.type = type;
  out.layout = shape.layout && shape.layout->tail.empty() ? shape.layout : nullptr;  // tiling depends on the width
  return out;
}

bool AllLeavesIntegers(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple)
      if (!AllLeavesIntegers(e)) return false;
    return true;
  }
  return IsInteger(shape.type);
}

Instruction* MakeConvert(Module& module, Computation* comp, Instruction* operand, const Shape& shape) {
  return module.NewInstruction(comp, Opcode::kConvert, shape, {operand});
}

Instruction* MakeGetTupleElement(Module& module, Computation* comp, Instruction* tuple, int64_t index) {
  Instruction* gte = module.NewInstruction(comp, Opcode::kGetTupleElement, tuple->shape.tuple[index], {tuple});
  Attribute a;
  a.id = AttrId::kIndex;
  a.kind = AttrKind::Int;
  a.i = index;
  SetAttr(module, gte, a);
  return gte;
}

Instruction* MakeTuple(Module& module, Computation* comp, const std::vector<Instruction*>& elements) {
  std::vector<Shape> shapes;
  for (const Instruction* e : elements) shapes.push_back(e->shape);
  return module.NewInstruction(comp, Opcode::kTuple, module.MakeTupleShape(shapes), elements);
}

Instruction* MakeConstant(Module& module, Computation* comp, const Shape& shape, const std::vector<uint8_t>& bytes) {
  Instruction* c = module.NewInstruction(comp, Opcode::kConstant, shape, {});
  Literal* lit = module.arena.New<Literal>();
  lit->shape = shape;
  lit->data = module.arena.Copy(bytes);
  c->literal = lit;
  return c;
}

Instruction* MakeScalarConstant(Module& module, Computation* comp, PrimitiveType type, double value) {
  std::vector<uint8_t> bytes(static_cast<size_t>(HostByteSize(type)));
  StoreFromDouble(type, bytes.data(), value);
  return MakeConstant(module, comp, module.MakeArrayShape(type, {}), bytes);
}

Instruction* MakeBroadcast(Module& module, Computation* comp, Instruction* operand, const Shape& shape,
                           const std::vector<int64_t>& dimensions) {
  Instruction* b = module.NewInstruction(comp, Opcode::kBroadcast, shape, {operand});
  SetAttr(module, b, IntListAttr(module, AttrId::kDimensions, dimensions));
  return b;
}

Instruction* MakeElementwise(Module& module, Computation* comp, Opcode op, const std::vector<Instruction*>& operands) {
  return module.NewInstruction(comp, op, operands[op == Opcode::kClamp ? 1 : 0]->shape, operands);
}

Instruction* MakeReshape(Module& module, Computation* comp, Instruction* operand, const std::vector<int64_t>& dims) {
  return module.NewInstruction(comp, Opcode::kReshape, module.MakeArrayShape(operand->shape.type, dims), {operand});
}

Instruction* MakeTranspose(Module& module, Computation* comp, Instruction* operand,
                           const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(operand->shape.dims[p]);
  Instruction* t =
      module.NewInstruction(comp, Opcode::kTranspose, module.MakeArrayShape(operand->shape.type, dims), {operand});
  SetAttr(module, t, IntListAttr(module, AttrId::kDimensions, permutation));
  return t;
}

Instruction* MakeBitcastConvert(Module& module, Computation* comp, Instruction* operand, const Shape& shape) {
  return module.NewInstruction(comp, Opcode::kBitcastConvert, shape, {operand});
}

void SetAttr(Module& module, Instruction* inst, const Attribute& attr) {
  std::vector<Attribute> attrs;
  bool placed = false;
  for (const Attribute& a : inst->attrs) {
    if (a.id == attr.id) continue;
    if (!placed && a.id > attr.id) {
      attrs.push_back(attr);
      placed = true;
    }
    attrs.push_back(a);
  }
  if (!placed) attrs.push_back(attr);
  inst->attrs = module.arena.Copy(attrs);
  DecodeCustomCallConfig(module, *inst);
  if (attr.kind == AttrKind::InstructionList && inst->parent && inst->parent->uses)
    inst->parent->uses->AddControlUses(inst);
}

void RemoveAttr(Module& module, Instruction* inst, AttrId id) {
  std::vector<Attribute> attrs;
  for (const Attribute& a : inst->attrs)
    if (a.id != id) attrs.push_back(a);
  inst->attrs = module.arena.Copy(attrs);
  DecodeCustomCallConfig(module, *inst);
}

void CopyAttrs(Module& module, const Instruction* from, Instruction* to) {
  to->attrs = module.arena.Copy(from->attrs.data(), from->attrs.size());
  DecodeCustomCallConfig(module, *to);
  if (to->parent && to->parent->uses) to->parent->uses->AddControlUses(to);
}

Attribute IntListAttr(Module& module, AttrId id, const std::vector<int64_t>& values) {
  Attribute a;
  a.id = id;
  a.kind = AttrKind::IntList;
  a.ints = module.arena.Copy(values);
  return a;
}

Attribute TextAttr(Module& module, AttrId id, AttrKind kind, std::string_view text) {
  Attribute a;
  a.id = id;
  a.kind = kind;
  a.text = module.arena.CopyString(text);
  return a;
}

Attribute JsonConfigAttr(Module& module, std::string_view json_text) {
  Attribute a = TextAttr(module, AttrId::kBackendConfig, AttrKind::Config, json_text);
  a.config_is_json = true;
  a.json = module.ParseJson(a.text);
  return a;
}

void ReplaceAllUses(Computation* comp, Instruction* from, Instruction* to) {
  if (comp->root == from) comp->root = to;
  if (comp->uses) return comp->uses->ReplaceAllUsesWith(from, to);
  for (Instruction* inst : comp->instructions) {
    if (inst == to) continue;  // the replacement may use the original
    for (Instruction*& op : inst->operands)
      if (op == from) op = to;
    for (const Attribute& a : inst->attrs)
      if (a.kind == AttrKind::InstructionList)
        for (Instruction*& p : a.instructions)
          if (p == from) p = to;
  }
}

void RemoveInstruction(Computation* comp, Instruction* inst) {
  if (comp->uses)
    comp->uses->MarkRemoved(inst);
  else
    std::erase(comp->instructions, inst);
}

void SortTopologically(Computation* comp) {
  std::unordered_set<const Instruction*> members(comp->instructions.begin(), comp->instructions.end());
  std::unordered_set<const Instruction*> placed;
  std::vector<Instruction*> order;
  order.reserve(comp->instructions.size());
  // Iterative DFS so long chains cannot overflow the stack.
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (Instruction* start : comp->instructions) {
    if (placed.count(start)) continue;
    stack.push_back({start, 0});
    std::unordered_set<const Instruction*> on_stack{start};
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      std::vector<Instruction*> deps(inst->operands.begin(), inst->operands.end());
      if (const Attribute* preds = inst->FindAttr(AttrId::kControlPredecessors))
        deps.insert(deps.end(), preds->instructions.begin(), preds->instructions.end());
      if (next < deps.size()) {
        Instruction* dep = deps[next++];
        if (members.count(dep) && !placed.count(dep) && !on_stack.count(dep)) {
          on_stack.insert(dep);
          stack.push_back({dep, 0});
        }
        continue;
      }
      placed.insert(inst);
      order.push_back(inst);
      on_stack.erase(inst);
      stack.pop_back();
    }
  }
  comp->instructions.assign(order.begin(), order.end());
}

const KeyValue* FindEntry(const Attribute& attr, std::string_view key) {
  for (const KeyValue& e : attr.entries)
    if (e.key == key) return &e;
  return nullptr;
}

namespace {

// A KeyValues attribute holding `entries`, printed the way the printer writes them.
Attribute KeyValuesAttr(Module& module, AttrId id, const std::vector<KeyValue>& entries) {
  Attribute a;
  a.id = id;
  a.kind = AttrKind::KeyValues;
  a.entries = module.arena.Copy(entries);
  return a;
}

KeyValue StringEntry(Module& module, std::string_view key, std::string_view value) {
  KeyValue e;
  e.key = module.arena.CopyString(key);
  e.kind = KeyValueKind::kString;
  e.text = module.arena.CopyString(value);
  return e;
}

}  // namespace

Attribute AppendToMetadataOpName(Module& module, const Attribute* metadata, std::string_view suffix) {
  std::vector<KeyValue> entries;
  if (metadata) entries.assign(metadata->entries.begin(), metadata->entries.end());
  bool found = false;
  for (KeyValue& e : entries) {
    if (e.key != "op_name") continue;
    found = true;
    // A value that is not a string (never written by XLA) contributes its spelling.
    std::string name = e.kind == KeyValueKind::kInt ? std::to_string(e.i) : std::string(e.text);
    e = StringEntry(module, e.key, name + std::string(suffix));
  }
  if (!found) {
    auto op_type = std::find_if(entries.begin(), entries.end(), [](const KeyValue& e) { return e.key == "op_type"; });
    entries.insert(op_type == entries.end() ? entries.begin() : op_type + 1, StringEntry(module, "op_name", suffix));
  }
  return KeyValuesAttr(module, AttrId::kMetadata, entries);
}

Attribute SetFrontendAttribute(Module& module, const Attribute* attrs, std::string_view key, std::string_view value) {
  std::vector<KeyValue> entries;
  auto set = [&](const KeyValue& e) {
    auto same = std::find_if(entries.begin(), entries.end(), [&](const KeyValue& x) { return x.key == e.key; });
    if (same != entries.end())
      *same = e;
    else
      entries.push_back(e);
  };
  if (attrs)
    for (const KeyValue& e : attrs->entries) set(e);
  set(StringEntry(module, key, value));
  std::stable_sort(entries.begin(), entries.end(), [](const KeyValue& a, const KeyValue& b) { return a.key < b.key; });
  return KeyValuesAttr(module, AttrId::kFrontendAttributes, entries);
}

}  // namespace nhlo
