// SPDX-License-Identifier: Apache-2.0
#include "passes/pass_instrumentation.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/diff.h"

namespace nhlo {
namespace {

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
  std::ostream& log() const { return log_; }

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

// What a dump shows: the whole module, or the computations --print-computation chose (with a
// line saying so when none matches, so an empty dump is not mistaken for a lost one). Shared by
// the instrumentations that print, with the sink, so dump files are numbered in one sequence.
struct Dumps {
  Dumps(const std::string& dir, std::string stem, std::ostream& log) : sink(dir, std::move(stem), log) {}
  DumpSink sink;
  std::vector<std::unique_ptr<RE2>> computation_res;
  std::function<bool(const Computation&)> shown;

  std::string Text(Module& module) const {
    if (!shown) return PrintModule(module);
    std::string text = PrintModule(module, shown);
    bool any = std::any_of(module.computations.begin(), module.computations.end(),
                           [this](const ComputationPtr& c) { return !c->implied && shown(*c); });
    if (!any) text += "// no computation matches --print-computation or --filter-print-funcs\n";
    return text;
  }
};

// --opt-bisect-limit=N: runs the first N passes, and says of each whether it ran.
class Bisect final : public PassInstrumentation {
 public:
  Bisect(int64_t limit, std::ostream& log) : limit_(limit), log_(log) {}
  bool ShouldRun(const PassRun& run) override {
    bool runs = run.execution <= limit_;
    log_ << "// BISECT: " << (runs ? "running" : "NOT running") << " pass (" << run.execution << ") " << run.name
         << "\n";
    return runs;
  }

 private:
  int64_t limit_;
  std::ostream& log_;
};

// --verify-each: the verifier after every pass; a failure names the pass and shows the module
// as it was before it.
class VerifyEach final : public PassInstrumentation {
 public:
  Status BeforePass(const PassRun&, Module& module) override {
    before_ = PrintModule(module);
    return OkStatus();
  }
  Status AfterPass(const PassRun& run, Module& module, bool, double) override {
    Status verified = VerifyModule(module);
    if (verified.ok()) return OkStatus();
    Status s = Status::Error("verifier failed after pass '" + std::string(run.name) + "'");
    s.Append(verified);
    Diagnostic before;
    before.severity = Severity::kNote;
    before.message =
        "the module before pass '" + std::string(run.name) + "' (#" + std::to_string(run.number) + "):\n" + before_;
    s.diagnostics().push_back(std::move(before));
    return s;
  }

 private:
  std::string before_;
};

// --print-before(-all), --print-after(-all).
class PrintAround final : public PassInstrumentation {
 public:
  PrintAround(const PipelineOptions& options, std::unique_ptr<RE2> before, std::unique_ptr<RE2> after,
              std::shared_ptr<Dumps> dumps)
      : options_(options), before_(std::move(before)), after_(std::move(after)), dumps_(std::move(dumps)) {}
  Status BeforePass(const PassRun& run, Module& module) override {
    if (!options_.print_before_all && !(before_ && RE2::FullMatch(run.name, *before_))) return OkStatus();
    return dumps_->sink.Emit("before-" + std::string(run.name), Banner("Before", run.name, run.number, nullptr),
                             dumps_->Text(module));
  }
  Status AfterPass(const PassRun& run, Module& module, bool changed, double) override {
    if (!options_.print_after_all && !(after_ && RE2::FullMatch(run.name, *after_))) return OkStatus();
    return dumps_->sink.Emit("after-" + std::string(run.name),
                             Banner("After", run.name, run.number, changed ? "changed" : "unchanged"),
                             dumps_->Text(module));
  }

 private:
  const PipelineOptions& options_;
  std::unique_ptr<RE2> before_, after_;
  std::shared_ptr<Dumps> dumps_;
};

// --print-changed: the module after each pass that changed it (or the diff; cdiff in colour).
class PrintChanged final : public PassInstrumentation {
 public:
  PrintChanged(const PipelineOptions& options, std::shared_ptr<Dumps> dumps)
      : options_(options), dumps_(std::move(dumps)) {}
  Status Start(Module& module) {
    previous_ = dumps_->Text(module);
    if (options_.print_changed_quiet) return OkStatus();
    return dumps_->sink.Emit("initial", "// ----- IR Dump Initial -----\n", previous_);
  }
  Status AfterPass(const PassRun& run, Module& module, bool changed, double) override {
    // opt's -print-changed=quiet: no initial module, no banner for passes that changed nothing.
    const bool banners = options_.dump_dir.empty() && !options_.print_changed_quiet;
    std::ostream& log = dumps_->sink.log();
    if (!changed) {
      if (banners) log << Banner("After", run.name, run.number, "unchanged");
      return OkStatus();
    }
    std::string now = dumps_->Text(module);
    // The pass changed only what the dump leaves out: computations the filter hides, or metadata
    // with --print-metadata=false. An empty diff would say nothing; the banner says why.
    if (now == previous_) {
      if (banners)
        log << Banner("After", run.name, run.number,
                      dumps_->shown ? "changed, not in the shown computations" : "changed, not in the printed text");
      return OkStatus();
    }
    const std::string banner = Banner("After", run.name, run.number, "changed");
    if (options_.print_changed == PipelineOptions::PrintChanged::kText) {
      NHLO_TRY(dumps_->sink.Emit("after-" + std::string(run.name), banner, now));
    } else {
      std::string diff =
          UnifiedDiff(previous_, now, "before " + std::string(run.name), "after " + std::string(run.name));
      // Diff lines start with ' ', '-', '+' or '@'; prefix them so the stream stays HLO comments.
      // cdiff colours removed lines red and added ones green, as opt's -print-changed=cdiff.
      std::string commented;
      size_t pos = 0;
      while (pos < diff.size()) {
        size_t eol = diff.find('\n', pos);
        std::string line = diff.substr(pos, eol - pos);
        const char* colour = !options_.print_changed_color                       ? nullptr
                             : line.starts_with("-") && !line.starts_with("---") ? "\033[31m"
                             : line.starts_with("+") && !line.starts_with("+++") ? "\033[32m"
                                                                                 : nullptr;
        commented += colour ? "// " + std::string(colour) + line + "\033[0m\n" : "// " + line + "\n";
        pos = eol + 1;
      }
      NHLO_TRY(dumps_->sink.Emit("diff-" + std::string(run.name), banner, commented));
    }
    previous_ = std::move(now);
    return OkStatus();
  }

 private:
  const PipelineOptions& options_;
  std::shared_ptr<Dumps> dumps_;
  std::string previous_;
};

// --time-passes: each pass's time, and the rest of the total as the instrumentation's row.
class TimePasses final : public PassInstrumentation {
 public:
  TimePasses(const PipelineOptions& options, std::shared_ptr<Dumps> dumps)
      : options_(options), dumps_(std::move(dumps)) {}
  Status AfterPass(const PassRun& run, Module&, bool changed, double ms) override {
    timings_.push_back({run.name, run.number, changed, ms});
    return OkStatus();
  }
  Status AfterPipeline(Module&, double total_ms) override;

 private:
  struct Timing {
    std::string_view name;
    int number;
    bool changed;
    double ms;
  };
  const PipelineOptions& options_;
  std::shared_ptr<Dumps> dumps_;
  std::vector<Timing> timings_;
};

Status TimePasses::AfterPipeline(Module&, double total_ms) {
  // The rest of the total is the instrumentation around the passes: it has its own row, so the
  // pass rows and it add up to the total (issue 30: printing time hid in the total).
  double passes_ms = 0;
  for (const Timing& t : timings_) passes_ms += t.ms;
  const double instrumentation_ms = std::max(0.0, total_ms - passes_ms);
  // With --dump-dir the timing report is a file beside the dumps (time-passes.txt or .json);
  // otherwise it goes to the log like every dump.
  std::ostringstream report;
  if (options_.time_passes == PipelineOptions::TimePasses::kText) {
    char line[256];
    report << "// ===-------------------------------------------------------------------------===\n"
           << "//                          Pass execution timing report\n"
           << "// ===-------------------------------------------------------------------------===\n";
    std::snprintf(line, sizeof(line), "// %12.3f ms  total\n", total_ms);
    report << line;
    for (const Timing& t : timings_) {
      std::snprintf(line, sizeof(line), "// %12.3f ms  %5.1f%%  %s (#%d, %s)\n", t.ms,
                    total_ms > 0 ? 100.0 * t.ms / total_ms : 0.0, std::string(t.name).c_str(), t.number,
                    t.changed ? "changed" : "unchanged");
      report << line;
    }
    std::snprintf(line, sizeof(line), "// %12.3f ms  %5.1f%%  %s\n", instrumentation_ms,
                  total_ms > 0 ? 100.0 * instrumentation_ms / total_ms : 0.0,
                  "printing, diffs and verification (--print-*, --verify-each)");
    report << line;
  } else if (options_.time_passes == PipelineOptions::TimePasses::kJson) {
    std::ostringstream json;
    json << "{\"total_ms\": " << total_ms << ", \"passes\": [";
    for (size_t i = 0; i < timings_.size(); ++i) {
      const Timing& t = timings_[i];
      json << (i ? ", " : "") << "{\"name\": \"" << t.name << "\", \"number\": " << t.number
           << ", \"changed\": " << (t.changed ? "true" : "false") << ", \"ms\": " << t.ms << "}";
    }
    json << "], \"instrumentation_ms\": " << instrumentation_ms << "}\n";
    report << json.str();
  }
  if (options_.time_passes != PipelineOptions::TimePasses::kOff) {
    if (options_.dump_dir.empty()) {
      dumps_->sink.log() << report.str();
    } else {
      const char* ext = options_.time_passes == PipelineOptions::TimePasses::kJson ? ".json" : ".txt";
      std::filesystem::path path =
          std::filesystem::path(options_.dump_dir) / dumps_->sink.FileName(std::string("time-passes") + ext);
      std::ofstream f(path, std::ios::binary);
      f << report.str();
      if (!f) return Status::Error("cannot write '" + path.string() + "'");
    }
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<std::unique_ptr<PassInstrumentation>>> MakeInstrumentations(Module& module,
                                                                               const PipelineOptions& options,
                                                                               std::ostream& log) {
  std::unique_ptr<RE2> before_re, after_re;
  for (auto [pattern, re, flag] : {std::tuple{&options.print_before_regex, &before_re, "--print-before"},
                                   std::tuple{&options.print_after_regex, &after_re, "--print-after"}}) {
    if (pattern->empty()) continue;
    *re = std::make_unique<RE2>(*pattern, RE2::Quiet);
    if (!(*re)->ok())
      return Status::Error(std::string("invalid regular expression for ") + flag + ": " + (*re)->error());
  }
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
  auto dumps = std::make_shared<Dumps>(options.dump_dir, dump_stem, log);
  for (const std::string& pattern : options.print_computation_regexes) {
    dumps->computation_res.push_back(std::make_unique<RE2>(pattern, RE2::Quiet));
    if (!dumps->computation_res.back()->ok())
      return Status::Error("invalid regular expression for --print-computation: " +
                           dumps->computation_res.back()->error());
  }
  if (!dumps->computation_res.empty()) {
    dumps->shown = [res = &dumps->computation_res](const Computation& comp) {
      for (const std::unique_ptr<RE2>& re : *res)
        if (RE2::FullMatch(comp.name, *re)) return true;
      return false;
    };
  }

  std::vector<std::unique_ptr<PassInstrumentation>> out;
  if (options.bisect_limit >= 0) out.push_back(std::make_unique<Bisect>(options.bisect_limit, log));
  if (options.verify_each) out.push_back(std::make_unique<VerifyEach>());
  if (options.print_before_all || options.print_after_all || before_re || after_re)
    out.push_back(std::make_unique<PrintAround>(options, std::move(before_re), std::move(after_re), dumps));
  if (options.print_changed != PipelineOptions::PrintChanged::kOff) {
    auto changed = std::make_unique<PrintChanged>(options, dumps);
    NHLO_TRY(changed->Start(module));
    out.push_back(std::move(changed));
  }
  if (options.time_passes != PipelineOptions::TimePasses::kOff)
    out.push_back(std::make_unique<TimePasses>(options, dumps));
  return out;
}

}  // namespace nhlo
