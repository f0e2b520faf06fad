// SPDX-License-Identifier: Apache-2.0
// End to end through nhlo-run: a module converts an f32 constant array to each low-precision
// type and bitcasts the result to an unsigned integer; the printed bits must equal the
// ml_dtypes encode tables in ../shared/numerics/tables (every line for the 8- and 4-bit types,
// every 97th line for bf16/f16 to keep the module small). Skipped when the tables are absent.
#include <doctest/doctest.h>

#include "shared_tables.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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

TEST_CASE("nhlo-run convert + bitcast-convert prints the encode tables' bits") {
  std::string dir = TablesDir();
  if (dir.empty()) {
    MESSAGE("shared/numerics/tables not found: skipping the table comparison");
    return;
  }
  struct Case {
    const char* table;
    const char* type;
    const char* bits_type;
    int stride;
  };
  const Case cases[] = {{"bf16", "bf16", "u16", 97},          {"f16", "f16", "u16", 97},
                        {"f8e4m3fn", "f8e4m3fn", "u8", 1},     {"f8e5m2", "f8e5m2", "u8", 1},
                        {"f8e4m3", "f8e4m3", "u8", 1},         {"f8e3m4", "f8e3m4", "u8", 1},
                        {"f8e4m3fnuz", "f8e4m3fnuz", "u8", 1}, {"f8e5m2fnuz", "f8e5m2fnuz", "u8", 1},
                        {"f8e4m3b11fnuz", "f8e4m3b11fnuz", "u8", 1}, {"f4e2m1fn", "f4e2m1fn", "u4", 1},
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
    std::string path = (std::filesystem::temp_directory_path() / ("nhlo_convert_" + std::string(c.table) + ".hlo")).string();
    { FILE* f = std::fopen(path.c_str(), "w"); std::fputs(module.c_str(), f); std::fclose(f); }
    std::istringstream in;
    std::ostringstream out, err;
    int code = nhlo::RunMain({path, "--passes=none"}, in, out, err);
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
        if (++mismatches < 10) MESSAGE(c.table << ": input 0x" << std::hex << r.in << " gave 0x" << got << ", table 0x" << r.out);
      }
    }
  }
  MESSAGE("compared " << compared << " conversions through nhlo-run");
  CHECK(mismatches == 0);
  CHECK(compared > 20000);
}
