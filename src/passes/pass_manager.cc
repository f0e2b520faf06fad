// SPDX-License-Identifier: Apache-2.0
#include "passes/pass_manager.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass.h"
#include "passes/pass_instrumentation.h"
#include "support/diff.h"
#include "support/suggest.h"

namespace nhlo {
namespace {

std::vector<std::string> SplitCommaList(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    size_t pos = 0;
    while (pos <= item.size()) {
      size_t comma = item.find(',', pos);
      if (comma == std::string::npos) comma = item.size();
      if (comma > pos) out.push_back(item.substr(pos, comma - pos));
      pos = comma + 1;
    }
  }
  return out;
}

// Each remark located in its source; printed when it is a warning or its pass matches
// --remarks (clang's style: `file:line:col: remark: ... [-Rpass=NAME]`), and collected for
// --remarks-file.
void ReportRemarks(const Module& module, std::string_view pass, std::vector<Remark>& remarks, bool shown,
                   std::vector<Remark>* collected, std::ostream& log) {
  for (Remark& r : remarks) {
    r.pass = pass;
    std::optional<Diagnostic> at;
    if (r.source_offset != Instruction::kNoLocation && r.source_id < module.sources.size()) {
      const std::string flag = r.kind == RemarkKind::kApplied    ? "-Rpass"
                               : r.kind == RemarkKind::kMissed   ? "-Rpass-missed"
                               : r.kind == RemarkKind::kAnalysis ? "-Rpass-analysis"
                                                                 : "";
      const std::string suffix =
          flag.empty() ? " [" + std::string(pass) + "]" : " [" + flag + "=" + std::string(pass) + "]";
      at = module.sources[r.source_id]->At(r.source_offset, r.message + suffix,
                                           r.kind == RemarkKind::kWarning ? Severity::kWarning : Severity::kRemark);
      r.file = at->file;
      r.line = static_cast<uint32_t>(at->line);
      r.column = static_cast<uint32_t>(at->col);
    }
    if (r.kind == RemarkKind::kWarning || shown) {
      if (at)
        log << FormatDiagnostic(*at);
      else
        log << (r.kind == RemarkKind::kWarning ? "warning: " : "remark: ") << r.message << " [" << pass << "]\n";
    }
    if (collected) collected->push_back(r);
  }
}

}  // namespace

Result<std::vector<int>> SelectPasses(const PipelineOptions& options) {
  size_t count;
  const PassInfo* passes = RegisteredPasses(&count);
  auto check = [&](const std::vector<std::string>& names) -> Status {
    for (const std::string& n : names) {
      if (n == "none" || FindPass(n) >= 0) continue;
      std::vector<std::string> known;
      for (size_t i = 0; i < count; ++i) known.emplace_back(passes[i].name);
      std::string hint = ClosestName(n, known);
      return Status::Error("unknown pass '" + n + "' (see --list-passes)" +
                           (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
    }
    return OkStatus();
  };
  std::vector<std::string> enable = SplitCommaList(options.enable);
  std::vector<std::string> disable = SplitCommaList(options.disable);
  NHLO_TRY(check(enable));
  NHLO_TRY(check(disable));
  for (const std::string& n : enable)
    for (const std::string& d : disable)
      if (n == d) return Status::Error("pass '" + n + "' is both enabled and disabled");
  std::vector<int> selected;
  if (options.passes) {
    // The pipeline as written, as opt's -passes runs it: in this order, repeats included.
    // --enable-pass appends a pass the list lacks; --disable-pass removes every run of one.
    std::vector<std::string> chosen = SplitCommaList(*options.passes);
    NHLO_TRY(check(chosen));
    for (const std::string& n : chosen)
      if (n != "none") selected.push_back(FindPass(n));
    for (const std::string& n : enable)
      if (n != "none" && std::find(selected.begin(), selected.end(), FindPass(n)) == selected.end())
        selected.push_back(FindPass(n));
  } else {
    // The default pipeline: registration order, each pass once.
    std::vector<bool> on(count);
    for (size_t i = 0; i < count; ++i) on[i] = passes[i].default_on;
    for (const std::string& n : enable)
      if (n != "none") on[FindPass(n)] = true;
    for (size_t i = 0; i < count; ++i)
      if (on[i]) selected.push_back(static_cast<int>(i));
  }
  for (const std::string& n : disable)
    if (n != "none") std::erase(selected, FindPass(n));
  return selected;
}

Result<size_t> RunPipeline(Module& module, const PipelineOptions& options, std::ostream& log) {
  NHLO_ASSIGN_OR_RETURN(std::vector<int> selected, SelectPasses(options));
  size_t count;
  const PassInfo* passes = RegisteredPasses(&count);
  std::unique_ptr<RE2> remarks_re;
  if (!options.remarks_regex.empty()) {
    remarks_re = std::make_unique<RE2>(options.remarks_regex, RE2::Quiet);
    if (!remarks_re->ok()) return Status::Error("invalid regular expression for --remarks: " + remarks_re->error());
  }
  // Everything around the passes (bisect, verify, print, diff, timing) is an instrumentation
  // (passes/pass_instrumentation.h); this loop only runs passes and calls them.
  NHLO_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<PassInstrumentation>> instrumentations,
                        MakeInstrumentations(module, options, log));
  size_t ran = 0;
  auto total_start = std::chrono::steady_clock::now();
  int64_t executions = 0;
  for (int index : selected) {
    const PassInfo& info = passes[index];
    const PassRun run{info.name, index + 1, ++executions};
    bool runs = true;
    for (auto& instrumentation : instrumentations) runs = instrumentation->ShouldRun(run) && runs;
    if (!runs) continue;
    for (auto& instrumentation : instrumentations) NHLO_TRY(instrumentation->BeforePass(run, module));

    std::unique_ptr<Pass> pass = info.create();
    std::vector<Remark> remarks;
    const bool show_remarks = remarks_re && RE2::FullMatch(info.name, *remarks_re);
    pass->set_remarks(&remarks, show_remarks || options.collected_remarks);
    auto start = std::chrono::steady_clock::now();
    Result<bool> changed = pass->Run(module);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!changed.ok()) {
      Status s = changed.status();
      for (Diagnostic& d : s.diagnostics()) d.message = "in pass '" + std::string(info.name) + "': " + d.message;
      return s;
    }
    ++ran;
    ReportRemarks(module, info.name, remarks, show_remarks, options.collected_remarks, log);
    for (auto& instrumentation : instrumentations) NHLO_TRY(instrumentation->AfterPass(run, module, *changed, ms));
  }
  double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - total_start).count();
  for (auto& instrumentation : instrumentations) NHLO_TRY(instrumentation->AfterPipeline(module, total_ms));
  return ran;
}

std::string ListPassesText() {
  size_t count;
  const PassInfo* passes = RegisteredPasses(&count);
  std::string out;
  size_t width = 0;
  for (size_t i = 0; i < count; ++i) width = std::max(width, passes[i].name.size());
  for (size_t i = 0; i < count; ++i) {
    char line[512];
    std::snprintf(line, sizeof(line), "%2zu  %-*s  %-3s  %s\n", i + 1, static_cast<int>(width),
                  std::string(passes[i].name).c_str(), passes[i].default_on ? "on" : "off",
                  std::string(passes[i].description).c_str());
    out += line;
  }
  return out;
}

}  // namespace nhlo
