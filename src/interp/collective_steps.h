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

  /// At load: the group this device meets at collective `s` of `comp`, the shapes that group
  /// size implies, the buffers it writes and, for a reduction, each leaf's reducer span (or
  /// whether its reducer computation in `p` fits); the run then decides nothing.
  Status Load(const BundleProgram& p, const ComputationRecord& comp, const Step& s);
  /// Runs collective `s` (and partition-id, replica-id, the -done ops).
  Status Run(const Step& s, StepMachine& m);

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

  const DeviceGrid grid_;
  const uint32_t device_;                                          // r·P + p
  Rendezvous* const rendezvous_;                                   // null for a one-device run
  std::unordered_map<const BundleRecord*, Plan> plans_;            // per collective, resolved at load
  std::unordered_map<const BundleRecord*, uint64_t> occurrences_;  // runs of each collective so far
};

}  // namespace nhlo
