// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the bundle reader and the interpreter's loader. Each input is decoded
// twice: as it is (the header's size and checksum checks reject most mutants), and with the file
// size and checksum recomputed, so that mutants reach the section, buffer, bundle and attribute
// checks behind them. A decoded program is dumped (nhlo-objdump's renderers walk every decoded
// field) and loaded. Bad input must give an error, never a crash, a sanitizer report or a huge
// allocation. Devices are settled as nhlo-run settles them (RunDevices), so a header asking for
// 16384 x 4096 devices must be refused before anything is made per device. The `-x` hex dump of an
// accepted file must also give the file back when its hex columns are read (every byte once, in
// order), and never report a DUMP ERROR. A program the loader accepts is run on random arguments
// with a step limit (when it is small).
//
// Structure-aware mutation (LLVMFuzzerCustomMutator): half of the mutants are made by decoding the
// input with the project's reader and rewriting one to three fields in place, at the file offsets
// the reader records: operand, result, root and parameter indices, buffer locations, sizes,
// dimensions and types, callee frames, frame sizes, opcodes, attribute payloads (Int, IntList,
// Computation, Enum, Window, SliceRanges, PaddingConfig) and the module header's device counts (0,
// 1, a few, 4096, 4097, 2^32 - 1), each to a plausible value (another index of the same
// computation, a neighbour, an extreme). The others come from libFuzzer's byte mutations. Either
// way the file size and checksum are recomputed, so most mutants pass the header and reach the
// reader's deep checks, the loader and the interpreter.
// Build and run: tools/fuzz-bundle [SECONDS]
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>

#include "codegen/bundle_reader.h"
#include "codegen/objdump.h"
#include "driver/run_devices.h"
#include "driver/values.h"
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

// The shape of buffer `index` of `comp`, tuples included.
nhlo::Shape ShapeOf(const nhlo::ComputationRecord& comp, uint32_t index, nhlo::Module& scratch) {
  const nhlo::BufferRecord& b = comp.buffers[index];
  if (b.type != nhlo::PrimitiveType::kTuple) return scratch.MakeArrayShape(b.type, b.dims);
  std::vector<nhlo::Shape> elements;
  for (uint32_t e : b.tuple) elements.push_back(ShapeOf(comp, e, scratch));
  return scratch.MakeTupleShape(elements);
}

uint64_t LeafBytes(const nhlo::ComputationRecord& comp, uint32_t index) {
  const nhlo::BufferRecord& b = comp.buffers[index];
  if (b.type != nhlo::PrimitiveType::kTuple) return b.size;
  uint64_t total = 0;
  for (uint32_t e : b.tuple) total += LeafBytes(comp, e);
  return total;
}

// Programs are run only when arena plus arguments fit in kMaxRunBytes and no buffer has more
// than kMaxRunElements elements: the step limit counts bundles, not the work inside a kernel, so
// the big models among the seeds would run for minutes under the sanitizers.
constexpr uint64_t kMaxRunBytes = 64 << 20;
constexpr int64_t kMaxRunElements = 1 << 14;
constexpr uint64_t kMaxSteps = 20000;
constexpr uint64_t kMaxRunDevices = 8;  // each a thread with its own arena
constexpr uint64_t kMaxScratchBytes = 1 << 20;

void DecodeAndLoad(std::string bytes) {
  nhlo::Result<nhlo::BundleProgram> program = nhlo::ReadBundleFile(std::move(bytes), "fuzz.bin");
  if (!program.ok()) return;
  (void)nhlo::DumpBundleProgram(*program, "fuzz.bin");
  (void)nhlo::ArenaTable(*program, "fuzz.bin");
  std::ostringstream hex;
  if (nhlo::HexDumpBundleProgram(*program, "fuzz.bin", hex) != 0 || BytesFromHexDump(hex.str()) != program->bytes)
    std::abort();
  // The devices as nhlo-run settles them (header counts, or the ones the collectives imply).
  nhlo::Result<nhlo::DeviceGrid> devices = nhlo::RunDevices(*program, "", nullptr);
  if (!devices.ok()) return;
  const nhlo::DeviceGrid grid = *devices;
  if (grid.count() > kMaxRunDevices) {
    (void)nhlo::LoadForExecution(*program);  // one device's checks, not thousands of machines
    return;
  }
  nhlo::ExecuteOptions options;
  options.max_steps = kMaxSteps;
  // As nhlo-run gives kernels what --max-memory leaves; here on the scale of kMaxRunElements (a
  // padded FFT of 38 MB of working set is correct but took 53 s under the sanitizers).
  options.scratch_limit = kMaxScratchBytes;
  if (!nhlo::LoadForExecution(*program, grid, options).ok()) return;
  const nhlo::ComputationRecord& entry = program->computations[program->entry];
  uint64_t need = program->arena_size;
  for (uint32_t p : entry.params) need += LeafBytes(entry, p);
  if (need * grid.count() > kMaxRunBytes) return;
  for (const nhlo::ComputationRecord& c : program->computations)
    for (const nhlo::BufferRecord& b : c.buffers)
      if (b.ElementCount() < 0 || b.ElementCount() > kMaxRunElements) return;
  nhlo::Module scratch;
  std::vector<std::vector<nhlo::Value>> args(grid.count());
  for (uint64_t d = 0; d < grid.count(); ++d)
    for (size_t i = 0; i < entry.params.size(); ++i)
      args[d].push_back(nhlo::RandomValue(ShapeOf(entry, entry.params[i], scratch), i + 1000 * d));
  (void)nhlo::ExecuteOnDevices(*program, grid, std::move(args), options);
}

// Writes the real file size and the checksum into the header.
void Forge(uint8_t* data, size_t size) {
  if (size < nhlo::kHeaderSize || !nhlo::LooksLikeBundle(std::string_view(reinterpret_cast<char*>(data), size))) return;
  uint32_t file_size = static_cast<uint32_t>(size);
  std::memcpy(data + 12, &file_size, 4);
  nhlo::StoreBundleChecksum(reinterpret_cast<char*>(data), size);
}

// One field of a decoded file: where it is, how wide, and what kind of value suits it.
struct Field {
  enum Kind { kIndex, kI64, kEnum, kOpcode, kType, kComputation, kDevices };
  size_t offset;
  int width;  // 1, 2, 4 or 8 bytes
  Kind kind;
  uint64_t bound;  // indices: the count they index into (computation indices: the computation's own index)
};

void Collect(const nhlo::BundleProgram& p, std::vector<Field>& out) {
  // The module header's replica_count and num_partitions (the module section's last 16 bytes
  // start with them): nhlo-run settles its devices from these before anything per device.
  for (const nhlo::SectionRecord& section : p.sections)
    if (section.id == nhlo::SectionId::kModule && section.size >= 16) {
      out.push_back({section.offset + section.size - 16u, 4, Field::kDevices, 0});
      out.push_back({section.offset + section.size - 12u, 4, Field::kDevices, 0});
    }
  for (size_t ci = 0; ci < p.computations.size(); ++ci) {
    const nhlo::ComputationRecord& c = p.computations[ci];
    uint64_t n = c.buffers.size();
    out.push_back({c.file_offset + 16u, 4, Field::kIndex, n});  // root
    out.push_back({c.file_offset + 32u, 8, Field::kI64, 0});    // frame size
    for (size_t i = 0; i < c.params.size(); ++i) out.push_back({c.file_offset + 56 + 4 * i, 4, Field::kIndex, n});
    for (const nhlo::BufferRecord& b : c.buffers) {
      out.push_back({b.file_offset + 8u, 1, Field::kType, 0});
      out.push_back({b.file_offset + 24u, 8, Field::kI64, 0});  // size
      out.push_back({b.file_offset + 32u, 8, Field::kI64, 0});  // location
      for (size_t d = 0; d < b.dims.size(); ++d) out.push_back({b.file_offset + 40 + 8 * d, 8, Field::kI64, 0});
      for (size_t t = 0; t < b.tuple.size(); ++t)
        out.push_back({b.file_offset + 40 + 8 * b.dims.size() + 4 * t, 4, Field::kIndex, n});
    }
    for (const nhlo::BundleRecord& b : c.bundles) {
      out.push_back({b.file_offset + 0u, 2, Field::kOpcode, 0});
      out.push_back({b.file_offset + 8u, 4, Field::kIndex, n});  // result
      out.push_back({b.file_offset + 24u, 8, Field::kI64, 0});   // callee frame
      for (size_t k = 0; k < b.operands.size(); ++k) out.push_back({b.file_offset + 32 + 4 * k, 4, Field::kIndex, n});
      for (const nhlo::AttrRecord& a : b.attrs) {
        size_t payload = a.file_offset + nhlo::kAttrHeaderSize;
        switch (a.kind) {
          case nhlo::AttrKind::Int: out.push_back({payload, 8, Field::kI64, 0}); break;
          case nhlo::AttrKind::Enum: out.push_back({payload, 1, Field::kEnum, 0}); break;
          case nhlo::AttrKind::Computation: out.push_back({payload + 4, 4, Field::kComputation, ci}); break;
          case nhlo::AttrKind::ComputationList:
            for (size_t k = 0; k < a.computations().size(); ++k)
              out.push_back({payload + 4 + 4 * k, 4, Field::kComputation, ci});
            break;
          case nhlo::AttrKind::IntList:
            for (size_t k = 0; k < a.ints().size(); ++k) out.push_back({payload + 4 + 8 * k, 8, Field::kI64, 0});
            break;
          case nhlo::AttrKind::Window:
            for (size_t k = 0; k < a.window().size() * 7; ++k) out.push_back({payload + 4 + 8 * k, 8, Field::kI64, 0});
            break;
          case nhlo::AttrKind::SliceRanges:
          case nhlo::AttrKind::PaddingConfig:
            for (size_t k = 0; k < (a.slices().size() + a.padding().size()) * 3; ++k)
              out.push_back({payload + 4 + 8 * k, 8, Field::kI64, 0});
            break;
          // Left to the byte mutator: single words, text, and kinds whose fields depend on others.
          case nhlo::AttrKind::Bool:
          case nhlo::AttrKind::Float:
          case nhlo::AttrKind::String:
          case nhlo::AttrKind::Ident:
          case nhlo::AttrKind::InstructionList:
          case nhlo::AttrKind::Shape:
          case nhlo::AttrKind::Raw:
          case nhlo::AttrKind::Config:
          case nhlo::AttrKind::Literal:
          case nhlo::AttrKind::DimLabels:
          case nhlo::AttrKind::EnumList:
          case nhlo::AttrKind::ReplicaGroups:
          case nhlo::AttrKind::PairList:
          case nhlo::AttrKind::KeyValues:
          case nhlo::AttrKind::ShapeList:
          case nhlo::AttrKind::BoolList: break;
        }
      }
    }
  }
}

// A plausible new value for a field holding `old`.
uint64_t NewValue(const Field& f, uint64_t old, std::mt19937_64& rng) {
  auto pick = [&](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  switch (f.kind) {
    case Field::kIndex: return pick(8) == 0 ? f.bound + pick(2) : pick(f.bound);
    case Field::kComputation: return pick(8) == 0 ? f.bound : pick(f.bound);
    case Field::kEnum: return pick(8);
    case Field::kOpcode: return pick(133);
    case Field::kType: return pick(37);
    case Field::kDevices: {
      static const uint64_t kCounts[] = {0, 1, 2, 3, 4, 8, 4096, 4097, 16384, 65536, 0x7fffffff, 0xffffffff};
      return kCounts[pick(sizeof(kCounts) / sizeof(kCounts[0]))];
    }
    case Field::kI64: break;
  }
  static const uint64_t kExtremes[] = {0,
                                       1,
                                       2,
                                       3,
                                       4,
                                       8,
                                       16,
                                       64,
                                       4096,
                                       uint64_t{1} << 31,
                                       uint64_t{1} << 32,
                                       uint64_t{1} << 62,
                                       uint64_t{INT64_MAX},
                                       uint64_t{1} << 63,
                                       ~uint64_t{0}};
  switch (pick(4)) {
    case 0: return old + 1 + pick(8);
    case 1: return old - 1 - pick(8);
    case 2: return kExtremes[pick(sizeof(kExtremes) / sizeof(kExtremes[0]))];
    default: return -(pick(4) + 1) * (pick(2) ? 1 : 8) + (pick(2) ? 0 : old);
  }
}

// Rewrites one to three fields of a decodable file in place; false if it does not decode.
bool MutateFields(uint8_t* data, size_t size, std::mt19937_64& rng) {
  std::string copy(reinterpret_cast<char*>(data), size);
  Forge(reinterpret_cast<uint8_t*>(copy.data()), copy.size());
  nhlo::Result<nhlo::BundleProgram> program = nhlo::ReadBundleFile(std::move(copy), "fuzz.bin");
  if (!program.ok()) return false;
  std::vector<Field> fields;
  Collect(*program, fields);
  if (fields.empty()) return false;
  for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
    const Field& f = fields[rng() % fields.size()];
    if (f.offset + f.width > size) continue;
    uint64_t old = 0;
    std::memcpy(&old, data + f.offset, f.width);  // little-endian host
    uint64_t v = NewValue(f, old, rng);
    std::memcpy(data + f.offset, &v, f.width);
  }
  return true;
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2 == 0 && MutateFields(data, size, rng)) {
    Forge(data, size);
    return size;
  }
  size = LLVMFuzzerMutate(data, size, max_size);
  Forge(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  DecodeAndLoad(bytes);
  if (bytes.size() >= nhlo::kHeaderSize && nhlo::LooksLikeBundle(bytes)) {
    Forge(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size());
    DecodeAndLoad(std::move(bytes));
  }
  return 0;
}
