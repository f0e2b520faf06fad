// SPDX-License-Identifier: Apache-2.0
#include "interp/frame_checks.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace nhlo {

uint64_t RequiredAlignment(PrimitiveType type) {
  uint64_t size = static_cast<uint64_t>(std::max(HostByteSize(type), 1));
  uint64_t align = 1;
  while (align < size && align < 8) align *= 2;
  return align;
}

Status CheckFrameAlignment(const ComputationRecord& comp) {
  for (const BufferRecord& b : comp.buffers) {
    if (b.kind != BufferKind::kTemp || !IsArrayType(b.type)) continue;
    if (b.location % RequiredAlignment(b.type) != 0)
      return Status::Error("buffer '" + std::string(b.name) + "' of '" + std::string(comp.name) + "' at frame offset " +
                           std::to_string(b.location) + " is not aligned for " +
                           std::string(PrimitiveTypeName(b.type)));
  }
  return OkStatus();
}

uint64_t FrameAlignment(const ComputationRecord& comp) {
  uint64_t align = 1;
  for (const BufferRecord& b : comp.buffers)
    if (b.kind == BufferKind::kTemp && IsArrayType(b.type) && b.size > 0)
      align = std::max(align, RequiredAlignment(b.type));
  return align;
}

Result<uint64_t> CheckCalleeFrameAlignment(const BundleRecord& b, const std::vector<uint64_t>& frame_alignment) {
  uint64_t need = 1;
  for (const AttrRecord& a : b.attrs)
    for (uint32_t callee : a.computations()) need = std::max(need, frame_alignment[callee]);
  if (b.callee_frame % need != 0)
    return Status::Error("callees' frame at offset " + std::to_string(b.callee_frame) + " is not aligned to the " +
                         std::to_string(need) + " bytes its temps need");
  return need;
}

namespace {

struct ByteRange {
  uint64_t begin = 0, end = 0;
  uint32_t buffer = 0;
};

// The frame bytes of the array leaves of buffer `index` (tuples walked with an explicit stack:
// a file may nest tuples as deep as it has buffers).
void AppendTempLeaves(const ComputationRecord& comp, uint32_t index, std::vector<ByteRange>& out,
                      std::vector<uint32_t>& stack) {
  stack.assign(1, index);
  while (!stack.empty()) {
    const BufferRecord& b = comp.buffers[stack.back()];
    uint32_t current = stack.back();
    stack.pop_back();
    if (b.type == PrimitiveType::kTuple) {
      stack.insert(stack.end(), b.tuple.begin(), b.tuple.end());
      continue;
    }
    if (b.kind == BufferKind::kTemp && b.size > 0) out.push_back({b.location, b.location + b.size, current});
  }
}

using LeafPairs = std::vector<std::pair<uint32_t, uint32_t>>;

// The leaves at the same position of tree `a` of `ca` and tree `b` of `cb`, as far as the two
// shapes agree (the load reports a mismatch of a loop's trees when it runs, not here).
void PairLeaves(const ComputationRecord& ca, uint32_t a, const ComputationRecord& cb, uint32_t b, LeafPairs& out) {
  LeafPairs stack{{a, b}};
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    const BufferRecord& bx = ca.buffers[x];
    const BufferRecord& by = cb.buffers[y];
    bool tuple_x = bx.type == PrimitiveType::kTuple, tuple_y = by.type == PrimitiveType::kTuple;
    if (tuple_x != tuple_y || bx.tuple.size() != by.tuple.size()) continue;
    if (!tuple_x) {
      out.emplace_back(x, y);
      continue;
    }
    for (size_t k = bx.tuple.size(); k-- > 0;) stack.emplace_back(bx.tuple[k], by.tuple[k]);
  }
}

// The loop state leaves (of `comp`, paired with `operand`'s) whose bytes the body of while `b`
// passes on untouched: its root leaf there holds the bytes of its parameter's leaf there.
std::vector<uint32_t> PassedThrough(const BundleProgram& program, const ComputationRecord& comp,
                                    const BundleRecord& b) {
  std::vector<uint32_t> passed;
  const AttrRecord* body_attr = b.Find(AttrId::kBody);
  if (!body_attr || body_attr->computations().empty()) return passed;
  const ComputationRecord& body = program.computations[body_attr->computations()[0]];
  if (body.params.size() != 1) return passed;
  LeafPairs state_param, param_root;
  PairLeaves(comp, b.result, body, body.params[0], state_param);
  PairLeaves(body, body.params[0], body, body.root, param_root);
  // A file may list one leaf twice in a tree: a leaf is passed on only if every pairing says so.
  std::sort(param_root.begin(), param_root.end());
  std::sort(state_param.begin(), state_param.end());
  for (size_t k = 0; k < state_param.size();) {
    const uint32_t state = state_param[k].first;
    bool untouched = true;
    for (; k < state_param.size() && state_param[k].first == state; ++k) {
      const uint32_t param = state_param[k].second;
      auto [first, last] = std::equal_range(param_root.begin(), param_root.end(), std::make_pair(param, uint32_t{0}),
                                            [](const auto& x, const auto& y) { return x.first < y.first; });
      untouched = untouched && first != last && std::all_of(first, last, [&](const auto& pair) {
                    return ResolveAlias(body.buffers, pair.second) == param;
                  });
    }
    if (untouched) passed.push_back(state);
  }
  return passed;  // sorted, each state once
}

// A bundle whose result has alias leaves must be one that only copies each of them from an
// operand leaf holding the same bytes (so the copy is none), and a loop's aliased state must be
// passed on by its body untouched: then no step ever writes an alias's bytes.
Status CheckAliasedResults(const BundleProgram& program, const ComputationRecord& comp, const BundleRecord& b) {
  std::vector<uint32_t> aliases, stack{b.result};
  while (!stack.empty()) {
    const BufferRecord& r = comp.buffers[stack.back()];
    uint32_t index = stack.back();
    stack.pop_back();
    if (r.type == PrimitiveType::kTuple) stack.insert(stack.end(), r.tuple.begin(), r.tuple.end());
    if (r.kind == BufferKind::kAlias) aliases.push_back(index);
  }
  if (aliases.empty()) return OkStatus();
  LeafPairs pairs;  // (result leaf, operand leaf) that the step copies
  const BufferRecord& result = comp.buffers[b.result];
  const bool permutes = b.Find(AttrId::kBitcastLayouts) != nullptr;
  switch (OpcodeResultBytes(b.opcode)) {
    case ResultBytes::kMoves:
      if (b.opcode == Opcode::kGetTupleElement) {
        const AttrRecord* index = b.Find(AttrId::kIndex);
        if (index && b.operands.size() == 1) {
          const BufferRecord& t = comp.buffers[b.operands[0]];
          if (index->i() >= 0 && static_cast<uint64_t>(index->i()) < t.tuple.size())
            PairLeaves(comp, b.result, comp, t.tuple[static_cast<size_t>(index->i())], pairs);
        }
      } else if (b.opcode == Opcode::kTuple) {
        if (result.type == PrimitiveType::kTuple && result.tuple.size() == b.operands.size())
          for (size_t k = 0; k < b.operands.size(); ++k) PairLeaves(comp, result.tuple[k], comp, b.operands[k], pairs);
      } else if (!b.operands.empty() && !permutes) {
        PairLeaves(comp, b.result, comp, b.operands[0], pairs);  // the whole of operand 0
      }
      break;
    case ResultBytes::kLoop:
      if (!b.operands.empty()) {
        std::vector<uint32_t> passed = PassedThrough(program, comp, b);
        LeafPairs all;
        PairLeaves(comp, b.result, comp, b.operands[0], all);
        for (auto pair : all)
          if (std::binary_search(passed.begin(), passed.end(), pair.first)) pairs.push_back(pair);
      }
      break;
    case ResultBytes::kOwn:
    case ResultBytes::kLanes:
    case ResultBytes::kUpdate: break;  // they write their results: an alias among them is refused below
  }
  std::sort(pairs.begin(), pairs.end());
  for (uint32_t alias : aliases) {
    // Every copy into the alias (a file may list one leaf twice in a tree) must be from its bytes.
    auto [first, last] = std::equal_range(pairs.begin(), pairs.end(), std::make_pair(alias, uint32_t{0}),
                                          [](const auto& x, const auto& y) { return x.first < y.first; });
    const BufferRecord& a = comp.buffers[alias];
    const bool copies_nothing = first != last && std::all_of(first, last, [&](const auto& pair) {
                                  return ResolveAlias(comp.buffers, pair.second) == a.location &&
                                         (b.opcode == Opcode::kBitcast ||
                                          comp.buffers[pair.second].type == a.type);  // a bitcast may reinterpret
                                });
    if (!copies_nothing)
      return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' of '" + std::string(comp.name) +
                           "' would write '" + std::string(a.name) + "', which shares the bytes of '" +
                           std::string(comp.buffers[static_cast<size_t>(a.location)].name) + "'");
  }
  return OkStatus();
}

}  // namespace

Status CheckBundlePlacement(const BundleProgram& program, const ComputationRecord& comp, const BundleRecord& b,
                            OpFamily family) {
  NHLO_TRY(CheckAliasedResults(program, comp, b));
  // A tuple or get-tuple-element result names its operands' buffers: it writes nothing.
  if (family == OpFamily::kTuple || family == OpFamily::kGetTupleElement || family == OpFamily::kBound ||
      family == OpFamily::kAfterAll)
    return OkStatus();
  std::vector<ByteRange> written, read;
  std::vector<uint32_t> stack;
  AppendTempLeaves(comp, b.result, written, stack);
  for (uint32_t operand : b.operands) AppendTempLeaves(comp, operand, read, stack);
  // The callees' frame is written while the bundle runs.
  uint64_t callee_end = 0;
  for (const AttrRecord& a : b.attrs)
    for (uint32_t callee : a.computations()) callee_end = std::max(callee_end, program.computations[callee].frame_size);
  if (callee_end > 0) written.push_back({b.callee_frame, b.callee_frame + callee_end, UINT32_MAX});
  auto name = [&](uint32_t buffer) {
    return buffer == UINT32_MAX ? std::string("the callees' frame")
                                : "'" + std::string(comp.buffers[buffer].name) + "'";
  };
  auto error = [&](const ByteRange& w, const ByteRange& r, const char* what) {
    return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' of '" + std::string(comp.name) +
                         "' places " + name(w.buffer) + " over " + name(r.buffer) + ", which it " + what);
  };
  auto by_begin = [](const ByteRange& x, const ByteRange& y) { return x.begin < y.begin; };
  std::sort(written.begin(), written.end(), by_begin);
  for (size_t i = 1; i < written.size(); ++i)
    if (written[i].begin < written[i - 1].end) return error(written[i], written[i - 1], "also writes");
  // `written` is now disjoint and sorted, so its ends are sorted too: each read range finds the
  // written ranges it meets by binary search.
  // opcodes.def's bytes column says which operands the result may sit exactly over.
  const ResultBytes bytes = OpcodeResultBytes(b.opcode);
  const bool in_place = bytes == ResultBytes::kLanes || bytes == ResultBytes::kUpdate || bytes == ResultBytes::kMoves;
  const bool updates_operand0 = bytes == ResultBytes::kUpdate;
  // A loop's state leaf may hold the bytes of its init's leaf at the same position (buffer
  // assignment gives it a dying operand's bytes, or bytes the body passes on untouched): the
  // init's copy is then none.
  LeafPairs same_position;
  if (bytes == ResultBytes::kLoop && !b.operands.empty())
    PairLeaves(comp, b.result, comp, b.operands[0], same_position);
  std::sort(same_position.begin(), same_position.end());
  for (const ByteRange& r : read) {
    auto it = std::upper_bound(written.begin(), written.end(), r.begin,
                               [](uint64_t at, const ByteRange& w) { return at < w.end; });
    for (; it != written.end() && it->begin < r.end; ++it) {
      bool exact = it->begin == r.begin && it->end == r.end && it->buffer != UINT32_MAX &&
                   HostByteSize(comp.buffers[it->buffer].type) == HostByteSize(comp.buffers[r.buffer].type);
      bool state =
          exact && std::binary_search(same_position.begin(), same_position.end(), std::make_pair(it->buffer, r.buffer));
      // An update (dynamic-update-slice, scatter) writes over the operand it copies, not its update.
      bool allowed = in_place && (!updates_operand0 || r.buffer == b.operands[0]);
      if (!(allowed && exact) && !state) return error(*it, r, "reads");
    }
  }
  return OkStatus();
}

}  // namespace nhlo
