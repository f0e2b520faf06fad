// SPDX-License-Identifier: Apache-2.0
// Runs the registry's passes in order with the debugging options users know from LLVM opt and
// XLA: print before/after (all or by regex), print only what changed (or its diff), dump files,
// timing, verify-each and bisection. Dumps go to a stream the caller owns; every banner is an
// HLO comment so a dump stream stays parseable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/custom_calls.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "passes/remarks.h"
#include "support/status.h"

namespace nhlo {

struct PipelineOptions {
  /// --print-style: how the module prints in dumps and --emit=hlo (set on the module once parsed).
  PrintStyleName print_style = PrintStyleName::kLong;
  /// --passes=a,b,a: exactly these, in this order, repeats included. nullopt: the default
  /// pipeline (registration order).
  std::optional<std::vector<std::string>> passes;
  std::vector<std::string> enable;   // --enable-pass
  std::vector<std::string> disable;  // --disable-pass
  bool print_before_all = false;
  bool print_after_all = false;
  std::string print_before_regex;  // --print-before=REGEX (re2, full match on the pass name)
  std::string print_after_regex;   // --print-after=REGEX
  /// --print-computation=REGEX (re2, full match) and --filter-print-funcs=NAME,...: dumps show
  /// only the computations that match one of these; empty: all of them.
  std::vector<std::string> print_computation_regexes;
  /// --print-metadata=false: instructions print without `metadata={...}` (dumps and --emit=hlo).
  bool print_metadata = true;
  enum class PrintChanged { kOff, kText, kDiff };
  PrintChanged print_changed = PrintChanged::kOff;
  bool print_changed_quiet = false;  // =quiet, =diff-quiet: no initial module, no unchanged banners
  bool print_changed_color = false;  // =cdiff: removed lines red, added lines green (ANSI)
  std::string dump_dir;              // --dump-dir: one numbered file per dump instead of the stream
  /// Module names that have dumped into dump_dir in this invocation, and how often: a second
  /// module of the same name (--split-input-file) gets `NAME.2.NNN-...` files, so no dump of one
  /// invocation replaces another. Shared by the copies of one invocation's options; may be null.
  std::shared_ptr<std::map<std::string, int>> dump_names;
  enum class TimePasses { kOff, kText, kJson };
  TimePasses time_passes = TimePasses::kOff;
  /// --remarks=REGEX (re2, full match on the pass name): print the remarks of those passes, as
  /// clang's -Rpass=REGEX. Warnings print whatever it is.
  std::string remarks_regex;
  /// Every remark of the pipeline (all passes, all kinds) is appended here when not null
  /// (--remarks-file: the driver writes them as YAML).
  std::vector<Remark>* collected_remarks = nullptr;
  bool verify_each = false;
  int64_t bisect_limit = -1;  // --opt-bisect-limit; -1 = no limit
  /// --strict: forms of the text today's XLA no longer writes (Module::old_forms) are errors
  /// instead of warnings.
  bool strict = false;
  /// --custom-call=TARGET=@FILE: expansions the compiled module's custom calls of TARGET run
  /// (bound after the pipeline, before codegen; driver/custom_call_expansions.h).
  std::vector<CustomCallExpansion> custom_calls;
};

/// Resolves the options to registry indices in the order the passes run: --passes as written
/// (repeats included; --enable-pass appends one it lacks), else the registration order;
/// --disable-pass removes every run of a pass. Unknown names (with a suggestion), and a pass
/// both enabled and disabled, are errors.
Result<std::vector<int>> SelectPasses(const PipelineOptions& options);

/// Runs the selected passes over `module`. Dumps, timing and bisect lines go to `log`. Returns
/// how many passes ran (0: the module is as it was).
Result<size_t> RunPipeline(Module& module, const PipelineOptions& options, std::ostream& log);

/// `--list-passes` text: one line per pass with its order, name, default and description.
std::string ListPassesText();

}  // namespace nhlo
