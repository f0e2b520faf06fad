// SPDX-License-Identifier: Apache-2.0
// The reference interpreter. It executes the entry computation of a decoded bundle file —
// never the IR — with XLA's HloEvaluator semantics: low-precision floats computed in f32 and
// rounded once, integers wrapping, XLA's rules for division by zero, shifts and converts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/bundle_format.h"
#include "interp/devices.h"
#include "interp/value.h"
#include "support/status.h"

namespace nhlo {

/// Lowers a decoded program into the interpreter's executable form without running it (the
/// checks `Execute` makes before its first bundle); for tools and the bundle fuzzer.
Status LoadForExecution(const BundleProgram& program);
/// The same for every device of `grid`, one after another, with the options a run would have.
struct ExecuteOptions;
Status LoadForExecution(const BundleProgram& program, DeviceGrid grid, const ExecuteOptions& options);

/// The devices the program's module header asks for (replica_count × num_partitions).
DeviceGrid ProgramDevices(const BundleProgram& program);

/// How far a run has come, for progress reports.
struct ExecutionProgress {
  uint64_t steps = 0;            // bundles run (loop bodies and reducers count each run)
  uint64_t loop_iterations = 0;  // while-loop iterations, all loops together
};

/// Where a run failed: the innermost bundle's computation and result buffer names, and the
/// message without the "(bundle at ...)" suffix Execute's Status carries. A driver that holds
/// the module the bundle came from maps the names back to the HLO line.
struct ExecutionErrorSite {
  std::string computation, result, message;
};

/// Time per bundle (nhlo-run --profile). A bundle that calls computations (while, call,
/// conditional, reduce...) counts their time too, as XLA's HLO profiles do.
struct BundleProfile {
  std::string computation, result;  // where the bundle is: its computation and result buffer
  Opcode opcode = Opcode::kParameter;
  uint64_t runs = 0;
  double seconds = 0;
};
struct ExecutionProfile {
  std::vector<BundleProfile> bundles;  // in order of first run
};

/// Where send, recv, infeed and outfeed get their data: nowhere (they are refused at load), or
/// zeros received and sent data dropped (nhlo-run --host-data=zeros).
enum class HostData : uint8_t { kNone, kZeros };

/// Runs the entry computation on `args` (one per parameter, in parameter order).
struct ExecuteOptions {
  /// Run the fused groups planned at load tile by tile (docs/interpreter.md); false runs every
  /// bundle op by op (nhlo-run --fusion=off). The results are the same bytes either way.
  bool fusion = true;
  HostData host_data = HostData::kNone;
  /// Stop with an error after this many bundles have run (loop bodies and reducers count each
  /// time they run); 0 is no limit.
  uint64_t max_steps = 0;
  /// Called every 4096 bundles and every 256 loop iterations; may be empty.
  std::function<void(const ExecutionProgress&)> progress;
  /// Filled when the run fails at a bundle; may be null.
  ExecutionErrorSite* error_site = nullptr;
  /// Filled with the time each bundle took when not null; bundles are timed only then.
  ExecutionProfile* profile = nullptr;
  /// Bytes one kernel may allocate besides its operands and result (einsum's partial sums); a
  /// step that would need more is refused at load. nhlo-run gives what --max-memory leaves.
  uint64_t scratch_limit = UINT64_MAX;
  /// Called by each `nhlo.shadow_probe` custom call (nhlo-run --shadow) with the probe's name (its
  /// result buffer's) and views of its array operands (no copy: 100M-element operands are
  /// common), in the order the program runs them; device 0's probes only. May be empty: the
  /// probes then do nothing.
  std::function<void(std::string_view probe, std::span<const ArrayView> operands)> probe;
};
/// `args` are taken by value: callers that no longer need them move them in, so a run holds its
/// arguments once (nhlo-run's memory check counts them once). One device: every replica group
/// is {0}, replica-id and partition-id are 0.
Result<Value> Execute(const BundleProgram& program, std::vector<Value> args, const ExecuteOptions& options = {});

/// A program loaded once for one device: its bundles lowered into steps, its fused groups planned
/// and its constants unpacked. Run executes it as often as asked without lowering, planning or
/// checking the file again and reuses its arena (nhlo-run --iterations, nhlo-interp-bench). Every
/// run gives what Execute gives for the same arguments. `program` must outlive it.
class Executable {
 public:
  static Result<std::unique_ptr<Executable>> Load(const BundleProgram& program, const ExecuteOptions& options = {});
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  /// The options of the next runs (a profile to fill, --fusion, a probe...).
  void set_options(const ExecuteOptions& options);
  /// As Execute: `args` are taken over, one per entry parameter.
  Result<Value> Run(std::vector<Value> args);
  /// The same run on borrowed arguments, read in place (not copied): they must outlive the call.
  /// Repeated runs on the same inputs (nhlo-run --iterations, the benchmark) copy nothing.
  Result<Value> RunBorrowed(const std::vector<Value>& args);
  /// RunBorrowed without the result's copy: it stays in the executable's memory, as numpy's
  /// `out=` leaves it in the given array, until ReadResult copies it out or the next run
  /// replaces it. `args` must stay unchanged until then (a result may be an argument's bytes).
  /// Benchmarks time this: copying a 16 MB result out of the arena after every run left its
  /// dirty lines in the cache for the next run's kernel to write back.
  Status RunInPlace(const std::vector<Value>& args);
  /// The last successful run's result; an error when the last run failed or none ran.
  Result<Value> ReadResult() const;

 private:
  struct Impl;
  explicit Executable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Runs the program on `grid.count()` simulated devices, each on its own thread with its own
/// memory; `args[d]` are device d's arguments (d = replica · partitions + partition), and the
/// result holds each device's result in the same order. Collectives exchange data between the
/// devices as XLA defines it (docs/multi-device-semantics.md); results do not depend on thread
/// timing. A failure reports the lowest-numbered device that failed on its own, prefixed with
/// its place ("device 3 (replica 0, partition 3): ..."). Progress and profile are device 0's.
Result<std::vector<Value>> ExecuteOnDevices(const BundleProgram& program, DeviceGrid grid,
                                            std::vector<std::vector<Value>> args, const ExecuteOptions& options = {});

}  // namespace nhlo
