// SPDX-License-Identifier: Apache-2.0
// Bundle writer, reader and interpreter end to end: determinism, the format's fixed fields,
// and corrupted files (also with a re-forged checksum) that must be rejected or executed
// safely, never crash.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "interp/interp.h"
#include "ir/verifier.h"
#include "parser/parser.h"

using namespace nhlo;

namespace {

const char* kModule = R"(HloModule unit
ENTRY e {
  x = f32[2,3] parameter(0)
  w = f32[3,2] constant({ {1, 2}, {3, 4}, {5, 6} })
  d = f32[2,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = s4[3] constant({-8, 1, 7})
  c = bf16[2,2] convert(d)
  ROOT t = (f32[2,2], bf16[2,2], s4[3]) tuple(d, c, n)
})";

std::string Compile(const char* text, TargetArch arch = TargetArch::kV4) {
  auto m = ParseModule("unit.hlo", text);
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  CodegenOptions options;
  options.arch = arch;
  auto bytes = EmitBundleFile(**m, options);
  REQUIRE(bytes.ok());
  return *bytes;
}

uint32_t U32At(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

void Reseal(std::string& b) {
  uint32_t sum = BundleChecksum(b);
  std::memcpy(b.data() + 16, &sum, 4);
}

}  // namespace

TEST_CASE("bundle files are deterministic and carry the documented header") {
  std::string a = Compile(kModule), b = Compile(kModule);
  CHECK(a == b);
  CHECK(std::memcmp(a.data(), "NHLOBNDL", 8) == 0);
  CHECK(static_cast<uint8_t>(a[8]) == kBundleVersion);
  CHECK(static_cast<uint8_t>(a[10]) == 4);
  CHECK(U32At(a, 12) == a.size());
  CHECK(U32At(a, 16) == BundleChecksum(a));
  CHECK(U32At(a, 20) == kSectionCount);
  CHECK(static_cast<uint8_t>(Compile(kModule, TargetArch::kV3)[10]) == 3);
}

TEST_CASE("the reader decodes what the writer wrote, and the interpreter runs it") {
  auto program = ReadBundleFile(Compile(kModule), "unit.bin");
  REQUIRE(program.ok());
  CHECK(program->module_name == "unit");
  REQUIRE(program->computations.size() == 1);
  CHECK(program->computations[0].bundles.size() == 6);
  auto x = ParseValue("f32[2,3] {{1, 0, 0}, {0, 1, 1}}", "x");
  REQUIRE(x.ok());
  auto result = Execute(*program, {*x});
  REQUIRE(result.ok());
  REQUIRE(result->tuple.size() == 3);
  CHECK(PrintValue(result->tuple[0]) == "f32[2,2] { {1, 2}, {8, 10} }");
  CHECK(PrintValue(result->tuple[1]) == "bf16[2,2] { {1, 2}, {8, 10} }");
  CHECK(PrintValue(result->tuple[2]) == "s4[3] {-8, 1, 7}");
  auto wrong = ParseValue("f32[3,2] {{1, 0}, {0, 1}, {1, 1}}", "x");
  CHECK(!Execute(*program, {*wrong}).ok());
  CHECK(!Execute(*program, {}).ok());
}

TEST_CASE("every single-byte corruption is rejected or runs safely, even with a forged checksum") {
  std::string good = Compile(kModule);
  auto x = ParseValue("f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "x");
  REQUIRE(x.ok());
  int checksum_rejections = 0;
  std::mt19937 rng(99);
  for (size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    if (!ReadBundleFile(bad, "bad.bin").ok()) ++checksum_rejections;
    Reseal(bad);  // now only the structural validation stands between the bytes and the kernels
    auto program = ReadBundleFile(bad, "bad.bin");
    if (program.ok()) (void)Execute(*program, {*x});
  }
  CHECK(checksum_rejections == static_cast<int>(good.size()));
  for (size_t n = 0; n < good.size(); ++n) CHECK(!ReadBundleFile(good.substr(0, n), "cut.bin").ok());
}
