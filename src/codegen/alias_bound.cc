// SPDX-License-Identifier: Apache-2.0
#include "codegen/alias_bound.h"

#include <algorithm>
#include <numeric>

namespace nhlo {
namespace {

// Union-find over buffers; a class knows whether it holds a parameter or a constant.
class Classes {
 public:
  explicit Classes(const std::vector<BufferRecord>& buffers) : parent_(buffers.size()), outside_(buffers.size()) {
    std::iota(parent_.begin(), parent_.end(), 0u);
    for (size_t b = 0; b < buffers.size(); ++b) outside_[b] = buffers[b].kind != BufferKind::kTemp;
  }
  bool Outside(uint32_t x) { return outside_[Find(x)]; }
  uint32_t Find(uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Join(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    parent_[std::max(a, b)] = std::min(a, b);
    outside_[std::min(a, b)] = outside_[a] || outside_[b];
  }

 private:
  std::vector<uint32_t> parent_;
  std::vector<bool> outside_;
};

// Joins the leaves of two buffer trees of the same structure, pairwise; with `temps_only`, only
// leaves whose classes hold no parameter or constant (a loop writes its state, so it cannot take
// over a parameter's or a constant's bytes; XLA copies those in).
void JoinTrees(const std::vector<BufferRecord>& buffers, uint32_t a, uint32_t b, Classes& classes,
               bool temps_only = false) {
  const BufferRecord &x = buffers[a], &y = buffers[b];
  if (x.type == PrimitiveType::kTuple || y.type == PrimitiveType::kTuple) {
    if (x.tuple.size() != y.tuple.size()) return;
    for (size_t i = 0; i < x.tuple.size(); ++i) JoinTrees(buffers, x.tuple[i], y.tuple[i], classes, temps_only);
    return;
  }
  if (temps_only && (classes.Outside(a) || classes.Outside(b))) return;
  if (x.size == y.size) classes.Join(a, b);
}

void Leaves(const std::vector<BufferRecord>& buffers, uint32_t b, std::vector<uint32_t>& out) {
  if (buffers[b].type == PrimitiveType::kTuple) {
    for (uint32_t e : buffers[b].tuple) Leaves(buffers, e, out);
  } else {
    out.push_back(b);
  }
}

}  // namespace

uint64_t AliasedLiveBound(const Computation& comp, const std::unordered_map<const Instruction*, uint32_t>& position,
                          const std::vector<BufferRecord>& buffers, const std::vector<uint32_t>& value,
                          const std::vector<uint32_t>& last_use, const std::vector<uint64_t>& callee_bound) {
  const size_t n = comp.instructions.size();
  Classes classes(buffers);
  for (size_t i = 0; i < n; ++i) {
    const Instruction& inst = *comp.instructions[i];
    auto operand = [&](size_t k) { return value[position.at(inst.operands[k])]; };
    // Every other opcode defines new storage (an if chain: the rest of the opcodes need no row).
    if (inst.opcode == Opcode::kGetTupleElement) {
      const Attribute* index = inst.FindAttr(AttrId::kIndex);
      if (inst.operands.size() != 1 || !index) continue;
      const BufferRecord& t = buffers[operand(0)];
      if (t.type == PrimitiveType::kTuple && index->i >= 0 && static_cast<size_t>(index->i) < t.tuple.size())
        JoinTrees(buffers, t.tuple[static_cast<size_t>(index->i)], value[i], classes);
    } else if (inst.opcode == Opcode::kTuple) {
      const BufferRecord& t = buffers[value[i]];
      for (size_t k = 0; k < inst.operands.size() && k < t.tuple.size(); ++k)
        JoinTrees(buffers, operand(k), t.tuple[k], classes);
    } else if (inst.opcode == Opcode::kBitcast || inst.opcode == Opcode::kReshape) {
      if (!inst.operands.empty()) JoinTrees(buffers, operand(0), value[i], classes);
    } else if (inst.opcode == Opcode::kWhile) {
      if (!inst.operands.empty()) JoinTrees(buffers, operand(0), value[i], classes, /*temps_only=*/true);
    }
  }
  // Broadcasts and iotas read only by elementwise ops run inside those ops' fused groups and are
  // never stored (issue 32's executor; XLA fuses them into their consumers).
  auto fusible_consumer = [](Opcode op) {
    return OpcodeElementwise(op) != Elementwise::kNo || op == Opcode::kSelect || op == Opcode::kClamp ||
           op == Opcode::kCompare || op == Opcode::kConvert;
  };
  std::vector<bool> unstored(n, false);
  for (size_t i = 0; i < n; ++i)
    unstored[i] = comp.instructions[i]->opcode == Opcode::kBroadcast || comp.instructions[i]->opcode == Opcode::kIota;
  for (size_t i = 0; i < n; ++i)
    for (const Instruction* op : comp.instructions[i]->operands)
      if (!fusible_consumer(comp.instructions[i]->opcode)) unstored[position.at(op)] = false;
  if (comp.root) unstored[position.at(comp.root)] = false;
  // Per class: bytes (0 when it holds a parameter or a constant), first definition, last reader.
  const uint32_t kNone = UINT32_MAX;
  std::vector<uint64_t> bytes(buffers.size(), 0);
  std::vector<uint32_t> first(buffers.size(), kNone), last(buffers.size(), 0);
  std::vector<uint32_t> leaves;
  for (size_t i = 0; i < n; ++i) {
    if (unstored[i]) continue;
    leaves.clear();
    Leaves(buffers, value[i], leaves);
    for (uint32_t leaf : leaves) {
      uint32_t c = classes.Find(leaf);
      bytes[c] = std::max(bytes[c], buffers[leaf].size);
      first[c] = std::min(first[c], static_cast<uint32_t>(i));
      last[c] = std::max(last[c], last_use[i]);
    }
  }
  std::vector<std::vector<uint32_t>> starting(n + 1), ending(n + 1);
  for (uint32_t c = 0; c < buffers.size(); ++c)
    if (first[c] != kNone && !classes.Outside(c) && bytes[c] > 0) {
      starting[first[c]].push_back(c);
      ending[std::min<size_t>(last[c], n)].push_back(c);
    }
  uint64_t live = 0, peak = 0;
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t c : starting[i]) live += bytes[c];
    peak = std::max(peak, live + callee_bound[i]);
    for (uint32_t c : ending[i]) live -= bytes[c];
  }
  return peak;
}

}  // namespace nhlo
