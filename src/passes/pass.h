// SPDX-License-Identifier: Apache-2.0
// The pass interface and the registry. A pass rewrites a module in place and reports whether
// it changed anything; errors are about the input (e.g. a contract a custom call breaks).
// Passes never print and never exit.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "passes/remarks.h"
#include "support/status.h"

namespace nhlo {

class Pass {
 public:
  virtual ~Pass() = default;
  /// Returns true if the module changed.
  virtual Result<bool> Run(Module& module) = 0;
  /// Where Emit puts remarks (the pass manager's list; null: none are kept). Warnings are kept
  /// always; the other kinds only with `all_kinds` (--remarks for this pass, or --remarks-file),
  /// so a default compile does not locate a remark for every instruction dce removes.
  void set_remarks(std::vector<Remark>* remarks, bool all_kinds) {
    remarks_ = remarks;
    all_kinds_ = all_kinds;
  }

 protected:
  /// Whether a remark of `kind` would be kept: a pass may skip composing the message otherwise.
  bool Wants(RemarkKind kind) const { return remarks_ && (all_kinds_ || kind == RemarkKind::kWarning); }
  /// A remark about `at` (passes/remarks.h): what the pass did, declined, found, or a warning
  /// that the rewrite may change this module's results.
  void Emit(RemarkKind kind, const Instruction& at, std::string name, std::string message);
  std::vector<Remark>* remarks() const { return remarks_; }
  bool all_kinds() const { return all_kinds_; }

 private:
  std::vector<Remark>* remarks_ = nullptr;
  bool all_kinds_ = false;
};

/// Runs a pass until it reports no change (XLA's HloPassFix): for rewrites that expose more of
/// themselves. Stops after `max_iterations` runs that all changed something, as XLA's loop does
/// (kIterationLimit 25), with a warning remark; the module is then as the last run left it.
class FixedPointPass final : public Pass {
 public:
  explicit FixedPointPass(std::unique_ptr<Pass> inner, int max_iterations = 25)
      : inner_(std::move(inner)), max_iterations_(max_iterations) {}
  Result<bool> Run(Module& module) override;
  /// How many times the last Run ran the inner pass.
  int iterations() const { return iterations_; }

 private:
  std::unique_ptr<Pass> inner_;
  int max_iterations_;
  int iterations_ = 0;
};

/// The loop most passes share. In each computation it collects the instructions `match`
/// accepts (all of them first, so rewriting never disturbs the walk), hands each to `rewrite`,
/// and puts the computation back in program order if anything was rewritten. Returns whether
/// anything was, or the first error either callback reports.
Result<bool> RewriteMatches(Module& module, const std::function<Result<bool>(Instruction&)>& match,
                            const std::function<Status(Computation*, Instruction*)>& rewrite);

/// One row of passes.def.
struct PassInfo {
  std::string_view name;
  std::unique_ptr<Pass> (*create)();
  bool default_on;
  std::string_view description;
};

#define NHLO_PASS(name, factory, default_on, description) std::unique_ptr<Pass> factory();
#include "passes/passes.def"
#undef NHLO_PASS

/// Every registered pass, in registration (= pipeline) order.
const PassInfo* RegisteredPasses(size_t* count);
/// Index of the pass named `name` in RegisteredPasses, or -1.
int FindPass(std::string_view name);

}  // namespace nhlo
