// SPDX-License-Identifier: Apache-2.0
// The scan step (scan_step.cc), run through the machine's StepMachine interface.
#pragma once

#include "interp/step_machine.h"

namespace nhlo {

/// scan(inputs..., inits...): to_apply once per slice along `dimensions` (docs/interpreter.md).
Status RunScan(const Step& s, StepMachine& m);

}  // namespace nhlo
