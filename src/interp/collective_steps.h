// SPDX-License-Identifier: Apache-2.0
// The collectives of one simulated device: the group each collective meets, resolved when the
// program is loaded, and the step that meets it (docs/multi-device-semantics.md). The machine
// running the step lends its buffers through StepMachine.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "interp/devices.h"
#include "interp/kernels.h"
#include "interp/step_machine.h"

namespace nhlo {

class CollectiveSteps {
 public:
  /// One device of `grid`; `rendezvous` is shared by the devices of a run, null for one device.
  CollectiveSteps(DeviceGrid grid, uint32_t device, Rendezvous* rendezvous);

  /// At load: the group this device meets at collective `s` of `comp`, and the shapes that
  /// group size implies.
  Status Load(const ComputationRecord& comp, const Step& s);
  /// Runs collective `s` (and partition-id, replica-id, the -done ops).
  Status Run(const Step& s, StepMachine& m);

 private:
  Status CopyLeaf(StepMachine& m, const BundleRecord& b, uint32_t from, uint32_t to);
  Status Exchange(const Step& s, StepMachine& m);
  Status Combine(const Step& s, const CollectiveGroup& g, const MemberLeaves& members, const std::vector<Buf>& out,
                 StepMachine& m);
  Status Reduce(const Step& s, const MemberLeaves& members, const std::vector<Buf>& out, StepMachine& m);

  const DeviceGrid grid_;
  const uint32_t device_;                                            // r·P + p
  Rendezvous* const rendezvous_;                                     // null for a one-device run
  std::unordered_map<const BundleRecord*, CollectiveGroup> groups_;  // per collective, resolved at load
  std::unordered_map<const BundleRecord*, uint64_t> occurrences_;    // runs of each collective so far
};

}  // namespace nhlo
