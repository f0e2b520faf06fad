// SPDX-License-Identifier: Apache-2.0
#include "passes/pass.h"

#include <vector>

#include "ir/builder.h"
#include "ir/uses.h"

namespace nhlo {

Result<bool> RewriteMatches(Module& module, const std::function<Result<bool>(Instruction&)>& match,
                            const std::function<Status(Computation*, Instruction*)>& rewrite) {
  bool changed = false;
  for (auto& comp : module.computations) {
    std::vector<Instruction*> matches;
    for (Instruction* inst : comp->instructions) {
      NHLO_ASSIGN_OR_RETURN(bool matched, match(*inst));
      if (matched) matches.push_back(inst);
    }
    if (matches.empty()) continue;
    {
      // The rewrites find users through the index and remove instructions in O(1); the list
      // is compacted once when the scope ends.
      ScopedUseIndex uses(*comp);
      for (Instruction* inst : matches) NHLO_TRY(rewrite(comp.get(), inst));
    }
    SortTopologically(comp.get());
    changed = true;
  }
  return changed;
}

Result<bool> FixedPointPass::Run(Module& module) {
  inner_->set_remarks(remarks(), all_kinds());
  bool changed = false;
  for (iterations_ = 1;; ++iterations_) {
    NHLO_ASSIGN_OR_RETURN(bool changed_now, inner_->Run(module));
    if (!changed_now) return changed;
    changed = true;
    if (iterations_ == max_iterations_) break;
  }
  if (module.entry && module.entry->root && Wants(RemarkKind::kWarning))
    Emit(RemarkKind::kWarning, *module.entry->root, "NoFixedPoint",
         "the pass still changed the module after " + std::to_string(max_iterations_) + " runs; stopped there");
  return changed;
}

void Pass::Emit(RemarkKind kind, const Instruction& at, std::string name, std::string message) {
  if (!Wants(kind)) return;
  Remark r;
  r.kind = kind;
  r.name = std::move(name);
  r.computation = at.parent ? std::string(at.parent->name) : std::string();
  r.instruction = std::string(at.name);
  r.source_offset = at.source_offset;
  r.source_id = at.source_id;
  r.message = std::move(message);
  remarks_->push_back(std::move(r));
}

}  // namespace nhlo
