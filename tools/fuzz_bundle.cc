// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the bundle reader and the interpreter's loader. Each input is decoded
// twice: as it is (the header's size and checksum checks reject most mutants), and with the
// file size and checksum recomputed, so that mutants reach the section, buffer, bundle and
// attribute checks behind them. A decoded program is dumped (nhlo-objdump's renderer walks every
// decoded field) and loaded. Bad input must give an error, never a crash, a sanitizer report or
// a huge allocation.
// Build and run: tools/fuzz-bundle [SECONDS]
#include <cstring>
#include <string>

#include "codegen/bundle_reader.h"
#include "codegen/objdump.h"
#include "interp/interp.h"

namespace {

void DecodeAndLoad(std::string bytes) {
  nhlo::Result<nhlo::BundleProgram> program = nhlo::ReadBundleFile(std::move(bytes), "fuzz.bin");
  if (!program.ok()) return;
  (void)nhlo::DumpBundleProgram(*program, "fuzz.bin");
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
