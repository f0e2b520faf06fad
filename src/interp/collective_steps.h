// SPDX-License-Identifier: Apache-2.0
// The collectives of one simulated device: the group each collective meets, resolved when the
// program is loaded, and the step that meets it (docs/multi-device-semantics.md). The machine
// running the step lends its buffers through StepMachine.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "interp/devices.h"
#include "interp/kernels.h"
#include "interp/step_machine.h"

namespace nhlo {

class CollectiveSteps {
 public:
  /// One device of `grid`; `rendezvous` is shared by the devices of a run, null for one device.
  CollectiveSteps(DeviceGrid grid, uint32_t device, Rendezvous* rendezvous);

  /// At load: the group this device meets at collective `s` of `comp`, the shapes that group
  /// size implies, the buffers it writes and, for a reduction, each leaf's reducer span (or
  /// whether its reducer computation in `p` fits); the run then decides nothing.
  Status Load(const BundleProgram& p, const ComputationRecord& comp, const Step& s);
  /// Runs collective `s` (and partition-id, replica-id, the -done ops).
  Status Run(const Step& s, StepMachine& m);

  /// A send or recv between devices (the bundle carries AttrId::kSendRecvPairs): at load, the
  /// devices this one sends to or receives from; at the run, a send leaves its operand for each
  /// target and a recv takes what its source sent (zeros when no pair targets this device).
  Status LoadTransfer(const ComputationRecord& comp, const Step& s);
  Status RunTransfer(const Step& s, StepMachine& m);
  /// Before any Load: the channels of `p`'s sends and recvs between devices, and those its
  /// recv-dones complete. A recv whose channel has recv-dones receives there (XLA's recv only
  /// starts the transfer: every device may post its recv before its send); one without (a recv
  /// in an async computation whose done ends the group) receives at the recv.
  void ScanTransfers(const BundleProgram& p);
  /// Whether recv-done `b` completes a recv between devices (it then runs with the collectives).
  bool CompletesTransfer(const BundleRecord& b) const;
  /// A run starts: transfers a failed or partial run left behind (a one-device run's own
  /// letters, recvs no recv-done completed) are dropped, and the counts start again.
  void BeginRun();

 private:
  /// What Load resolves for one collective.
  struct Plan {
    CollectiveGroup group;
    std::vector<uint32_t> targets;                    // the buffers the exchange writes
    std::vector<std::pair<uint32_t, uint32_t>> held;  // an async -start's operand leaves copied into its result
    std::vector<SpanOp> reduce_spans;                 // per leaf: a native reducer's span; fn null: the computation
    const ComputationRecord* reducer_computation = nullptr;
    Status reducer;  // the reducer's fit (its computation, or a native span's checks), reported when it would run
  };

  Status Exchange(const Step& s, const Plan& plan, StepMachine& m);
  Status Combine(const Step& s, const Plan& plan, const MemberLeaves& members, const std::vector<Buf>& out,
                 StepMachine& m);
  Status Reduce(const Step& s, const Plan& plan, const MemberLeaves& members, const std::vector<Buf>& out,
                StepMachine& m);

  /// What LoadTransfer resolves for one send or recv.
  struct TransferPlan {
    int64_t channel = 0;
    std::vector<uint32_t> targets;  // send: the devices this one sends to, in pair order
    int64_t source = -1;            // recv: the device this one receives from, or -1
    uint32_t data = 0;              // the buffer the data goes to or comes from
    bool at_done = false;           // recv: the transfer completes at a recv-done of the channel
  };

  /// Takes the `source`'s next transfer to this device on `channel` into `data` (zeros when
  /// `source` is -1).
  Status Receive(int64_t channel, int64_t source, const Buf& data, const std::string& what);

  const DeviceGrid grid_;
  const uint32_t device_;                                             // r·P + p
  Rendezvous* const rendezvous_;                                      // null for a one-device run
  std::unordered_map<const BundleRecord*, Plan> plans_;               // per collective, resolved at load
  std::unordered_map<const BundleRecord*, uint64_t> occurrences_;     // runs of each collective so far
  std::unordered_map<const BundleRecord*, TransferPlan> transfers_;   // per send/recv between devices
  std::map<std::pair<int64_t, uint32_t>, uint64_t> sent_, received_;  // per (channel, peer): transfers so far
  std::map<Rendezvous::MailKey, std::string> own_mail_;               // a one-device run's sends to itself
  std::set<int64_t> transfer_channels_, done_channels_;               // ScanTransfers
  std::map<int64_t, std::deque<int64_t>> pending_;  // per channel: the sources of recvs its recv-dones complete
};

}  // namespace nhlo
