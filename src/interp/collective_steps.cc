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
  if (b.opcode == Opcode::kSend || b.opcode == Opcode::kRecv || b.opcode == Opcode::kRecvDone)
    return LoadTransfer(comp, s);
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
  if (b.opcode == Opcode::kSend || b.opcode == Opcode::kRecv || b.opcode == Opcode::kRecvDone) return RunTransfer(s, m);
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

// XLA's GPU send and recv between devices (docs/multi-device-semantics.md): the frontend
// attribute _xla_send_recv_source_target_pairs names {source, target} pairs of device ids
// (replica x partitions + partition, every device of the run being one group, as XLA's NCCL
// send/recv take them). The k-th send on a channel from s to t meets the k-th recv on that
// channel on t from s; a device no pair targets receives zeros.
namespace {

int64_t ChannelOf(const BundleRecord& b) {
  const AttrRecord* channel = b.Find(AttrId::kChannelId);
  return channel ? channel->i() : 0;
}

}  // namespace

void CollectiveSteps::ScanTransfers(const BundleProgram& p) {
  for (const ComputationRecord& comp : p.computations)
    for (const BundleRecord& b : comp.bundles) {
      if ((b.opcode == Opcode::kSend || b.opcode == Opcode::kRecv) && b.Find(AttrId::kSendRecvPairs))
        transfer_channels_.insert(ChannelOf(b));
      if (b.opcode == Opcode::kRecvDone) done_channels_.insert(ChannelOf(b));
    }
}

bool CollectiveSteps::CompletesTransfer(const BundleRecord& b) const {
  return b.opcode == Opcode::kRecvDone && transfer_channels_.count(ChannelOf(b)) > 0;
}

void CollectiveSteps::BeginRun() {
  sent_.clear();
  received_.clear();
  own_mail_.clear();
  pending_.clear();
}

Status CollectiveSteps::LoadTransfer(const ComputationRecord& comp, const Step& s) {
  const BundleRecord& b = *s.bundle;
  const std::string op(OpcodeName(b.opcode));
  TransferPlan plan;
  plan.channel = ChannelOf(b);
  const BufferRecord& result = comp.buffers[b.result];
  if (b.opcode == Opcode::kRecvDone) {  // (data, token): the data the recv it completes takes
    if (result.type != PrimitiveType::kTuple || result.tuple.empty() ||
        comp.buffers[result.tuple[0]].type == PrimitiveType::kTuple)
      return Status::Error("'recv-done' of a recv between devices returns (data, token)");
    plan.data = result.tuple[0];
    transfers_[&b] = std::move(plan);
    return OkStatus();
  }
  const AttrRecord* pairs = s.Find(AttrId::kSendRecvPairs);
  if (!pairs || pairs->ints().size() % 2 != 0)
    return Status::Error("'" + op + "' between devices needs its {source,target} pairs");
  plan.at_done = b.opcode == Opcode::kRecv && done_channels_.count(plan.channel) > 0;
  if (result.type != PrimitiveType::kTuple || result.tuple.empty())
    return Status::Error("'" + op + "' returns (data, context, token)");
  if (b.opcode == Opcode::kSend) {
    if (b.operands.empty()) return Status::Error("'send' has no operand");
    plan.data = b.operands[0];
  } else {
    plan.data = result.tuple[0];
  }
  if (comp.buffers[plan.data].type == PrimitiveType::kTuple)
    return Status::Error("'" + op + "' of a tuple between devices is not executed yet");
  const std::vector<int64_t>& ids = pairs->ints();
  std::vector<bool> targeted(grid_.count(), false);
  for (size_t i = 0; i < ids.size(); i += 2) {
    for (int64_t id : {ids[i], ids[i + 1]})
      if (id < 0 || static_cast<uint64_t>(id) >= grid_.count())
        return Status::Error("_xla_send_recv_source_target_pairs names device " + std::to_string(id) +
                             ", but the program has " + std::to_string(grid_.count()) +
                             " devices (replica_count x num_partitions; nhlo-run --devices sets them)");
    const auto source = static_cast<uint32_t>(ids[i]), target = static_cast<uint32_t>(ids[i + 1]);
    if (targeted[target])
      return Status::Error("_xla_send_recv_source_target_pairs names device " + std::to_string(target) +
                           " as the target of two pairs");
    targeted[target] = true;
    if (b.opcode == Opcode::kSend && source == device_) plan.targets.push_back(target);
    if (b.opcode == Opcode::kRecv && target == device_) plan.source = source;
  }
  transfers_[&b] = std::move(plan);
  return OkStatus();
}

Status CollectiveSteps::RunTransfer(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  auto it = transfers_.find(&b);
  if (it == transfers_.end()) return Status::Error("a send/recv without its plan (an interpreter bug)");
  const TransferPlan& plan = it->second;
  NHLO_ASSIGN_OR_RETURN(Buf data, m.ArrayOf(plan.data));
  const size_t bytes = data.rec->size;
  if (b.opcode == Opcode::kSend) {
    // The send's own result holds its operand, as a send to the host does (Frames::RunSend).
    m.ZeroBuffer(b.result);
    NHLO_TRY(m.CopyBuffer(b.operands[0], m.Running().buffers[b.result].tuple[0]));
    for (uint32_t target : plan.targets) {
      Rendezvous::MailKey key{plan.channel, device_, target, sent_[{plan.channel, target}]++};
      std::string letter(reinterpret_cast<const char*>(data.data), bytes);
      if (rendezvous_) {
        NHLO_TRY(rendezvous_->Post(key, std::move(letter)));
      } else {
        own_mail_[key] = std::move(letter);
      }
    }
    return OkStatus();
  }
  m.ZeroBuffer(b.result);
  const std::string what(m.Running().buffers[b.result].name);
  if (b.opcode == Opcode::kRecvDone) {
    std::deque<int64_t>& recvs = pending_[plan.channel];
    if (recvs.empty())
      return Status::Error("'recv-done' on channel " + std::to_string(plan.channel) + " completes no recv");
    const int64_t source = recvs.front();
    recvs.pop_front();
    return Receive(plan.channel, source, data, what);
  }
  if (plan.at_done) {  // the recv-done receives; its data reads as zeros until then
    pending_[plan.channel].push_back(plan.source);
    return OkStatus();
  }
  return Receive(plan.channel, plan.source, data, what);
}

Status CollectiveSteps::Receive(int64_t channel, int64_t from, const Buf& data, const std::string& what) {
  const size_t bytes = data.rec->size;
  if (from < 0) return OkStatus();  // no pair targets this device: zeros
  const auto source = static_cast<uint32_t>(from);
  Rendezvous::MailKey key{channel, source, device_, received_[{channel, source}]++};
  std::string letter;
  if (rendezvous_) {
    NHLO_TRY(rendezvous_->Take(key, device_, what, letter));
  } else {
    auto mail = own_mail_.find(key);
    if (mail == own_mail_.end())
      return Status::Error("'" + what + "' on channel " + std::to_string(channel) +
                           " waits for a send that has not run (one device: it would wait forever)");
    letter = std::move(mail->second);
    own_mail_.erase(mail);
  }
  if (letter.size() != bytes)
    return Status::Error("device " + std::to_string(source) + " sent " + std::to_string(letter.size()) +
                         " bytes on channel " + std::to_string(channel) + ", but '" + what + "' takes " +
                         std::to_string(bytes));
  if (bytes > 0) std::memcpy(data.data, letter.data(), bytes);
  return OkStatus();
}

}  // namespace nhlo
