// SPDX-License-Identifier: Apache-2.0
// `nhlo-run --isolate`: which instruction makes the pass pipeline change the numbers. The module
// is compiled with the pipeline and with --passes=none, both run on the same arguments with every
// instruction of the entry computation kept as an extra output, and each instruction present in
// both is compared. An instruction whose result differs while every operand agrees differs on
// equal inputs: run alone on the values the reference run gave its operands it gives another
// result, which is what run_hlo_module's per-instruction isolation finds. The first of those in
// the module's order is named with its source line (docs/cli.md, "Checked runs").
#pragma once

#include <iosfwd>
#include <string>

#include "codegen/codegen.h"
#include "driver/check_passes.h"
#include "driver/compare.h"
#include "passes/pass_manager.h"

namespace nhlo {

/// --isolate on one module of HLO text. The pipeline's dumps go to `err` as in a plain run; the
/// report goes to `out`. Returns 0 when every compared instruction agrees, 1 when one differs or
/// on an error (printed on `err`).
int Isolate(const std::string& name, const std::string& text, const PipelineOptions& options,
            const CodegenOptions& codegen, Tolerance tolerance, const ProgramRunner& runner, std::ostream& out,
            std::ostream& err);

}  // namespace nhlo
