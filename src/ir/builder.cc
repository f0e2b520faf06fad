// SPDX-License-Identifier: Apache-2.0
#include "ir/builder.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/literal.h"
#include "support/escape.h"

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

Instruction* MakeTranspose(Module& module, Computation* comp, Instruction* operand, const std::vector<int64_t>& permutation) {
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(operand->shape.dims[p]);
  Instruction* t = module.NewInstruction(comp, Opcode::kTranspose, module.MakeArrayShape(operand->shape.type, dims), {operand});
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
}

void RemoveAttr(Module& module, Instruction* inst, AttrId id) {
  std::vector<Attribute> attrs;
  for (const Attribute& a : inst->attrs)
    if (a.id != id) attrs.push_back(a);
  inst->attrs = module.arena.Copy(attrs);
}

void CopyAttrs(Module& module, const Instruction* from, Instruction* to) {
  to->attrs = module.arena.Copy(from->attrs.data(), from->attrs.size());
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

void ReplaceAllUses(Computation* comp, Instruction* from, Instruction* to) {
  for (Instruction* inst : comp->instructions) {
    if (inst == to) continue;  // the replacement may use the original
    for (Instruction*& op : inst->operands)
      if (op == from) op = to;
    for (const Attribute& a : inst->attrs)
      if (a.kind == AttrKind::InstructionList)
        for (Instruction*& p : a.instructions)
          if (p == from) p = to;
  }
  if (comp->root == from) comp->root = to;
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
  comp->instructions = std::move(order);
}

namespace {

// Splits `{k=v k2="x" ...}` (or comma separated) into ordered (key, value) pairs. Values are
// kept as written: quoted strings, brace groups or bare tokens.
std::vector<std::pair<std::string, std::string>> SplitPairs(std::string_view raw) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (raw.size() < 2) return pairs;
  std::string_view body = raw.substr(1, raw.size() - 2);
  size_t i = 0;
  auto skip = [&] { while (i < body.size() && (body[i] == ' ' || body[i] == ',')) ++i; };
  while (skip(), i < body.size()) {
    size_t eq = body.find('=', i);
    if (eq == std::string_view::npos) break;
    std::string key(body.substr(i, eq - i));
    i = eq + 1;
    size_t start = i;
    if (i < body.size() && body[i] == '"') {
      for (++i; i < body.size() && body[i] != '"'; ++i)
        if (body[i] == '\\') ++i;
      ++i;
    } else if (i < body.size() && body[i] == '{') {
      int depth = 0;
      for (; i < body.size(); ++i) {
        if (body[i] == '"') {
          for (++i; i < body.size() && body[i] != '"'; ++i)
            if (body[i] == '\\') ++i;
          continue;
        }
        if (body[i] == '{') ++depth;
        if (body[i] == '}' && --depth == 0) {
          ++i;
          break;
        }
      }
    } else {
      while (i < body.size() && body[i] != ' ' && body[i] != ',') ++i;
    }
    pairs.emplace_back(std::move(key), std::string(body.substr(start, i - start)));
  }
  return pairs;
}

}  // namespace

std::string AppendToMetadataOpName(std::string_view metadata_raw, std::string_view suffix) {
  auto pairs = SplitPairs(metadata_raw);
  bool found = false;
  for (auto& [key, value] : pairs) {
    if (key != "op_name") continue;
    found = true;
    std::string current = value.size() >= 2 ? CUnescape(std::string_view(value).substr(1, value.size() - 2)) : "";
    value = "\"" + CEscape(current + std::string(suffix)) + "\"";
  }
  if (!found) pairs.insert(pairs.begin(), {"op_name", "\"" + CEscape(suffix) + "\""});
  std::string out = "{";
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i) out += ' ';
    out += pairs[i].first + "=" + pairs[i].second;
  }
  return out + "}";
}

std::string SetFrontendAttribute(std::string_view raw, std::string_view key, std::string_view value) {
  std::map<std::string, std::string> sorted;
  for (auto& [k, v] : SplitPairs(raw)) sorted[k] = v;
  sorted[std::string(key)] = "\"" + CEscape(value) + "\"";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : sorted) {
    if (!first) out += ", ";
    first = false;
    out += k + "=" + v;
  }
  return out + "}";
}

}  // namespace nhlo
