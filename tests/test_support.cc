// SPDX-License-Identifier: Apache-2.0
// Tables and small utilities: the opcode and pass tables, the unified diff, diagnostics.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <thread>

#include "driver/common.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "support/diff.h"
#include "support/escape.h"
#include "support/large_alloc.h"
#include "support/merge_sort.h"
#include "support/parallel.h"
#include "support/status.h"
#include "support/text_scan.h"

using namespace nhlo;

TEST_CASE("opcode table: XLA spellings, sorted, unique, round-trips") {
  CHECK(kOpcodeCount == 133);
  std::string previous;
  for (int i = 0; i < kOpcodeCount; ++i) {
    Opcode op = static_cast<Opcode>(i);
    std::string name(OpcodeName(op));
    CHECK(name > previous);
    previous = name;
    REQUIRE(OpcodeFromName(name).has_value());
    CHECK(*OpcodeFromName(name) == op);
  }
  CHECK(OpcodeName(Opcode::kExp) == "exponential");
  CHECK(OpcodeName(Opcode::kClz) == "count-leading-zeros");
  CHECK(!OpcodeFromName("exp").has_value());
}

TEST_CASE("pass registry: unique kebab-case names, lowercase descriptions without a period") {
  size_t n;
  const PassInfo* passes = RegisteredPasses(&n);
  REQUIRE(n >= 1);
  std::set<std::string_view> names;
  for (size_t i = 0; i < n; ++i) {
    CHECK(names.insert(passes[i].name).second);
    for (char c : passes[i].name) CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'));
    CHECK(!passes[i].description.empty());
    CHECK(passes[i].description.back() != '.');
    CHECK(!(passes[i].description[0] >= 'A' && passes[i].description[0] <= 'Z'));
    CHECK(FindPass(passes[i].name) == static_cast<int>(i));
  }
}

TEST_CASE("pass selection follows registration order and rejects unknown names") {
  PipelineOptions o;
  o.passes = std::vector<std::string>{"dce"};
  auto selected = SelectPasses(o);
  REQUIRE(selected.ok());
  CHECK(selected->size() == 1);
  o.passes = std::vector<std::string>{"none"};
  CHECK(SelectPasses(o)->empty());
  o.passes = std::vector<std::string>{"no-such-pass"};
  CHECK(SelectPasses(o).status().message() == "unknown pass 'no-such-pass' (see --list-passes)");
  PipelineOptions both;
  both.enable = {"dce"};
  both.disable = {"dce"};
  CHECK(!SelectPasses(both).ok());
}

TEST_CASE("unified diff") {
  CHECK(UnifiedDiff("a\nb\n", "a\nb\n", "x", "y").empty());
  CHECK(UnifiedDiff("a\nb\nc\n", "a\nc\nd\n", "x", "y") == "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n c\n+d\n");
  std::string big_a, big_b;
  for (int i = 0; i < 40; ++i) {
    big_a += "line" + std::to_string(i) + "\n";
    big_b += (i == 5 || i == 30 ? "changed" : "line") + std::to_string(i) + "\n";
  }
  std::string d = UnifiedDiff(big_a, big_b, "a", "b");
  CHECK(d.find("@@ -3,7 +3,7 @@") != std::string::npos);
  CHECK(d.find("@@ -28,7 +28,7 @@") != std::string::npos);
}

TEST_CASE("diagnostic formatting") {
  Diagnostic d = DiagnosticAt("f.hlo", "ab\n\tcd ef\n", 7, "bad thing");
  CHECK(d.line == 2);
  CHECK(d.col == 5);
  CHECK(FormatDiagnostic(d) == "f.hlo:2:5: error: bad thing\n  \tcd ef\n  \t   ^\n");
  CHECK(Status::Error("plain").ToString() == "error: plain\n");
}

TEST_CASE("a line-start index locates every offset as the scan from the start does") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text(static_cast<size_t>(rng() % 64), 'x');
    for (char& c : text)
      if (rng() % 4 == 0) c = rng() % 2 ? '\n' : '\r';
    LineStarts lines(text);
    SourceBuffer buffer;
    buffer.name = "t.hlo";
    buffer.text = text;
    for (size_t offset = 0; offset <= text.size() + 2; ++offset) {  // past the end clamps
      Diagnostic scanned = DiagnosticAt("t.hlo", text, offset, "m");
      Diagnostic indexed = DiagnosticAt("t.hlo", text, lines, offset, "m");
      Diagnostic from_buffer = buffer.At(offset, "m");
      CHECK_MESSAGE(FormatDiagnostic(indexed) == FormatDiagnostic(scanned), "text " << trial << " offset " << offset);
      CHECK(FormatDiagnostic(from_buffer) == FormatDiagnostic(scanned));
    }
  }
}

TEST_CASE("FindNotPlain stops at exactly what CEscape changes") {
  // Every byte value, at every position of a 16-byte step and in the scalar tail.
  for (int c = 0; c < 256; ++c) {
    std::string one(1, static_cast<char>(c));
    bool plain = CEscape(one) == one;
    for (size_t at : {size_t(0), size_t(5), size_t(15), size_t(16), size_t(33)}) {
      std::string s(40, 'a');
      s[at] = static_cast<char>(c);
      CHECK_MESSAGE(FindNotPlain(s.data(), 0, s.size()) == (plain ? s.size() : at), "byte " << c << " at " << at);
    }
  }
  // Every start and length around the 16-byte steps, against a byte-by-byte search.
  for (size_t n = 0; n <= 40; ++n)
    for (size_t hit = 0; hit <= n; ++hit)
      for (size_t start = 0; start <= n; ++start) {
        std::string s(n, 'a');
        if (hit < n) s[hit] = '"';
        size_t want = hit >= start && hit < n ? hit : n;
        CHECK(FindNotPlain(s.data(), start, n) == want);
      }
  std::string out = "x";
  AppendCEscaped(out, std::string("a\"b\\c'd\ne\x01\x7f\xff") + std::string(20, 'z'));
  CHECK(out == "xa\\\"b\\\\c\\'d\\ne\\001\\177\\377" + std::string(20, 'z'));
  std::string text = std::string("q\"\x01\xfe") + std::string(30, 'p') + "\n";
  std::string written(CEscapedSize(text), '?');
  CHECK(WriteCEscaped(written.data(), text) == written.data() + written.size());
  CHECK(written == CEscape(text));
}

TEST_CASE("ParallelFor: every chunk once, boundaries independent of the thread count") {
  for (int threads : {1, 2, 3, 8}) {
    SetParallelThreads(threads);
    CHECK(ParallelThreads() == threads);
    std::vector<int> hits(1000, 0);
    std::vector<int64_t> chunk_ends(1000, -1);
    ParallelFor(1000, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) ++hits[i], chunk_ends[i] = end;
    });
    for (int64_t i = 0; i < 1000; ++i) {
      CHECK(hits[i] == 1);
      CHECK(chunk_ends[i] == std::min<int64_t>((i / 64 + 1) * 64, 1000));
    }
    // A nested call runs inline instead of waiting on the pool it is part of.
    std::atomic<int64_t> nested{0};
    ParallelFor(4, 1, [&](int64_t, int64_t) { ParallelFor(10, 3, [&](int64_t b, int64_t e) { nested += e - b; }); });
    CHECK(nested == 40);
  }
  SetParallelThreads(1);
}

TEST_CASE("CountHloModules counts HloModule at the start of a line only") {
  CHECK(CountHloModules("") == 0);
  CHECK(CountHloModules("HloModule a\n") == 1);
  CHECK(CountHloModules("HloModule a\nENTRY e {}\n  HloModule b\n\tHloModule c") == 3);
  CHECK(CountHloModules("// HloModule a\nx = HloModule b\nHloModulex\n") == 0);
  CHECK(CountHloModules("HloModule") == 0);  // the word needs its space, as the parser's header
  CHECK(CountHloModules("\n\nHloModule m, is_scheduled=true\n") == 1);
  // Several: counted exactly, outside comments and strings (a block comment that quotes a
  // module's header made two modules "3 modules").
  CHECK(CountHloModules("HloModule a\n/* was:\nHloModule old\n*/\nHloModule b\n") == 2);
  CHECK(CountHloModules("HloModule a\nx = f32[] constant(0), metadata={op_name=\"\\\"HloModule z\"}\n"
                        "HloModule b\n") == 2);
  CHECK(SeveralModulesHint("HloModule a\nHloModule b\n", 2, "run") ==
        "holds 2 modules; put a `// -----` line between them and use --split-input-file to run each on its own");
  CHECK(SeveralModulesHint("HloModule a\n// -----\nHloModule b\n", 2, "compile") ==
        "holds 2 modules; use --split-input-file to compile each on its own");
}

TEST_CASE("large allocations come back usable and aligned to huge pages") {
  std::vector<uint64_t, LargeAllocator<uint64_t>> big(size_t(3) << 17);  // 3 MiB
  CHECK(reinterpret_cast<uintptr_t>(big.data()) % kHugePageBytes == 0);
  big.back() = 7;
  CHECK(big.back() == 7);
  std::vector<uint64_t, LargeAllocator<uint64_t>> small(10, 1);
  CHECK(small[9] == 1);
  size_t too_big = SIZE_MAX - 16;
  CHECK(AllocateHugeAligned(too_big, 0) == nullptr);  // no wrap to a tiny block
  Arena arena;
  for (int i = 0; i < 4; ++i) CHECK(arena.Allocate(size_t(3) << 20, 64) != nullptr);
  CHECK(arena.bytes_allocated() >= size_t(12) << 20);
}

TEST_CASE("a dead arena's big blocks serve the next arena, each block where it fits") {
  // 5 MiB asks for a 6 MiB block (rounded to huge pages); small allocations stay in malloc'd
  // blocks and are never pooled.
  Arena::DrainPool();  // blocks earlier tests left
  void* first = nullptr;
  {
    Arena a;
    first = a.Allocate(size_t(5) << 20, 64);
    std::memset(first, 1, size_t(5) << 20);
  }
  Arena b;
  void* small = b.Allocate(100, 8);
  CHECK(small != first);
  void* big = b.Allocate(size_t(5) << 20, 64);
  if (Arena::Pooling()) {  // not under AddressSanitizer, so that a use after free is reported
    CHECK(big == first);   // the same block, its pages already faulted in
    Arena c;
    void* other = c.Allocate(size_t(5) << 20, 64);  // b holds the pooled block: a fresh one
    CHECK(other != first);
  }
  {
    // A pooled block more than twice the size asked for is left for a bigger module.
    Arena::DrainPool();
    {
      Arena huge;
      (void)huge.Allocate(size_t(20) << 20, 64);
    }
    Arena small_after;
    void* two = small_after.Allocate(size_t(3) << 20, 64);
    CHECK(two != nullptr);
    CHECK(small_after.bytes_allocated() < size_t(20) << 20);
  }
  std::memset(big, 2, size_t(5) << 20);
}

TEST_CASE("StableMergeSort: a stable sort for a strict weak order, a permutation for any comparator") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    size_t n = rng() % 300;
    std::vector<int> keys(n);
    for (int& k : keys) k = static_cast<int>(rng() % 8);
    std::vector<size_t> order(n), want(n);
    for (size_t i = 0; i < n; ++i) order[i] = want[i] = i;
    auto by_key = [&](size_t a, size_t b) { return keys[a] < keys[b]; };
    StableMergeSort(order, by_key);
    std::stable_sort(want.begin(), want.end(), by_key);
    CHECK(order == want);
    // Random answers, a random table and a comparator that is never false: still a permutation
    // (ASan and the checks below would catch a step outside the range).
    std::vector<uint8_t> table(n * n);
    for (uint8_t& t : table) t = rng() & 1;
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<size_t> p(n);
      for (size_t i = 0; i < n; ++i) p[i] = i;
      StableMergeSort(p, [&](size_t a, size_t b) {
        if (mode == 0) return (rng() & 1) != 0;
        if (mode == 1) return table[a * n + b] != 0;
        return true;
      });
      std::vector<size_t> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      bool permutation = true;
      for (size_t i = 0; i < n; ++i) permutation &= sorted[i] == i;
      CHECK(permutation);
    }
  }
}

TEST_CASE("WriteFileAtomically: a writer killed mid-write leaves the old file whole") {
  // Issue 28: no write is partial after a kill. A child writes 64 MiB over a file holding "old";
  // it is killed at several points of the write; the file then holds "old" or the whole new
  // content, never part of it, and the temporary file is gone or at least not the target.
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("nhlo-atomic-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "out.bin").string();
  const std::string big(size_t(64) << 20, 'x');
  for (int delay_ms : {0, 5, 20, 80}) {
    { std::ofstream(path, std::ios::binary) << "old"; }
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      (void)WriteFileAtomically(path, big);
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    std::ifstream in(path, std::ios::binary);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK((got == "old" || got.size() == big.size()));
    if (got.size() == big.size()) CHECK(got == big);
  }
  fs::remove_all(dir);
}

TEST_CASE("AssignZeros, AssignBytes and ReserveHugeBacked: the bytes asked for, at every size") {
  for (size_t n : {size_t{0}, size_t{100}, kLargeValueBytes - 1, kLargeValueBytes, kLargeValueBytes * 3 + 17}) {
    CAPTURE(n);
    std::string s = "left over";
    AssignZeros(s, n);
    REQUIRE(s.size() == n);
    CHECK(std::count(s.begin(), s.end(), '\0') == static_cast<std::ptrdiff_t>(n));
    std::string source(n, 'x');
    for (size_t i = 0; i < n; i += 4099) source[i] = static_cast<char>(i % 251);
    std::string copy = "old";
    AssignBytes(copy, source.data(), source.size());
    CHECK(copy == source);
    std::string kept = "prefix";
    ReserveHugeBacked(kept, n + 6);
    CHECK(kept == "prefix");  // the contents stay, the room is there
    CHECK(kept.capacity() >= n + 6);
  }
}
