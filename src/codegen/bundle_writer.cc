// SPDX-License-Identifier: Apache-2.0
// Module -> bundle file bytes (format version 2, docs/bundle-format.md). Each computation gets
// its own buffer table and frame: values are placed by a liveness sweep over program order, so
// values whose live ranges do not overlap share bytes, an elementwise op may write over an
// operand that dies there, and a computation's callees run in a block of its frame reserved
// for the calling instruction. Every instruction becomes one bundle whose attributes are
// encoded as integers and lists. The output is a pure function of the module and the options.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "codegen/alias_bound.h"
#include "codegen/attr_layout.h"
#include "codegen/buffer_assignment.h"
#include "codegen/codegen.h"
#include "ir/custom_calls.h"
#include "ir/literal.h"
#include "ir/verifier.h"
#include "parser/attr_values.h"
#include "support/name_table.h"

namespace nhlo {
namespace {

// The module header's `name` count (replica_count, num_partitions), at most UINT32_MAX; 0 when
// absent or written as 1, the file's spelling of one.
uint32_t HeaderCount(const Module& m, std::string_view name) {
  for (const auto& [key, raw] : m.header_attrs) {
    if (key != name) continue;
    uint64_t n = 0;
    for (char c : raw) {
      if (c < '0' || c > '9') break;
      n = std::min<uint64_t>(n * 10 + static_cast<uint64_t>(c - '0'), UINT32_MAX);
    }
    return n <= 1 ? 0 : static_cast<uint32_t>(n);
  }
  return 0;
}

class ByteWriter {
 public:
  void U8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Raw(&v, 2); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void I64(int64_t v) { Raw(&v, 8); }
  void F64(double v) { Raw(&v, 8); }
  void Raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  void Align(size_t a) {
    while (bytes_.size() % a) bytes_.push_back('\0');
  }
  void PatchU32(size_t at, uint32_t v) { std::memcpy(&bytes_[at], &v, 4); }
  size_t size() const { return bytes_.size(); }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

// Where a buffer may start: its element's natural alignment (so kernels read elements at their
// own alignment), and a cache line for arrays of 4 KiB or more. A callee's frame is placed at
// the largest alignment its own offsets rely on, and the arena starts at kFrameAlignment, so
// offsets keep these alignments at run time.
constexpr uint64_t kFrameAlignment = 64;
uint64_t BufferAlignment(const BufferRecord& b) {
  if (b.size >= 4096) return kFrameAlignment;
  uint64_t align = 1;
  while (align < static_cast<uint64_t>(HostByteSize(b.type)) && align < 16) align *= 2;
  return align;
}

// How many of `inst`'s first operands its result may take the bytes of, when one of the same
// size dies at it (opcodes.def's bytes column): every operand of an op that reads element i of
// each before writing element i of the result (Lanes); operand 0 of a dynamic-update-slice or a
// one-input scatter, which copy it into the result before writing the update (no copy once they
// are the same bytes), as XLA updates a dying operand in place (only with buffer aliasing:
// --buffer-aliasing=off bisects these too).
size_t InPlaceOperands(const Instruction& inst, bool buffer_aliasing) {
  switch (OpcodeResultBytes(inst.opcode)) {
    case ResultBytes::kLanes: return inst.operands.size();
    case ResultBytes::kUpdate: {
      const bool one_input = inst.opcode != Opcode::kScatter || inst.operands.size() == 3;
      return one_input && buffer_aliasing && inst.shape.IsArray() && inst.shape.dim_kinds.empty() ? 1 : 0;
    }
    case ResultBytes::kOwn:
    case ResultBytes::kMoves:  // shares its operands' bytes instead (CopiedLeaves)
    case ResultBytes::kLoop:   // ShareLoopState
      return 0;
  }
  return 0;
}

// Attributes that do not change what an instruction computes stay in the IR; so do the ones no
// executable op reads (layouts, aliasing hints, host-transfer shapes). docs/bundle-format.md
// lists them.
bool Encoded(const Instruction& inst, const Attribute& a) {
  // metadata, frontend_attributes, control-predecessors, sharding, statistics and origin are
  // among the kinds dropped here.
  switch (a.kind) {
    case AttrKind::InstructionList:
    case AttrKind::Shape:
    case AttrKind::Literal:
    case AttrKind::ShapeList:
    case AttrKind::BoolList:
    case AttrKind::KeyValues: return false;
    case AttrKind::Raw: return a.id == AttrId::kSparsityConfig;  // changes the dot; kept so the loader can name it
    case AttrKind::Config: return inst.opcode == Opcode::kCustomCall;
    case AttrKind::Int:
    case AttrKind::Bool:
    case AttrKind::Float:
    case AttrKind::String:
    case AttrKind::Ident:
    case AttrKind::IntList:
    case AttrKind::Computation:
    case AttrKind::ComputationList:
    case AttrKind::Window:
    case AttrKind::SliceRanges:
    case AttrKind::PaddingConfig:
    case AttrKind::DimLabels:
    case AttrKind::Enum:
    case AttrKind::EnumList:
    case AttrKind::ReplicaGroups:
    case AttrKind::PairList: return true;
  }
  return true;
}

class Writer {
 public:
  Writer(const Module& m, const CodegenOptions& o, ArenaReport* report) : m_(m), opts_(o), report_(report) {}

  Result<std::string> Run() {
    for (size_t i = 0; i < m_.computations.size(); ++i)
      comp_index_[m_.computations[i].get()] = static_cast<uint32_t>(i);
    comps_.resize(m_.computations.size());
    for (size_t i = 0; i < m_.computations.size(); ++i) NHLO_TRY(LowerComputation(*m_.computations[i], comps_[i]));
    return Assemble();
  }

 private:
  struct CompOut {
    std::string_view name;
    std::vector<BufferRecord> buffers;
    std::vector<uint32_t> params;
    uint32_t root = 0;
    uint64_t frame_size = 0;
    uint64_t live_bound = 0;
    uint64_t aliased_bound = 0;  // the bound if every XLA alias were taken (alias_bound.h)
    uint64_t unshared = 0;
    uint64_t align = 1;  // the largest alignment any offset in the frame relies on
    uint32_t bundle_count = 0;
    std::string code;
  };

  // The offset of `s` in the string section, added on first use. Every instruction and buffer
  // name passes through here, so the index is open addressing over the section itself (offset,
  // size and hash per slot, nothing copied): a map keyed by std::string copies was a fifth of
  // compiling a 1M-instruction module.
  uint32_t String(std::string_view s) {
    if ((string_count_ + 1) * 2 > string_slots_.size()) GrowStrings();
    uint64_t h = NameTable<Instruction>::Hash(s);
    size_t mask = string_slots_.size() - 1;
    size_t i = h & mask;
    for (; string_slots_[i].size != kNoString; i = (i + 1) & mask) {
      const StringSlot& slot = string_slots_[i];
      if (slot.hash == h && std::string_view(strings_).substr(slot.offset, slot.size) == s) return slot.offset;
    }
    uint32_t off = static_cast<uint32_t>(strings_.size());
    strings_.append(s);
    string_slots_[i] = StringSlot{off, static_cast<uint32_t>(s.size()), h};
    ++string_count_;
    return off;
  }
  void GrowStrings() {
    std::vector<StringSlot> old = std::move(string_slots_);
    string_slots_.assign(std::max<size_t>(64, old.size() * 2), StringSlot{});
    size_t mask = string_slots_.size() - 1;
    for (const StringSlot& slot : old) {
      if (slot.size == kNoString) continue;
      size_t i = slot.hash & mask;
      while (string_slots_[i].size != kNoString) i = (i + 1) & mask;
      string_slots_[i] = slot;
    }
  }
  void StringRef(ByteWriter& w, std::string_view s) {
    w.U32(String(s));
    w.U32(static_cast<uint32_t>(s.size()));
  }

  Result<uint8_t> DtypeOf(const Instruction& inst, PrimitiveType t, uint8_t* tag) {
    *tag = kNoDtype;
    if (!IsArrayType(t)) return kNoDtype;
    auto dt = BackendDtypeFor(t);
    if (!dt) {
      if (opts_.device_only)
        return Status::FromDiagnostic(DiagnosticFor(
            m_, inst,
            "element type " + std::string(PrimitiveTypeName(t)) +
                " has no device dtype (host-only type; drop --device-only to run it in the interpreter)"));
      return kNoDtype;
    }
    if (opts_.arch == TargetArch::kV3 && IsX4(*dt))
      return Status::FromDiagnostic(
          DiagnosticFor(m_, inst, "x4 dtype " + std::string(BackendDtypeName(*dt)) + " is not supported on v3"));
    *tag = WireTag(*dt, opts_.arch == TargetArch::kV3 ? Arch::kV3 : Arch::kV4);
    return static_cast<uint8_t>(Ordinal(*dt));
  }

  // Adds buffer records for a value of `shape`, leaves first; returns the value's buffer. Temp
  // leaves are placed later, by the liveness sweep.
  Result<uint32_t> AddBuffers(CompOut& out, const Instruction& inst, const Shape& shape, BufferKind kind,
                              const Literal* lit) {
    BufferRecord b;
    b.name = inst.name;
    b.type = shape.type;
    b.kind = kind;
    if (shape.IsTuple()) {
      for (size_t i = 0; i < shape.tuple.size(); ++i) {
        const Literal* element = lit && i < lit->tuple.size() ? lit->tuple[i] : nullptr;
        NHLO_ASSIGN_OR_RETURN(uint32_t e, AddBuffers(out, inst, shape.tuple[i], kind, element));
        b.tuple.push_back(e);
      }
      if (kind == BufferKind::kParameter) b.location = static_cast<uint64_t>(inst.parameter_number);
    } else {
      // Bounded dynamic dimensions are stored at their bound (XLA pads to it); an unbounded one
      // has no storage size, so its buffer holds no bytes and is not executable.
      b.dims.assign(shape.dims.begin(), shape.dims.end());
      bool unbounded = false;
      if (!shape.dim_kinds.empty()) {
        b.dim_kinds.resize(shape.dims.size());
        for (size_t i = 0; i < shape.dims.size(); ++i) {
          b.dim_kinds[i] = static_cast<uint8_t>(shape.dim_kinds[i]);
          if (shape.dim_kinds[i] == DimKind::kUnbounded) {
            b.dims[i] = 0;
            unbounded = true;
          }
        }
      }
      int64_t bytes = !shape.IsArray() ? 0 : unbounded ? 0 : HostBytes(shape);
      if (bytes < 0)
        return Status::FromDiagnostic(
            DiagnosticFor(m_, inst, "buffer of shape " + ShapeToString(shape, false) + " is too large"));
      b.size = static_cast<uint64_t>(bytes);
      NHLO_ASSIGN_OR_RETURN(b.backend_dtype, DtypeOf(inst, shape.type, &b.wire_tag));
      if (b.backend_dtype != kNoDtype)
        b.stride = static_cast<uint32_t>(StrideBytes(static_cast<BackendDtype>(b.backend_dtype)));
      if (kind == BufferKind::kParameter) b.location = static_cast<uint64_t>(inst.parameter_number);
      if (kind == BufferKind::kConstant) {
        Result<uint64_t> at = AddConstant(shape, lit ? lit->data.data() : nullptr, b.size);
        if (!at.ok()) return Status::FromDiagnostic(DiagnosticFor(m_, inst, at.status().message()));
        b.location = *at;
      }
    }
    out.buffers.push_back(std::move(b));
    return static_cast<uint32_t>(out.buffers.size() - 1);
  }

  // Checked before anything is appended: an elided constant (`{...}`) of a huge shape has no
  // bytes in the module, and would otherwise be materialised here before the file's 4 GiB limit
  // refused it.
  Result<uint64_t> AddConstant(const Shape& shape, const uint8_t* data, uint64_t size) {
    while (constants_.size() % 8) constants_.push_back('\0');
    uint64_t at = constants_.size();
    int64_t count = shape.ElementCount();
    int bits = BitWidth(shape.type);
    uint64_t adds = bits > 0 && bits < 8 ? PackedConstantBytes(shape.type, count) : size;
    if (adds > UINT32_MAX || at + adds > UINT32_MAX)
      return Status::Error("constant of shape " + ShapeToString(shape, false) + " (" + std::to_string(adds) +
                           " bytes) would make the bundle file exceed 4 GiB");
    if (at + adds > opts_.max_constant_bytes)
      return Status::Error("constant of shape " + ShapeToString(shape, false) + " (" + std::to_string(adds) +
                           " bytes) takes the constants past the memory limit of " +
                           std::to_string(opts_.max_constant_bytes) + " bytes");
    if (bits > 0 && bits < 8) {
      // Sub-byte elements packed, lane 0 in the low bits.
      std::string packed(PackedConstantBytes(shape.type, count), '\0');
      int per_byte = 8 / bits;
      uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
      for (int64_t i = 0; data && i < count; ++i)
        packed[i / per_byte] = static_cast<char>(static_cast<uint8_t>(packed[i / per_byte]) |
                                                 ((data[i] & mask) << (bits * (i % per_byte))));
      constants_ += packed;
    } else if (data) {
      constants_.append(reinterpret_cast<const char*>(data), size);
    } else {
      constants_.append(size, '\0');
    }
    return at;
  }

  void CollectTempLeaves(const CompOut& out, uint32_t buffer, std::vector<uint32_t>& leaves) {
    const BufferRecord& b = out.buffers[buffer];
    if (b.type == PrimitiveType::kTuple) {
      for (uint32_t e : b.tuple) CollectTempLeaves(out, e, leaves);
    } else if (b.kind == BufferKind::kTemp && b.size > 0) {
      leaves.push_back(buffer);
    }
  }

  // The largest frame among the computations `inst` calls (0 when it calls none).
  void CalleeNeeds(const Instruction& inst, uint64_t* frame, uint64_t* bound, uint64_t* align,
                   uint64_t* aliased_bound) {
    *frame = *bound = *aliased_bound = 0;
    *align = 1;
    for (const Attribute& a : inst.attrs) {
      if (a.kind != AttrKind::Computation && a.kind != AttrKind::ComputationList) continue;
      for (const Computation* c : a.computations) {
        const CompOut& callee = comps_[comp_index_.at(c)];
        *frame = std::max(*frame, callee.frame_size);
        *bound = std::max(*bound, callee.live_bound);
        *aliased_bound = std::max(*aliased_bound, callee.aliased_bound);
        *align = std::max(*align, callee.align);
      }
    }
  }

  // Where a computation's values are being placed (LowerComputation): its slots, which slot holds
  // each buffer, and per instruction the temp leaves whose bytes it carries in the live bound.
  struct Placement {
    std::vector<FrameSlot> slots;
    std::vector<uint32_t> slot_owner;  // per slot: the instruction whose leaves carry its bytes (the last to die)
    std::vector<uint32_t> slot_of;     // per buffer: its slot, UINT32_MAX for none (yet)
    std::vector<std::vector<uint32_t>> leaves;
    std::vector<uint32_t> last_use;  // per instruction: its last reader's position
    // The root's leaves -> the leaf of parameter 0 at the same position (UINT32_MAX for none).
    std::unordered_map<uint32_t, uint32_t> root_param;
  };

  // The array leaves of buffer tree `index`, in order.
  static void LeavesInOrder(const CompOut& out, uint32_t index, std::vector<uint32_t>& leaves) {
    const BufferRecord& b = out.buffers[index];
    if (b.type != PrimitiveType::kTuple) {
      leaves.push_back(index);
      return;
    }
    for (uint32_t e : b.tuple) LeavesInOrder(out, e, leaves);
  }
  // The leaves of trees `a` and `b` of `out` at the same positions; none when their shapes differ.
  static void PairLeaves(const CompOut& out, uint32_t a, uint32_t b,
                         std::vector<std::pair<uint32_t, uint32_t>>& pairs) {
    std::vector<uint32_t> la, lb;
    LeavesInOrder(out, a, la);
    LeavesInOrder(out, b, lb);
    if (la.size() != lb.size()) return;
    for (size_t k = 0; k < la.size(); ++k) pairs.emplace_back(la[k], lb[k]);
  }

  // The (result leaf, operand leaf) pairs of instruction `inst` whose step copies the one into the
  // other, as XLA's buffer assignment aliases them (the ops whose bytes column is Moves): a
  // get-tuple-element and the element it reads, a tuple's elements and its operands, an
  // opt-barrier, add-dependency or domain and its operand, a reshape's operand (the host layout
  // is row-major, so a reshape keeps the bytes), a bitcast's when neither has a layout that would
  // make it a physical permutation.
  std::vector<std::pair<uint32_t, uint32_t>> CopiedLeaves(
      const CompOut& out, const Instruction& inst, uint32_t result, const std::vector<uint32_t>& value,
      const std::unordered_map<const Instruction*, uint32_t>& position) {
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    if (!opts_.buffer_aliasing || inst.operands.empty()) return pairs;
    auto operand = [&](size_t k) { return value[position.at(inst.operands[k])]; };
    const BufferRecord& r = out.buffers[result];
    // Which leaves an op moves is its own rule; ops that write their results share nothing.
    if (OpcodeResultBytes(inst.opcode) != ResultBytes::kMoves) return pairs;
    if (inst.opcode == Opcode::kGetTupleElement) {
      const BufferRecord& t = out.buffers[operand(0)];
      const Attribute* index = inst.FindAttr(AttrId::kIndex);
      if (t.type == PrimitiveType::kTuple && index && index->i >= 0 && static_cast<size_t>(index->i) < t.tuple.size())
        PairLeaves(out, result, t.tuple[static_cast<size_t>(index->i)], pairs);
    } else if (inst.opcode == Opcode::kTuple) {
      if (r.type == PrimitiveType::kTuple && r.tuple.size() == inst.operands.size())
        for (size_t k = 0; k < inst.operands.size(); ++k) PairLeaves(out, r.tuple[k], operand(k), pairs);
    } else if (inst.opcode == Opcode::kReshape || inst.opcode == Opcode::kBitcast) {
      // A bitcast between layouts is a physical permutation: its own bytes.
      const bool permutes = inst.opcode == Opcode::kBitcast &&
                            !(inst.shape.HasDefaultLayout() && inst.operands[0]->shape.HasDefaultLayout());
      if (!permutes && inst.shape.IsArray() && out.buffers[operand(0)].type != PrimitiveType::kTuple)
        pairs.emplace_back(result, operand(0));
    } else {
      PairLeaves(out, result, operand(0), pairs);  // opt-barrier, add-dependency, domain: operand 0 whole
    }
    return pairs;
  }

  // Leaf `leaf` of instruction `i` takes the bytes of slot `slot` for reading: the slot lives
  // until the last of its values dies, and its bytes count once in the live bound, with the
  // instruction that dies last (`slot_owner`).
  static void JoinSlot(CompOut& out, Placement& pl, size_t i, uint32_t leaf, uint32_t slot) {
    pl.slot_of[leaf] = slot;
    pl.slots[slot].end = std::max(pl.slots[slot].end, pl.last_use[i]);
    pl.slots[slot].align = std::max(pl.slots[slot].align, BufferAlignment(out.buffers[leaf]));
    std::vector<uint32_t>& mine = pl.leaves[i];
    const uint32_t owner = pl.slot_owner[slot];
    if (owner != i && pl.last_use[i] > pl.last_use[owner]) {
      std::vector<uint32_t>& owned = pl.leaves[owner];
      owned.erase(std::remove_if(owned.begin(), owned.end(), [&](uint32_t l) { return pl.slot_of[l] == slot; }),
                  owned.end());
      pl.slot_owner[slot] = static_cast<uint32_t>(i);
      // Its bytes are carried by one leaf of `i`: `leaf`.
      mine.erase(
          std::remove_if(mine.begin(), mine.end(), [&](uint32_t l) { return l != leaf && pl.slot_of[l] == slot; }),
          mine.end());
    } else {
      mine.erase(std::remove(mine.begin(), mine.end(), leaf), mine.end());
    }
  }

  // Leaf `leaf` of instruction `i`, which writes it, takes over slot `slot`, whose values all die
  // by `i`: the slot now lives as long as `i`'s value, and `i` carries its bytes in the live bound
  // (they leave the leaves of the slot's owner, the only instruction that lists them).
  static void TakeOverSlot(CompOut& out, Placement& pl, size_t i, uint32_t leaf, uint32_t slot) {
    std::vector<uint32_t>& owned = pl.leaves[pl.slot_owner[slot]];
    owned.erase(std::remove_if(owned.begin(), owned.end(), [&](uint32_t l) { return pl.slot_of[l] == slot; }),
                owned.end());
    pl.slot_of[leaf] = slot;
    pl.slot_owner[slot] = static_cast<uint32_t>(i);
    pl.slots[slot].end = std::max(pl.slots[slot].end, pl.last_use[i]);
    pl.slots[slot].align = std::max(pl.slots[slot].align, BufferAlignment(out.buffers[leaf]));
  }

  // Result leaf `leaf` of instruction `i` shares the bytes of `source`, which it only reads (its
  // step's copy finds them the same): a slot of this frame is joined, a parameter's or constant's
  // bytes are aliased (a callee's root may alias only the leaf of parameter 0 at its own position,
  // so that a loop body's copy back into its state, or a reducer's into its accumulators, is
  // never a permutation). True when shared.
  bool ShareLeaf(CompOut& out, Placement& pl, size_t i, uint32_t leaf, uint32_t source) {
    BufferRecord& r = out.buffers[leaf];
    const uint32_t target = ResolveAlias(out.buffers, source);
    const BufferRecord& t = out.buffers[target];
    if (r.kind != BufferKind::kTemp || r.type == PrimitiveType::kTuple || r.size == 0 || r.size != t.size ||
        !r.dim_kinds.empty() || !t.dim_kinds.empty())
      return false;
    if (t.kind == BufferKind::kParameter || t.kind == BufferKind::kConstant) {
      if (auto it = pl.root_param.find(leaf);
          it != pl.root_param.end() && t.kind == BufferKind::kParameter && it->second != target)
        return false;
      r.kind = BufferKind::kAlias;
      r.location = target;
      std::vector<uint32_t>& mine = pl.leaves[i];
      mine.erase(std::remove(mine.begin(), mine.end(), leaf), mine.end());
      return true;
    }
    if (t.kind != BufferKind::kTemp || pl.slot_of[target] == UINT32_MAX) return false;
    JoinSlot(out, pl, i, leaf, pl.slot_of[target]);
    return true;
  }

  // A while loop's state leaves (instruction `i`, operand leaves paired with result leaves): a
  // leaf the body passes on untouched shares its init's bytes; another takes the bytes of an init
  // leaf that dies here, as XLA's buffer assignment aliases a loop's state with its init.
  bool ShareLoopState(CompOut& out, Placement& pl, const Instruction& inst, size_t i, uint32_t result, uint32_t init) {
    const Attribute* body_attr = inst.FindAttr(AttrId::kBody);
    if (!opts_.buffer_aliasing || !body_attr || body_attr->computations.size() != 1) return false;
    const CompOut& body = comps_[comp_index_.at(body_attr->computations[0])];
    if (body.params.size() != 1) return false;
    std::vector<uint32_t> state, start, param, root;
    LeavesInOrder(out, result, state);
    LeavesInOrder(out, init, start);
    LeavesInOrder(body, body.params[0], param);
    LeavesInOrder(body, body.root, root);
    if (state.size() != start.size() || state.size() != param.size() || state.size() != root.size()) return false;
    // Slots this loop's state already holds, and from the start the slots the init holds at more
    // than one position (a state leaf that took one over would write bytes another leaf's init
    // copy reads).
    std::unordered_set<uint32_t> taken, init_slots;
    for (uint32_t leaf : start)
      if (uint32_t t = ResolveAlias(out.buffers, leaf);
          out.buffers[t].kind == BufferKind::kTemp && pl.slot_of[t] != UINT32_MAX)
        if (!init_slots.insert(pl.slot_of[t]).second) taken.insert(pl.slot_of[t]);
    bool any = false;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t k = 0; k < state.size(); ++k) {
        const bool passed = ResolveAlias(body.buffers, root[k]) == param[k];
        const uint32_t source = ResolveAlias(out.buffers, start[k]);
        const uint32_t slot = out.buffers[source].kind == BufferKind::kTemp ? pl.slot_of[source] : UINT32_MAX;
        if (pass == 0 && passed) {
          if (slot != UINT32_MAX && taken.count(slot)) continue;
          if (!ShareLeaf(out, pl, i, state[k], start[k])) continue;
          if (slot != UINT32_MAX) taken.insert(slot);
          any = true;
        } else if (pass == 1 && !passed) {
          const BufferRecord& r = out.buffers[state[k]];
          const BufferRecord& s = out.buffers[source];
          if (slot == UINT32_MAX || taken.count(slot) || pl.slots[slot].end > i || r.kind != BufferKind::kTemp ||
              r.size == 0 || r.size != s.size || !r.dim_kinds.empty() || !s.dim_kinds.empty())
            continue;
          // The init dies here: its bytes become the state's, written by each iteration.
          TakeOverSlot(out, pl, i, state[k], slot);
          taken.insert(slot);
          any = true;
        }
      }
    }
    return any;
  }

  Status LowerComputation(const Computation& comp, CompOut& out) {
    out.name = comp.name;
    const size_t n = comp.instructions.size();
    std::unordered_map<const Instruction*, uint32_t> position;
    position.reserve(n);
    std::vector<uint32_t> value(n);
    for (size_t i = 0; i < n; ++i) {
      const Instruction* inst = comp.instructions[i];
      position[inst] = static_cast<uint32_t>(i);
      // A custom call nhlo cannot run has no bundle: refused here, at its line, not when it runs.
      if (inst->opcode == Opcode::kCustomCall && opts_.refuse_unknown_custom_calls)
        if (Status s = CheckCustomCallExecutable(*inst); !s.ok())
          return Status::FromDiagnostic(DiagnosticFor(m_, *inst, s.message()));
      BufferKind kind = inst->opcode == Opcode::kParameter  ? BufferKind::kParameter
                        : inst->opcode == Opcode::kConstant ? BufferKind::kConstant
                                                            : BufferKind::kTemp;
      NHLO_ASSIGN_OR_RETURN(value[i], AddBuffers(out, *inst, inst->shape, kind, inst->literal));
      if (inst->opcode == Opcode::kParameter) {
        size_t p = static_cast<size_t>(inst->parameter_number);
        if (p >= n)
          return Status::Error("computation '" + std::string(comp.name) + "' has a gap in its parameter numbers");
        if (out.params.size() <= p) out.params.resize(p + 1, UINT32_MAX);
        out.params[p] = value[i];
      }
    }
    for (uint32_t p : out.params)
      if (p == UINT32_MAX)
        return Status::Error("computation '" + std::string(comp.name) + "' has a gap in its parameter numbers");
    out.root = value[position.at(comp.root)];

    // Live ranges over program order: a value lives from its instruction through its last
    // reader; the root lives to the end.
    std::vector<uint32_t> last_use(n);
    for (size_t i = 0; i < n; ++i) {
      last_use[i] = static_cast<uint32_t>(i);
      for (const Instruction* op : comp.instructions[i]->operands) last_use[position.at(op)] = static_cast<uint32_t>(i);
    }
    last_use[position.at(comp.root)] = static_cast<uint32_t>(n);
    std::vector<std::vector<uint32_t>> dying(n + 1);  // instructions whose values die after i
    for (size_t i = 0; i < n; ++i) dying[last_use[i]].push_back(static_cast<uint32_t>(i));

    // Slots: each temp leaf lives from its instruction through its value's last reader; a value
    // that only copies another's bytes shares them (CopiedLeaves, ShareLoopState); an elementwise
    // result that takes over a dying operand's bytes extends that operand's slot; a calling
    // instruction reserves one block for its callees' frames while it runs.
    Placement pl;
    pl.slot_of.assign(out.buffers.size(), UINT32_MAX);
    pl.leaves.resize(n);
    pl.last_use = std::move(last_use);
    // No caller copies the entry's root back into anything, so it may alias any parameter.
    if (!out.params.empty() && &comp != m_.entry) {
      std::vector<uint32_t> root_leaves, param_leaves;
      LeavesInOrder(out, out.root, root_leaves);
      LeavesInOrder(out, out.params[0], param_leaves);
      for (size_t k = 0; k < root_leaves.size(); ++k)
        pl.root_param[root_leaves[k]] = k < param_leaves.size() ? param_leaves[k] : UINT32_MAX;
    }
    std::vector<FrameSlot>& slots = pl.slots;
    std::vector<uint32_t>& slot_of = pl.slot_of;
    std::vector<uint32_t>& slot_owner = pl.slot_owner;
    std::vector<std::vector<uint32_t>>& leaves = pl.leaves;
    const std::vector<uint32_t>& uses = pl.last_use;
    std::vector<uint32_t> callee_slot(n, UINT32_MAX);
    uint64_t live = 0, peak = 0, unshared = 0;
    std::vector<uint64_t> callee_aliased_bound(n);  // for the report's aliased bound
    for (size_t i = 0; i < n; ++i) {
      const Instruction& inst = *comp.instructions[i];
      CollectTempLeaves(out, value[i], leaves[i]);
      for (uint32_t leaf : leaves[i]) unshared += AlignTo(out.buffers[leaf].size, 16);
      uint64_t callee_size, callee_bound, callee_align;
      CalleeNeeds(inst, &callee_size, &callee_bound, &callee_align, &callee_aliased_bound[i]);
      bool shared = false;
      // A copying step's result leaves are written ranges the load keeps disjoint, so only a tuple
      // or get-tuple-element (which write nothing) may put two of its leaves on one slot.
      const bool one_leaf_per_slot = inst.opcode != Opcode::kTuple && inst.opcode != Opcode::kGetTupleElement;
      std::unordered_set<uint32_t> joined;
      for (auto [leaf, source] : CopiedLeaves(out, inst, value[i], value, position)) {
        const uint32_t target = ResolveAlias(out.buffers, source);
        const uint32_t slot = out.buffers[target].kind == BufferKind::kTemp ? slot_of[target] : UINT32_MAX;
        if (one_leaf_per_slot && slot != UINT32_MAX && !joined.insert(slot).second) continue;
        shared = ShareLeaf(out, pl, i, leaf, source) || shared;
      }
      if (inst.opcode == Opcode::kWhile && inst.operands.size() == 1)
        shared = ShareLoopState(out, pl, inst, i, value[i], value[position.at(inst.operands[0])]) || shared;
      if (size_t in_place = InPlaceOperands(inst, opts_.buffer_aliasing);
          !shared && in_place > 0 && leaves[i].size() == 1 && out.buffers[value[i]].kind == BufferKind::kTemp) {
        uint32_t result = leaves[i][0];
        for (size_t o = 0; o < in_place; ++o) {
          uint32_t k = position.at(inst.operands[o]);
          if (uses[k] != i || leaves[k].size() != 1 || value[k] != leaves[k][0]) continue;
          uint32_t operand = leaves[k][0];
          if (out.buffers[operand].size != out.buffers[result].size) continue;
          uint32_t slot = slot_of[operand];
          // Only bytes no other value still needs: a get-tuple-element may share them.
          if (slots[slot].end > i) continue;
          // An update reads its other operands after writing over operand 0: none may share those
          // bytes (a reshape of operand 0 as the update does; a fuzz-modules finding).
          auto shares_slot = [&](const Instruction* other) {
            const uint32_t t = ResolveAlias(out.buffers, value[position.at(other)]);
            return out.buffers[t].kind == BufferKind::kTemp && slot_of[t] == slot;
          };
          if (in_place < inst.operands.size() &&
              std::any_of(inst.operands.begin() + static_cast<std::ptrdiff_t>(in_place), inst.operands.end(),
                          shares_slot))
            continue;
          TakeOverSlot(out, pl, i, result, slot);  // k owns the slot: its bytes now belong to the result
          break;
        }
      }
      // The leaves still without bytes get slots of their own.
      uint64_t result_bytes = 0;
      for (uint32_t leaf : leaves[i]) {
        if (slot_of[leaf] != UINT32_MAX) continue;
        const BufferRecord& b = out.buffers[leaf];
        slot_of[leaf] = static_cast<uint32_t>(slots.size());
        slots.push_back({static_cast<uint32_t>(i), uses[i], b.size, BufferAlignment(b), 0});
        slot_owner.push_back(static_cast<uint32_t>(i));
        result_bytes += b.size;
      }
      if (callee_size > 0) {
        callee_slot[i] = static_cast<uint32_t>(slots.size());
        slots.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i), callee_size, callee_align, 0});
        slot_owner.push_back(static_cast<uint32_t>(i));
      }
      // The lower bound: bytes live at i (values defined by i included) plus what the callees
      // need at least.
      live += result_bytes;
      peak = std::max(peak, live + callee_bound);
      for (uint32_t d : dying[i])
        for (uint32_t leaf : leaves[d]) live -= out.buffers[leaf].size;
    }
    out.frame_size = PlaceSlots(slots);
    for (const FrameSlot& slot : slots)
      if (slot.size > 0) out.align = std::max(out.align, slot.align);
    for (uint32_t b = 0; b < out.buffers.size(); ++b)
      if (slot_of[b] != UINT32_MAX) out.buffers[b].location = slots[slot_of[b]].offset;
    std::vector<uint64_t> callee_frame(n, 0);
    for (size_t i = 0; i < n; ++i)
      if (callee_slot[i] != UINT32_MAX) callee_frame[i] = slots[callee_slot[i]].offset;
    out.live_bound = peak;
    // What version 1 gave this computation: every value its own 16-byte aligned slot.
    out.unshared = unshared;
    // Informational, for reports (nhlo-corpus-check --arena): not computed for a plain compile.
    if (report_) {
      out.aliased_bound = AliasedLiveBound(comp, position, out.buffers, value, uses, callee_aliased_bound);
      report_->computations.push_back({std::string(comp.name), out.frame_size, out.live_bound, out.aliased_bound});
    }

    ByteWriter code;
    for (size_t i = 0; i < n; ++i)
      NHLO_TRY(EmitBundle(code, out, *comp.instructions[i], value, position, callee_frame[i]));
    out.bundle_count = static_cast<uint32_t>(n);
    out.code = std::move(code.bytes());
    return OkStatus();
  }

  // The devices a send or recv connects: its frontend attribute
  // _xla_send_recv_source_target_pairs (XLA's GPU send/recv between devices), `{{0,1},{1,2}}`
  // written bare or as a string; none for a transfer to or from the host.
  Result<std::optional<std::vector<int64_t>>> SendRecvPairs(const Instruction& inst) {
    const Attribute* frontend = inst.FindAttr(AttrId::kFrontendAttributes);
    if (!frontend) return std::optional<std::vector<int64_t>>();
    for (const KeyValue& kv : frontend->entries) {
      if (kv.key != "_xla_send_recv_source_target_pairs") continue;
      Result<std::vector<int64_t>> pairs =
          kv.kind == KeyValueKind::kInt ? Status::Error("an integer") : ReadPairList(kv.text);
      bool ids = pairs.ok();
      for (size_t i = 0; ids && i < pairs->size(); ++i) ids = (*pairs)[i] >= 0;
      if (!ids)
        return Status::FromDiagnostic(
            DiagnosticFor(m_, inst, "_xla_send_recv_source_target_pairs is not a list of {source,target} device ids"));
      return std::optional<std::vector<int64_t>>(std::move(*pairs));
    }
    return std::optional<std::vector<int64_t>>();
  }

  Status EmitBundle(ByteWriter& code, const CompOut& out, const Instruction& inst, const std::vector<uint32_t>& value,
                    const std::unordered_map<const Instruction*, uint32_t>& position, uint64_t callee_frame) {
    size_t start = code.size();
    uint32_t result = value[position.at(&inst)];
    code.U16(OpcodeWireCode(inst.opcode));
    code.U16(0);
    code.U32(0);  // record size, patched below
    code.U32(result);
    code.U32(static_cast<uint32_t>(inst.operands.size()));
    size_t attr_count_at = code.size();
    code.U32(0);
    code.U8(out.buffers[result].wire_tag);
    code.U8(0);
    code.U16(0);
    code.U64(callee_frame);
    for (const Instruction* op : inst.operands) code.U32(value[position.at(op)]);
    for (const Instruction* op : inst.operands) code.U8(out.buffers[value[position.at(op)]].wire_tag);
    code.Align(4);
    uint32_t attr_count = 0;
    for (const Attribute& a : inst.attrs) {
      if (!Encoded(inst, a)) continue;
      EncodeAttr(code, a);
      ++attr_count;
    }
    if (inst.opcode == Opcode::kBitcast && inst.operands.size() == 1 && inst.shape.IsArray() &&
        inst.operands[0]->shape.IsArray() &&
        (!inst.shape.HasDefaultLayout() || !inst.operands[0]->shape.HasDefaultLayout())) {
      std::vector<int64_t> layouts = MinorToMajor(inst.operands[0]->shape);
      std::vector<int64_t> result = MinorToMajor(inst.shape);
      layouts.insert(layouts.end(), result.begin(), result.end());
      Attribute a;
      a.id = AttrId::kBitcastLayouts;
      a.kind = AttrKind::IntList;
      a.ints = Span<int64_t>(layouts.data(), layouts.size());
      EncodeAttr(code, a);
      ++attr_count;
    }
    if (inst.opcode == Opcode::kSend || inst.opcode == Opcode::kRecv) {
      NHLO_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> pairs, SendRecvPairs(inst));
      if (pairs) {
        Attribute a;
        a.id = AttrId::kSendRecvPairs;
        a.kind = AttrKind::PairList;
        a.ints = Span<int64_t>(pairs->data(), pairs->size());
        EncodeAttr(code, a);
        ++attr_count;
      }
    }
    code.PatchU32(attr_count_at, attr_count);
    size_t size = code.size() - start;
    if (size > UINT32_MAX) return Status::FromDiagnostic(DiagnosticFor(m_, inst, "bundle larger than 4 GiB"));
    code.PatchU32(start + 4, static_cast<uint32_t>(size));
    return OkStatus();
  }

  // The writer's side of codegen/attr_layout.h: each field appended to the bundle stream.
  struct WriteFields {
    static constexpr bool kDecoding = false;
    Writer& writer;
    ByteWriter& w;
    Status Invalid(const std::string&) { return OkStatus(); }  // a record from the IR is valid
    Status U8Named(FieldName, uint8_t v, std::string_view) { return w.U8(v), OkStatus(); }
    Status U32(FieldName, uint32_t v) { return w.U32(v), OkStatus(); }
    Status I64(FieldName, int64_t v) { return w.I64(v), OkStatus(); }
    Status F64(FieldName, double v) { return w.F64(v), OkStatus(); }
    Status Bool(FieldName, bool v) { return w.U8(v), OkStatus(); }
    Status Flag(FieldName, bool v) { return w.U8(v), OkStatus(); }
    Status Bool64(FieldName, bool v) { return w.I64(v ? 1 : 0), OkStatus(); }
    Status Enum(FieldName, AttrId, int64_t v) { return w.U8(static_cast<uint8_t>(v)), OkStatus(); }
    Status Text(FieldName, std::string_view s) { return writer.StringRef(w, s), OkStatus(); }
    Status Callee(FieldName, uint32_t c) { return w.U32(c), OkStatus(); }
    Status Count(FieldName, size_t, uint32_t n) { return w.U32(n), OkStatus(); }
    Status Reserved(size_t bytes) {
      for (size_t i = 0; i < bytes; ++i) w.U8(0);
      return OkStatus();
    }
  };

  // The attribute as a bundle record: the form the layout walks (and the reader makes).
  const AttrRecord& RecordOf(const Attribute& a) {
    AttrRecord& r = scratch_;
    r.id = a.id;
    r.kind = a.kind;
    switch (a.kind) {
      case AttrKind::Int:
      case AttrKind::Enum: r.set_i() = a.i; break;
      case AttrKind::Float: r.set_f() = a.f; break;
      case AttrKind::Bool: r.set_b() = a.b; break;
      case AttrKind::String:
      case AttrKind::Ident:
      case AttrKind::Raw:
      case AttrKind::Config: r.set_text() = AttrRecord::Text{a.text, a.config_is_json}; break;
      case AttrKind::IntList:
      case AttrKind::EnumList:
      case AttrKind::PairList: r.set_ints().assign(a.ints.begin(), a.ints.end()); break;
      case AttrKind::Computation:
      case AttrKind::ComputationList: {
        std::vector<uint32_t>& callees = r.set_computations();
        callees.clear();
        for (const Computation* c : a.computations) callees.push_back(comp_index_.at(c));
        break;
      }
      case AttrKind::Window: r.set_window().assign(a.window.begin(), a.window.end()); break;
      case AttrKind::SliceRanges: r.set_slices().assign(a.slices.begin(), a.slices.end()); break;
      case AttrKind::PaddingConfig: r.set_padding().assign(a.padding.begin(), a.padding.end()); break;
      case AttrKind::DimLabels: r.set_dim_labels() = *a.dim_labels; break;
      case AttrKind::ReplicaGroups: {
        const ReplicaGroupList& g = *a.replica_groups;
        ReplicaGroupsRecord& out = r.set_replica_groups();
        // Mesh axes the parser could read as an iota travel as that iota.
        out.iota = g.iota;
        out.mesh = !g.iota && g.mesh;
        out.num_groups = g.num_groups;
        out.group_size = g.group_size;
        out.reshape_dims.assign(g.reshape_dims.begin(), g.reshape_dims.end());
        out.transpose.assign(g.transpose.begin(), g.transpose.end());
        out.group_sizes.assign(g.group_sizes.begin(), g.group_sizes.end());
        out.ids.assign(g.ids.begin(), g.ids.end());
        break;
      }
      case AttrKind::InstructionList:
      case AttrKind::Shape:
      case AttrKind::Literal:
      case AttrKind::ShapeList:
      case AttrKind::BoolList:
      case AttrKind::KeyValues: r.value = std::monostate{}; break;  // never encoded (see Encoded)
    }
    return r;
  }

  void EncodeAttr(ByteWriter& w, const Attribute& a) {
    w.U16(AttrWireCode(a.id));
    w.U8(static_cast<uint8_t>(a.kind));
    w.U8(0);
    size_t size_at = w.size();
    w.U32(0);
    size_t start = w.size();
    WriteFields fields{*this, w};
    (void)AttrPayload(fields, RecordOf(a));
    uint64_t payload = w.size() - start;
    w.PatchU32(size_at, static_cast<uint32_t>(payload));
    w.Align(4);
  }

  Result<std::string> Assemble() {
    ByteWriter buffers, comps, code;
    uint32_t total_buffers = 0;
    for (const CompOut& c : comps_) total_buffers += static_cast<uint32_t>(c.buffers.size());
    buffers.U32(total_buffers);
    comps.U32(static_cast<uint32_t>(comps_.size()));
    uint32_t first = 0;
    for (const CompOut& c : comps_) {
      for (const BufferRecord& b : c.buffers) {
        StringRef(buffers, b.name);
        buffers.U8(static_cast<uint8_t>(b.type));
        buffers.U8(b.backend_dtype);
        buffers.U8(b.wire_tag);
        buffers.U8(static_cast<uint8_t>(b.kind) | (b.dim_kinds.empty() ? 0 : kBufferHasDimKinds));
        buffers.U32(static_cast<uint32_t>(b.dims.size()));
        buffers.U32(b.stride);
        buffers.U32(static_cast<uint32_t>(b.tuple.size()));
        buffers.U64(b.size);
        buffers.U64(b.location);
        for (int64_t d : b.dims) buffers.I64(d);
        for (uint32_t e : b.tuple) buffers.U32(e);
        for (uint8_t k : b.dim_kinds) buffers.U8(k);
        buffers.Align(8);
      }
      code.Align(8);
      if (code.size() + c.code.size() > UINT32_MAX) return Status::Error("bundle file would exceed 4 GiB");
      StringRef(comps, c.name);
      comps.U32(first);
      comps.U32(static_cast<uint32_t>(c.buffers.size()));
      comps.U32(c.root);
      comps.U32(c.bundle_count);
      comps.U32(static_cast<uint32_t>(code.size()));
      comps.U32(static_cast<uint32_t>(c.code.size()));
      comps.U64(c.frame_size);
      comps.U64(c.live_bound);
      comps.U32(static_cast<uint32_t>(c.params.size()));
      comps.U32(0);
      for (uint32_t p : c.params) comps.U32(p);
      comps.Align(8);
      code.Raw(c.code.data(), c.code.size());
      first += static_cast<uint32_t>(c.buffers.size());
    }
    uint32_t entry = comp_index_.at(m_.entry);
    ByteWriter module;
    StringRef(module, m_.name);
    module.U32(entry);
    const uint32_t replicas = HeaderCount(m_, "replica_count"), partitions = HeaderCount(m_, "num_partitions");
    module.U32(replicas);
    module.U32(partitions);
    module.U64(comps_[entry].frame_size);
    if (report_) {
      report_->arena = comps_[entry].frame_size;
      report_->lower_bound = comps_[entry].live_bound;
      report_->aliased_bound = comps_[entry].aliased_bound;
      for (const CompOut& c : comps_) report_->unshared += c.unshared;
    }

    const std::string* sections[kSectionCount] = {&strings_,      &buffers.bytes(), &constants_,
                                                  &comps.bytes(), &code.bytes(),    &module.bytes()};
    ByteWriter file;
    file.Raw(kBundleMagic, 8);
    file.U16(kBundleVersion);
    file.U8(static_cast<uint8_t>(opts_.arch));
    // kFlagStatesOneDevice: the header states a device count of one (`replica_count=1`), which
    // the module section's fields, 0 for one, cannot tell from a header that states none.
    bool states_one = replicas == 0 && partitions == 0 &&
                      std::any_of(m_.header_attrs.begin(), m_.header_attrs.end(), [](const auto& attr) {
                        return attr.first == "replica_count" || attr.first == "num_partitions";
                      });
    file.U8((opts_.device_only ? kFlagDeviceOnly : 0) | (states_one ? kFlagStatesOneDevice : 0));
    file.U32(0);  // file size, patched
    file.U32(0);  // checksum, patched
    file.U32(kSectionCount);
    size_t table = file.size();
    for (uint32_t i = 0; i < kSectionCount; ++i) {
      file.U32(i + 1);
      file.U32(0);
      file.U32(0);
    }
    for (uint32_t i = 0; i < kSectionCount; ++i) {
      file.Align(8);
      if (file.size() + sections[i]->size() >= UINT32_MAX) return Status::Error("bundle file would exceed 4 GiB");
      file.PatchU32(table + i * kSectionEntrySize + 4, static_cast<uint32_t>(file.size()));
      file.PatchU32(table + i * kSectionEntrySize + 8, static_cast<uint32_t>(sections[i]->size()));
      file.Raw(sections[i]->data(), sections[i]->size());
    }
    file.PatchU32(12, static_cast<uint32_t>(file.size()));
    file.PatchU32(16, BundleChecksum(file.bytes()));
    return std::move(file.bytes());
  }

  static constexpr uint32_t kNoString = UINT32_MAX;  // an empty slot's size
  struct StringSlot {
    uint32_t offset = 0;
    uint32_t size = kNoString;
    uint64_t hash = 0;
  };

  const Module& m_;
  const CodegenOptions& opts_;
  ArenaReport* report_;
  std::unordered_map<const Computation*, uint32_t> comp_index_;
  AttrRecord scratch_;  // RecordOf's record, reused so a list keeps its capacity across one kind
  std::vector<CompOut> comps_;
  std::string strings_;
  std::vector<StringSlot> string_slots_;
  size_t string_count_ = 0;
  std::string constants_;
};

}  // namespace

Result<std::string> EmitBundleFile(const Module& module, const CodegenOptions& options, ArenaReport* report) {
  return Writer(module, options, report).Run();
}

}  // namespace nhlo
