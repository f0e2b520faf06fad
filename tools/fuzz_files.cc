// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the files nhlo-run reads and writes (docs/reliability.md). The first byte
// picks the surface:
//
// - `.npz` arguments (even): the next 17 bytes give up to four parameters (type, rank, dims)
//   and the rest is the archive, read as `--args=@` reads one (ArgumentsFromArchive) and as a
//   single `.npy` (ReadNpy). Half of the mutants are made by rewriting the archive's own size
//   fields (central directory and local headers: compressed and uncompressed sizes, offsets,
//   zip64 extras, the end record's count and directory bounds) to lies: 0, 1, a neighbour,
//   2^31, 4 GiB - 1, a gigabyte. Findings: a crash, a sanitizer report, an accepted value whose
//   shape is not its parameter's, or an allocation past the archive limit (the script runs with
//   -malloc_limit_mb=64, far above what a 4 KiB input may justify: ArchiveLimit for four small
//   parameters is about 4.3 MB).
//
// - output paths (odd): the rest picks 1-3 inputs among existing files and 1-3 outputs among
//   spellings of files, hard and symbolic links, link chains, a directory through a link,
//   names not yet there, `-` and a directory output with its file pattern (`--dump-dir`), in a
//   scratch directory made once. OutputConflict must refuse every output that is one of the
//   inputs or another output (a model of which file each spelling is decides), and must accept
//   the others; a dangling symlink may go either way (it is replaced, not written through, but
//   names a path another output may create).
// Build and run: tools/fuzz-files [SECONDS]
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "driver/common.h"
#include "driver/tensor_files.h"

namespace {

constexpr size_t kPrefix = 18;  // mode byte, parameter count, four (type, rank, dim, dim)

// ---- .npz ---------------------------------------------------------------------------------

void FuzzArchive(const uint8_t* data, size_t size) {
  if (size < kPrefix) return;
  static const nhlo::PrimitiveType kTypes[] = {
      nhlo::PrimitiveType::kF32, nhlo::PrimitiveType::kS8,       nhlo::PrimitiveType::kBF16, nhlo::PrimitiveType::kPred,
      nhlo::PrimitiveType::kS64, nhlo::PrimitiveType::kF8E4M3FN, nhlo::PrimitiveType::kS4,   nhlo::PrimitiveType::kC64};
  std::vector<nhlo::TensorSpec> params;
  const int count = 1 + data[1] % 4;
  for (int i = 0; i < count; ++i) {
    const uint8_t* p = data + 2 + 4 * i;
    nhlo::TensorSpec spec;
    spec.name = std::string(1, static_cast<char>('a' + i));
    spec.what = "parameter " + std::to_string(i + 1) + " '" + spec.name + "'";
    spec.type = kTypes[p[0] % 8];
    for (int d = 0; d < p[1] % 3; ++d) spec.dims.push_back(p[2 + d] % 6);
    params.push_back(std::move(spec));
  }
  std::string_view archive(reinterpret_cast<const char*>(data + kPrefix), size - kPrefix);
  auto values = nhlo::ArgumentsFromArchive(archive, "fuzz.npz", params);
  if (values.ok()) {
    if (values->size() != params.size()) std::abort();
    for (size_t i = 0; i < params.size(); ++i)
      if ((*values)[i].type != params[i].type || (*values)[i].dims != params[i].dims) std::abort();
  }
  auto one = nhlo::ReadNpy(archive, "fuzz.npy", params[0]);
  if (one.ok() && (one->type != params[0].type || one->dims != params[0].dims)) std::abort();
}

uint32_t Le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Rewrites one to three size or offset fields of the zip structures in the archive part.
bool LieAboutSizes(uint8_t* data, size_t size, std::mt19937_64& rng) {
  if (size < kPrefix + 22) return false;
  uint8_t* z = data + kPrefix;
  const size_t n = size - kPrefix;
  struct Field {
    size_t at;
    int width;
  };
  std::vector<Field> fields;
  for (size_t at = 0; at + 4 <= n; ++at) {
    uint32_t sig = Le32(z + at);
    if (sig == 0x02014b50 && at + 46 <= n) {  // central directory: csize, usize, local offset
      for (size_t f : {20, 24, 42}) fields.push_back({at + f, 4});
      size_t name = z[at + 28] | z[at + 29] << 8, extra = z[at + 30] | z[at + 31] << 8;
      for (size_t e = at + 46 + name; e + 12 <= n && e + 12 <= at + 46 + name + extra; e += 8)
        fields.push_back({e + 4, 8});                // zip64 extra values
    } else if (sig == 0x04034b50 && at + 30 <= n) {  // local header: csize, usize
      for (size_t f : {18, 22}) fields.push_back({at + f, 4});
    } else if (sig == 0x06054b50 && at + 22 <= n) {  // end record: count, directory size and offset
      for (size_t f : {10, 12, 16}) fields.push_back({at + f, f == 10 ? 2 : 4});
    }
  }
  if (fields.empty()) return false;
  static const uint64_t kLies[] = {0,
                                   1,
                                   2,
                                   46,
                                   4096,
                                   uint64_t{1} << 30,
                                   uint64_t{1} << 31,
                                   0xffffffffu,
                                   uint64_t{1} << 32,
                                   uint64_t{1} << 40,
                                   ~uint64_t{0}};
  for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
    const Field& f = fields[rng() % fields.size()];
    uint64_t old = 0;
    for (int i = f.width; i-- > 0;) old = old << 8 | z[f.at + i];
    uint64_t v = rng() % 2 ? kLies[rng() % (sizeof(kLies) / sizeof(kLies[0]))] : old + (rng() % 9) - 4;
    if (f.width == 2)
      z[f.at] = static_cast<uint8_t>(v), z[f.at + 1] = static_cast<uint8_t>(v >> 8);
    else if (f.width == 4)
      Put32(z + f.at, static_cast<uint32_t>(v));
    else
      Put64(z + f.at, v);
  }
  return true;
}

// ---- output paths -------------------------------------------------------------------------

// One spelling of a path and the file it is: `id` names the file (equal ids, same file); an
// empty id is a dangling symlink, which may go either way.
struct Spelling {
  std::string path;
  std::string id;
  bool exists;
};

std::string g_root;
std::vector<Spelling> g_spellings;

void MakeScratch() {
  namespace fs = std::filesystem;
  char templ[] = "/tmp/nhlo-fuzz-files-XXXXXX";
  if (!mkdtemp(templ)) std::abort();
  g_root = templ;
  const std::string r = g_root;
  fs::create_directory(r + "/sub");
  for (const char* f : {"/f0", "/f1", "/f2", "/sub/f3", "/sub/out0.npy"}) std::ofstream(r + f) << "x";
  fs::create_hard_link(r + "/f1", r + "/h1");
  fs::create_symlink(r + "/f0", r + "/l0");
  fs::create_symlink("l0", r + "/l2");  // a chain, relative
  fs::create_directory_symlink(r + "/sub", r + "/ld");
  fs::create_symlink(r + "/n0", r + "/dl");  // dangling
  struct Named {
    std::vector<std::string> spellings;
    std::string id;
    bool exists;
  };
  const std::vector<Named> files = {
      {{"/f0", "/./f0", "/sub/../f0", "//f0", "/l0", "/l2"}, "F0", true},
      {{"/f1", "/h1", "/sub/../h1"}, "F1", true},
      {{"/f2"}, "F2", true},
      {{"/sub/f3", "/ld/f3", "/sub/./f3"}, "F3", true},
      {{"/sub/out0.npy", "/ld/out0.npy"}, "OUT0", true},
      {{"/n0", "/./n0"}, "N0", false},
      {{"/sub/n1", "/ld/n1"}, "N1", false},
      {{"/sub/out7.npy", "/ld/out7.npy"}, "OUT7", false},
      {{"/dl"}, "", true},
  };
  for (const Named& f : files)
    for (const std::string& s : f.spellings) g_spellings.push_back({r + s, f.id, f.exists});
}

// Whether a directory output (`sub` through any spelling, pattern outN.npy) writes the file `id`.
bool DirWrites(const std::string& id) { return id == "OUT0" || id == "OUT7"; }

void FuzzOutputs(FuzzedDataProvider& in) {
  std::vector<const Spelling*> existing;
  for (const Spelling& s : g_spellings)
    if (s.exists && !s.id.empty()) existing.push_back(&s);
  std::vector<std::string> inputs;
  std::vector<std::string> input_ids;
  for (int i = in.ConsumeIntegralInRange(1, 3); i > 0; --i) {
    const Spelling* s = existing[in.ConsumeIntegralInRange<size_t>(0, existing.size() - 1)];
    inputs.push_back(s->path);
    input_ids.push_back(s->id);
  }
  struct Out {
    nhlo::OutputPath path;
    std::string id;  // for a directory output: "SUB" or "ROOT"
    bool dir = false, dash = false;
  };
  std::vector<Out> outs;
  static const char* const kFlags[] = {"-o", "--output", "--save-args"};
  for (int i = in.ConsumeIntegralInRange(1, 3); i > 0; --i) {
    Out o;
    int kind = in.ConsumeIntegralInRange(0, 9);
    if (kind == 0) {
      o.dash = true;
      o.path = {"--output", "-", ""};
    } else if (kind == 1) {
      o.dir = true;
      static const char* const kDirs[] = {"/sub", "/ld", "/sub/.", "/"};
      int d = in.ConsumeIntegralInRange(0, 3);
      o.path = {"--dump-dir", g_root + kDirs[d], "out[0-9]+\\.npy"};
      o.id = d == 3 ? "ROOT" : "SUB";
    } else {
      const Spelling& s = g_spellings[in.ConsumeIntegralInRange<size_t>(0, g_spellings.size() - 1)];
      o.path = {kFlags[in.ConsumeIntegralInRange(0, 2)], s.path, ""};
      o.id = s.id;
    }
    outs.push_back(std::move(o));
  }
  // The model: must refuse (a real clash), may refuse (a dangling link is involved), or neither.
  bool must = false, may = false;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Out& o = outs[i];
    if (o.dash) continue;
    for (const std::string& id : input_ids) {
      if (o.dir)
        must |= o.id == "SUB" && DirWrites(id);
      else
        must |= o.id == id;
    }
    for (size_t j = 0; j < i; ++j) {
      const Out& p = outs[j];
      if (p.dash) continue;
      if (o.dir && p.dir)
        must |= o.id == p.id;
      else if (o.dir || p.dir) {
        const Out& dir = o.dir ? o : p;
        const Out& file = o.dir ? p : o;
        must |= dir.id == "SUB" && DirWrites(file.id);
        may |= file.id.empty();
      } else if (o.id.empty() || p.id.empty()) {
        must |= o.path.path == p.path.path;
        may |= true;
      } else {
        must |= o.id == p.id;
      }
    }
  }
  std::vector<nhlo::OutputPath> paths;
  for (const Out& o : outs) paths.push_back(o.path);
  std::string why = nhlo::OutputConflict(inputs, paths);
  if (must && why.empty()) {
    std::fprintf(stderr, "fuzz-files: a clash was not refused\n");
    std::abort();
  }
  if (!must && !may && !why.empty()) {
    std::fprintf(stderr, "fuzz-files: refused without a clash: %s\n", why.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  MakeScratch();
  std::atexit([] { std::filesystem::remove_all(g_root); });
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (size > 0 && data[0] % 2 == 0 && rng() % 2 == 0 && LieAboutSizes(data, size, rng)) return size;
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    FuzzArchive(data, size);
  } else {
    FuzzedDataProvider in(data + 1, size - 1);
    FuzzOutputs(in);
  }
  return 0;
}
