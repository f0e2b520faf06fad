// SPDX-License-Identifier: Apache-2.0
// nhlo-golden: expected-block golden tests (docs/testing.md). Every *.hlo file under DIR is one
// test: its `// RUN:` lines are run in-process through the same entry points as the installed
// programs (so the runner needs no other program beside it and no checkout), and their combined
// stdout, stderr and the last exit code are compared with the expected blocks at the end of the
// file (or in <file>.expected when the file says `// EXPECTED-IN: sidecar`). A mismatch prints a
// unified diff. `--update` rewrites the expected blocks from the current build. Every test input
// that parses also gets the round-trip check print(parse(print(m))) == print(m) for free.
// Folders holding a lit.cfg.py are lit suites (FileCheck tests) and are skipped. Paths in the
// output are relative to the folder above the suite: the nearest folder holding nhlo-golden.cfg.
//
// Directives (each a line comment):
//   // RUN: nhlo-compile %s --emit=hlo      run a program; %s = this file, %S = its folder, %t = scratch
//   // RUN: corrupt %t.bin OFFSET BYTE      overwrite one byte (OFFSET may be negative: from the end)
//   // RUN: truncate %t.bin SIZE            cut a file to SIZE bytes
//   // RUN: cmp %t.a %t.b                   say whether two files are byte-identical
//   // RUN: ls %t.dir                       list a folder's file names, sorted
//   // RUN: cat %t.dir/file                 print a file
//   // NORMALIZE: time                      replace timing figures with <t>
//   // NORMALIZE: version                   replace `0.1.0 (git 1a2b3c4d5e6f)` with <version>
//   // EXPECTED-IN: sidecar                 the expected blocks live in <file>.expected
//   // ALLOW: usage-error                   a RUN line may exit 2 (otherwise the test fails)
#include <re2/re2.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "codegen/bundle_format.h"
#include "driver/common.h"
#include "driver/driver.h"
#include "ir/printer.h"
#include "parser/parser.h"
#include "support/diff.h"

namespace fs = std::filesystem;
using nhlo::Result;
using nhlo::Status;

namespace {

constexpr std::string_view kStdoutOpen = "/*** STDOUT ***\n";
constexpr std::string_view kStderrOpen = "/*** STDERR ***\n";
constexpr std::string_view kExitOpen = "/*** EXIT ";
constexpr std::string_view kClose = "***/\n";

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const fs::path& p, std::string_view text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// Splits a RUN line into words; single quotes group (no escapes inside).
std::vector<std::string> SplitWords(std::string_view line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false, quoted = false;
  for (char c : line) {
    if (quoted) {
      if (c == '\'')
        quoted = false;
      else
        cur += c;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(cur), cur.clear(), in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

std::string Replace(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

// lit's substitutions: %s the test file, %S its folder (both as the runner names them: from the
// folder above the suite, so the same RUN line works from any directory), %t a scratch path.
// One scan, so a path that itself holds `%s` or `%t` is not substituted again.
std::string Substitute(const std::string& word, const fs::path& test, const fs::path& scratch) {
  std::string folder = test.parent_path().string();
  std::string out;
  for (size_t i = 0; i < word.size(); ++i) {
    char next = i + 1 < word.size() ? word[i + 1] : '\0';
    if (word[i] == '%' && (next == 's' || next == 'S' || next == 't')) {
      out += next == 's' ? test.string() : next == 't' ? scratch.string() : folder.empty() ? "." : folder;
      ++i;
    } else {
      out += word[i];
    }
  }
  return out;
}

struct Outcome {
  std::string out, err;
  int exit_code = 0;
};

// The test text without its expected blocks.
std::string StripExpected(const std::string& text) {
  size_t cut = text.size();
  for (std::string_view marker : {kStdoutOpen, kStderrOpen, kExitOpen}) {
    size_t at = text.find(std::string("\n") + std::string(marker));
    if (at != std::string::npos) cut = std::min(cut, at + 1);
  }
  return text.substr(0, cut);
}

// A `*/` in the output (XLA's `/*index=5*/` comments) would end the block comment early when the
// test file is read as HLO; blocks store it as `*\/`.
std::string Block(std::string_view open, const std::string& body) {
  std::string b(open);
  b += Replace(body, "*/", "*\\/");
  if (!body.empty() && body.back() != '\n') b += '\n';
  b += kClose;
  return b;
}

std::string ExpectedText(const Outcome& o) {
  std::string text = "/*** EXIT " + std::to_string(o.exit_code) + " ***/\n";
  if (!o.out.empty()) text += Block(kStdoutOpen, o.out);
  if (!o.err.empty()) text += Block(kStderrOpen, o.err);
  return text;
}

Status RunBuiltin(const std::vector<std::string>& words, Outcome& o) {
  const std::string& cmd = words[0];
  if (((cmd == "corrupt" || cmd == "patch") && words.size() == 4) || (cmd == "truncate" && words.size() == 3)) {
    std::string bytes = ReadFile(words[1]);
    long long at = std::stoll(words[2]);
    if (cmd == "truncate") {
      if (at < 0 || static_cast<size_t>(at) > bytes.size()) return Status::Error("truncate: bad size");
      bytes.resize(static_cast<size_t>(at));
    } else {
      if (at < 0) at += static_cast<long long>(bytes.size());
      if (at < 0 || static_cast<size_t>(at) >= bytes.size()) return Status::Error("corrupt: offset out of range");
      bytes[static_cast<size_t>(at)] = static_cast<char>(std::stoi(words[3], nullptr, 0));
      // `patch` is a hostile writer's edit: the bundle checksum is made to match again, so the
      // file passes the header check and reaches the reader's and loader's later checks.
      if (cmd == "patch") nhlo::StoreBundleChecksum(bytes.data(), bytes.size());
    }
    WriteFile(words[1], bytes);
    o.exit_code = 0;
    return nhlo::OkStatus();
  }
  if (cmd == "ls" && words.size() == 2) {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(words[1], ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    if (ec) {
      o.err += "ls: cannot list '" + words[1] + "': " + ec.message() + "\n";
      o.exit_code = 1;
      return nhlo::OkStatus();
    }
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) o.out += n + "\n";
    o.exit_code = 0;
    return nhlo::OkStatus();
  }
  if (cmd == "cat" && words.size() == 2) {
    // A file that is not there fails the test (an empty read would pass a golden recorded
    // without it).
    if (!fs::is_regular_file(words[1])) return Status::Error("cat: no such file: " + words[1]);
    o.out += ReadFile(words[1]);
    o.exit_code = 0;
    return nhlo::OkStatus();
  }
  if (cmd == "cmp" && words.size() == 3) {
    for (const std::string& f : {words[1], words[2]})
      if (!fs::is_regular_file(f)) return Status::Error("cmp: no such file: " + f);
    bool same = ReadFile(words[1]) == ReadFile(words[2]);
    o.out += same ? "files are identical\n" : "files differ\n";
    o.exit_code = same ? 0 : 1;
    return nhlo::OkStatus();
  }
  return Status::Error("unknown RUN command '" + cmd + "'");
}

class Runner {
 public:
  Runner(fs::path root, fs::path scratch, bool update, std::string filter, std::string exclude)
      : root_(std::move(root)),
        scratch_(std::move(scratch)),
        update_(update),
        filter_(std::move(filter)),
        exclude_(std::move(exclude)) {}

  int Run() {
    std::vector<fs::path> tests;
    // Given a lit suite, or a folder or file inside one: nothing of it is this runner's.
    for (fs::path p = fs::is_directory(root_) ? root_ : root_.parent_path(); !p.empty(); p = p.parent_path()) {
      if (fs::exists(p / "lit.cfg.py")) {
        std::cerr << "nhlo-golden: note: " << p.string() << " is a lit suite (lit.cfg.py); run it with lit\n";
        std::cout << "0 passed, 0 failed\n";
        return 0;
      }
      if (!p.has_parent_path() || p.parent_path() == p) break;
    }
    if (fs::is_regular_file(root_))
      tests.push_back(root_);
    else
      for (auto it = fs::recursive_directory_iterator(root_); it != fs::recursive_directory_iterator(); ++it) {
        // A lit suite's *.hlo files carry shell RUN lines for lit, not for this runner.
        if (it->is_directory() && fs::exists(it->path() / "lit.cfg.py")) it.disable_recursion_pending();
        if (it->is_regular_file() && it->path().extension() == ".hlo" &&
            it->path().string().find(filter_) != std::string::npos &&
            (exclude_.empty() || it->path().string().find(exclude_) == std::string::npos))
          tests.push_back(it->path());
      }
    std::sort(tests.begin(), tests.end());
    fs::create_directories(scratch_);
    for (const fs::path& t : tests) RunTest(t);
    std::cout << passed_ << " passed, " << failed_ << " failed\n";
    return failed_ == 0 ? 0 : 1;
  }

 private:
  void Fail(const fs::path& test, const std::string& why) {
    ++failed_;
    std::cout << "FAIL " << test.string() << "\n" << why << (why.empty() || why.back() == '\n' ? "" : "\n");
  }

  void RunTest(const fs::path& test) {
    std::string text = ReadFile(test);
    std::string input = StripExpected(text);
    std::vector<std::vector<std::string>> runs;
    bool normalize_time = false, normalize_version = false, sidecar = false, allow_usage_error = false;
    std::istringstream lines(input);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("// RUN:", 0) == 0) runs.push_back(SplitWords(line.substr(7)));
      if (line.rfind("// NORMALIZE: time", 0) == 0) normalize_time = true;
      if (line.rfind("// NORMALIZE: version", 0) == 0) normalize_version = true;
      if (line.rfind("// EXPECTED-IN: sidecar", 0) == 0) sidecar = true;
      if (line.rfind("// ALLOW: usage-error", 0) == 0) allow_usage_error = true;
    }
    if (runs.empty()) return Fail(test, "no // RUN: line");
    std::string stem = test.stem().string();
    fs::path tmp = scratch_ / (test.parent_path().filename().string() + "-" + stem);
    // A kept --scratch folder holds earlier runs' files (of older versions too): this test's own
    // (%t, %t.bin, %t.dir...) go first, so `ls %t.dir` lists only what this run wrote.
    {
      std::error_code ec;
      const std::string own = tmp.filename().string();
      for (const fs::directory_entry& e : fs::directory_iterator(scratch_, ec)) {
        const std::string name = e.path().filename().string();
        if (name == own || name.starts_with(own + ".")) fs::remove_all(e.path(), ec);
      }
    }
    Outcome o;
    for (std::vector<std::string> words : runs) {
      if (words.empty()) return Fail(test, "empty RUN line");
      for (std::string& w : words) w = Substitute(w, test, tmp);
      std::vector<std::string> args(words.begin() + 1, words.end());
      std::istringstream in;
      std::ostringstream out, err;
      if (words[0] == "nhlo-compile")
        o.exit_code = nhlo::CompileMain(args, in, out, err);
      else if (words[0] == "nhlo-run")
        o.exit_code = nhlo::RunMain(args, in, out, err);
      else if (words[0] == "nhlo-objdump")
        o.exit_code = nhlo::ObjdumpMain(args, in, out, err);
      else if (Status s = RunBuiltin(words, o); !s.ok())
        return Fail(test, s.ToString());
      o.out += out.str();
      o.err += err.str();
      // A usage error (exit 2) is a RUN line that did not say what its author meant; it is
      // neither recorded by --update nor accepted, unless the test says it is about one.
      if (o.exit_code == 2 && !allow_usage_error)
        return Fail(test, "a RUN line ended in a usage error (exit 2):\n" + err.str() +
                              "fix the RUN line, or add `// ALLOW: usage-error` if the test is about one");
    }
    // The scratch path reads `%t` in every output, the built-ins' included.
    o.out = Replace(o.out, tmp.string(), "%t");
    o.err = Replace(o.err, tmp.string(), "%t");
    if (normalize_time) {
      for (std::string* s : {&o.out, &o.err}) {
        RE2::GlobalReplace(s, R"(\b[0-9]+\.[0-9]+ (ms|us|s)\b)", "<t> \\1");
        RE2::GlobalReplace(s, R"( +[0-9]+\.[0-9]+%)", " <p>%");
        RE2::GlobalReplace(s, R"re("([a-z_]*ms)": [0-9.e+-]+)re", "\"\\1\": <t>");
      }
    }
    if (normalize_version) {
      for (std::string* s : {&o.out, &o.err}) {
        RE2::GlobalReplace(s, R"( [0-9]+\.[0-9]+\.[0-9]+( \(git [0-9a-f]+(-dirty)?\))?)", " <version>");
      }
    }
    std::string expected_now = ExpectedText(o);
    fs::path sidecar_path = test.string() + ".expected";
    if (update_) {
      // The update rewrites the test's expected blocks and nothing else: the test file keeps its
      // input part byte for byte, a sidecar must not be a file the RUN lines read, and each is
      // replaced through a temporary file (an interrupted update leaves the old one).
      Status written = nhlo::OkStatus();
      if (sidecar) {
        std::vector<std::string> read = {test.string()};
        for (const std::vector<std::string>& words : runs)
          for (const std::string& w : words) {  // `%s.npz`, `--arg=@%S/in.npy`: the path from %s/%S on
            size_t at = std::min(w.find("%s"), w.find("%S"));
            if (at != std::string::npos) read.push_back(Substitute(w.substr(at), test, tmp));
          }
        std::string clash = nhlo::OutputConflict(read, {{"EXPECTED-IN: sidecar", sidecar_path.string(), ""}});
        if (!clash.empty()) return Fail(test, "--update: " + clash);
        written = nhlo::WriteFileAtomically(sidecar_path.string(), expected_now);
      } else {
        written = nhlo::WriteFileAtomically(test.string(),
                                            input + (input.empty() || input.back() == '\n' ? "" : "\n") + expected_now);
      }
      if (!written.ok()) return Fail(test, written.ToString());
      ++passed_;
    } else {
      std::string expected = sidecar ? ReadFile(sidecar_path) : text.substr(input.size());
      if (expected != expected_now) {
        return Fail(test, nhlo::UnifiedDiff(expected, expected_now, "expected", "actual"));
      }
      ++passed_;
    }
    CheckRoundTrip(test, input);
  }

  // For inputs that parse: print(parse(print(m))) == print(m), piece by piece.
  void CheckRoundTrip(const fs::path& test, const std::string& input) {
    for (nhlo::InputPiece& piece : nhlo::SplitInputFile(input)) {
      Result<std::unique_ptr<nhlo::Module>> m = nhlo::ParseModule(test.string(), piece.text);
      if (!m.ok()) continue;
      for (nhlo::PrintStyleName style : {nhlo::PrintStyleName::kLong, nhlo::PrintStyleName::kLongShapes,
                                         nhlo::PrintStyleName::kShort, nhlo::PrintStyleName::kShortParsable}) {
        (*m)->print_style = nhlo::NamedPrintStyle(style, **m);
        std::string once = nhlo::PrintModule(**m);
        Result<std::unique_ptr<nhlo::Module>> again = nhlo::ParseModule(test.string() + " (printed)", once);
        if (!again.ok()) {
          --passed_;
          return Fail(test, "round trip: the printed module does not parse:\n" + again.status().ToString() + once);
        }
        (*again)->print_style = (*m)->print_style;
        std::string twice = nhlo::PrintModule(**again);
        if (once != twice) {
          --passed_;
          return Fail(test, "round trip: print(parse(print(m))) != print(m)\n" +
                                nhlo::UnifiedDiff(once, twice, "print(m)", "print(parse(print(m)))"));
        }
      }
    }
  }

  fs::path root_, scratch_;
  bool update_;
  std::string filter_;
  std::string exclude_;  // --exclude: paths holding it are skipped
  int passed_ = 0, failed_ = 0;
};

}  // namespace

constexpr const char* kSuiteMarker = "nhlo-golden.cfg";

int main(int argc, char** argv) {
  CLI::App app(
      "Runs every *.hlo golden file under DIR (or one FILE) and compares its output with the expected\n"
      "blocks at its end; --update rewrites them. See docs/testing.md.",
      "nhlo-golden");
  bool update = false;
  std::string filter, exclude, scratch_arg, given;
  app.add_flag("--update", update, "rewrite the expected blocks from the current build");
  app.add_option("--filter", filter, "run only the tests whose path contains SUBSTRING");
  app.add_option("--exclude", exclude, "skip the tests whose path contains SUBSTRING");
  app.add_option("--scratch", scratch_arg, "keep %t files in DIR (default: a temporary folder, removed)");
  app.add_option("path", given, "a folder of goldens, or one golden file")->required();
  if (int code = nhlo::ParseCommandLine(app, std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
      code >= 0)
    return code;
  fs::path root = fs::absolute(given).lexically_normal();
  if (root.filename().empty()) root = root.parent_path();
  if (!fs::exists(root)) return std::cerr << "nhlo-golden: error: no such file or folder: " << given << "\n", 2;
  // %t paths go to --scratch (kept, for looking at afterwards) or to a fresh temporary folder
  // that is removed at the end.
  bool own_scratch = scratch_arg.empty();
  fs::path scratch = own_scratch ? fs::temp_directory_path() / ("nhlo-golden-" + std::to_string(::getpid()))
                                 : fs::absolute(scratch_arg);
  // Run from the folder above DIR so paths in diagnostics read "DIR/..." wherever DIR lives and
  // whatever directory the runner was started from (meson test and the update target differ).
  // A suite is the nearest folder at or above DIR|FILE holding `nhlo-golden.cfg` (as lit finds
  // lit.cfg.py): paths then read "SUITE/sub/file.hlo" whichever part of it is run, so a golden
  // passes alone, by folder and as part of the whole suite. Without one, DIR is its own suite.
  fs::path suite = fs::is_directory(root) ? root : root.parent_path();
  while (!fs::exists(suite / kSuiteMarker) && suite.has_relative_path()) suite = suite.parent_path();
  if (!fs::exists(suite / kSuiteMarker)) suite = fs::is_directory(root) ? root : root.parent_path();
  fs::current_path(suite.parent_path());
  int rc = Runner(root.lexically_relative(suite.parent_path()), scratch, update, filter, exclude).Run();
  if (own_scratch) {
    std::error_code ec;
    fs::remove_all(scratch, ec);
  }
  return rc;
}
