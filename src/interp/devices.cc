// SPDX-License-Identifier: Apache-2.0
// Group modes and participants as XLA's collective_ops_utils.cc computes them
// (GetCollectiveOpGroupMode, GetParticipatingDevices), written from
// docs/multi-device-semantics.md, and the rendezvous of the device threads.
#include "interp/devices.h"

#include <algorithm>

#include "ir/opcode_attrs.h"

namespace nhlo {
namespace {

enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

// `[G,S]<=[dims]T(perm)` expanded: iota over dims, transposed by perm, cut into G rows of S.
// The caller checked the shape (IotaDeviceListProblem) and that it holds at most a grid's ids.
std::vector<std::vector<int64_t>> ExpandIota(const ReplicaGroupsRecord& g) {
  const std::vector<int64_t>& dims = g.reshape_dims;
  std::vector<int64_t> perm = g.transpose;
  if (perm.empty())
    for (size_t i = 0; i < dims.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> stride(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) stride[i - 1] = stride[i] * dims[i];
  std::vector<int64_t> index(dims.size(), 0);  // over the transposed shape, row-major
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(g.num_groups));
  for (int64_t n = 0; n < g.num_groups * g.group_size; ++n) {
    int64_t id = 0;
    for (size_t i = 0; i < dims.size(); ++i) id += index[i] * stride[static_cast<size_t>(perm[i])];
    rows[static_cast<size_t>(n / g.group_size)].push_back(id);
    for (size_t i = dims.size(); i-- > 0;) {
      if (++index[i] < dims[static_cast<size_t>(perm[i])]) break;
      index[i] = 0;
    }
  }
  return rows;
}

}  // namespace

bool CarriesGlobalDeviceIds(Opcode op) { return AttrAllowed(op, AttrId::kUseGlobalDeviceIds); }

Result<CollectiveGroup> ResolveCollectiveGroup(Opcode opcode, const ReplicaGroupsRecord* groups, bool has_channel_id,
                                               const AttrRecord* use_global_device_ids,
                                               const std::vector<int64_t>* source_target_pairs, DeviceGrid grid,
                                               uint32_t device) {
  CollectiveGroup g;
  g.devices = {device};
  if (!IsExchangingCollective(opcode)) return g;
  const uint32_t replica = grid.replica_of(device), partition = grid.partition_of(device);
  bool global_ids = use_global_device_ids && use_global_device_ids->b();
  GroupMode mode;
  if (!has_channel_id) {
    if (global_ids) return Status::Error("use_global_device_ids=true needs a channel_id (XLA's group modes)");
    mode = GroupMode::kCrossReplica;
  } else if (!CarriesGlobalDeviceIds(opcode)) {
    mode = GroupMode::kCrossPartition;
  } else {
    mode = global_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
  }
  const uint64_t id_count = mode == GroupMode::kCrossPartition ? grid.partitions
                            : mode == GroupMode::kFlattenedId  ? grid.count()
                                                               : grid.replicas;
  const char* id_kind = mode == GroupMode::kCrossPartition ? "partition"
                        : mode == GroupMode::kFlattenedId  ? "device"
                                                           : "replica";
  const int64_t my_id = mode == GroupMode::kCrossPartition ? partition
                        : mode == GroupMode::kFlattenedId  ? device
                                                           : replica;
  auto out_of_range = [&](int64_t id, const char* where) {
    return Status::Error(std::string(where) + " names " + id_kind + " " + std::to_string(id) +
                         ", but the program has " + std::to_string(id_count) + " " + id_kind +
                         (id_count == 1 ? "" : "s") +
                         " (replica_count x num_partitions = " + std::to_string(grid.replicas) + " x " +
                         std::to_string(grid.partitions) + "; nhlo-run --devices sets them)");
  };
  // The device whose id in this mode is `id`, the other coordinate this device's own.
  auto device_with_id = [&](int64_t id) -> uint32_t {
    return mode == GroupMode::kCrossPartition ? replica * grid.partitions + static_cast<uint32_t>(id)
                                              : static_cast<uint32_t>(id) * grid.partitions + partition;
  };

  if (OpcodeCollective(opcode) == CollectiveKind::kPermute) {
    // Pairs of replica ids (no channel_id) or partition ids; the meeting is every device that
    // shares this one's other coordinate, ranked by id.
    g.devices.clear();
    for (uint64_t id = 0; id < id_count; ++id) g.devices.push_back(device_with_id(static_cast<int64_t>(id)));
    g.rank = static_cast<uint32_t>(my_id);
    g.source = -1;
    std::vector<bool> source_seen(id_count, false), target_seen(id_count, false);
    const std::vector<int64_t> none;
    const std::vector<int64_t>& pairs = source_target_pairs ? *source_target_pairs : none;
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
      int64_t s = pairs[i], t = pairs[i + 1];
      for (int64_t id : {s, t})
        if (id < 0 || static_cast<uint64_t>(id) >= id_count) return out_of_range(id, "source_target_pairs");
      if (source_seen[static_cast<size_t>(s)] || target_seen[static_cast<size_t>(t)])
        return Status::Error("source_target_pairs names " + std::string(id_kind) + " " +
                             std::to_string(source_seen[static_cast<size_t>(s)] ? s : t) +
                             (source_seen[static_cast<size_t>(s)] ? " as a source" : " as a target") + " twice");
      source_seen[static_cast<size_t>(s)] = target_seen[static_cast<size_t>(t)] = true;
      if (t == my_id) g.source = s;
    }
    return g;
  }

  std::vector<std::vector<int64_t>> lists;
  bool empty = !groups || (!groups->iota && !groups->mesh && groups->group_sizes.empty());
  if (empty) {
    if (mode == GroupMode::kFlattenedId)
      return Status::Error("replica_groups must list the devices when use_global_device_ids=true");
    lists.emplace_back();
    for (uint64_t id = 0; id < id_count; ++id) lists.back().push_back(static_cast<int64_t>(id));
  } else if (groups->mesh) {
    return Status::Error("replica_groups over sub-axes of a device mesh are not expanded by the interpreter yet");
  } else if (groups->iota) {
    // The reader checked the shape; more ids than the grid has cannot all be in range.
    if (static_cast<uint64_t>(groups->num_groups) * static_cast<uint64_t>(groups->group_size) > id_count)
      return out_of_range(groups->num_groups * groups->group_size - 1, "iota replica_groups");
    lists = ExpandIota(*groups);
  } else {
    size_t at = 0;
    for (int64_t n : groups->group_sizes) {
      if (n < 0 || static_cast<uint64_t>(n) > groups->ids.size() - at)
        return Status::Error("replica_groups: group sizes do not match the ids");
      lists.emplace_back(groups->ids.begin() + static_cast<std::ptrdiff_t>(at),
                         groups->ids.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(n)));
      at += static_cast<size_t>(n);
    }
  }
  // Every id in range and in one group at most (XLA's verifier), so that all devices agree.
  std::vector<bool> seen(id_count, false);
  const std::vector<int64_t>* mine = nullptr;
  for (const std::vector<int64_t>& list : lists) {
    for (int64_t id : list) {
      if (id < 0 || static_cast<uint64_t>(id) >= id_count) return out_of_range(id, "replica_groups");
      if (seen[static_cast<size_t>(id)])
        return Status::Error("replica_groups names " + std::string(id_kind) + " " + std::to_string(id) + " twice");
      seen[static_cast<size_t>(id)] = true;
      if (id == my_id) mine = &list;
    }
  }
  if (!mine) {
    if (opcode == Opcode::kCollectiveBroadcast) {  // StableHLO: a device in no group gets zeros
      g.source = -1;
      return g;
    }
    return Status::Error(std::string("the device's ") + id_kind + " (" + std::to_string(my_id) +
                         ") is in none of the replica_groups");
  }
  g.devices.clear();
  for (int64_t id : *mine) {
    if (mode == GroupMode::kFlattenedId) {
      g.devices.push_back(static_cast<uint32_t>(id));
    } else if (mode == GroupMode::kCrossReplicaAndPartition) {
      for (uint32_t q = 0; q < grid.partitions; ++q)
        g.devices.push_back(static_cast<uint32_t>(id) * grid.partitions + q);
    } else {
      g.devices.push_back(device_with_id(id));
    }
  }
  g.rank = static_cast<uint32_t>(std::find(g.devices.begin(), g.devices.end(), device) - g.devices.begin());
  g.source = 0;
  return g;
}

Result<DeviceGrid> GridForDeviceCount(const BundleProgram& program, uint32_t devices) {
  if (program.replicas > 1 && program.partitions > 1)
    return Status::Error("the module has replica_count=" + std::to_string(program.replicas) +
                         " and num_partitions=" + std::to_string(program.partitions) + "; give --devices=RxP");
  if (program.replicas > 1) return DeviceGrid{devices, 1};
  if (program.partitions > 1) return DeviceGrid{1, devices};
  for (const ComputationRecord& comp : program.computations) {
    for (const BundleRecord& b : comp.bundles) {
      // With a channel_id these name partitions (XLA's cross-partition mode).
      if (!IsExchangingCollective(b.opcode) || CarriesGlobalDeviceIds(b.opcode)) continue;
      for (const AttrRecord& a : b.attrs)
        if (a.id == AttrId::kChannelId) return DeviceGrid{1, devices};
    }
  }
  return DeviceGrid{devices, 1};
}

Result<DeviceGrid> InferDevices(const BundleProgram& program) {
  if (program.replicas > 1 || program.partitions > 1) return DeviceGrid{program.replicas, program.partitions};
  uint64_t need = 1;
  auto at_least = [&](uint64_t n) { need = std::max(need, n); };
  for (const ComputationRecord& comp : program.computations) {
    for (const BundleRecord& b : comp.bundles) {
      bool empty_groups = true;
      const AttrRecord* dims = nullptr;
      for (const AttrRecord& a : b.attrs) {
        if (a.id == AttrId::kDimensions) dims = &a;
        if (a.id == AttrId::kSourceTargetPairs || a.id == AttrId::kSendRecvPairs)
          for (int64_t id : a.ints()) at_least(static_cast<uint64_t>(std::max<int64_t>(id, 0)) + 1);
        if (a.id != AttrId::kReplicaGroups) continue;
        const ReplicaGroupsRecord& g = a.replica_groups();
        if (g.iota) {
          empty_groups = false;
          if (g.num_groups > 0 && g.group_size > 0 && g.num_groups <= static_cast<int64_t>(kMaxDevices) &&
              g.group_size <= static_cast<int64_t>(kMaxDevices))
            at_least(static_cast<uint64_t>(g.num_groups * g.group_size));
        } else if (!g.mesh && !g.ids.empty()) {
          empty_groups = false;
          for (int64_t id : g.ids) at_least(static_cast<uint64_t>(std::max<int64_t>(id, 0)) + 1);
        }
      }
      if (!empty_groups || b.operands.empty()) continue;
      const BufferRecord& in = comp.buffers[b.operands[0]];
      const BufferRecord& out = comp.buffers[b.result];
      bool arrays = in.type != PrimitiveType::kTuple && out.type != PrimitiveType::kTuple;
      if (b.opcode == Opcode::kAllToAll && !dims) at_least(b.operands.size());
      if (!arrays || !dims || dims->ints().size() != 1 || in.dims.size() != out.dims.size()) continue;
      int64_t d = dims->ints()[0];
      if (d < 0 || static_cast<size_t>(d) >= in.dims.size()) continue;
      int64_t a = in.dims[static_cast<size_t>(d)], r = out.dims[static_cast<size_t>(d)];
      if (b.opcode == Opcode::kAllGather && a > 0 && r % a == 0) at_least(static_cast<uint64_t>(r / a));
      if (b.opcode == Opcode::kReduceScatter && r > 0 && a % r == 0) at_least(static_cast<uint64_t>(a / r));
    }
  }
  if (need > kMaxDevices)
    return Status::Error("the collectives imply " + std::to_string(need) + " devices, more than " +
                         std::to_string(kMaxDevices));
  return GridForDeviceCount(program, static_cast<uint32_t>(need));
}

Status Rendezvous::Stopped() const {
  if (!deadlock_.empty()) return Status::Error(deadlock_);
  return Status::Error(kStoppedByOtherDevice);
}

void Rendezvous::CheckDeadlock() {
  if (failed_ || !deadlock_.empty() || waiting_ == 0 || waiting_ + finished_ < devices_) return;
  bool recv_waits = false;
  for (const auto& entry : mail_) recv_waits |= entry.second.waited_for;
  deadlock_ = recv_waits ? "the devices cannot go on: each waits at a collective that not all of its group reach, or "
                           "at a recv whose send does not come"
                         : "the devices cannot go on: each waits at a collective that not all of its group reach";
  int listed = 0;
  for (const auto& [key, m] : meetings_) {
    if (m.arrived >= m.size) continue;
    if (listed++ == 3) {
      deadlock_ += "; ...";
      break;
    }
    deadlock_ += "; '" + m.what + "' (run " + std::to_string(key.occurrence + 1) + ") has " +
                 std::to_string(m.arrived) + " of " + std::to_string(m.size) + " devices (device";
    for (size_t i = 0; i < m.waiting_devices.size() && i < 8; ++i)
      deadlock_ += (i ? ", " : " ") + std::to_string(m.waiting_devices[i]);
    deadlock_ += m.waiting_devices.size() > 8 ? ", ...)" : ")";
  }
  for (const auto& [key, letter] : mail_) {
    if (!letter.waited_for) continue;
    if (listed++ == 3) {
      deadlock_ += "; ...";
      break;
    }
    deadlock_ += "; '" + letter.what + "' on device " + std::to_string(letter.waiting_device) + " waits for device " +
                 std::to_string(key.source) + "'s send " + std::to_string(key.occurrence + 1) + " on channel " +
                 std::to_string(key.channel);
  }
  changed_.notify_all();
}

Status Rendezvous::Arrive(const Key& key, uint32_t size, uint32_t rank, const void* contribution, uint32_t device,
                          const std::string& what, std::vector<const void*>& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (failed_ || !deadlock_.empty()) return Stopped();
  Meeting& m = meetings_[key];
  if (m.size == 0) {
    m.size = size;
    m.contributions.assign(size, nullptr);
    m.what = what;
  }
  if (m.size != size || rank >= size || m.contributions[rank])
    return Status::Error("the devices disagree about the group of '" + what + "'");
  m.contributions[rank] = contribution;
  if (++m.arrived == m.size) {
    waiting_ -= m.size - 1;
    changed_.notify_all();
  } else {
    ++waiting_;
    m.waiting_devices.push_back(device);
    CheckDeadlock();
    changed_.wait(lock, [&] { return m.arrived == m.size || failed_ || !deadlock_.empty(); });
    if (m.arrived != m.size) return Stopped();
  }
  out = m.contributions;
  return OkStatus();
}

Status Rendezvous::Leave(const Key& key) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = meetings_.find(key);
  if (it == meetings_.end()) return Status::Error("left a meeting it is not in (an interpreter bug)");
  Meeting& m = it->second;
  if (++m.left == m.size) {
    changed_.notify_all();
  } else {
    // Every member that arrived leaves too, whatever happened in between: no deadlock here.
    changed_.wait(lock, [&] { return m.left == m.size; });
  }
  // The last one out removes the meeting (`left` counts up to size, then down to the exits).
  if (++m.arrived == 2 * m.size) meetings_.erase(it);
  return OkStatus();
}

Status Rendezvous::Post(const MailKey& key, std::string bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ || !deadlock_.empty()) return Stopped();
  Letter& letter = mail_[key];
  if (letter.posted)
    return Status::Error("device " + std::to_string(key.source) + " sent twice to device " +
                         std::to_string(key.target) + " on channel " + std::to_string(key.channel) +
                         " before it received (an interpreter bug)");
  letter.bytes = std::move(bytes);
  letter.posted = true;
  if (letter.waited_for) {  // the recv stops waiting now: count it so before anyone checks for deadlock
    letter.waited_for = false;
    --waiting_;
    changed_.notify_all();
  }
  return OkStatus();
}

Status Rendezvous::Take(const MailKey& key, uint32_t device, const std::string& what, std::string& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (failed_ || !deadlock_.empty()) return Stopped();
  Letter& letter = mail_[key];  // std::map: the reference stays valid while others add letters
  if (!letter.posted) {
    letter.waited_for = true;
    letter.what = what;
    letter.waiting_device = device;
    ++waiting_;
    CheckDeadlock();
    changed_.wait(lock, [&] { return letter.posted || failed_ || !deadlock_.empty(); });
    if (!letter.posted) return Stopped();
  }
  out = std::move(letter.bytes);
  mail_.erase(key);
  return OkStatus();
}

void Rendezvous::Finish(uint32_t, bool failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_;
  if (failed) {
    failed_ = true;
    changed_.notify_all();
  } else {
    CheckDeadlock();
  }
}

}  // namespace nhlo
