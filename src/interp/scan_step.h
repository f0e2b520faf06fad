// SPDX-License-Identifier: Apache-2.0
// The scan step (scan_step.cc), run through the machine's StepMachine interface.
#pragma once

#include "interp/step_machine.h"

namespace nhlo {

/// scan(inputs..., inits...): to_apply once per slice along `dimensions` (docs/interpreter.md).
/// scan's checks against its records and its computation `f`, and its layout (ScanPlan,
/// kernel_plans.h); LowerBundle keeps it on a static step.
Result<ScanPlan> PlanScan(const ComputationRecord& comp, const ComputationRecord& f, const Step& s);
/// Runs scan `s`: its plan from load, or one made now.
Status RunScan(const Step& s, StepMachine& m);
Status RunPlannedScan(const Step& s, const ScanPlan& plan, const ComputationRecord& f, StepMachine& m);

}  // namespace nhlo
