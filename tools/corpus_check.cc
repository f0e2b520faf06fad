// SPDX-License-Identifier: Apache-2.0
// nhlo-corpus-check DIR...: for every .hlo file under DIR, split at `// -----` lines, then
// parse, print, re-parse, print again and verify; a file passes when every piece parses,
// prints identically the second time and verifies. Failures are listed with the first
// diagnostic (verifier rejections marked "verifier:"); the last line is "N passed, N failed".
// Every module that verifies is also compiled to a bundle file: the summary counts the ones the
// format refuses and gives the arena that buffer assignment chose beside its lower bound (the
// most bytes live at any point of the schedule); --arena prints both for every module.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "interp/frame_checks.h"
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
        if (!need.ok()) s = need.status();
        else frame_alignment.back() = std::max(frame_alignment.back(), *need);
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
  t.largest = std::max(t.largest, report.arena);
  t.unshared += report.unshared;
  t.largest_unshared = std::max(t.largest_unshared, report.unshared);
  double ratio = report.lower_bound ? static_cast<double>(report.arena) / static_cast<double>(report.lower_bound) : 1.0;
  if (ratio > t.worst_ratio) {
    t.worst_ratio = ratio;
    t.worst = name + " (" + std::string(m.name) + ")";
  }
  if (t.print_each)
    std::cout << "arena " << report.arena << " lower-bound " << report.lower_bound << " ratio " << ratio << "  " << name << " ("
              << m.name << ")\n";
}

// Empty on success, else why the piece failed. The round trip is checked even for a module
// the verifier rejects, so the two kinds of failure are told apart (*round_trip_ok).
std::string CheckPiece(const std::string& name, const std::string& text, bool* round_trip_ok, ArenaTotals& totals) {
  *round_trip_ok = false;
  auto m = nhlo::ParseModule(name, text);
  if (!m.ok()) return FirstLines(m.status().ToString(), 3);
  std::string once = nhlo::PrintModule(**m);
  auto again = nhlo::ParseModule(name + " (printed)", once);
  if (!again.ok()) return "printed module does not parse: " + FirstLines(again.status().ToString(), 3);
  std::string twice = nhlo::PrintModule(**again);
  if (once != twice) return "print(parse(print(m))) != print(m):\n" + FirstLines(nhlo::UnifiedDiff(once, twice, "print(m)", "print(parse(print(m)))"), 12);
  *round_trip_ok = true;
  nhlo::Status verified = nhlo::VerifyModule(**m);
  if (!verified.ok()) return "verifier: " + FirstLines(verified.ToString(), 3);
  CheckBundle(name, **m, totals);
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  ArenaTotals totals;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--arena") totals.print_each = true;
    else inputs.push_back(argv[i]);
  }
  if (inputs.empty()) {
    std::cerr << "usage: nhlo-corpus-check [--arena] DIR_OR_FILE...\n";
    return 2;
  }
  std::vector<fs::path> files;
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
    for (const auto& e : fs::recursive_directory_iterator(p))
      if (e.is_regular_file() && e.path().extension() == ".hlo") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  int passed = 0, failed = 0, pieces = 0, round_trips = 0;
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
    }
    round_trips += file_round_trips;
    if (failure.empty()) {
      ++passed;
    } else {
      ++failed;
      std::cout << "FAIL " << file.string() << "\n" << failure << (failure.back() == '\n' ? "" : "\n");
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << files.size() << " files, " << pieces << " modules, " << bytes / 1e6 << " MB in " << seconds << " s\n";
  std::cout << "round trip (parse, print, re-parse, print) holds for " << round_trips << " of " << files.size() << " files\n";
  std::cout << "bundles: " << totals.compiled << " modules compiled, " << totals.rejected << " refused by the format, "
            << totals.placement_errors << " failing the loader's alignment and overlap checks; "
            << totals.unknown_custom_calls << " hold a custom call nhlo cannot run (nhlo-compile refuses those)\n";
  std::cout << "arena: " << totals.arena << " bytes in all (lower bound " << totals.lower_bound << "), largest " << totals.largest
            << ", worst arena/lower-bound " << totals.worst_ratio << " in " << totals.worst << "\n";
  std::cout << "arena with one slot per value (format version 1): " << totals.unshared << " bytes in all, largest "
            << totals.largest_unshared << "\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 && totals.rejected == 0 && totals.placement_errors == 0 ? 0 : 1;
}
