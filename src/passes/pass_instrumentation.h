// SPDX-License-Identifier: Apache-2.0
// Callbacks around each pass of a pipeline (LLVM's PassInstrumentation): bisection, printing
// before and after, the changed-only print and its diff, verification after each pass, and
// timing. The pass manager's loop only runs passes and calls these in order; each debugging
// option is one class here, built from PipelineOptions.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "support/status.h"

namespace nhlo {

/// One run of a pass in the pipeline.
struct PassRun {
  std::string_view name;
  int number = 0;         // its row in passes.def, from 1 (what the banners say)
  int64_t execution = 0;  // its place in this pipeline, from 1 (what --opt-bisect-limit counts)
};

class PassInstrumentation {
 public:
  virtual ~PassInstrumentation() = default;
  /// Whether the pass runs at all; false skips it (every instrumentation is asked).
  virtual bool ShouldRun(const PassRun&) { return true; }
  virtual Status BeforePass(const PassRun&, Module&) { return OkStatus(); }
  /// `ms`: the pass's own time.
  virtual Status AfterPass(const PassRun&, Module&, bool /*changed*/, double /*ms*/) { return OkStatus(); }
  /// After the last pass; `total_ms` is the whole pipeline, instrumentation included.
  virtual Status AfterPipeline(Module&, double /*total_ms*/) { return OkStatus(); }
};

/// The instrumentations `options` ask for, in the order they run around a pass: bisection,
/// verification, printing before/after, the changed-only print, timing. Dumps and reports go to
/// `log`, or to files in options.dump_dir. Errors: an invalid regular expression, a dump
/// directory that cannot be made.
Result<std::vector<std::unique_ptr<PassInstrumentation>>> MakeInstrumentations(Module& module,
                                                                               const PipelineOptions& options,
                                                                               std::ostream& log);

}  // namespace nhlo
