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

std::string Banner(std::string_view what, std::string_view pass, int number, const char* state) {
  std::string b = "// ----- IR Dump " + std::string(what) + " " + std::string(pass) + " (#" + std::to_string(number);
  if (state) b += std::string(", ") + state;
  return b + ") -----\n";
}

// Writes dumps either to the log stream or to numbered files in a directory, named
// `MODULE.NNN-WHAT.hlo` (docs/cli.md, "Pass debugging").
class DumpSink {
 public:
  DumpSink(const std::string& dir, std::string module, std::ostream& log)
      : dir_(dir), module_(std::move(module)), log_(log) {}

  Status Emit(std::string_view file_stem, const std::string& banner, const std::string& body) {
    if (dir_.empty()) {
      log_ << banner << body;
      return OkStatus();
    }
    char number[16];
    std::snprintf(number, sizeof(number), ".%03d-", counter_++);
    std::filesystem::path path = std::filesystem::path(dir_) / (module_ + number + std::string(file_stem) + ".hlo");
    std::ofstream f(path, std::ios::binary);
    f << banner << body;
    if (!f) return Status::Error("cannot write dump file '" + path.string() + "'");
    return OkStatus();
  }
  std::string FileName(std::string_view what) const { return module_ + "." + std::string(what); }

 private:
  std::string dir_, module_;
  std::ostream& log_;
  int counter_ = 0;
};

// The module's name as a file name: bytes other than letters, digits, `.`, `_` and `-` become
// `_` (XLA's names may hold anything a string literal does).
std::string DumpFileStem(std::string_view name) {
  std::string stem(name.empty() ? "module" : name);
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return stem;
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

  std::unique_ptr<RE2> before_re, after_re;
  for (auto [pattern, re, flag] : {std::tuple{&options.print_before_regex, &before_re, "--print-before"},
                                   std::tuple{&options.print_after_regex, &after_re, "--print-after"}}) {
    if (pattern->empty()) continue;
    *re = std::make_unique<RE2>(*pattern, RE2::Quiet);
    if (!(*re)->ok())
      return Status::Error(std::string("invalid regular expression for ") + flag + ": " + (*re)->error());
  }
  std::unique_ptr<RE2> remarks_re;
  if (!options.remarks_regex.empty()) {
    remarks_re = std::make_unique<RE2>(options.remarks_regex, RE2::Quiet);
    if (!remarks_re->ok()) return Status::Error("invalid regular expression for --remarks: " + remarks_re->error());
  }
  std::vector<std::unique_ptr<RE2>> computation_res;
  for (const std::string& pattern : options.print_computation_regexes) {
    computation_res.push_back(std::make_unique<RE2>(pattern, RE2::Quiet));
    if (!computation_res.back()->ok())
      return Status::Error("invalid regular expression for --print-computation: " + computation_res.back()->error());
  }
  std::function<bool(const Computation&)> shown;
  if (!computation_res.empty()) {
    shown = [&computation_res](const Computation& comp) {
      for (const std::unique_ptr<RE2>& re : computation_res)
        if (RE2::FullMatch(comp.name, *re)) return true;
      return false;
    };
  }
  // What a dump shows: the whole module, or the computations --print-computation chose (with a
  // line saying so when none matches, so an empty dump is not mistaken for a lost one).
  auto dump_text = [&module, &shown]() {
    if (!shown) return PrintModule(module);
    std::string text = PrintModule(module, shown);
    bool any = std::any_of(module.computations.begin(), module.computations.end(),
                           [&shown](const ComputationPtr& c) { return !c->implied && shown(*c); });
    if (!any) text += "// no computation matches --print-computation or --filter-print-funcs\n";
    return text;
  };
  if (!options.dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.dump_dir, ec);
    if (ec) return Status::Error("cannot create dump directory '" + options.dump_dir + "': " + ec.message());
  }
  std::string dump_stem = DumpFileStem(module.name);
  if (!options.dump_dir.empty() && options.dump_names) {
    int seen = ++(*options.dump_names)[dump_stem];
    if (seen > 1) dump_stem += "." + std::to_string(seen);
  }
  DumpSink sink(options.dump_dir, dump_stem, log);
  using PrintChanged = PipelineOptions::PrintChanged;
  std::string previous;
  if (options.print_changed != PrintChanged::kOff) {
    previous = dump_text();
    if (!options.print_changed_quiet) NHLO_TRY(sink.Emit("initial", "// ----- IR Dump Initial -----\n", previous));
  }

  struct Timing {
    std::string_view name;
    int number;
    bool changed;
    double ms;
  };
  std::vector<Timing> timings;
  auto total_start = std::chrono::steady_clock::now();
  int64_t executions = 0;
  for (int index : selected) {
    const PassInfo& info = passes[index];
    int number = index + 1;
    ++executions;
    if (options.bisect_limit >= 0) {
      bool run = executions <= options.bisect_limit;
      log << "// BISECT: " << (run ? "running" : "NOT running") << " pass (" << executions << ") " << info.name << "\n";
      if (!run) continue;
    }
    bool print_before = options.print_before_all || (before_re && RE2::FullMatch(info.name, *before_re));
    bool print_after = options.print_after_all || (after_re && RE2::FullMatch(info.name, *after_re));
    std::string before_text;
    if (options.verify_each) before_text = PrintModule(module);
    if (print_before)
      NHLO_TRY(sink.Emit("before-" + std::string(info.name), Banner("Before", info.name, number, nullptr),
                         options.verify_each && !shown ? before_text : dump_text()));

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
    timings.push_back({info.name, number, *changed, ms});
    ReportRemarks(module, info.name, remarks, show_remarks, options.collected_remarks, log);
    const char* state = *changed ? "changed" : "unchanged";

    if (options.verify_each) {
      Status verified = VerifyModule(module);
      if (!verified.ok()) {
        Status s = Status::Error("verifier failed after pass '" + std::string(info.name) + "'");
        s.Append(verified);
        Diagnostic before;
        before.severity = Severity::kNote;
        before.message = "the module before pass '" + std::string(info.name) + "' (#" + std::to_string(number) +
                         "):\n" + before_text;
        s.diagnostics().push_back(std::move(before));
        return s;
      }
    }
    if (print_after)
      NHLO_TRY(sink.Emit("after-" + std::string(info.name), Banner("After", info.name, number, state), dump_text()));
    if (options.print_changed != PrintChanged::kOff) {
      // opt's -print-changed=quiet: no initial module, no banner for passes that changed nothing.
      const bool banners = options.dump_dir.empty() && !options.print_changed_quiet;
      if (!*changed) {
        if (banners) log << Banner("After", info.name, number, "unchanged");
        continue;
      }
      std::string now = dump_text();
      // The pass changed only what the dump leaves out: computations the filter hides, or metadata
      // with --print-metadata=false. An empty diff would say nothing; the banner says why.
      if (now == previous) {
        if (banners)
          log << Banner("After", info.name, number,
                        shown ? "changed, not in the shown computations" : "changed, not in the printed text");
        continue;
      }
      if (options.print_changed == PrintChanged::kText) {
        NHLO_TRY(sink.Emit("after-" + std::string(info.name), Banner("After", info.name, number, state), now));
      } else {
        std::string diff =
            UnifiedDiff(previous, now, "before " + std::string(info.name), "after " + std::string(info.name));
        // Diff lines start with ' ', '-', '+' or '@'; prefix them so the stream stays HLO comments.
        // cdiff colours removed lines red and added ones green, as opt's -print-changed=cdiff.
        std::string commented;
        size_t pos = 0;
        while (pos < diff.size()) {
          size_t eol = diff.find('\n', pos);
          std::string line = diff.substr(pos, eol - pos);
          const char* colour = !options.print_changed_color                        ? nullptr
                               : line.starts_with("-") && !line.starts_with("---") ? "\033[31m"
                               : line.starts_with("+") && !line.starts_with("+++") ? "\033[32m"
                                                                                   : nullptr;
          commented += colour ? "// " + std::string(colour) + line + "\033[0m\n" : "// " + line + "\n";
          pos = eol + 1;
        }
        NHLO_TRY(sink.Emit("diff-" + std::string(info.name), Banner("After", info.name, number, state), commented));
      }
      previous = std::move(now);
    }
  }
  double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - total_start).count();
  // The rest of the total is the instrumentation around the passes: it has its own row, so the
  // pass rows and it add up to the total (issue 30: printing time hid in the total).
  double passes_ms = 0;
  for (const Timing& t : timings) passes_ms += t.ms;
  const double instrumentation_ms = std::max(0.0, total_ms - passes_ms);
  // With --dump-dir the timing report is a file beside the dumps (time-passes.txt or .json);
  // otherwise it goes to the log like every dump.
  std::ostringstream report;
  if (options.time_passes == PipelineOptions::TimePasses::kText) {
    char line[256];
    report << "// ===-------------------------------------------------------------------------===\n"
           << "//                          Pass execution timing report\n"
           << "// ===-------------------------------------------------------------------------===\n";
    std::snprintf(line, sizeof(line), "// %12.3f ms  total\n", total_ms);
    report << line;
    for (const Timing& t : timings) {
      std::snprintf(line, sizeof(line), "// %12.3f ms  %5.1f%%  %s (#%d, %s)\n", t.ms,
                    total_ms > 0 ? 100.0 * t.ms / total_ms : 0.0, std::string(t.name).c_str(), t.number,
                    t.changed ? "changed" : "unchanged");
      report << line;
    }
    std::snprintf(line, sizeof(line), "// %12.3f ms  %5.1f%%  %s\n", instrumentation_ms,
                  total_ms > 0 ? 100.0 * instrumentation_ms / total_ms : 0.0,
                  "printing, diffs and verification (--print-*, --verify-each)");
    report << line;
  } else if (options.time_passes == PipelineOptions::TimePasses::kJson) {
    std::ostringstream json;
    json << "{\"total_ms\": " << total_ms << ", \"passes\": [";
    for (size_t i = 0; i < timings.size(); ++i) {
      const Timing& t = timings[i];
      json << (i ? ", " : "") << "{\"name\": \"" << t.name << "\", \"number\": " << t.number
           << ", \"changed\": " << (t.changed ? "true" : "false") << ", \"ms\": " << t.ms << "}";
    }
    json << "], \"instrumentation_ms\": " << instrumentation_ms << "}\n";
    report << json.str();
  }
  if (options.time_passes != PipelineOptions::TimePasses::kOff) {
    if (options.dump_dir.empty()) {
      log << report.str();
    } else {
      const char* ext = options.time_passes == PipelineOptions::TimePasses::kJson ? ".json" : ".txt";
      std::filesystem::path path =
          std::filesystem::path(options.dump_dir) / sink.FileName(std::string("time-passes") + ext);
      std::ofstream f(path, std::ios::binary);
      f << report.str();
      if (!f) return Status::Error("cannot write '" + path.string() + "'");
    }
  }
  return timings.size();
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
