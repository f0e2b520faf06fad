// SPDX-License-Identifier: Apache-2.0
// nhlo-objdump -x and --arena: the hex dump holds every byte of the file exactly once and in
// order (the hex columns concatenated give the file back), its columns line up, its values agree
// with the reader, and it stays so for every file the reader accepts, not only the writer's.
#include <doctest/doctest.h>

#include <cstring>
#include <sstream>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "codegen/objdump.h"
#include "driver/driver.h"
#include "ir/verifier.h"
#include "parser/parser.h"

using namespace nhlo;

namespace {

// Several computations (a reducer, a while loop's condition and body), tuples, constants of
// more than 16 bytes and a sub-byte s4 constant, a convolution with window and dim_labels, a
// slice, and a name longer than one line of the dump.
const char* kModule = R"(HloModule hexdump

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[2,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[2,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2,3] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x1 = f32[2,3] add(x, x)
  ROOT t = (s32[], f32[2,3]) tuple(i1, x1)
}

ENTRY main {
  img = f32[1,4,4,1] parameter(0)
  k = f32[3,3,1,1] constant({ { {{1}}, {{-1}}, {{0}} }, { {{0.5}}, {{2}}, {{0}} }, { {{0}}, {{0}}, {{-2}} } })
  conv = f32[1,3,3,1] convolution(img, k), window={size=3x3 pad=0_1x1_0}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  sum_of_the_convolution_output = f32[1] reduce(conv, zero), dimensions={1,2,3}, to_apply=add
  sl = f32[1,2,2,1] slice(conv), slice={[0:1], [0:2], [1:3], [0:1]}
  n4 = s4[5] constant({-8, -1, 0, 3, 7})
  i0 = s32[] constant(0)
  m = f32[2,3] constant({ {1, 2, 3}, {4, 5, 6} })
  init = (s32[], f32[2,3]) tuple(i0, m)
  w = (s32[], f32[2,3]) while(init), condition=cond, body=body
  wx = f32[2,3] get-tuple-element(w), index=1
  ROOT out = (f32[1,3,3,1], f32[1], f32[1,2,2,1], f32[2,3], s4[5]) tuple(conv, sum_of_the_convolution_output, sl, wx, n4)
})";

std::string Compile(const char* text) {
  auto m = ParseModule("hexdump.hlo", text);
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  auto bytes = EmitBundleFile(**m, CodegenOptions{});
  REQUIRE(bytes.ok());
  return *bytes;
}

std::string HexDump(const std::string& bytes) {
  auto program = ReadBundleFile(bytes, "hexdump.bin");
  REQUIRE(program.ok());
  std::ostringstream out;
  CHECK(HexDumpBundleProgram(*program, "hexdump.bin", out) == 0);
  return out.str();
}

void Reseal(std::string& b) {
  uint32_t sum = BundleChecksum(b);
  std::memcpy(b.data() + 16, &sum, 4);
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The bytes of a hex dump read back from its lines `OFFSET: hh hh ...  ; ...`; lines of any
// other form (headings) are skipped. An offset that is not where the bytes so far end, or a
// malformed byte line, ends the result with a note that cannot match any file.
std::string BytesFromDump(const std::string& dump) {
  std::string bytes;
  std::istringstream lines(dump);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (line.empty() || HexDigit(line[0]) < 0 || colon == std::string::npos) continue;
    uint64_t offset = 0;
    for (size_t i = 0; i < colon; ++i) {
      if (HexDigit(line[i]) < 0) return bytes + "\n<bad offset> " + line;
      offset = offset * 16 + static_cast<uint64_t>(HexDigit(line[i]));
    }
    if (offset != bytes.size()) return bytes + "\n<offset out of order> " + line;
    size_t at = colon + 1;
    int n = 0;
    while (at + 2 < line.size() && line[at] == ' ' && HexDigit(line[at + 1]) >= 0 && HexDigit(line[at + 2]) >= 0) {
      bytes += static_cast<char>(HexDigit(line[at + 1]) * 16 + HexDigit(line[at + 2]));
      at += 3;
      ++n;
    }
    if (n < 1 || n > 16 || (at != line.size() && line[at] != ' ')) return bytes + "\n<bad byte line> " + line;
  }
  return bytes;
}

// Column of the `;` on every byte line that has a comment; all must be equal.
void CheckAligned(const std::string& dump) {
  std::istringstream lines(dump);
  size_t column = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || HexDigit(line[0]) < 0) continue;
    size_t semi = line.find(" ; ");
    if (semi == std::string::npos) continue;
    if (column == 0) column = semi;
    REQUIRE_MESSAGE(semi == column, line);
  }
  CHECK(column > 0);
}

}  // namespace

TEST_CASE("the hex dump holds every byte of the file once, in order, with the decoded fields") {
  std::string file = Compile(kModule);
  std::string dump = HexDump(file);
  CHECK(BytesFromDump(dump) == file);
  CheckAligned(dump);
  CHECK(dump.find("DUMP ERROR") == std::string::npos);
  CHECK(dump.find("unreferenced") == std::string::npos);
  CHECK(dump.find("overlapping") == std::string::npos);
  // Every section and record kind is named, down to the attribute payloads.
  for (const char* text : {"; header",
                           "; section table",
                           "; section 1 strings",
                           "; section 2 buffers",
                           "; section 3 constants",
                           "; section 4 computations",
                           "; section 5 code",
                           "; section 6 module",
                           "computation  3 'main' (entry)",
                           "(#9, #10) temp",
                           "; constant n4 s4[5]",
                           "n4[0..4] -8, -1, 0, 3, 7",
                           "m[0..3] 1, 2, 3, 4",
                           "m[4..5] 5, 6",
                           "= while(",
                           "attribute  0: condition=cond",
                           "window (13)",
                           "[0] pad high          1",
                           "dim labels (16)",
                           "kernel output feature 3",
                           "output spatial[1]",
                           "slice ranges (14)",
                           "\"sum_of_the_conv",
                           " lution_output\"",
                           "direction=LT",
                           "LT (",
                           "live-bytes bound",
                           "; padding",
                           "padding",
                           "; end of file"})
    CHECK_MESSAGE(dump.find(text) != std::string::npos, std::string(text));
  // The offset column is as wide as the file size needs (4 hex digits for this file).
  REQUIRE(file.size() > 0xfff);
  REQUIRE(file.size() <= 0xffff);
  CHECK(dump.find("\n0000: 4e 48 4c 4f 42 4e 44 4c ") != std::string::npos);
}

TEST_CASE("the hex dump reproduces every file the reader accepts, however odd its layout") {
  std::string good = Compile(kModule);
  auto program = ReadBundleFile(good, "good.bin");
  REQUIRE(program.ok());

  // A name that points into the middle of another string: those bytes are printed once, under
  // the first string, and the second names them without repeating them.
  {
    std::string bad = good;
    const BufferRecord& b = program->computations[3].buffers[0];
    std::string_view main_name = program->computations[3].name;
    uint32_t strings_at = program->sections[0].offset;
    uint32_t off = static_cast<uint32_t>(main_name.data() - program->bytes.data()) - strings_at + 1, len = 3;
    std::memcpy(bad.data() + b.file_offset, &off, 4);
    std::memcpy(bad.data() + b.file_offset + 4, &len, 4);
    Reseal(bad);
    std::string dump = HexDump(bad);
    CHECK(BytesFromDump(dump) == bad);
    CHECK(dump.find("overlapping bytes printed above") != std::string::npos);
    CHECK(dump.find("\"ain\"") != std::string::npos);
  }
  // A name holding a newline (the reader takes names as they are) cannot forge a line of bytes.
  {
    std::string bad = good;
    std::string_view name = program->computations[3].buffers[4].name;
    REQUIRE(name == "sum_of_the_convolution_output");
    std::memcpy(bad.data() + (name.data() - program->bytes.data()), "\n0000: 4e", 9);
    Reseal(bad);
    std::string dump = HexDump(bad);
    CHECK(BytesFromDump(dump) == bad);
    CHECK(dump.find("\\x0a0000: 4e") != std::string::npos);
  }
  // Padding the reader skips but that is not zero is shown as unreferenced bytes.
  {
    std::string bad = good;
    const BufferRecord& out = program->computations[3].buffers.back();  // the 5-element result tuple
    REQUIRE(out.tuple.size() == 5);
    uint32_t pad = out.file_offset + kBufferFixedSize + 4 * 5;  // then 4 bytes of padding to 8
    bad[pad] = 0x55;
    Reseal(bad);
    std::string dump = HexDump(bad);
    CHECK(BytesFromDump(dump) == bad);
    CHECK(dump.find("unreferenced") != std::string::npos);
  }
  // Every single-byte change the reader still accepts (checksum re-forged) dumps losslessly.
  int accepted = 0;
  for (size_t at = 0; at < good.size(); ++at) {
    for (uint8_t delta : {uint8_t{1}, uint8_t{0x80}}) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ delta);
      Reseal(bad);
      auto mutant = ReadBundleFile(bad, "bad.bin");
      if (!mutant.ok()) continue;
      ++accepted;
      std::ostringstream out;
      size_t dump_errors = HexDumpBundleProgram(*mutant, "bad.bin", out);
      REQUIRE_MESSAGE(dump_errors == 0, "byte " << at);
      REQUIRE_MESSAGE(BytesFromDump(out.str()) == bad, "byte " << at);
    }
  }
  CHECK(accepted > 0);
}

TEST_CASE("nhlo-objdump -x, --arena and a rejected file") {
  std::string file = Compile(kModule);
  auto run = [&](std::vector<std::string> args, const std::string& input, std::string* out, std::string* err) {
    std::istringstream in(input);
    std::ostringstream o, e;
    int code = ObjdumpMain(args, in, o, e);
    *out = o.str();
    *err = e.str();
    return code;
  };
  std::string out, err;
  CHECK(run({"-x", "-"}, file, &out, &err) == 0);
  CHECK(BytesFromDump(out) == file);
  CHECK(out.rfind("; <stdin>: ", 0) == 0);
  CHECK(run({"--hex", "-"}, file, &out, &err) == 0);
  CHECK(BytesFromDump(out) == file);

  CHECK(run({"--arena", "-"}, file, &out, &err) == 0);
  auto program = ReadBundleFile(file, "f");
  REQUIRE(program.ok());
  const ComputationRecord& entry = program->computations[program->entry];
  for (const ComputationRecord& c : program->computations)
    CHECK(out.find(" " + std::string(c.name) + " ") != std::string::npos);
  CHECK(out.find("arena " + std::to_string(program->arena_size) +
                 " bytes: the frame of entry #3 'main' (live-bytes bound " + std::to_string(entry.live_bytes_bound)) !=
        std::string::npos);

  std::string cut = file.substr(0, file.size() - 1);
  CHECK(run({"-x", "-"}, cut, &out, &err) == kExitInputRejected);
  CHECK(out.empty());
  CHECK(err.find("error: file size is") != std::string::npos);
}
