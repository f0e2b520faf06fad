// SPDX-License-Identifier: Apache-2.0
// End to end through nhlo-run: a module converts an f32 constant array to each low-precision
// type and bitcasts the result to an unsigned integer; the printed bits must equal the
// ml_dtypes encode tables in ../shared/numerics/tables (every line for the 8- and 4-bit types,
// every 97th line for bf16/f16 to keep the module small). Skipped when the tables are absent.
#include <doctest/doctest.h>

#include "shared_tables.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "driver/driver.h"

namespace {

std::string TablesDir() { return nhlo::testing::SharedTablesDir(); }

struct Row {
  uint32_t in;
  uint32_t out;
};

std::vector<Row> ReadTable(const std::string& path, int stride) {
  std::vector<Row> rows;
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return rows;
  char line[256];
  int n = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (line[0] == '#') continue;
    char* end;
    uint32_t in = static_cast<uint32_t>(std::strtoul(line, &end, 16));
    uint32_t out = static_cast<uint32_t>(std::strtoul(end, nullptr, 16));
    if (n++ % stride == 0) rows.push_back({in, out});
  }
  std::fclose(f);
  return rows;
}

std::string FloatLiteral(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  if (f != f) {
    // nan(0x...) keeps the payload, so the exact input bits reach the converter.
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%snan(0x%x)", (bits >> 31) ? "-" : "", bits & 0x7fffff);
    return (bits & 0x7fffff) ? buf : ((bits >> 31) ? "-nan" : "nan");
  }
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", f);
  return buf;
}

}  // namespace

TEST_CASE("nhlo-run convert + bitcast-convert prints the encode tables' bits" *
          doctest::skip(nhlo::testing::SharedTablesMissing())) {
  std::string dir = TablesDir();
  REQUIRE_MESSAGE(!dir.empty(), "NHLO_SHARED_DIR names no numerics/tables folder");
  struct Case {
    const char* table;
    const char* type;
    const char* bits_type;
    int stride;
  };
  const Case cases[] = {{"bf16", "bf16", "u16", 97},
                        {"f16", "f16", "u16", 97},
                        {"f8e4m3fn", "f8e4m3fn", "u8", 1},
                        {"f8e5m2", "f8e5m2", "u8", 1},
                        {"f8e4m3", "f8e4m3", "u8", 1},
                        {"f8e3m4", "f8e3m4", "u8", 1},
                        {"f8e4m3fnuz", "f8e4m3fnuz", "u8", 1},
                        {"f8e5m2fnuz", "f8e5m2fnuz", "u8", 1},
                        {"f8e4m3b11fnuz", "f8e4m3b11fnuz", "u8", 1},
                        {"f4e2m1fn", "f4e2m1fn", "u4", 1},
                        {"f8e8m0fnu", "f8e8m0fnu", "u8", 1}};
  int compared = 0, mismatches = 0;
  for (const Case& c : cases) {
    std::vector<Row> rows = ReadTable(dir + "/" + c.table + ".encode.txt", c.stride);
    REQUIRE(!rows.empty());
    std::string n = std::to_string(rows.size());
    std::string module = "HloModule convert_" + std::string(c.table) + "\nENTRY e {\n  x = f32[" + n + "] constant({";
    for (size_t i = 0; i < rows.size(); ++i) module += (i ? ", " : "") + FloatLiteral(rows[i].in);
    module += "})\n  y = " + std::string(c.type) + "[" + n + "] convert(x)\n  ROOT b = " + c.bits_type + "[" + n +
              "] bitcast-convert(y)\n}\n";
    std::string path =
        (std::filesystem::temp_directory_path() / ("nhlo_convert_" + std::string(c.table) + ".hlo")).string();
    {
      FILE* f = std::fopen(path.c_str(), "w");
      std::fputs(module.c_str(), f);
      std::fclose(f);
    }
    std::istringstream in;
    std::ostringstream out, err;
    int code = nhlo::RunMain({path, "--passes=none", "--print-values=all"}, in, out, err);
    std::filesystem::remove(path);
    REQUIRE_MESSAGE(code == 0, err.str());
    std::string text = out.str();
    size_t open = text.find('{');
    REQUIRE(open != std::string::npos);
    std::istringstream values(text.substr(open + 1));
    for (const Row& r : rows) {
      unsigned long got = 0;
      char sep;
      values >> got >> sep;
      ++compared;
      if (got != r.out) {
        if (++mismatches < 10)
          MESSAGE(c.table << ": input 0x" << std::hex << r.in << " gave 0x" << got << ", table 0x" << r.out);
      }
    }
  }
  MESSAGE("compared " << compared << " conversions through nhlo-run");
  CHECK(mismatches == 0);
  CHECK(compared > 20000);
}

// nhlo-compile never writes its bundle over its own input, and writes into a FIFO or device
// instead of replacing it with a regular file.
TEST_CASE("nhlo-compile output safety") {
  std::string dir =
      std::filesystem::temp_directory_path().string() + "/nhlo-output-safety-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string hlo = dir + "/m.hlo";
  const std::string text = "HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }\n";
  { std::ofstream(hlo) << text; }
  std::istringstream in;
  std::ostringstream out, err;
  CHECK(nhlo::CompileMain({hlo, "-o", hlo}, in, out, err) == nhlo::kExitUsage);
  CHECK(err.str().find("names the input file") != std::string::npos);
  std::ifstream back(hlo);
  std::string kept((std::istreambuf_iterator<char>(back)), std::istreambuf_iterator<char>());
  CHECK(kept == text);
  // Through a symlink: the file it names is replaced, the link stays a link.
  std::string target = dir + "/real.bin", link = dir + "/link.bin";
  { std::ofstream(target) << "old"; }
  std::filesystem::create_symlink(target, link);
  CHECK(nhlo::CompileMain({hlo, "-o", link}, in, out, err) == nhlo::kExitOk);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(std::filesystem::file_size(target) > 100);
  // /dev/null stays a device.
  CHECK(nhlo::CompileMain({hlo, "-o", "/dev/null"}, in, out, err) == nhlo::kExitOk);
  CHECK(std::filesystem::is_character_file("/dev/null"));
  std::filesystem::remove_all(dir);
}
