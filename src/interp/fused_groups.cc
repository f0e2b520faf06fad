// SPDX-License-Identifier: Apache-2.0
// Planning and running the fused elementwise groups of fused_groups.h.
//
// Tile order differs from op-by-op order: member k's tile t runs before member j < k's tile
// t + 1. That gives the same bytes as op by op as long as no stored result shares bytes with
// another range the group touches, except exactly (the same offset, length and element size:
// buffer assignment's in-place reuse, where each tile then overwrites only its own elements).
// The load checks (frame_checks.h) guarantee this per bundle only, so the plan checks it across
// the group and ends a group before the first member that breaks it.
#include "interp/fused_groups.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "codegen/bundle_reader.h"
#include "support/parallel.h"

namespace nhlo {
namespace {

constexpr int64_t kParallelChunk = 64 * kFusedTile;  // elements per ParallelFor chunk
constexpr size_t kMaxMembers = 4096;                 // keeps slot numbers well inside uint16_t
// Scratch tiles are this many 8-byte words apart: a tile plus 5 cache lines, so that tiles do not
// start at the same offset modulo 4 KiB (a load from one tile and a store to the next would
// otherwise falsely alias in the store buffer, which made a chain of adds 3x slower).
constexpr int64_t kTileStride = kFusedTile + 40;

bool SameCountArrays(const ComputationRecord& comp, const BundleRecord& b, int64_t n) {
  for (uint32_t o : b.operands) {
    const BufferRecord& r = comp.buffers[o];
    if (!IsArrayType(r.type) || r.ElementCount() != n) return false;
  }
  return true;
}

int CompareCode(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return 0;
    case ComparisonDirection::kNe: return 1;
    case ComparisonDirection::kLt: return 2;
    case ComparisonDirection::kLe: return 3;
    case ComparisonDirection::kGt: return 4;
    case ComparisonDirection::kGe: return 5;
  }
  return -1;
}

}  // namespace

SpanOp SpanOpOf(const ComputationRecord& comp, const Step& s) {
  const BundleRecord& b = *s.bundle;
  const BufferRecord& out = comp.buffers[b.result];
  if (s.dynamic || !IsArrayType(out.type)) return {};
  int64_t n = out.ElementCount();
  size_t arity = b.operands.size();
  if (n <= 0) return {};
  auto type = [&](size_t i) { return comp.buffers[b.operands[i]].type; };
  switch (s.family) {
    case OpFamily::kUnary:
      if (arity != 1 || !SameCountArrays(comp, b, n)) return {};
      return UnarySpanOp(b.opcode, type(0), out.type);
    case OpFamily::kBinary:
      if (arity != 2 || !SameCountArrays(comp, b, n)) return {};
      return BinarySpanOp(b.opcode, type(0), type(1), out.type);
    case OpFamily::kCompare: {
      const AttrRecord* dir = s.Find(AttrId::kDirection);
      const AttrRecord* kind = s.Find(AttrId::kType);
      if (arity != 2 || !dir || !SameCountArrays(comp, b, n) || type(0) != type(1) || out.type != PrimitiveType::kPred)
        return {};
      if (dir->i() < 0 || dir->i() > 255) return {};
      int code = CompareCode(static_cast<ComparisonDirection>(dir->i()));
      bool total_order = kind && kind->i() == static_cast<int64_t>(ComparisonType::kTotalOrder);
      if (code < 0 || IsComplex(type(0))) return {};
      return CompareSpanOp(code, total_order, type(0));
    }
    case OpFamily::kSelect:
      if (arity != 3 || !SameCountArrays(comp, b, n) || type(0) != PrimitiveType::kPred || type(1) != out.type ||
          type(2) != out.type)
        return {};
      return SelectSpanOp(out.type);
    case OpFamily::kConvert:
      if (arity != 1 || !SameCountArrays(comp, b, n) || IsComplex(type(0)) || IsComplex(out.type)) return {};
      return ConvertSpanOp(type(0), out.type);
    case OpFamily::kBroadcast:
      if (arity != 1 || type(0) != out.type || comp.buffers[b.operands[0]].ElementCount() != 1) return {};
      return FillSpanOp(out.type);
    case OpFamily::kClamp: {
      if (arity != 3 || type(0) != out.type || type(1) != out.type || type(2) != out.type) return {};
      const int64_t lo = comp.buffers[b.operands[0]].ElementCount(), x = comp.buffers[b.operands[1]].ElementCount(),
                    hi = comp.buffers[b.operands[2]].ElementCount();
      if (x != n || (lo != 1 && lo != n) || (hi != 1 && hi != n)) return {};
      return ClampSpanOp(out.type, lo == 1 && n != 1, hi == 1 && n != 1);
    }
    case OpFamily::kReducePrecision: {  // KernelReducePrecision's checks
      int exponent_bits = 0, mantissa_bits = 0;
      if (arity != 1 || !SameCountArrays(comp, b, n) || type(0) != out.type || !IsFloat(out.type) ||
          !ReducePrecisionWidths(s, &exponent_bits, &mantissa_bits))
        return {};
      return ReducePrecisionSpanOp(out.type, exponent_bits, mantissa_bits);
    }
    case OpFamily::kReshape:
      if (b.opcode != Opcode::kReshape || arity != 1 || !SameCountArrays(comp, b, n) || type(0) != out.type) return {};
      return CopySpanOp(out.type);
    case OpFamily::kNotExecutable:
    case OpFamily::kBound:
    case OpFamily::kBitcastConvert:
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
    case OpFamily::kRng:
    case OpFamily::kCholesky:
    case OpFamily::kTriangularSolve:
    case OpFamily::kStochasticConvert:
    case OpFamily::kFft:
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
    case OpFamily::kRecvDone: return {};
  }
  return {};
}

namespace {

// The span form of step `s` when it can join a group: SpanOpOf for a result that is a temp (a
// group stores only into its computation's temps).
SpanOp FusibleOp(const ComputationRecord& comp, const Step& s) {
  if (comp.buffers[s.bundle->result].kind != BufferKind::kTemp) return {};
  return SpanOpOf(comp, s);
}

// A temp's bytes in its frame.
struct Range {
  uint64_t begin = 0, end = 0;
  uint32_t element = 0;
  bool Overlaps(const Range& o) const { return begin < o.end && o.begin < end; }
  bool Same(const Range& o) const { return begin == o.begin && end == o.end && element == o.element; }
};

Range RangeOf(const BufferRecord& r) {
  uint64_t element = static_cast<uint64_t>(HostByteSize(r.type));
  return {r.location, r.location + element * static_cast<uint64_t>(r.ElementCount()), static_cast<uint32_t>(element)};
}

class Planner {
 public:
  Planner(const ComputationRecord& comp, const std::vector<Step>& steps) : comp_(comp), steps_(steps) {
    last_read_.assign(comp.buffers.size(), -1);
    produced_.assign(comp.buffers.size(), 0);
    producer_.assign(comp.buffers.size(), -1);
    for (size_t i = 0; i < steps.size(); ++i) {
      for (uint32_t o : steps[i].bundle->operands) last_read_[o] = static_cast<int64_t>(i);
      producer_[steps[i].bundle->result] = static_cast<int64_t>(i);
    }
  }

  FusionPlan Plan() {
    FusionPlan plan;
    plan.group_at.assign(steps_.size(), -1);
    plan.elided.assign(steps_.size(), 0);
    ops_.resize(steps_.size());
    remat_.assign(steps_.size(), 0);
    for (size_t i = 0; i < steps_.size(); ++i) {
      ops_[i] = FusibleOp(comp_, steps_[i]);
      // A broadcast of a parameter or constant scalar: its source holds the same value for the
      // whole frame, so a group can fill its own tile from it instead of reading the array.
      const BundleRecord& b = *steps_[i].bundle;
      // Only arrays of 2+ elements: a group reads those as arrays of its own element count,
      // never as a clamp's scalar bound, so every group reading one rematerializes it.
      remat_[i] = ops_[i].fn && steps_[i].family == OpFamily::kBroadcast &&
                  comp_.buffers[b.operands[0]].kind != BufferKind::kTemp && count_of(b.result) > 1;
    }
    auto count = [&](size_t i) { return comp_.buffers[steps_[i].bundle->result].ElementCount(); };
    // The runs of steps that become groups: maximal, then cut at the first conflict.
    std::vector<std::pair<size_t, size_t>> runs;
    size_t i = 0;
    while (i < steps_.size()) {
      if (!ops_[i].fn) {
        ++i;
        continue;
      }
      size_t end = i + 1;
      while (end < steps_.size() && end - i < kMaxMembers && ops_[end].fn && count(end) == count(i)) ++end;
      // Leaving members out stores more results, so check again until nothing conflicts.
      for (size_t conflict = FirstConflict(i, end); conflict != end; conflict = FirstConflict(i, end)) end = conflict;
      if (end - i + Rematerialized(i, end).size() >= 2) runs.emplace_back(i, end);
      i = end;
    }
    // A rematerialized broadcast whose every reader is in a group is never stored: its step is
    // elided, or, inside a group, its result stays in a tile.
    in_group_.assign(steps_.size(), -1);
    for (size_t r = 0; r < runs.size(); ++r)
      for (size_t j = runs[r].first; j < runs[r].second; ++j) in_group_[j] = static_cast<int64_t>(r);
    read_outside_groups_.assign(comp_.buffers.size(), 0);
    for (size_t j = 0; j < steps_.size(); ++j)
      if (in_group_[j] < 0)
        for (uint32_t o : steps_[j].bundle->operands) read_outside_groups_[o] = 1;
    for (size_t j = 0; j < steps_.size(); ++j)
      plan.elided[j] = in_group_[j] < 0 && Unstored(j) && last_read_[ResultId(j)] >= 0;
    for (const auto& [first, end] : runs) {
      plan.group_at[first] = static_cast<int32_t>(plan.groups.size());
      plan.groups.push_back(Build(first, end));
    }
    return plan;
  }

 private:
  const BufferRecord& Result(size_t step) const { return comp_.buffers[steps_[step].bundle->result]; }
  uint32_t ResultId(size_t step) const { return steps_[step].bundle->result; }

  // Whether step `j`'s result must be written to its buffer when the group is [first, end).
  bool Stored(size_t j, size_t end) const {
    uint32_t r = ResultId(j);
    return r == comp_.root || last_read_[r] >= static_cast<int64_t>(end);
  }

  // Whether step `j` is a rematerialized broadcast no step outside a group reads (once the runs
  // are known): every group reading it fills a tile from its scalar instead.
  bool Unstored(size_t j) const { return remat_[j] && ResultId(j) != comp_.root && !read_outside_groups_[ResultId(j)]; }

  // Whether operand `o` of a member of a group starting at `first` is a rematerialized broadcast's
  // result: made before the group, so the group fills its tile from the scalar.
  bool Rematerializes(size_t first, uint32_t o) const {
    const int64_t p = producer_[o];
    return p >= 0 && static_cast<size_t>(p) < first && remat_[p] && count_of(o) == count_of(ResultId(first));
  }

  // The results of rematerialized broadcasts that members of [first, end) read.
  std::vector<uint32_t> Rematerialized(size_t first, size_t end) const {
    std::vector<uint32_t> found;
    for (size_t j = first; j < end; ++j)
      for (uint32_t o : steps_[j].bundle->operands)
        if (Rematerializes(first, o) && std::find(found.begin(), found.end(), o) == found.end()) found.push_back(o);
    return found;
  }
  int64_t count_of(uint32_t buffer) const { return comp_.buffers[buffer].ElementCount(); }

  // The first member (> first) whose stored result shares bytes, other than exactly, with a
  // range the group touched before it, or whose external operand does so with an earlier stored
  // result; `end` when there is none.
  size_t FirstConflict(size_t first, size_t end) {
    std::vector<Range> read, stored;
    ++stamp_;  // produced_[b] == stamp_: buffer b is a result of this candidate group
    for (size_t j = first; j < end; ++j) {
      for (uint32_t o : steps_[j].bundle->operands) {
        const BufferRecord& r = comp_.buffers[o];
        if (produced_[o] == stamp_ || r.kind != BufferKind::kTemp) continue;
        if (Rematerializes(first, o)) continue;  // its array is not read, its scalar is
        Range in = RangeOf(r);
        for (const Range& s : stored)
          if (in.Overlaps(s) && !in.Same(s)) return j;
        read.push_back(in);
      }
      produced_[ResultId(j)] = stamp_;
      if (!Stored(j, end)) continue;
      Range out = RangeOf(Result(j));
      for (const std::vector<Range>* seen : {&read, &stored})
        for (const Range& s : *seen)
          if (out.Overlaps(s) && !out.Same(s)) return std::max(j, first + 1);
      stored.push_back(out);
    }
    return end;
  }

  FusedGroup Build(size_t first, size_t end) const {
    FusedGroup g;
    g.first_step = static_cast<uint32_t>(first);
    g.step_count = static_cast<uint32_t>(end - first);
    g.elements = Result(first).ElementCount();
    // The last member reading each result inside the group, to reuse scratch tiles after it.
    std::map<uint32_t, size_t> last_inside;
    for (size_t j = first; j < end; ++j)
      for (uint32_t o : steps_[j].bundle->operands) last_inside[o] = j;
    std::map<uint32_t, uint16_t> slot_of;          // buffer -> slot
    std::vector<uint32_t> free_tiles, kept_tiles;  // kept: filled once per chunk, never reused
    auto add_slot = [&](FusedSlot s) {
      g.slots.push_back(s);
      return static_cast<uint16_t>(g.slots.size() - 1);
    };
    auto take_tile = [&](uint32_t element) {
      uint32_t tile = g.scratch_tiles;
      if (!free_tiles.empty()) {
        tile = free_tiles.back();
        free_tiles.pop_back();
      } else {
        ++g.scratch_tiles;
      }
      return add_slot({FusedSlot::Kind::kTile, tile, element});
    };
    // Rematerialized broadcasts first: each fills a tile from its scalar, for every tile.
    for (uint32_t o : Rematerialized(first, end)) {
      const size_t p = static_cast<size_t>(producer_[o]);
      const uint32_t source = steps_[p].bundle->operands[0];
      FusedMember m;
      m.op = ops_[p];
      m.step = static_cast<uint32_t>(p);
      m.in[0] =
          add_slot({FusedSlot::Kind::kScalar, source, static_cast<uint32_t>(HostByteSize(comp_.buffers[source].type))});
      m.out = take_tile(static_cast<uint32_t>(HostByteSize(comp_.buffers[o].type)));
      m.once = true;
      slot_of[o] = m.out;
      kept_tiles.push_back(g.slots[m.out].index);
      g.members.push_back(m);
    }
    for (size_t j = first; j < end; ++j) {
      const BundleRecord& b = *steps_[j].bundle;
      FusedMember m;
      m.op = ops_[j];
      m.step = static_cast<uint32_t>(j);
      for (size_t k = 0; k < b.operands.size(); ++k) {
        uint32_t o = b.operands[k];
        auto it = slot_of.find(o);
        if (it == slot_of.end()) {
          const BufferRecord& r = comp_.buffers[o];
          FusedSlot::Kind kind = r.ElementCount() == g.elements ? FusedSlot::Kind::kBuffer : FusedSlot::Kind::kScalar;
          it = slot_of.emplace(o, add_slot({kind, o, static_cast<uint32_t>(HostByteSize(r.type))})).first;
        }
        m.in[k] = it->second;
      }
      uint32_t element = static_cast<uint32_t>(HostByteSize(Result(j).type));
      if (Stored(j, end) && !Unstored(j)) {
        m.out = add_slot({FusedSlot::Kind::kBuffer, ResultId(j), element});
        ++g.stored;
      } else {
        m.out = take_tile(element);
      }
      slot_of[ResultId(j)] = m.out;
      g.members.push_back(m);
      // Scratch tiles no later member reads are free again. Only after the result has its slot:
      // a widening op (a convert from bf16 to f32) cannot write over its own operand.
      for (uint32_t o : b.operands)
        if (auto last = last_inside.find(o); last != last_inside.end() && last->second == j) {
          const FusedSlot& s = g.slots[slot_of[o]];
          if (s.kind == FusedSlot::Kind::kTile &&
              std::find(free_tiles.begin(), free_tiles.end(), s.index) == free_tiles.end() &&
              std::find(kept_tiles.begin(), kept_tiles.end(), s.index) == kept_tiles.end())
            free_tiles.push_back(s.index);
        }
    }
    return g;
  }

  const ComputationRecord& comp_;
  const std::vector<Step>& steps_;
  std::vector<int64_t> last_read_;            // the last step reading each buffer, -1 if none
  std::vector<int64_t> producer_;             // the step whose result each buffer is, -1 if none
  std::vector<SpanOp> ops_;                   // each step's span form (FusibleOp)
  std::vector<uint8_t> remat_;                // steps that groups may rematerialize (scalar broadcasts)
  std::vector<int64_t> in_group_;             // each step's run, -1 if none
  std::vector<uint8_t> read_outside_groups_;  // buffers some step outside every run reads
  // Which buffers the candidate group FirstConflict checks produces, marked with its stamp: one
  // table for the computation, not one per candidate (a computation has as many as it has runs).
  std::vector<uint64_t> produced_;
  uint64_t stamp_ = 0;
};

}  // namespace

FusionPlan PlanFusion(const ComputationRecord& comp, const std::vector<Step>& steps) {
  return Planner(comp, steps).Plan();
}

namespace {

// Runs the members of `g` tile by tile; base[i] is where slot i's kBuffer elements or kScalar
// element are (unused for tiles).
void RunFusedTiles(const FusedGroup& g, const std::vector<uint8_t*>& base) {
  ParallelFor(g.elements, kParallelChunk, [&](int64_t begin, int64_t end) {
    // One scratch per thread, grown once: a loop body's group runs every iteration.
    thread_local std::vector<uint64_t> scratch;
    size_t need = static_cast<size_t>(g.scratch_tiles) * kTileStride;
    if (scratch.size() < need) scratch.resize(need);
    std::vector<uint8_t*> at(g.slots.size());
    for (int64_t t = begin; t < end; t += kFusedTile) {
      int64_t m = std::min(kFusedTile, end - t);
      for (size_t i = 0; i < g.slots.size(); ++i) {
        const FusedSlot& s = g.slots[i];
        switch (s.kind) {
          case FusedSlot::Kind::kBuffer: at[i] = base[i] + t * s.element; break;
          case FusedSlot::Kind::kScalar: at[i] = base[i]; break;
          case FusedSlot::Kind::kTile:
            at[i] = reinterpret_cast<uint8_t*>(scratch.data() + static_cast<size_t>(s.index) * kTileStride);
            break;
        }
      }
      for (const FusedMember& member : g.members) {
        if (member.once && t != begin) continue;
        const uint8_t* in[3] = {at[member.in[0]], at[member.in[1]], at[member.in[2]]};
        member.op.fn(member.op, in, at[member.out], m);
      }
    }
  });
}

}  // namespace

Status RunFusedGroup(const ComputationRecord& comp, const FusedGroup& g, uint8_t* const* ptrs) {
  std::vector<uint8_t*> base(g.slots.size(), nullptr);
  for (size_t i = 0; i < g.slots.size(); ++i) {
    const FusedSlot& s = g.slots[i];
    if (s.kind == FusedSlot::Kind::kTile) continue;
    base[i] = ptrs[s.index];
    if (!base[i])
      return Status::Error("buffer '" + std::string(comp.buffers[s.index].name) + "' is read before it is bound");
  }
  RunFusedTiles(g, base);
  return OkStatus();
}

bool LiftableFamily(OpFamily f) {
  return f == OpFamily::kUnary || f == OpFamily::kBinary || f == OpFamily::kCompare || f == OpFamily::kSelect ||
         f == OpFamily::kConvert || f == OpFamily::kClamp || f == OpFamily::kReducePrecision || f == OpFamily::kReshape;
}

std::shared_ptr<const LiftedCallee> LiftCallee(const BundleProgram& p, const ComputationRecord& comp,
                                               const BundleRecord& map, const ComputationRecord& callee,
                                               const std::vector<Step>& steps) {
  const BufferRecord& result = comp.buffers[map.result];
  const size_t operands = map.operands.size();
  if (!IsArrayType(result.type) || callee.params.size() != operands || callee.root >= callee.buffers.size())
    return nullptr;
  auto lifted = std::make_shared<LiftedCallee>();
  FusedGroup& g = lifted->group;
  g.elements = result.ElementCount();
  if (g.elements <= 0) return nullptr;
  // A callee value fits a tile if it is one element of at most 8 bytes (a tile holds kFusedTile
  // 8-byte words).
  auto scalar = [](const BufferRecord& r) {
    return IsArrayType(r.type) && r.ElementCount() == 1 && HostByteSize(r.type) <= 8;
  };
  auto element = [](const BufferRecord& r) { return static_cast<uint32_t>(HostByteSize(r.type)); };
  std::vector<int32_t> slot_of(callee.buffers.size(), -1);
  auto add_slot = [&](FusedSlot::Kind kind, uint32_t index, uint32_t bytes) {
    g.slots.push_back({kind, index, bytes});
    return static_cast<int32_t>(g.slots.size() - 1);
  };
  for (size_t k = 0; k < operands; ++k) {
    const uint32_t param = callee.params[k];
    const BufferRecord& operand = comp.buffers[map.operands[k]];
    if (param >= callee.buffers.size() || !scalar(callee.buffers[param]) ||
        callee.buffers[param].type != operand.type || operand.ElementCount() != g.elements)
      return nullptr;
    slot_of[param] = add_slot(FusedSlot::Kind::kBuffer, static_cast<uint32_t>(k), element(operand));
  }
  // A constant's slot: its tile, filled once per chunk from its one element (as a group fills a
  // broadcast's).
  auto slot_for = [&](uint32_t buffer) -> int32_t {
    if (buffer >= callee.buffers.size()) return -1;
    if (slot_of[buffer] >= 0) return slot_of[buffer];
    const BufferRecord& r = callee.buffers[buffer];
    if (r.kind != BufferKind::kConstant || !scalar(r)) return -1;
    const int32_t source =
        add_slot(FusedSlot::Kind::kScalar, static_cast<uint32_t>(lifted->constants.size()), element(r));
    lifted->constants.push_back(UnpackConstant(p, r));
    const int32_t tile = add_slot(FusedSlot::Kind::kTile, g.scratch_tiles++, element(r));
    FusedMember fill{FillSpanOp(r.type), 0, {static_cast<uint16_t>(source), 0, 0}, static_cast<uint16_t>(tile), true};
    g.members.push_back(fill);
    return slot_of[buffer] = tile;
  };
  bool root_written = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const BundleRecord& b = *s.bundle;
    if (s.family == OpFamily::kBound) continue;
    if (!LiftableFamily(s.family) || b.result >= callee.buffers.size() || !scalar(callee.buffers[b.result]) ||
        slot_of[b.result] >= 0 || g.members.size() >= kMaxMembers)
      return nullptr;
    SpanOp op = SpanOpOf(callee, s);
    if (!op.fn) return nullptr;
    FusedMember member{op, static_cast<uint32_t>(i), {0, 0, 0}, 0, false};
    for (size_t k = 0; k < b.operands.size(); ++k) {
      const int32_t slot = slot_for(b.operands[k]);
      if (slot < 0 || k >= 3) return nullptr;
      member.in[k] = static_cast<uint16_t>(slot);
    }
    const BufferRecord& r = callee.buffers[b.result];
    // The root's member writes the map's result; the others write tiles.
    const bool root = b.result == callee.root;
    if (root && r.type != result.type) return nullptr;
    root_written = root_written || root;
    const int32_t out = root ? add_slot(FusedSlot::Kind::kBuffer, static_cast<uint32_t>(operands), element(result))
                             : add_slot(FusedSlot::Kind::kTile, g.scratch_tiles++, element(r));
    member.out = static_cast<uint16_t>(out);
    slot_of[b.result] = out;
    g.members.push_back(member);
  }
  if (!root_written || g.slots.size() > UINT16_MAX) return nullptr;
  g.step_count = static_cast<uint32_t>(steps.size());
  g.stored = 1;
  return lifted;
}

void RunLiftedCallee(const LiftedCallee& lifted, const std::vector<Buf>& in, const Buf& out) {
  const FusedGroup& g = lifted.group;
  std::vector<uint8_t*> base(g.slots.size(), nullptr);
  for (size_t i = 0; i < g.slots.size(); ++i) {
    const FusedSlot& s = g.slots[i];
    switch (s.kind) {
      case FusedSlot::Kind::kBuffer: base[i] = s.index < in.size() ? in[s.index].data : out.data; break;
      case FusedSlot::Kind::kScalar:
        base[i] = reinterpret_cast<uint8_t*>(const_cast<char*>(lifted.constants[s.index].data()));
        break;
      case FusedSlot::Kind::kTile: break;
    }
  }
  RunFusedTiles(g, base);
}

Result<ElementwisePlan> PlanElementwise(const ComputationRecord& comp, const Step& s) {
  const OpFamily f = s.family;
  if (f != OpFamily::kUnary && f != OpFamily::kBinary && f != OpFamily::kCompare && f != OpFamily::kSelect &&
      f != OpFamily::kClamp && f != OpFamily::kConvert && f != OpFamily::kReducePrecision)
    return Status::Error("not an elementwise step");
  ElementwisePlan plan;
  const BundleRecord& b = *s.bundle;
  const BufferRecord& out = comp.buffers[b.result];
  plan.count = out.ElementCount();
  if (s.dynamic) return Status::Error("a bounded dynamic step's counts are the run's");
  if (f == OpFamily::kSelect && b.operands.size() == 3) {
    // One predicate for every element (KernelSelect's checks): the result is one operand's bytes.
    const BufferRecord &pred = comp.buffers[b.operands[0]], &on_true = comp.buffers[b.operands[1]],
                       &on_false = comp.buffers[b.operands[2]];
    if (pred.type == PrimitiveType::kPred && pred.ElementCount() == 1 && plan.count != 1 && IsArrayType(out.type) &&
        on_true.type == out.type && on_false.type == out.type && on_true.ElementCount() == plan.count &&
        on_false.ElementCount() == plan.count &&
        !MulOverflows(plan.count, int64_t{HostByteSize(out.type)}, &plan.pick_bytes))
      return plan;
    plan.pick_bytes = -1;
  }
  // The span the kernel would run, with its checks passed here.
  NHLO_ASSIGN_OR_RETURN(plan.span, ElementwiseStepSpan(comp, s));
  for (size_t k = 0; k < b.operands.size() && k < 3; ++k) {
    const BufferRecord& r = comp.buffers[b.operands[k]];
    // A clamp's bound of one element is read for every element.
    plan.element[k] = r.ElementCount() == plan.count ? HostByteSize(r.type) : 0;
  }
  return plan;
}

Result<ElementwisePlan> PlanConvertingCopy(const BufferRecord& in, const BufferRecord& out) {
  ElementwisePlan plan;
  NHLO_ASSIGN_OR_RETURN(plan.span, ConvertStepSpan(in, out));
  plan.count = out.ElementCount();
  plan.element[0] = HostByteSize(in.type);
  return plan;
}

void RunElementwise(const ElementwisePlan& plan, const Buf* in, const Buf& out) {
  if (plan.pick_bytes >= 0) {
    const uint8_t* pick = in[0].data[0] != 0 ? in[1].data : in[2].data;
    if (pick != out.data && plan.pick_bytes > 0) std::memmove(out.data, pick, static_cast<size_t>(plan.pick_bytes));
    return;
  }
  const uint8_t* data[3] = {nullptr, nullptr, nullptr};
  for (int k = 0; k < plan.span.operands && k < 3; ++k) data[k] = in[k].data;
  RunSpanChunks(plan.span, data, plan.element, out.data, plan.count);
}

}  // namespace nhlo
