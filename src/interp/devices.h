// SPDX-License-Identifier: Apache-2.0
// Simulated devices: which devices one collective brings together (XLA's group modes over
// explicit and iota replica groups, docs/multi-device-semantics.md sections 1-3) and the
// rendezvous where their threads meet to exchange data.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/bundle_format.h"
#include "support/status.h"

namespace nhlo {

/// The message of a device stopped because another one failed (Rendezvous).
inline constexpr const char* kStoppedByOtherDevice = "stopped: another device failed";
/// At most this many simulated devices, each a thread with its own memory.
inline constexpr uint64_t kMaxDevices = 4096;

/// replica_count × num_partitions devices; device f = r·P + p is replica r, partition p.
struct DeviceGrid {
  uint32_t replicas = 1;
  uint32_t partitions = 1;
  uint64_t count() const { return uint64_t{replicas} * partitions; }
  uint32_t replica_of(uint32_t device) const { return device / partitions; }
  uint32_t partition_of(uint32_t device) const { return device % partitions; }
};

/// The devices one execution of a collective meets with, in rank order (the order of
/// concatenation, scatter blocks and reduction), and where this device stands among them.
struct CollectiveGroup {
  std::vector<uint32_t> devices;  // flattened ids
  uint32_t rank = 0;              // this device's index in `devices`
  /// collective-permute: the rank whose operand this device receives, or -1 (it receives
  /// zeros). collective-broadcast: -1 when this device is in no group (zeros too).
  int64_t source = 0;
};

/// Of the collectives that meet a group of devices (IsExchangingCollective), those that carry
/// use_global_device_ids in HLO text (all-reduce, all-gather, reduce-scatter and their starts):
/// the others name partitions when they have a channel_id.
bool CarriesGlobalDeviceIds(Opcode op);

/// The group of `device` for the collective `opcode` with the given attributes (any may be
/// null); an error for groups XLA's verifier or runtime would reject, or that name devices the
/// grid does not have. Opcodes that are not collectives, and partition-id/replica-id, give the
/// device alone.
Result<CollectiveGroup> ResolveCollectiveGroup(Opcode opcode, const ReplicaGroupsRecord* groups, bool has_channel_id,
                                               const AttrRecord* use_global_device_ids,
                                               const std::vector<int64_t>* source_target_pairs, DeviceGrid grid,
                                               uint32_t device);

/// `devices` split into replicas × partitions for a program whose header gives no split
/// (nhlo-run --devices=N): the header's one count > 1 if it has one, else partitions when a
/// collective's ids are partition ids (a channel_id on all-to-all, collective-permute,
/// collective-broadcast, ragged-all-to-all), else replicas. An error when the header has both.
Result<DeviceGrid> GridForDeviceCount(const BundleProgram& program, uint32_t devices);

/// The devices the program's collectives imply when its header gives none (nhlo-run
/// --devices=auto): the header's counts if either is > 1, else the smallest count every
/// collective fits, split as GridForDeviceCount splits it. The count comes from the highest id
/// an explicit group or source-target pair names, an iota group's size, and for groups left
/// empty from the shapes (an all-gather's result over its operand, a reduce-scatter's operand
/// over its result, a tuple all-to-all's operand count).
Result<DeviceGrid> InferDevices(const BundleProgram& program);

/// Where the devices' threads meet. A meeting is one execution of one collective by one group:
/// every member arrives with a pointer to what it contributes, waits until all have arrived,
/// reads the others' contributions, then leaves; nobody returns from Leave before every member
/// has finished reading, so a contribution stays valid while it is read. If every device still
/// running waits at a meeting that can never fill, or a device fails, the waiters get an error
/// instead of hanging.
class Rendezvous {
 public:
  explicit Rendezvous(uint32_t devices) : devices_(devices) {}

  struct Key {
    const void* collective;  // the bundle
    uint64_t occurrence;     // how many times this device ran it before
    uint32_t leader;         // the group's first device
    bool operator<(const Key& o) const {
      return std::tie(collective, occurrence, leader) < std::tie(o.collective, o.occurrence, o.leader);
    }
  };

  /// Arrives at `key` (a group of `size`, this device at `rank`) and waits for the others;
  /// on success `out` holds every member's contribution in rank order.
  Status Arrive(const Key& key, uint32_t size, uint32_t rank, const void* contribution, uint32_t device,
                const std::string& what, std::vector<const void*>& out);
  /// Waits until every member of `key` has read the contributions.
  Status Leave(const Key& key);
  /// A device's run ended; `failed` stops every meeting still waiting.
  void Finish(uint32_t device, bool failed);

  /// One transfer of a send/recv pair between devices: the `occurrence`-th time device
  /// `source` sends to device `target` on `channel`.
  struct MailKey {
    int64_t channel;
    uint32_t source, target;
    uint64_t occurrence;
    bool operator<(const MailKey& o) const {
      return std::tie(channel, source, target, occurrence) < std::tie(o.channel, o.source, o.target, o.occurrence);
    }
  };
  /// A send: leaves `bytes` for the target and goes on (XLA's sends complete at send-done; a
  /// send that never waits can only remove deadlocks, not add them).
  Status Post(const MailKey& key, std::string bytes);
  /// A recv: waits until the source has posted `key`, then takes its bytes. `what` names the
  /// recv for a deadlock message.
  Status Take(const MailKey& key, uint32_t device, const std::string& what, std::string& out);

 private:
  struct Meeting {
    std::vector<const void*> contributions;
    uint32_t arrived = 0, left = 0, size = 0;
    std::string what;  // for a deadlock message
    std::vector<uint32_t> waiting_devices;
  };
  Status Stopped() const;
  // Called with the lock held whenever a device stops running: every device left either waits
  // at a meeting that has not filled or has finished.
  void CheckDeadlock();

  struct Letter {
    std::string bytes;
    bool posted = false;
    bool waited_for = false;  // a recv waits for it (and counts in waiting_ until it is posted)
    std::string what;
    uint32_t waiting_device = 0;
  };

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Key, Meeting> meetings_;
  std::map<MailKey, Letter> mail_;
  uint32_t devices_;
  uint32_t waiting_ = 0;   // devices waiting for a meeting to fill
  uint32_t finished_ = 0;  // devices whose run has ended
  bool failed_ = false;    // a device failed: the others stop at their next meeting
  std::string deadlock_;   // set when the meetings can never fill
};

}  // namespace nhlo
