// SPDX-License-Identifier: Apache-2.0
// Checked runs of nhlo-run: the flags (--expected, --rtol, --atol, --ulp, --check-passes,
// --random-range), reading an expected value, and --check-passes, which compiles HLO text with
// and without the pass pipeline, runs both on the same arguments, compares them and, on a
// mismatch, bisects with --opt-bisect-limit to the first pass execution that changes the
// numbers. Formats: docs/cli.md, "Checked runs".
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/bundle_format.h"
#include "codegen/codegen.h"
#include "driver/common.h"
#include "driver/compare.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "passes/pass_manager.h"

namespace nhlo {

/// The checked-run flags as parsed from the command line.
struct CheckFlags {
  std::string expected;  ///< --expected: `@FILE` (XLA literal text in FILE) or the literal itself
  /// --rtol, --atol, --ulp as given (repeatable): `X` for every output, `NAME:X` for the output
  /// NAME (out0, out1_0... as --output names them).
  std::vector<std::string> rtol, atol, ulp;
  std::string compare_rule = "allclose";  ///< --compare-rule: allclose (numpy's) or xla
  std::string report = "all";             ///< --report: all or failures
  int64_t max_mismatches = 1;             ///< --max-mismatches: elements listed per failing output
  bool check_passes = false;
  bool isolate = false;  ///< --isolate: name the instruction the pipeline changes (driver/isolate.h)
  /// --random-range as given (repeatable): `LO,HI` for every parameter, `NAME:LO,HI` for the
  /// parameter NAME (its name in the entry computation, or argN as --save-args names it).
  std::vector<std::string> random_range;

  bool checking() const { return check_passes || isolate || !expected.empty(); }
  bool bounds_given() const { return !rtol.empty() || !atol.empty() || !ulp.empty(); }
  /// The bounds the flags give: for each output, DefaultTolerance() when none of --rtol, --atol,
  /// --ulp applies to it, else exactly the ones that do (its own `NAME:X` over the plain `X`; a
  /// missing rtol or atol is 0). A malformed value is an error naming the flag.
  Result<Tolerance> ToTolerance() const;
};

void AddCheckFlags(CLI::App& app, CheckFlags& flags);

/// What the checked-run flags resolve to.
struct RunChecks {
  std::optional<RandomRange> range;  ///< --random-range=LO,HI
  /// --random-range=NAME:LO,HI, in order given (a later one for the same name wins).
  std::vector<std::pair<std::string, RandomRange>> parameter_ranges;
  std::optional<Value> expected;  ///< --expected, read
  /// --expected=@x.npy or @x.npz: read after the run, typed and shaped by the result (a .npy of
  /// bf16 or f8 holds untyped bytes).
  std::string expected_tensor_file;
  Tolerance tolerance;
  ReportLines report_lines = ReportLines::kAll;  ///< --report
};

/// Checks the flags' combinations and reads --expected (from `in` for `@-`). Returns -1 to go
/// on, or the exit code to stop with after a message on `err` (2 misuse, 1 a bad expected value).
int ResolveChecks(const CheckFlags& flags, bool random, std::istream& in, RunChecks& checks, std::ostream& err,
                  uint64_t max_expected_bytes = kMaxInputBytes);

/// Reads --expected: `@FILE` is a file holding one XLA literal with its shape (a tuple literal
/// for a tuple result), anything else is the literal text itself.
Result<Value> LoadExpected(const std::string& spec, std::istream& in, uint64_t max_bytes = kMaxInputBytes);

/// `values` converted, leaf by leaf, to the element types of the entry parameters of `program`
/// where those differ (a pass such as upcast-all-to-fp32 changes the entry's signature); a
/// widening float convert is exact.
std::vector<Value> ArgumentsFor(const BundleProgram& program, std::vector<Value> values);

/// How nhlo-run runs a compiled program, so --check-passes runs exactly as a plain run does.
struct ProgramRunner {
  /// Decodes a bundle file and refuses it when its run would not fit in memory beside `held`
  /// bytes the caller keeps from an earlier run.
  std::function<Result<BundleProgram>(std::string bundle, uint64_t held)> load;
  /// The arguments (--arg texts or --random-args) for the program compiled without passes, one
  /// list per device it runs on (--devices, else the module header's counts), device 0's first.
  std::function<Result<std::vector<std::vector<Value>>>(const BundleProgram&)> make_arguments;
  /// Runs a loaded program on those devices: one device's result, or the tuple of every device's
  /// (as nhlo-run compares several devices' results with --expected). A failure at a bundle is
  /// reported at its line of `source`, the module the program was compiled from.
  std::function<Result<Value>(const BundleProgram&, std::vector<std::vector<Value>>, const Module& source)> run;
  /// Where `run` sends the program's shadow probes (ExecuteOptions::probe): nhlo-run --shadow
  /// sets it around its run; empty otherwise.
  using Probe = std::function<void(std::string_view, std::span<const ArrayView>)>;
  std::shared_ptr<Probe> probe = std::make_shared<Probe>();
};

/// The module compiled with --passes=none (the options' custom-call expansions kept), loaded,
/// and the arguments a plain run would make for it: the reference --check-passes and --isolate
/// compare the pipeline with.
struct ReferenceProgram {
  std::unique_ptr<Module> module;
  BundleProgram program;
  std::vector<std::vector<Value>> args;
};
Result<ReferenceProgram> CompileReference(const std::string& name, const std::string& text,
                                          const PipelineOptions& options, const CodegenOptions& codegen,
                                          const ProgramRunner& runner);

/// --check-passes on one module of HLO text. The pipeline's dumps go to `err` as in a plain run;
/// the report goes to `out`. Returns 0 when the outputs match, 1 on a mismatch or an error
/// (printed on `err`).
int CheckPasses(const std::string& name, const std::string& text, const PipelineOptions& options,
                const CodegenOptions& codegen, Tolerance tolerance, ReportLines lines, const ProgramRunner& runner,
                std::ostream& out, std::ostream& err);

}  // namespace nhlo
