// SPDX-License-Identifier: Apache-2.0
// nhlo-corpus-check DIR...: for every .hlo file under DIR (--glob=PATTERNS for others, e.g.
// '*.txt' for an XLA dump folder; the files left out are counted by extension), split at `// -----` lines, then
// parse, print, re-parse, print again and verify; a file passes when every piece parses,
// prints identically the second time and verifies. Failures are listed with the first
// diagnostic (verifier rejections marked "verifier:"); the last line is "N passed, N failed".
// Every module that verifies is also compiled to a bundle file: the summary counts the ones the
// format refuses and gives the arena that buffer assignment chose beside its lower bound (the
// most bytes live at any point of the schedule); --arena prints both for every module.
// --run also runs every module as `nhlo-run --random-args=1` does, each in a child process of its
// own under a time limit (--timeout=S, default 10) and a memory limit (--max-memory=SIZE,
// default 4G), and counts the modules that ran, were refused (grouped by reason), failed or
// timed out, and lists the ten slowest runs (--threads=N for the runs, default 1).
// --fusion-check runs each module twice, as nhlo-run runs it and with --fusion=off
// --buffer-aliasing=off (op by op, every value its own bytes), writing its outputs with
// --output, and fails the modules whose two .npz files differ by a byte.
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

#include "child_run.h"
#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/common.h"
#include "driver/driver.h"
#include "interp/frame_checks.h"
#include "interp/interp.h"
#include "ir/custom_calls.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "parser/parser.h"
#include "support/diff.h"

namespace fs = std::filesystem;

namespace {

std::string FirstLines(const std::string& text, int n) {
  size_t pos = 0;
  for (int i = 0; i < n && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? text : text.substr(0, pos);
}

struct ArenaTotals {
  int compiled = 0;
  int rejected = 0;
  uint64_t arena = 0;
  uint64_t lower_bound = 0;
  uint64_t aliased_bound = 0;  // the lower bound with every XLA alias taken (codegen/alias_bound.h)
  uint64_t unshared = 0;
  uint64_t largest = 0;
  uint64_t largest_unshared = 0;
  double worst_ratio = 0;
  std::string worst;
  bool print_each = false;
  uint64_t placement_errors = 0;
  uint64_t unknown_custom_calls = 0;  // modules holding a custom call nhlo cannot run
};

// Compiles a verified module to a bundle file and records its arena against the lower bound.
void CheckBundle(const std::string& name, const nhlo::Module& m, ArenaTotals& t) {
  nhlo::ArenaReport report;
  // The format and buffer assignment are measured on every module; custom calls the interpreter
  // cannot run are counted apart (nhlo-compile refuses them by default).
  nhlo::CodegenOptions options;
  options.refuse_unknown_custom_calls = false;
  auto holds_unknown_target = [&m] {
    for (const auto& comp : m.computations)
      for (const nhlo::Instruction* inst : comp->instructions)
        if (inst->opcode == nhlo::Opcode::kCustomCall && !nhlo::CheckCustomCallExecutable(*inst).ok()) return true;
    return false;
  };
  t.unknown_custom_calls += holds_unknown_target();
  auto bytes = nhlo::EmitBundleFile(m, options, &report);
  if (!bytes.ok()) {
    ++t.rejected;
    std::cout << "BUNDLE " << name << "\n" << FirstLines(bytes.status().ToString(), 3);
    return;
  }
  ++t.compiled;
  // What the interpreter's loader checks of buffer placement holds for every module nhlo writes.
  auto program = nhlo::ReadBundleFile(std::move(*bytes), name);
  if (!program.ok()) {
    ++t.placement_errors;
    std::cout << "READ " << name << "\n" << FirstLines(program.status().ToString(), 3);
  } else {
    std::vector<uint64_t> frame_alignment;
    for (const nhlo::ComputationRecord& comp : program->computations) {
      nhlo::Status s = nhlo::CheckFrameAlignment(comp);
      frame_alignment.push_back(nhlo::FrameAlignment(comp));
      for (const nhlo::BundleRecord& b : comp.bundles) {
        if (s.ok()) s = nhlo::CheckBundlePlacement(*program, comp, b, nhlo::ExecutionOf(b.opcode).family);
        if (!s.ok()) break;
        nhlo::Result<uint64_t> need = nhlo::CheckCalleeFrameAlignment(b, frame_alignment);
        if (!need.ok())
          s = need.status();
        else
          frame_alignment.back() = std::max(frame_alignment.back(), *need);
      }
      if (!s.ok()) {
        ++t.placement_errors;
        std::cout << "PLACEMENT " << name << "\n" << FirstLines(s.ToString(), 3);
        break;
      }
    }
  }
  t.arena += report.arena;
  t.lower_bound += report.lower_bound;
  t.aliased_bound += report.aliased_bound;
  t.largest = std::max(t.largest, report.arena);
  t.unshared += report.unshared;
  t.largest_unshared = std::max(t.largest_unshared, report.unshared);
  double ratio = report.lower_bound ? static_cast<double>(report.arena) / static_cast<double>(report.lower_bound) : 1.0;
  if (ratio > t.worst_ratio) {
    t.worst_ratio = ratio;
    t.worst = name + " (" + std::string(m.name) + ")";
  }
  if (t.print_each)
    std::cout << "arena " << report.arena << " lower-bound " << report.lower_bound << " ratio " << ratio
              << " aliased-bound " << report.aliased_bound << "  " << name << " (" << m.name << ")\n";
}

// Empty on success, else why the piece failed. The round trip is checked even for a module
// the verifier rejects, so the two kinds of failure are told apart (*round_trip_ok).
constexpr std::pair<nhlo::PrintStyleName, const char*> kStyles[] = {
    {nhlo::PrintStyleName::kLong, "long"},
    {nhlo::PrintStyleName::kLongShapes, "long-shapes"},
    {nhlo::PrintStyleName::kShort, "short"},
    {nhlo::PrintStyleName::kShortParsable, "short-parsable"},
    {nhlo::PrintStyleName::kAsRead, "as-read"}};

std::string CheckPiece(const std::string& name, const std::string& text, bool* round_trip_ok, ArenaTotals& totals) {
  *round_trip_ok = false;
  auto m = nhlo::ParseModule(name, text);
  if (!m.ok()) return FirstLines(m.status().ToString(), 3);
  // The round trip in every print style.
  for (const auto& [style, style_name] : kStyles) {
    (*m)->print_style = nhlo::NamedPrintStyle(style, **m);
    std::string once = nhlo::PrintModule(**m);
    auto again = nhlo::ParseModule(name + " (printed)", once);
    if (!again.ok())
      return std::string("printed module (") + style_name +
             ") does not parse: " + FirstLines(again.status().ToString(), 3);
    (*again)->print_style = (*m)->print_style;
    std::string twice = nhlo::PrintModule(**again);
    if (once != twice)
      return std::string("print(parse(print(m))) != print(m), style ") + style_name + ":\n" +
             FirstLines(nhlo::UnifiedDiff(once, twice, "print(m)", "print(parse(print(m)))"), 12);
  }
  (*m)->print_style = nhlo::PrintStyle{};
  *round_trip_ok = true;
  nhlo::Status verified = nhlo::VerifyModule(**m);
  if (!verified.ok()) return "verifier: " + FirstLines(verified.ToString(), 3);
  CheckBundle(name, **m, totals);
  return {};
}

// ---- --run: every module in a child process of its own ------------------------------------
// A child per module contains what a run can do wrong: an endless loop (alarm), a crash or an
// allocation the machine cannot give (RLIMIT_AS); the parent only reads the child's report.

struct RunLimits {
  unsigned timeout_seconds = 10;
  std::string max_memory = "4G";
  uint64_t memory_bytes = 0;
  int threads = 1;            // --threads for each run (1 by default, so timings compare across machines)
  bool fusion_check = false;  // --fusion-check: run with --fusion=on and off and compare the outputs' bytes
};

struct RunTotals {
  int ran = 0, refused = 0, failed = 0, timed_out = 0;
  std::map<std::string, int> refusals;  // normalised reason -> modules
  std::map<std::string, int> failures;
  std::vector<std::pair<double, std::string>> seconds;  // wall time of each piece that ran
};

// The first error line without its `file:line:col: error: ` prefix.
std::string FirstError(const std::string& text) {
  std::istringstream lines(text);
  std::string line, first;
  while (std::getline(lines, line)) {
    size_t at = line.find("error: ");
    if (at != std::string::npos) return line.substr(at + 7);
    if (first.empty()) first = line;
  }
  return first;
}

// A refusal's reason with what differs between modules taken out: the explanation after the
// op's or target's quoted name, a parenthesised tail, numbers.
std::string NormaliseReason(std::string why) {
  // "the interpreter cannot execute 'fft': why", "unknown custom_call_target "x": why": the
  // name is the reason.
  if (size_t open = why.find_first_of("'\""); open != std::string::npos) {
    size_t close = why.find(why[open], open + 1);
    if (close != std::string::npos && close + 1 < why.size() && why[close + 1] == ':') why.resize(close + 1);
  }
  if (size_t paren = why.find(" ("); paren != std::string::npos) why.resize(paren);
  std::string out;
  for (size_t i = 0; i < why.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(why[i]))) {
      out += 'N';
      while (i + 1 < why.size() && std::isdigit(static_cast<unsigned char>(why[i + 1]))) ++i;
    } else {
      out += why[i];
    }
  }
  if (out.size() > 120) out = out.substr(0, 117) + "...";
  return out;
}

// In the child: compile and load (a failure is a refusal), then run as nhlo-run does. The report
// is one letter (O ran, R refused, F failed) and the first error.
// --fusion-check: runs the module with nhlo-run --fusion=on, then off, and compares the outputs'
// bytes as .npz files (--output) or, for results with no .npy form (tokens), as their literal
// text (--print-values=all). Returns the first run's exit code (its errors in `err`); `differ`
// says how the second run or the comparison failed.
int FusionCheck(const std::string& text, std::vector<std::string> flags, std::ostringstream& err, std::string& differ) {
  fs::path dir = fs::temp_directory_path() / ("nhlo-fusion-check-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto run = [&](const std::vector<std::string>& extra, std::string& out_text, std::ostringstream& err_stream) {
    std::vector<std::string> all = flags;
    all.insert(all.end(), extra.begin(), extra.end());
    std::istringstream in(text);
    std::ostringstream out;
    int code = nhlo::RunMain(all, in, out, err_stream);
    out_text = out.str();
    return code;
  };
  auto slurp = [](const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  std::string on_text, off_text;
  int code = run({"--output=" + (dir / "on.npz").string()}, on_text, err);
  bool as_text = code != 0 && err.str().find("no .npy form") != std::string::npos;
  if (as_text) {
    std::replace(flags.begin(), flags.end(), std::string("--print-values=none"), std::string("--print-values=all"));
    err.str("");
    code = run({}, on_text, err);
  }
  if (code == 0) {
    // Without aliasing a module may need more than --max-memory (a loop state copied where it is
    // aliased): then fusion alone is compared, with the default's aliases.
    std::string off = "--fusion=off --buffer-aliasing=off";
    auto run_off = [&](std::vector<std::string> extra, std::ostringstream& off_err) {
      if (!as_text) extra.push_back("--output=" + (dir / "off.npz").string());
      return run(extra, off_text, off_err);
    };
    std::ostringstream off_err;
    int off_code = run_off({"--fusion=off", "--buffer-aliasing=off"}, off_err);
    if (off_code != 0 && off_err.str().find("but --max-memory allows") != std::string::npos) {
      off = "--fusion=off";
      off_err.str("");
      off_code = run_off({"--fusion=off"}, off_err);
    }
    if (off_code != 0)
      differ = off + " failed where the default ran: " + FirstError(off_err.str());
    else if (as_text ? on_text != off_text : slurp(dir / "on.npz") != slurp(dir / "off.npz"))
      differ = "outputs differ between the default and " + off;
  }
  fs::remove_all(dir);
  return code;
}

std::string RunPieceInChild(const std::string& name, const std::string& text, const RunLimits& limits) {
  try {
    nhlo::PipelineFlags flags;
    std::ostringstream log;
    auto module = nhlo::CompileText(name, text, *flags.ToOptions(), log);
    if (!module.ok()) return "R" + FirstError(module.status().ToString());
    auto bytes = nhlo::EmitBundleFile(**module, *flags.ToCodegenOptions());
    if (!bytes.ok()) return "R" + FirstError(bytes.status().ToString());
    auto program = nhlo::ReadBundleFile(std::move(*bytes), name);
    if (!program.ok()) return "F" + FirstError(program.status().ToString());
    // A module without device counts whose collectives need several devices runs on as many as
    // they imply (XLA's tests give such modules their counts outside the text).
    auto grid = nhlo::InferDevices(*program);
    if (!grid.ok()) return "R" + FirstError(grid.status().ToString());
    // Transfers to and from outside the program run with zeros received (nhlo-run --host-data).
    nhlo::ExecuteOptions options;
    options.host_data = nhlo::HostData::kZeros;
    if (nhlo::Status loaded = nhlo::LoadForExecution(*program, *grid, options); !loaded.ok())
      return "R" + FirstError(loaded.ToString());
    module->reset();
    std::vector<std::string> run_flags = {"-",
                                          "--random-args=1",
                                          "--print-values=none",
                                          "--quiet",
                                          "--devices=auto",
                                          "--host-data=zeros",
                                          "--max-memory=" + limits.max_memory,
                                          "--threads=" + std::to_string(limits.threads)};
    std::ostringstream err;
    int code = 0;
    if (limits.fusion_check) {
      std::string differ;
      code = FusionCheck(text, run_flags, err, differ);
      if (code == 0 && !differ.empty()) return "F" + differ;
    } else {
      std::istringstream in(text);
      std::ostringstream out;
      code = nhlo::RunMain(run_flags, in, out, err);
    }
    if (code == 0) return "O";
    std::string why = FirstError(err.str());
    // nhlo-run refuses a run that needs more memory than the limit before any work.
    if (why.find("running this program") != std::string::npos && why.find(" needs ") != std::string::npos)
      return "Rneeds more memory than --max-memory";
    return "F" + why;
  } catch (const std::bad_alloc&) {
    return "Fout of memory (--max-memory)";
  }
}

void RunPiece(const std::string& name, const std::string& text, const RunLimits& limits, RunTotals& t) {
  // The address-space limit leaves room for the program itself above what --max-memory lets a
  // run allocate.
  nhlo_tools::ChildOutcome outcome;
  if (!nhlo_tools::RunInChild(
          limits.timeout_seconds, limits.memory_bytes + (uint64_t(1) << 30),
          [&] { return RunPieceInChild(name, text, limits); }, outcome)) {
    std::perror("nhlo-corpus-check: pipe or fork");
    std::exit(2);
  }
  using End = nhlo_tools::ChildOutcome::End;
  if (outcome.end == End::kTimedOut) {
    ++t.timed_out;
    std::cout << "TIMEOUT " << name << "\n";
    return;
  }
  if (outcome.end != End::kReported) {
    std::string why = outcome.end == End::kCrashed ? "crashed: " + outcome.crash : "exited without a report";
    ++t.failed;
    ++t.failures[why];
    std::cout << "RUN-FAIL " << name << "\n" << why << "\n";
    return;
  }
  const std::string& report = outcome.report;
  std::string why = report.substr(1);
  switch (report[0]) {
    case 'O':
      ++t.ran;
      t.seconds.emplace_back(outcome.seconds, name);
      break;
    case 'R':
      ++t.refused;
      ++t.refusals[NormaliseReason(why)];
      std::cout << "REFUSED " << name << ": " << why << "\n";
      break;
    default:
      ++t.failed;
      ++t.failures[NormaliseReason(why)];
      std::cout << "RUN-FAIL " << name << "\n" << why << "\n";
      break;
  }
}

void PrintRunSummary(const RunTotals& t) {
  auto by_count = [](const std::map<std::string, int>& reasons) {
    std::vector<std::pair<int, std::string>> v;
    for (const auto& [why, n] : reasons) v.emplace_back(-n, why);
    std::sort(v.begin(), v.end());
    return v;
  };
  std::cout << "refusals by reason:\n";
  for (const auto& [n, why] : by_count(t.refusals)) std::cout << "  " << -n << "  " << why << "\n";
  if (!t.failures.empty()) std::cout << "failures by reason:\n";
  for (const auto& [n, why] : by_count(t.failures)) std::cout << "  " << -n << "  " << why << "\n";
  std::vector<std::pair<double, std::string>> slowest = t.seconds;
  std::sort(slowest.rbegin(), slowest.rend());
  if (slowest.size() > 10) slowest.resize(10);
  std::cout << "slowest runs (compile, arguments and run, one process each):\n";
  for (const auto& [seconds, name] : slowest) {
    char line[64];
    std::snprintf(line, sizeof(line), "  %8.2f s  ", seconds);
    std::cout << line << name << "\n";
  }
  std::cout << "ran " << t.ran << ", refused " << t.refused << ", failed " << t.failed << ", timed out " << t.timed_out
            << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  ArenaTotals totals;
  std::vector<std::string> inputs;
  bool run = false;
  RunLimits limits;
  const char* usage =
      "usage: nhlo-corpus-check [--arena] [--glob=PATTERNS] [--run|--fusion-check [--timeout=S] [--max-memory=SIZE]\n"
      "                         [--threads=N]] DIR_OR_FILE...\n";
  // File names read under a folder: shell patterns, comma-separated (XLA's --xla_dump_to
  // folders hold *.txt modules beside *.pb, *.dot and *.html files).
  std::vector<std::string> globs = {"*.hlo"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--arena") {
      totals.print_each = true;
    } else if (a == "--run") {
      run = true;
    } else if (a == "--fusion-check") {
      run = true;
      limits.fusion_check = true;
    } else if (a.rfind("--timeout=", 0) == 0) {
      char* end = nullptr;
      unsigned long s = std::strtoul(a.c_str() + 10, &end, 10);
      if (*end || s == 0 || s > 86400) {
        std::cerr << "nhlo-corpus-check: error: --timeout takes whole seconds from 1 to 86400\n";
        return 2;
      }
      limits.timeout_seconds = static_cast<unsigned>(s);
    } else if (a.rfind("--threads=", 0) == 0) {
      limits.threads = std::atoi(a.c_str() + 10);
      if (limits.threads < 0 || limits.threads > 4096) {
        std::cerr << "nhlo-corpus-check: error: --threads takes 0 (every core) to 4096\n";
        return 2;
      }
    } else if (a.rfind("--max-memory=", 0) == 0) {
      limits.max_memory = a.substr(13);
    } else if (a.rfind("--glob=", 0) == 0) {
      globs.clear();
      for (size_t at = 7; at <= a.size();) {
        size_t comma = std::min(a.find(',', at), a.size());
        if (comma > at) globs.push_back(a.substr(at, comma - at));
        at = comma + 1;
      }
      if (globs.empty()) {
        std::cerr << "nhlo-corpus-check: error: --glob takes shell patterns such as '*.hlo,*.txt'\n";
        return 2;
      }
    } else if (a.rfind("--", 0) == 0) {
      std::cerr << "nhlo-corpus-check: error: unknown option '" << a << "'\n" << usage;
      return 2;
    } else {
      inputs.push_back(a);
    }
  }
  if (inputs.empty()) {
    std::cerr << usage;
    return 2;
  }
  if (auto bytes = nhlo::ParseSize(limits.max_memory, "--max-memory"); bytes.ok()) {
    limits.memory_bytes = *bytes;
  } else {
    std::cerr << "nhlo-corpus-check: error: " << FirstError(bytes.status().ToString()) << "\n";
    return 2;
  }
  RunTotals run_totals;
  std::vector<fs::path> files;
  std::map<std::string, int> skipped;  // files under a folder not matching --glob, by extension
  for (const std::string& input : inputs) {
    fs::path p = input;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
      continue;
    }
    if (!fs::is_directory(p, ec)) {
      std::cerr << "nhlo-corpus-check: error: '" << p.string() << "' is neither a file nor a directory\n";
      return 2;
    }
    for (const auto& e : fs::recursive_directory_iterator(p)) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      bool wanted = false;
      for (const std::string& g : globs) wanted = wanted || fnmatch(g.c_str(), name.c_str(), 0) == 0;
      if (wanted)
        files.push_back(e.path());
      else
        ++skipped[e.path().extension().empty() ? "(no extension)" : e.path().extension().string()];
    }
  }
  std::sort(files.begin(), files.end());
  if (!skipped.empty()) {
    // Said first, so a folder of XLA dumps (*.txt) read with the default *.hlo is noticed.
    std::cout << "skipped (not matching --glob=";
    for (size_t i = 0; i < globs.size(); ++i) std::cout << (i ? "," : "") << globs[i];
    std::cout << "):";
    for (const auto& [extension, n] : skipped) std::cout << " " << n << " " << extension;
    std::cout << "\n";
  }
  int passed = 0, failed = 0, pieces = 0, round_trips = 0;
  int identical[std::size(kStyles)] = {};  // files a no-op compile prints back byte for byte
  uint64_t bytes = 0;
  auto start = std::chrono::steady_clock::now();
  for (const fs::path& file : files) {
    std::ifstream f(file, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    bytes += text.size();
    std::string failure;
    bool file_round_trips = true;
    for (nhlo::InputPiece& piece : nhlo::SplitInputFile(text)) {
      // Lit files can end with a separator; a piece with nothing but comments is no module.
      if (piece.text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
      ++pieces;
      bool round_trip_ok = false;
      std::string why = CheckPiece(file.string(), piece.text, &round_trip_ok, totals);
      file_round_trips &= round_trip_ok;
      if (failure.empty()) failure = why;
      if (run && why.empty()) {
        RunPiece(file.string(), piece.text, limits, run_totals);
      } else if (run) {  // listed above with the format failures
        ++run_totals.refused;
        ++run_totals.refusals["does not parse, round-trip or verify"];
      }
    }
    round_trips += file_round_trips;
    // What `nhlo-compile FILE --passes=none --emit=hlo --print-style=S` gives back unchanged.
    if (auto m = nhlo::ParseModule(file.string(), text); m.ok()) {
      for (size_t i = 0; i < std::size(kStyles); ++i) {
        (*m)->print_style = nhlo::NamedPrintStyle(kStyles[i].first, **m);
        identical[i] += nhlo::PrintModule(**m) == text;
      }
    }
    if (failure.empty()) {
      ++passed;
    } else {
      ++failed;
      std::cout << "FAIL " << file.string() << "\n" << failure << (failure.back() == '\n' ? "" : "\n");
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << files.size() << " files, " << pieces << " modules, " << bytes / 1e6 << " MB in " << seconds << " s\n";
  std::cout << "round trip (parse, print, re-parse, print) holds for " << round_trips << " of " << files.size()
            << " files\n";
  std::cout << "printed back byte for byte (--passes=none --emit=hlo --print-style=S):";
  for (size_t i = 0; i < std::size(kStyles); ++i)
    std::cout << (i ? ", " : " ") << kStyles[i].second << " " << identical[i];
  std::cout << " of " << files.size() << " files\n";
  std::cout << "bundles: " << totals.compiled << " modules compiled, " << totals.rejected << " refused by the format, "
            << totals.placement_errors << " failing the loader's alignment and overlap checks; "
            << totals.unknown_custom_calls << " hold a custom call nhlo cannot run (nhlo-compile refuses those)\n";
  std::cout << "arena: " << totals.arena << " bytes in all (lower bound " << totals.lower_bound << "), largest "
            << totals.largest << ", worst arena/lower-bound " << totals.worst_ratio << " in " << totals.worst << "\n";
  std::cout << "with every alias XLA takes (get-tuple-element, tuple, bitcast, reshape, loop state): "
            << totals.aliased_bound << " bytes in all at least\n";
  std::cout << "arena with one slot per value (format version 1): " << totals.unshared << " bytes in all, largest "
            << totals.largest_unshared << "\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  if (run) PrintRunSummary(run_totals);
  return failed == 0 && totals.rejected == 0 && totals.placement_errors == 0 ? 0 : 1;
}
