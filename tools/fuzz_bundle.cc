// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the bundle reader and the interpreter's loader. Each input is decoded
// twice: as it is (the header's size and checksum checks reject most mutants), and with the
// file size and checksum recomputed, so that mutants reach the section, buffer, bundle and
// attribute checks behind them. A decoded program is dumped (nhlo-objdump's renderers walk every
// decoded field) and loaded. Bad input must give an error, never a crash, a sanitizer report or
// a huge allocation. The `-x` hex dump of an accepted file must also give the file back when
// its hex columns are read (every byte once, in order), and never report a DUMP ERROR.
// Build and run: tools/fuzz-bundle [SECONDS]
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "codegen/bundle_reader.h"
#include "codegen/objdump.h"
#include "interp/interp.h"

namespace {

int HexDigit(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

// The bytes of `OFFSET: hh hh ...` lines, in order; aborts on an offset out of sequence.
std::string BytesFromHexDump(const std::string& dump) {
  std::string bytes;
  std::istringstream lines(dump);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (line.empty() || HexDigit(line[0]) < 0 || colon == std::string::npos) continue;
    if (std::strtoull(line.substr(0, colon).c_str(), nullptr, 16) != bytes.size()) std::abort();
    for (size_t at = colon + 1; at + 2 < line.size() && line[at] == ' '; at += 3) {
      int hi = HexDigit(line[at + 1]), lo = HexDigit(line[at + 2]);
      if (hi < 0 || lo < 0) break;
      bytes += static_cast<char>(hi * 16 + lo);
    }
  }
  return bytes;
}

void DecodeAndLoad(std::string bytes) {
  nhlo::Result<nhlo::BundleProgram> program = nhlo::ReadBundleFile(std::move(bytes), "fuzz.bin");
  if (!program.ok()) return;
  (void)nhlo::DumpBundleProgram(*program, "fuzz.bin");
  (void)nhlo::ArenaTable(*program, "fuzz.bin");
  std::ostringstream hex;
  if (nhlo::HexDumpBundleProgram(*program, "fuzz.bin", hex) != 0 || BytesFromHexDump(hex.str()) != program->bytes) std::abort();
  (void)nhlo::LoadForExecution(*program);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  DecodeAndLoad(bytes);
  if (bytes.size() >= nhlo::kHeaderSize && nhlo::LooksLikeBundle(bytes)) {
    uint32_t file_size = static_cast<uint32_t>(bytes.size());
    std::memcpy(&bytes[12], &file_size, 4);
    uint32_t checksum = nhlo::BundleChecksum(bytes);
    std::memcpy(&bytes[16], &checksum, 4);
    DecodeAndLoad(std::move(bytes));
  }
  return 0;
}
