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

// CopyLeaf's rule: an async -start's operand leaf and the result leaf that holds it, or a -done's
// held result and its own, have one shape.
Status CheckCopyLeaf(const ComputationRecord& comp, const BundleRecord& b, uint32_t from, uint32_t to) {
  const BufferRecord& a = comp.buffers[from];
  const BufferRecord& r = comp.buffers[to];
  if (a.type != r.type || a.dims != r.dims || a.tuple.size() != r.tuple.size())
    return Status::Error("'" + std::string(OpcodeName(b.opcode)) + "': buffer '" + std::string(r.name) +
                         "' does not have the shape of '" + std::string(a.name) + "'");
  return OkStatus();
}

}  // namespace

CollectiveSteps::CollectiveSteps(DeviceGrid grid, uint32_t device, Rendezvous* rendezvous)
    : grid_(grid), device_(device), rendezvous_(rendezvous) {}

// The group this device meets at `s`, the shapes that group size implies, the buffers the step
// writes or copies, and its reducer.
Status CollectiveSteps::Load(const BundleProgram& p, const ComputationRecord& comp, const Step& s) {
  const BundleRecord& b = *s.bundle;
  const AttrRecord* groups = s.Find(AttrId::kReplicaGroups);
  const AttrRecord* pairs = s.Find(AttrId::kSourceTargetPairs);
  Plan plan;
  NHLO_ASSIGN_OR_RETURN(
      plan.group, ResolveCollectiveGroup(b.opcode, groups ? &groups->replica_groups() : nullptr,
                                         s.Find(AttrId::kChannelId) != nullptr, s.Find(AttrId::kUseGlobalDeviceIds),
                                         pairs ? &pairs->ints() : nullptr, grid_, device_));
  const CollectiveGroup& g = plan.group;
  const CollectiveKind kind = OpcodeCollective(b.opcode);
  if (kind == CollectiveKind::kId) {
    const BufferRecord& out = comp.buffers[b.result];
    if (out.type != PrimitiveType::kU32 || out.size != 4)
      return Status::Error("'" + std::string(OpcodeName(b.opcode)) + "' returns u32[]");
  } else if (kind == CollectiveKind::kDone) {
    if (b.operands.size() == 1) {
      const BufferRecord& in = comp.buffers[b.operands[0]];
      const BufferRecord& out = comp.buffers[b.result];
      // (operands, results[, contexts]) from the -start, or the results themselves.
      bool pair = in.type == PrimitiveType::kTuple && in.tuple.size() >= 2 &&
                  (out.type != PrimitiveType::kTuple || in.tuple.size() != out.tuple.size());
      const uint32_t from = pair ? in.tuple[1] : b.operands[0];
      NHLO_TRY(CheckCopyLeaf(comp, b, from, b.result));
      plan.held.emplace_back(from, b.result);
    }
  } else if (b.opcode == Opcode::kRaggedAllToAll) {
    std::vector<const BufferRecord*> in;
    for (uint32_t o : b.operands) in.push_back(&comp.buffers[o]);
    NHLO_TRY(CheckRaggedAllToAllShapes(in, comp.buffers[b.result], g.devices.size()));
    plan.targets = {b.result};
  } else if (IsExchangingCollective(b.opcode)) {
    if (b.operands.empty()) return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no operands");
    // XLA tells the in-place form (input, output, input offsets, output offsets) by its
    // slice_sizes; without them several operands are the combined form CollectivePermuteCombiner
    // makes, each operand permuted on its own into its element of the result tuple.
    if (kind == CollectiveKind::kPermute && b.operands.size() != 1 &&
        (s.Find(AttrId::kSliceSizes) || b.opcode == Opcode::kCollectivePermuteStart))
      return Status::Error("collective-permute with input/output buffer and offset operands is not executed yet");
    NHLO_ASSIGN_OR_RETURN(plan.targets, ExchangeTargets(comp, b));
    std::vector<const BufferRecord*> in, out;
    for (uint32_t o : b.operands) in.push_back(&comp.buffers[o]);
    for (uint32_t t : plan.targets) out.push_back(&comp.buffers[t]);
    size_t n = kind == CollectiveKind::kPermute || kind == CollectiveKind::kBroadcast
                   ? 1  // each device receives one device's operand, whole
                   : g.devices.size();
    NHLO_TRY(CheckCollectiveShapes(b.opcode == Opcode::kAllReduceStart ? Opcode::kAllReduce : b.opcode, in, out,
                                   s.Find(AttrId::kDimensions), n));
    if (IsAsyncStart(b.opcode) && HoldsOperands(comp, b)) {
      const uint32_t held = comp.buffers[b.result].tuple[0];
      for (size_t i = 0; i < b.operands.size(); ++i) {
        const uint32_t to = b.operands.size() == 1 ? held : comp.buffers[held].tuple[i];
        NHLO_TRY(CheckCopyLeaf(comp, b, b.operands[i], to));
        plan.held.emplace_back(b.operands[i], to);
      }
    }
    if (kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter) {
      // Each leaf folds with the native binary op of a recognised reducer, or calls the
      // computation, which must then take and give scalars of the leaf's type.
      const AttrRecord* to_apply = s.Find(AttrId::kToApply);
      if (to_apply && !to_apply->computations().empty() && to_apply->computations()[0] < p.computations.size())
        plan.reducer_computation = &p.computations[to_apply->computations()[0]];
      for (uint32_t o : b.operands) {
        const BufferRecord& leaf = comp.buffers[o];
        const Opcode native = NativeBinary(s.pattern, leaf.type);
        SpanOp span;
        Status fits;
        if (native != Opcode::kParameter) {
          Result<SpanOp> planned = BinaryStepSpan(native, leaf, leaf, leaf);
          if (planned.ok())
            span = *planned;
          else
            fits = planned.status();
        } else if (!plan.reducer_computation) {
          fits = Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no to_apply computation");
        } else {
          fits = CheckReducer(*plan.reducer_computation, leaf.type);
        }
        if (plan.reducer.ok() && !fits.ok()) plan.reducer = fits;
        plan.reduce_spans.push_back(span);
      }
    }
  }
  plans_.emplace(&b, std::move(plan));
  return OkStatus();
}

Status CollectiveSteps::Run(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  auto found = plans_.find(&b);
  if (found == plans_.end()) return Status::Error("collective has no resolved group (an interpreter bug)");
  const Plan& plan = found->second;
  switch (OpcodeCollective(b.opcode)) {
    case CollectiveKind::kId: {
      NHLO_ASSIGN_OR_RETURN(Buf out, m.ArrayOf(b.result));
      uint32_t id = b.opcode == Opcode::kPartitionId ? grid_.partition_of(device_) : grid_.replica_of(device_);
      std::memcpy(out.data, &id, 4);  // Load checked: u32[]
      return OkStatus();
    }
    case CollectiveKind::kDone:
      if (plan.held.empty()) break;  // a -done of other than one operand
      for (const auto& [from, to] : plan.held) NHLO_TRY(m.CopyBuffer(from, to));
      return OkStatus();
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kRaggedAllToAll:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kPermute:
      if (!plan.held.empty()) {
        m.ZeroBuffer(b.result);  // collective-permute-start's u32 contexts: nhlo leaves them zero
        for (const auto& [from, to] : plan.held) NHLO_TRY(m.CopyBuffer(from, to));
      }
      return Exchange(s, plan, m);
    case CollectiveKind::kNo: break;
  }
  return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' is not a collective the interpreter runs");
}

// Meets the group (when it has other devices), builds this device's result from the
// members' operands, and writes it.
Status CollectiveSteps::Exchange(const Step& s, const Plan& plan, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const CollectiveGroup& g = plan.group;
  std::vector<Buf> mine, out;
  for (uint32_t o : b.operands) {
    NHLO_ASSIGN_OR_RETURN(Buf x, m.ArrayOf(o));
    mine.push_back(x);
  }
  for (uint32_t t : plan.targets) {
    NHLO_ASSIGN_OR_RETURN(Buf r, m.ArrayOf(t));
    out.push_back(r);
  }
  if (g.devices.size() == 1 || !rendezvous_) {
    MemberLeaves members{&mine};
    if (g.devices.size() != 1)
      return Status::Error("a group of several devices on a one-device run (an interpreter bug)");
    return Combine(s, plan, members, out, m);
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
  Status combined = Combine(s, plan, members, staged, m);
  NHLO_TRY(rendezvous_->Leave(key));  // every member leaves, whatever Combine gave
  NHLO_TRY(combined);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].rec->size > 0) std::memcpy(out[i].data, staged[i].data, out[i].rec->size);
  return OkStatus();
}

Status CollectiveSteps::Combine(const Step& s, const Plan& plan, const MemberLeaves& members,
                                const std::vector<Buf>& out, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const CollectiveGroup& g = plan.group;
  const AttrRecord* dims = s.Find(AttrId::kDimensions);
  switch (OpcodeCollective(b.opcode)) {
    case CollectiveKind::kAllReduce: return Reduce(s, plan, members, out, m);
    case CollectiveKind::kAllGather: return CollectiveGather(members, dims->ints()[0], g.rank, out);
    case CollectiveKind::kReduceScatter: {
      std::vector<std::string> full(out.size());
      std::vector<Buf> reduced;
      for (size_t i = 0; i < out.size(); ++i) {
        const Buf& x = (*members[g.rank])[i];
        full[i].assign(x.rec->size, '\0');
        reduced.push_back({x.rec, reinterpret_cast<uint8_t*>(full[i].data())});
      }
      NHLO_TRY(Reduce(s, plan, members, reduced, m));
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

// out[i] = x_0[i] ∘ x_1[i] ∘ ... folded left in rank order with to_apply (a native span when
// the reducer is one binary op, planned at load), leaf by leaf; one member leaves its operand as
// it is.
Status CollectiveSteps::Reduce(const Step& s, const Plan& plan, const MemberLeaves& members,
                               const std::vector<Buf>& out, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].rec->size > 0) std::memcpy(out[i].data, (*members[0])[i].data, out[i].rec->size);
  if (members.size() == 1) return OkStatus();
  NHLO_TRY(plan.reducer);
  for (size_t i = 0; i < out.size(); ++i) {
    const Buf& acc = out[i];
    const SpanOp& span = plan.reduce_spans[i];
    const int64_t size = HostByteSize(acc.type());
    for (size_t j = 1; j < members.size(); ++j) {
      const Buf& x = (*members[j])[i];
      if (span.fn) {
        RunStepSpan(span, {s.pattern.swapped ? &x : &acc, s.pattern.swapped ? &acc : &x}, acc);
        continue;
      }
      for (int64_t e = 0; e < acc.count(); ++e) {
        NHLO_ASSIGN_OR_RETURN(const uint8_t* r,
                              m.CallOnScalars(b, *plan.reducer_computation, acc.data + e * size, x.data + e * size));
        std::memmove(acc.data + e * size, r, static_cast<size_t>(size));
      }
    }
  }
  return OkStatus();
}

}  // namespace nhlo
