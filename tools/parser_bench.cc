// SPDX-License-Identifier: Apache-2.0
// nhlo-parser-bench: parse+verify and print throughput, instructions per second and memory per
// input byte, on generated modules of several shapes (tools/parser_bench_shapes.cc) and sizes,
// or on every file of a directory next to the cost of reading the same bytes and of `wc -w`.
// Every generated-module run is a child process, so its peak RSS is its own. A benchmark, not a
// test: it prints figures and asserts nothing.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "parser/parser.h"
#include "parser_bench_shapes.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

long PeakRssKb() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

long CurrentRssKb() {
  long pages_total = 0, pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  if (std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
  std::fclose(f);
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Best(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

// ---------------------------------------------------------------------------------------
// Generated modules

// What one measured run reports back to the process that runs all repetitions of a size.
struct RunFigures {
  double parse_s = 0;
  double verify_s = 0;
  double print_s = 0;
  double printed_mb = 0;
  long rss_before_kb = 0;
  long peak_kb = 0;
  size_t arena_bytes = 0;
  size_t instructions = 0;
  size_t computations = 0;
};

// Parses, verifies and prints `text` (moved into the module, as nhlo-compile does).
RunFigures MeasureOnce(std::string text) {
  RunFigures f;
  f.rss_before_kb = CurrentRssKb();
  auto t0 = Clock::now();
  auto module = nhlo::ParseModule("bench.hlo", std::move(text));
  if (!module.ok()) {
    std::fprintf(stderr, "%s", module.status().ToString().c_str());
    std::_Exit(1);
  }
  auto t_parsed = Clock::now();
  nhlo::Status verified = nhlo::VerifyModule(**module);
  auto t1 = Clock::now();
  if (!verified.ok()) {
    std::fprintf(stderr, "%s", verified.ToString().c_str());
    std::_Exit(1);
  }
  f.peak_kb = PeakRssKb();
  std::string printed = nhlo::PrintModule(**module);
  auto t2 = Clock::now();
  f.parse_s = Seconds(t0, t_parsed);
  f.verify_s = Seconds(t_parsed, t1);
  f.print_s = Seconds(t1, t2);
  f.printed_mb = printed.size() / 1e6;
  f.arena_bytes = (*module)->arena.bytes_allocated();
  f.computations = (*module)->computations.size();
  for (const auto& c : (*module)->computations) f.instructions += c->instructions.size();
  return f;
}

struct Options {
  int repeats = 5;
  int timeout_s = 600;
  std::string write_path;  // --write: the generated text goes there, nothing is measured
};

// Generates the module once, then measures it `repeats` times, each in a fresh child process
// (so every run starts from the same heap and its peak RSS is its own: the text plus the module).
// Prints the best and the median of each figure: on a shared VM the slow runs are noise from
// elsewhere, and the best run is the closest to what the code costs.
void RunSize(const nhlo_bench::ShapeInfo& shape, int64_t target, const Options& opt) {
  auto g0 = Clock::now();
  std::string text = shape.generate(target);
  double generate_s = Seconds(g0, Clock::now());
  double mb = text.size() / 1e6;
  if (!opt.write_path.empty()) {
    FILE* f = std::fopen(opt.write_path.c_str(), "wb");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) std::_Exit(1);
    std::printf("%-8s %9lld wrote %.1f MB to %s\n", std::string(shape.name).c_str(), static_cast<long long>(target), mb,
                opt.write_path.c_str());
    return;
  }
  // A small module of the same shape, parsed, verified and printed before each measured run: it
  // brings in the code pages and the tables built on first use (2-3 MB of RSS whatever the
  // input), so the memory figure is what the input itself costs.
  std::string warm_up = shape.generate(50);
  std::vector<RunFigures> runs;
  for (int r = 0; r < opt.repeats; ++r) {
    int fds[2];
    if (pipe(fds) != 0) std::_Exit(1);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      alarm(static_cast<unsigned>(opt.timeout_s));  // the default action of SIGALRM ends the run
      MeasureOnce(std::move(warm_up));
      RunFigures f = MeasureOnce(std::move(text));
      if (write(fds[1], &f, sizeof f) != static_cast<ssize_t>(sizeof f)) std::_Exit(1);
      std::_Exit(0);
    }
    close(fds[1]);
    RunFigures f;
    bool got = read(fds[0], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
      std::printf("%-8s %9lld instructions  %7.1f MB   did not finish in %d s\n", std::string(shape.name).c_str(),
                  static_cast<long long>(target), mb, opt.timeout_s);
      std::fflush(stdout);
      return;
    }
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) std::_Exit(1);
    runs.push_back(f);
  }
  std::vector<double> rates, times, print_rates, verify_shares;
  double growth_mb = 0;  // the largest of the runs
  for (const RunFigures& f : runs) {
    double total = f.parse_s + f.verify_s;
    times.push_back(-total);  // Best() takes the maximum
    rates.push_back(mb / total);
    print_rates.push_back(f.printed_mb / f.print_s);
    verify_shares.push_back(f.verify_s / total);
    growth_mb = std::max(growth_mb, (f.peak_kb - f.rss_before_kb) * 1024.0 / 1e6);
  }
  const RunFigures& first = runs.front();
  double best_s = -Best(times);
  // Memory per input byte: what parsing and verifying added to the process at its peak (arena,
  // name tables, vectors: the maxrss delta) over the text's size. The module also keeps the
  // text itself, one more byte per byte.
  std::printf(
      "%-8s %9zu instructions %7zu computations %7.1f MB  parse+verify %8.3f s  best %6.1f MB/s  median %6.1f MB/s"
      "  %5.2f M instr/s  (%2.0f%% verify)  print %6.1f MB/s  memory +%.2fx the text (arena blocks %.2fx)"
      "  [generated in %.1f s]\n",
      std::string(shape.name).c_str(), first.instructions, first.computations, mb, best_s, Best(rates), Median(rates),
      first.instructions / best_s / 1e6, 100 * Median(verify_shares), Best(print_rates), growth_mb / mb,
      first.arena_bytes / 1e6 / mb, generate_s);
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------
// A directory of files

struct FileFigures {
  std::string path;
  size_t bytes = 0;
  double read_s = 1e30, scan_s = 1e30, parse_s = 1e30, verify_s = 1e30;
  size_t words = 0;
  size_t arena_bytes = 0;
  std::string failure;  // first parse or verifier error, if any
};

bool ReadAll(const std::string& path, std::string& out) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  out.clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

// What `wc -w` computes (a word is a run of non-space bytes), as the floor for a pass over the
// bytes: parsing cannot be cheaper than looking at each byte once.
size_t CountWords(const std::string& text) {
  size_t words = 0;
  bool in_word = false;
  for (unsigned char c : text) {
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
    words += !space && !in_word;
    in_word = !space;
  }
  return words;
}

// One round on one file: read it and scan its words, then parse and verify it, keeping the best
// time of each over the rounds.
void MeasureFileOnce(FileFigures& f) {
  std::string text;
  auto t0 = Clock::now();
  if (!ReadAll(f.path, text)) {
    f.failure = "cannot read";
    return;
  }
  auto t1 = Clock::now();
  f.words = CountWords(text);
  auto t2 = Clock::now();
  f.read_s = std::min(f.read_s, Seconds(t0, t1));
  f.scan_s = std::min(f.scan_s, Seconds(t1, t2));
  f.bytes = text.size();
  double parse_s = 0, verify_s = 0;
  size_t arena = 0;
  // Lit files hold several modules between `// -----` lines, as nhlo-corpus-check reads them.
  // The copy stands for reading the file (not timed, as the read is not): nhlo-compile reads
  // straight into the string it parses.
  std::string input = text;
  auto s0 = Clock::now();
  std::vector<nhlo::InputPiece> pieces = nhlo::SplitOwnedInput(std::move(input));
  parse_s += Seconds(s0, Clock::now());
  for (nhlo::InputPiece& piece : pieces) {
    if (piece.text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    auto p0 = Clock::now();
    auto module = nhlo::ParseModule(f.path, std::move(piece.text));
    auto p1 = Clock::now();
    parse_s += Seconds(p0, p1);
    if (!module.ok()) {
      if (f.failure.empty()) f.failure = "parse error";
      continue;
    }
    nhlo::Status verified = nhlo::VerifyModule(**module);
    verify_s += Seconds(p1, Clock::now());
    if (!verified.ok() && f.failure.empty()) f.failure = "verifier error";
    arena += (*module)->arena.bytes_allocated();
  }
  if (parse_s + verify_s < f.parse_s + f.verify_s) {
    f.parse_s = parse_s;
    f.verify_s = verify_s;
  }
  f.arena_bytes = arena;
}

// Runs `wc -w` on the files once (output discarded) and returns its wall time, or -1. Spawned,
// not forked: a fork marks every page of this process copy-on-write, and the next parse then
// takes a fault at each page it writes again (on the first file after it: 2,400 faults, three
// times its parse time, on this VM).
extern "C" char** environ;

double TimeWcOnce(const std::vector<FileFigures>& files) {
  std::vector<char*> argv = {const_cast<char*>("wc"), const_cast<char*>("-w")};
  for (const FileFigures& f : files) argv.push_back(const_cast<char*>(f.path.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return -1;
  if (posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return -1;
  }
  auto t0 = Clock::now();
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, "wc", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return Seconds(t0, Clock::now());
}

int RunFiles(const std::string& dir, size_t largest, int repeats) {
  namespace fs = std::filesystem;
  std::vector<FileFigures> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".hlo") continue;
    FileFigures f;
    f.path = it->path().string();
    f.bytes = it->file_size();
    files.push_back(std::move(f));
  }
  if (ec || files.empty()) {
    std::fprintf(stderr, "nhlo-parser-bench: no .hlo files under '%s'\n", dir.c_str());
    return 1;
  }
  std::sort(files.begin(), files.end(), [](const FileFigures& a, const FileFigures& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
  });
  if (largest && files.size() > largest) files.resize(largest);
  std::printf(
      "%zu files under %s, best of %d rounds, each over every file and then `wc -w` (parse includes "
      "splitting at `// -----`)\n",
      files.size(), dir.c_str(), repeats);
  std::printf("%10s %9s %9s %9s %9s %7s  %s\n", "bytes", "parse", "verify", "p+v", "read+scan", "arena", "file (MB/s)");
  // Rounds, each over every file and then `wc -w` once, so that both sample the same phases of a
  // machine whose speed drifts (a shared VM's changes by a third within a minute); each figure is
  // its best over the rounds.
  double wc_s = 1e30;
  for (int r = 0; r < repeats; ++r) {
    std::fprintf(stderr, "\rround %d of %d", r + 1, repeats);
    for (FileFigures& f : files)
      if (f.failure != "cannot read") MeasureFileOnce(f);
    double once = TimeWcOnce(files);
    wc_s = once < 0 || wc_s < 0 ? -1 : std::min(wc_s, once);
  }
  std::fprintf(stderr, "\r%*s\r", 24, "");
  FileFigures sum;
  for (FileFigures& f : files) {
    double mb = f.bytes / 1e6;
    std::printf("%10zu %9.1f %9.1f %9.1f %9.1f %6.2fx  %s%s%s\n", f.bytes, mb / f.parse_s, mb / f.verify_s,
                mb / (f.parse_s + f.verify_s), mb / (f.read_s + f.scan_s),
                f.bytes ? double(f.arena_bytes) / f.bytes : 0.0, fs::path(f.path).filename().c_str(),
                f.failure.empty() ? "" : "  ", f.failure.c_str());
    std::fflush(stdout);
    sum.bytes += f.bytes;
    sum.parse_s = (sum.parse_s == 1e30 ? 0 : sum.parse_s) + f.parse_s;
    sum.verify_s = (sum.verify_s == 1e30 ? 0 : sum.verify_s) + f.verify_s;
    sum.read_s = (sum.read_s == 1e30 ? 0 : sum.read_s) + f.read_s;
    sum.scan_s = (sum.scan_s == 1e30 ? 0 : sum.scan_s) + f.scan_s;
    sum.arena_bytes += f.arena_bytes;
  }
  double mb = sum.bytes / 1e6;
  const char* locale = std::getenv("LC_ALL");
  if (!locale || !*locale) locale = std::getenv("LANG");
  std::printf(
      "aggregate: %.1f MB in %zu files: parse %.1f MB/s, verify %.1f MB/s, parse+verify %.1f MB/s (%.3f s); "
      "read %.1f MB/s, read+word scan %.1f MB/s (%.3f s); wc -w %.1f MB/s (%.3f s, locale %s); "
      "parse+verify / wc -w time %.2f; arena %.2fx the text\n",
      mb, files.size(), mb / sum.parse_s, mb / sum.verify_s, mb / (sum.parse_s + sum.verify_s),
      sum.parse_s + sum.verify_s, mb / sum.read_s, mb / (sum.read_s + sum.scan_s), sum.read_s + sum.scan_s,
      wc_s > 0 ? mb / wc_s : 0.0, wc_s, locale && *locale ? locale : "C",
      wc_s > 0 ? (sum.parse_s + sum.verify_s) / wc_s : 0.0, double(sum.arena_bytes) / sum.bytes);
  return 0;
}

constexpr const char* kUsage =
    "usage: nhlo-parser-bench [--shape=NAME[,NAME...]|all] [--repeat=N] [--timeout=SECONDS] [--write=FILE] "
    "[INSTRUCTIONS...]\n"
    "       nhlo-parser-bench --files=DIR [--largest=N] [--repeat=N]\n"
    "  Generated modules (default shape flat, sizes 10000 100000 1000000, N=5, timeout 600 s per run):\n"
    "  parse+verify and print MB/s, instructions/s and memory per input byte, each run in its own process.\n"
    "  --write=FILE writes the generated text of the (one) shape and size to FILE instead of measuring.\n"
    "  --files=DIR: parse and verify every .hlo under DIR (the N largest with --largest), per file and in\n"
    "  aggregate, next to reading + a word scan of the same bytes and `wc -w` on the same files: N rounds\n"
    "  (default 3), each over every file and then `wc -w`, best of the rounds for each figure.\n"
    "shapes:\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  std::vector<const nhlo_bench::ShapeInfo*> shapes;
  Options opt;
  std::string files_dir;
  size_t largest = 0;
  bool repeats_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? arg.c_str() + n : nullptr;
    };
    if (const char* v = value("--repeat=")) {
      opt.repeats = std::max(1, std::atoi(v));
      repeats_given = true;
    } else if (const char* v = value("--timeout=")) {
      opt.timeout_s = std::max(1, std::atoi(v));
    } else if (const char* v = value("--write=")) {
      opt.write_path = v;
    } else if (const char* v = value("--files=")) {
      files_dir = v;
    } else if (arg == "--files" && i + 1 < argc) {
      files_dir = argv[++i];
    } else if (const char* v = value("--largest=")) {
      largest = static_cast<size_t>(std::max(0, std::atoi(v)));
    } else if (const char* v = value("--shape=")) {
      std::string list = v;
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        std::string name = list.substr(at, comma - at);
        at = comma + 1;
        if (name == "all") {
          for (const nhlo_bench::ShapeInfo* s = nhlo_bench::Shapes(); s->generate; ++s) shapes.push_back(s);
        } else if (const nhlo_bench::ShapeInfo* s = nhlo_bench::FindShape(name)) {
          shapes.push_back(s);
        } else {
          std::fprintf(stderr, "nhlo-parser-bench: unknown shape '%s'\n%s", name.c_str(), kUsage);
          return 2;
        }
      }
    } else if (arg == "-h" || arg == "--help") {
      std::printf("%s", kUsage);
      for (const nhlo_bench::ShapeInfo* s = nhlo_bench::Shapes(); s->generate; ++s)
        std::printf("  %-9s %s\n", std::string(s->name).c_str(), std::string(s->what).c_str());
      return 0;
    } else if (!arg.empty() && arg[0] >= '0' && arg[0] <= '9') {
      sizes.push_back(std::atoll(arg.c_str()));
    } else {
      std::fprintf(stderr, "nhlo-parser-bench: unknown argument '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    }
  }
  if (!files_dir.empty()) return RunFiles(files_dir, largest, repeats_given ? opt.repeats : 3);
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  if (shapes.empty()) shapes.push_back(nhlo_bench::FindShape("flat"));
  if (!opt.write_path.empty() && (sizes.size() != 1 || shapes.size() != 1)) {
    std::fprintf(stderr, "nhlo-parser-bench: --write takes one shape and one size\n");
    return 2;
  }
  if (opt.write_path.empty())
    std::printf(
        "nhlo parser benchmark (one core; each module generated once, then measured %d times, each run in its "
        "own process)\n",
        opt.repeats);
  std::fflush(stdout);
  for (const nhlo_bench::ShapeInfo* shape : shapes) {
    for (int64_t n : sizes) {
      pid_t pid = fork();
      if (pid == 0) {
        RunSize(*shape, n, opt);
        std::_Exit(0);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    }
  }
  return 0;
}
