// SPDX-License-Identifier: Apache-2.0
// Collective steps of the interpreter (CollectiveSteps, collective_steps.h).
// Each device runs on its own thread with its own Machine. A collective resolves, at load,
// the group this device meets (devices.h); at run time the members arrive at the rendezvous
// with their operand leaves, each builds its own result from all of them into staging memory,
// and only after every member has left (done reading) does it write its result buffers, which
// may share memory with operands the others were reading. A group of one device needs no
// meeting: it reduces over itself, gathers its own shard, permutes along a {0,0} pair.
// Async -start/-done pairs exchange at the start: all-gather-start and collective-permute-start
// hold (operands, results[, contexts]), their -done takes the results out; all-reduce-start
// holds the results themselves.
#include "interp/collective_steps.h"

#include <cstring>
#include <string>
#include <vector>

namespace nhlo {
namespace {

// Whether an async -start's result is (operands, results[, contexts]) rather than the results
// alone: one array operand and a tuple result, or several operands and a tuple of tuples.
bool HoldsOperands(const ComputationRecord& comp, const BundleRecord& b) {
  const BufferRecord& r = comp.buffers[b.result];
  if (r.type != PrimitiveType::kTuple || r.tuple.size() < 2) return false;
  if (b.operands.size() == 1) return comp.buffers[b.operands[0]].type != PrimitiveType::kTuple;
  const BufferRecord& first = comp.buffers[r.tuple[0]];
  return first.type == PrimitiveType::kTuple && first.tuple.size() == b.operands.size();
}
// The buffers the exchange writes: the result's leaves, or those of the held results.
Result<std::vector<uint32_t>> ExchangeTargets(const ComputationRecord& comp, const BundleRecord& b) {
  uint32_t target = b.result;
  if (b.opcode == Opcode::kRaggedAllToAll) return std::vector<uint32_t>{target};  // checked at load
  if (IsAsyncStart(b.opcode) && HoldsOperands(comp, b)) target = comp.buffers[b.result].tuple[1];
  const BufferRecord& t = comp.buffers[target];
  if (b.operands.size() == 1 && t.type != PrimitiveType::kTuple) return std::vector<uint32_t>{target};
  if (t.type != PrimitiveType::kTuple || t.tuple.size() != b.operands.size())
    return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has " + std::to_string(b.operands.size()) +
                         " operands but its result is not a tuple of as many");
  return t.tuple;
}

// The elementwise opcode of a reducer the kernels run natively; kParameter when there is none.
Opcode NativeBinary(const CalleePattern& pattern, PrimitiveType t) {
  if (!IsArrayType(t)) return Opcode::kParameter;
  switch (pattern.op) {
    case ScalarOp::kAdd: return Opcode::kAdd;
    case ScalarOp::kMultiply: return Opcode::kMultiply;
    case ScalarOp::kMaximum: return Opcode::kMaximum;
    case ScalarOp::kMinimum: return Opcode::kMinimum;
    case ScalarOp::kAnd: return Opcode::kAnd;
    case ScalarOp::kOr: return Opcode::kOr;
    case ScalarOp::kXor: return Opcode::kXor;
    case ScalarOp::kNone: break;
  }
  return Opcode::kParameter;
}
Status CheckReducer(const ComputationRecord& f, PrimitiveType t) {
  uint64_t size = static_cast<uint64_t>(HostByteSize(t));
  bool ok = f.params.size() == 2 && f.buffers[f.root].type == t && f.buffers[f.root].size == size;
  for (size_t k = 0; ok && k < 2; ++k) ok = f.buffers[f.params[k]].type == t && f.buffers[f.params[k]].size == size;
  if (!ok)
    return Status::Error("the reducer '" + std::string(f.name) + "' must take two " +
                         std::string(PrimitiveTypeName(t)) + " scalars and return one");
  return OkStatus();
}

}  // namespace

CollectiveSteps::CollectiveSteps(DeviceGrid grid, uint32_t device, Rendezvous* rendezvous)
    : grid_(grid), device_(device), rendezvous_(rendezvous) {}

// The group this device meets at `s`, and the shapes that group size implies.
Status CollectiveSteps::Load(const ComputationRecord& comp, const Step& s) {
  const BundleRecord& b = *s.bundle;
  const AttrRecord* groups = s.Find(AttrId::kReplicaGroups);
  const AttrRecord* pairs = s.Find(AttrId::kSourceTargetPairs);
  NHLO_ASSIGN_OR_RETURN(
      CollectiveGroup g,
      ResolveCollectiveGroup(b.opcode, groups ? &groups->replica_groups() : nullptr,
                             s.Find(AttrId::kChannelId) != nullptr, s.Find(AttrId::kUseGlobalDeviceIds),
                             pairs ? &pairs->ints() : nullptr, grid_, device_));
  if (b.opcode == Opcode::kRaggedAllToAll) {
    std::vector<const BufferRecord*> in;
    for (uint32_t o : b.operands) in.push_back(&comp.buffers[o]);
    NHLO_TRY(CheckRaggedAllToAllShapes(in, comp.buffers[b.result], g.devices.size()));
  } else if (IsExchangingCollective(b.opcode)) {
    if (b.operands.empty()) return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no operands");
    // XLA tells the in-place form (input, output, input offsets, output offsets) by its
    // slice_sizes; without them several operands are the combined form CollectivePermuteCombiner
    // makes, each operand permuted on its own into its element of the result tuple.
    const CollectiveKind kind = OpcodeCollective(b.opcode);
    if (kind == CollectiveKind::kPermute && b.operands.size() != 1 &&
        (s.Find(AttrId::kSliceSizes) || b.opcode == Opcode::kCollectivePermuteStart))
      return Status::Error("collective-permute with input/output buffer and offset operands is not executed yet");
    NHLO_ASSIGN_OR_RETURN(std::vector<uint32_t> targets, ExchangeTargets(comp, b));
    std::vector<const BufferRecord*> in, out;
    for (uint32_t o : b.operands) in.push_back(&comp.buffers[o]);
    for (uint32_t t : targets) out.push_back(&comp.buffers[t]);
    size_t n = kind == CollectiveKind::kPermute || kind == CollectiveKind::kBroadcast
                   ? 1  // each device receives one device's operand, whole
                   : g.devices.size();
    NHLO_TRY(CheckCollectiveShapes(b.opcode == Opcode::kAllReduceStart ? Opcode::kAllReduce : b.opcode, in, out,
                                   s.Find(AttrId::kDimensions), n));
  }
  groups_.emplace(&b, std::move(g));
  return OkStatus();
}

Status CollectiveSteps::CopyLeaf(StepMachine& m, const BundleRecord& b, uint32_t from, uint32_t to) {
  const BufferRecord& a = m.Running().buffers[from];
  const BufferRecord& r = m.Running().buffers[to];
  if (a.type != r.type || a.dims != r.dims || a.tuple.size() != r.tuple.size())
    return Status::Error("'" + std::string(OpcodeName(b.opcode)) + "': buffer '" + std::string(r.name) +
                         "' does not have the shape of '" + std::string(a.name) + "'");
  return m.CopyBuffer(from, to);
}
Status CollectiveSteps::Run(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  switch (OpcodeCollective(b.opcode)) {
    case CollectiveKind::kId: {
      NHLO_ASSIGN_OR_RETURN(Buf out, m.ArrayOf(b.result));
      uint32_t id = b.opcode == Opcode::kPartitionId ? grid_.partition_of(device_) : grid_.replica_of(device_);
      if (out.type() != PrimitiveType::kU32 || out.rec->size != 4)
        return Status::Error("'" + std::string(OpcodeName(b.opcode)) + "' returns u32[]");
      std::memcpy(out.data, &id, 4);
      return OkStatus();
    }
    case CollectiveKind::kDone: {
      if (b.operands.size() != 1) break;
      const BufferRecord& in = m.Running().buffers[b.operands[0]];
      const BufferRecord& out = m.Running().buffers[b.result];
      // (operands, results[, contexts]) from the -start, or the results themselves.
      bool pair = in.type == PrimitiveType::kTuple && in.tuple.size() >= 2 &&
                  (out.type != PrimitiveType::kTuple || in.tuple.size() != out.tuple.size());
      return CopyLeaf(m, b, pair ? in.tuple[1] : b.operands[0], b.result);
    }
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kRaggedAllToAll:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kPermute:
      if (IsAsyncStart(b.opcode) && HoldsOperands(m.Running(), b)) {
        m.ZeroBuffer(b.result);  // collective-permute-start's u32 contexts: nhlo leaves them zero
        uint32_t held = m.Running().buffers[b.result].tuple[0];
        if (b.operands.size() == 1) {
          NHLO_TRY(CopyLeaf(m, b, b.operands[0], held));
        } else {
          for (size_t i = 0; i < b.operands.size(); ++i)
            NHLO_TRY(CopyLeaf(m, b, b.operands[i], m.Running().buffers[held].tuple[i]));
        }
      }
      return Exchange(s, m);
    case CollectiveKind::kNo: break;
  }
  return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' is not a collective the interpreter runs");
}

// Meets the group (when it has other devices), builds this device's result from the
// members' operands, and writes it.
Status CollectiveSteps::Exchange(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  auto found = groups_.find(&b);
  if (found == groups_.end()) return Status::Error("collective has no resolved group (an interpreter bug)");
  const CollectiveGroup& g = found->second;
  std::vector<Buf> mine, out;
  for (uint32_t o : b.operands) {
    NHLO_ASSIGN_OR_RETURN(Buf x, m.ArrayOf(o));
    mine.push_back(x);
  }
  NHLO_ASSIGN_OR_RETURN(std::vector<uint32_t> targets, ExchangeTargets(m.Running(), b));
  for (uint32_t t : targets) {
    NHLO_ASSIGN_OR_RETURN(Buf r, m.ArrayOf(t));
    out.push_back(r);
  }
  if (g.devices.size() == 1 || !rendezvous_) {
    MemberLeaves members{&mine};
    if (g.devices.size() != 1)
      return Status::Error("a group of several devices on a one-device run (an interpreter bug)");
    return Combine(s, g, members, out, m);
  }
  // Results go to staging memory first: nothing of this device's may change before the others
  // have read it.
  std::vector<std::string> staging(out.size());
  std::vector<Buf> staged = out;
  for (size_t i = 0; i < out.size(); ++i) {
    staging[i].assign(out[i].rec->size, '\0');
    staged[i].data = reinterpret_cast<uint8_t*>(staging[i].data());
  }
  Rendezvous::Key key{&b, occurrences_[&b]++, g.devices[0]};
  std::vector<const void*> contributions;
  NHLO_TRY(rendezvous_->Arrive(key, static_cast<uint32_t>(g.devices.size()), g.rank, &mine, device_,
                               std::string(m.Running().buffers[b.result].name), contributions));
  MemberLeaves members;
  for (const void* c : contributions) members.push_back(static_cast<const std::vector<Buf>*>(c));
  Status combined = Combine(s, g, members, staged, m);
  NHLO_TRY(rendezvous_->Leave(key));  // every member leaves, whatever Combine gave
  NHLO_TRY(combined);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].rec->size > 0) std::memcpy(out[i].data, staged[i].data, out[i].rec->size);
  return OkStatus();
}

Status CollectiveSteps::Combine(const Step& s, const CollectiveGroup& g, const MemberLeaves& members,
                                const std::vector<Buf>& out, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const AttrRecord* dims = s.Find(AttrId::kDimensions);
  switch (OpcodeCollective(b.opcode)) {
    case CollectiveKind::kAllReduce: return Reduce(s, members, out, m);
    case CollectiveKind::kAllGather: return CollectiveGather(members, dims->ints()[0], g.rank, out);
    case CollectiveKind::kReduceScatter: {
      std::vector<std::string> full(out.size());
      std::vector<Buf> reduced;
      for (size_t i = 0; i < out.size(); ++i) {
        const Buf& x = (*members[g.rank])[i];
        full[i].assign(x.rec->size, '\0');
        reduced.push_back({x.rec, reinterpret_cast<uint8_t*>(full[i].data())});
      }
      NHLO_TRY(Reduce(s, members, reduced, m));
      for (size_t i = 0; i < out.size(); ++i)
        NHLO_TRY(CollectiveScatterBlock(reduced[i], dims->ints()[0], g.rank, out[i]));
      return OkStatus();
    }
    case CollectiveKind::kAllToAll: return CollectiveAllToAll(members, dims, g.rank, out);
    case CollectiveKind::kRaggedAllToAll: return CollectiveRaggedAllToAll(members, g.rank, out[0]);
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kPermute:
      CollectiveTake(g.source < 0 ? nullptr : members[static_cast<size_t>(g.source)], out);
      return OkStatus();
    case CollectiveKind::kNo:
    case CollectiveKind::kDone:
    case CollectiveKind::kId: break;
  }
  return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' is not a collective the interpreter runs");
}

// out[i] = x_0[i] ∘ x_1[i] ∘ ... folded left in rank order with to_apply (a native kernel when
// the reducer is one binary op), leaf by leaf; one member leaves its operand as it is.
Status CollectiveSteps::Reduce(const Step& s, const MemberLeaves& members, const std::vector<Buf>& out,
                               StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].rec->size > 0) std::memcpy(out[i].data, (*members[0])[i].data, out[i].rec->size);
  if (members.size() == 1) return OkStatus();
  NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, m.CalledComputation(s, AttrId::kToApply));
  for (size_t i = 0; i < out.size(); ++i) {
    const Buf& acc = out[i];
    Opcode native = NativeBinary(s.pattern, acc.type());
    for (size_t j = 1; j < members.size(); ++j) {
      const Buf& x = (*members[j])[i];
      if (native != Opcode::kParameter) {
        NHLO_TRY(s.pattern.swapped ? KernelBinary(native, x, acc, acc) : KernelBinary(native, acc, x, acc));
        continue;
      }
      NHLO_TRY(CheckReducer(*f, acc.type()));
      const int64_t size = HostByteSize(acc.type());
      for (int64_t e = 0; e < acc.count(); ++e) {
        NHLO_ASSIGN_OR_RETURN(const uint8_t* r, m.CallOnScalars(b, *f, acc.data + e * size, x.data + e * size));
        std::memmove(acc.data + e * size, r, static_cast<size_t>(size));
      }
    }
  }
  return OkStatus();
}

}  // namespace nhlo
