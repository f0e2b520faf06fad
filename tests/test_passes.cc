// SPDX-License-Identifier: Apache-2.0
// The passes keep the program's meaning: each module is run through nhlo-run with
// --passes=none and with the pass(es), on many random inputs, and the printed results must be
// identical; the bf16 batch-norm upcast must bring results at least as close to an f64
// reference. QuantizeMX is checked against the OCP MX tables (ocp_floor_rne lines).
#include <doctest/doctest.h>

#include "shared_tables.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "driver/driver.h"
#include "interp/mx.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/uses.h"
#include "parser/parser.h"
#include "passes/pass.h"
#include "types/float_cast.h"

namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() / ("nhlo_test_" + name + ".hlo")).string();
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

std::string Run(const std::string& path, std::vector<std::string> args) {
  args.insert(args.begin(), path);
  std::istringstream in;
  std::ostringstream out, err;
  int code = nhlo::RunMain(args, in, out, err);
  REQUIRE_MESSAGE(code == 0, err.str());
  return out.str();
}

// The element texts of a printed tuple result `(shape, ...) (e0, e1, ...)`.
std::vector<std::string> TupleElements(const std::string& text) {
  size_t body = text.find(") (");
  REQUIRE(body != std::string::npos);
  std::vector<std::string> parts(1);
  int depth = 0;
  for (size_t i = body + 3; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{' || c == '(') ++depth;
    if (c == '}' || c == ')') --depth;
    if (depth < 0) break;
    if (depth == 0 && c == ',')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

void CheckSameResults(const std::string& name, const std::string& module, const std::string& passes, int seeds) {
  std::string path = WriteTemp(name, module);
  for (int seed = 1; seed <= seeds; ++seed) {
    std::string seed_flag = "--random-args=" + std::to_string(seed);
    std::string before = Run(path, {"--passes=none", seed_flag});
    std::string after = Run(path, {"--passes=" + passes, "--verify-each", seed_flag});
    CHECK_MESSAGE(before == after, name << " seed " << seed << "\nwithout: " << before << "with:    " << after);
  }
  std::filesystem::remove(path);
}

}  // namespace

TEST_CASE("neuron-int-matmul-downcast keeps integer dots exact while |products| < 2^24") {
  CheckSameResults("int_dot", R"(HloModule m
ENTRY e {
  a = s8[4,16] parameter(0)
  b = s8[16,5] parameter(1)
  c = s32[3,2,16] parameter(2)
  d = s32[3,16,4] parameter(3)
  x = s32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = s32[3,2,4] dot(c, d), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  z = s16[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (s32[4,5], s32[3,2,4], s16[4,4]) tuple(x, y, z)
})",
                   "neuron-int-matmul-downcast", 20);
}

TEST_CASE("expand-uniform-quantize matches the custom calls bit for bit") {
  CheckSameResults("uniform_quantize", R"(HloModule m
ENTRY e {
  x = f32[4,3] parameter(0)
  q = s8[4,3] custom-call(x), custom_call_target="uniform_quantize", backend_config={"scale": [0.01], "zero_point": [-5], "quantization_dimension": -1, "storage_min": -128, "storage_max": 127, "storage_type": "i8", "expressed_type": "f32"}
  d = f32[4,3] custom-call(q), custom_call_target="uniform_dequantize", backend_config={"scale": [0.01], "zero_point": [-5], "quantization_dimension": -1, "storage_min": -128, "storage_max": 127, "storage_type": "i8", "expressed_type": "f32"}
  p = u8[4,3] custom-call(x), custom_call_target="uniform_quantize", backend_config={"scale": [0.003, 0.007, 0.5], "zero_point": [128, 100, 3], "quantization_dimension": 1, "storage_min": 0, "storage_max": 255, "storage_type": "u8", "expressed_type": "f32"}
  pd = f32[4,3] custom-call(p), custom_call_target="uniform_dequantize", backend_config={"scale": [0.003, 0.007, 0.5], "zero_point": [128, 100, 3], "quantization_dimension": 1, "storage_min": 0, "storage_max": 255, "storage_type": "u8", "expressed_type": "f32"}
  ROOT t = (s8[4,3], f32[4,3], u8[4,3], f32[4,3]) tuple(q, d, p, pd)
})",
                   "expand-uniform-quantize", 20);
}

TEST_CASE("QuantizeMX and scaled-dot give bit-identical results before and after the MX legalizations") {
  CheckSameResults("mx", R"(HloModule m
ENTRY e {
  a = f32[2,3,64] parameter(0)
  b = bf16[2,64,4] parameter(1)
  qa = (f8e4m3fn[2,3,64], f8e8m0fnu[2,3,2]) custom-call(a), custom_call_target="QuantizeMX", backend_config={"dtype": "float8_e4m3fn", "dim": 2, "block_size": 32, "scale_method": "EMAX"}
  qb = (f8e5m2[2,64,4], f8e8m0fnu[2,2,4]) custom-call(b), custom_call_target="QuantizeMX", backend_config={"dtype": "float8_e5m2", "dim": 1, "block_size": 32, "scale_method": "EMAX"}
  da = f8e4m3fn[2,3,64] get-tuple-element(qa), index=0
  sa = f8e8m0fnu[2,3,2] get-tuple-element(qa), index=1
  db = f8e5m2[2,64,4] get-tuple-element(qb), index=0
  sb = f8e8m0fnu[2,2,4] get-tuple-element(qb), index=1
  d = f32[2,3,4] scaled-dot(da, db, sa, sb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  e = bf16[2,3,4] scaled-dot(da, db, sa, sb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[2,3,4], bf16[2,3,4], (f8e4m3fn[2,3,64], f8e8m0fnu[2,3,2])) tuple(d, e, qa)
})",
                   "legalize-quantize-mx,legalize-scaled-matmul,dce", 10);
}

TEST_CASE("bf16 batch-norm-training after the upcast is at least as close to an f64 reference") {
  const char* module = R"(HloModule m
ENTRY e {
  x = bf16[2,3,16] parameter(0)
  s = bf16[3] parameter(1)
  o = bf16[3] parameter(2)
  ROOT bn = (bf16[2,3,16], bf16[3], bf16[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
})";
  std::string path = WriteTemp("bnt", module);
  double err_before_total = 0, err_after_total = 0;
  for (int seed = 1; seed <= 8; ++seed) {
    // Inputs with a large mean and a small spread: the hard case for bf16 running sums.
    std::string x = "bf16[2,3,16] {";
    std::vector<double> xs;
    uint32_t state = 0x9e3779b9u * seed;
    for (int b = 0; b < 2; ++b) {
      x += b ? ", {" : "{";
      for (int c = 0; c < 3; ++c) {
        x += c ? ", {" : "{";
        for (int i = 0; i < 16; ++i) {
          state = state * 1664525u + 1013904223u;
          double v = 64.0 + 8.0 * c + static_cast<double>(state >> 24) / 64.0;
          float bf = nhlo::DecodeToF32(nhlo::PrimitiveType::kBF16,
                                       nhlo::EncodeFromF32(nhlo::PrimitiveType::kBF16, static_cast<float>(v)));
          xs.push_back(bf);
          char buf[32];
          std::snprintf(buf, sizeof(buf), "%s%.9g", i ? ", " : "", bf);
          x += buf;
        }
        x += "}";
      }
      x += "}";
    }
    x += "}";
    // f64 reference mean and biased variance per feature.
    double mean[3] = {}, var[3] = {};
    for (int c = 0; c < 3; ++c) {
      for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 16; ++i) mean[c] += xs[(b * 3 + c) * 16 + i];
      mean[c] /= 32;
      for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 16; ++i) var[c] += std::pow(xs[(b * 3 + c) * 16 + i] - mean[c], 2);
      var[c] /= 32;
    }
    auto error = [&](const std::string& out) {
      // One tuple literal: (out, mean, var). Compare the statistics and the normalised output.
      std::vector<std::string> parts = TupleElements(out);
      REQUIRE(parts.size() == 3);
      const std::string &line_out = parts[0], &line_mean = parts[1], &line_var = parts[2];
      // strtod reads nan/inf too; a non-finite result counts as a large error, not garbage.
      auto numbers = [](const std::string& line) {
        std::vector<double> v;
        std::string body = line;
        for (char& ch : body)
          if (ch == '{' || ch == '}' || ch == ',') ch = ' ';
        std::istringstream ss(body);
        for (std::string word; ss >> word;) v.push_back(std::strtod(word.c_str(), nullptr));
        return v;
      };
      std::vector<double> m = numbers(line_mean), v = numbers(line_var), y = numbers(line_out);
      REQUIRE(m.size() == 3);
      REQUIRE(v.size() == 3);
      REQUIRE(y.size() == 96);
      auto term = [](double got, double want) {
        double d = std::fabs(got - want);
        return std::isfinite(d) ? d : 1e6;
      };
      double e = 0;
      for (int c = 0; c < 3; ++c) e += term(m[c], mean[c]) + term(v[c], var[c]);
      for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 3; ++c)
          for (int i = 0; i < 16; ++i) {
            size_t k = (b * 3 + c) * 16 + i;
            e += term(y[k], (xs[k] - mean[c]) / std::sqrt(var[c] + 0.001)) / 32;
          }
      return e;
    };
    std::vector<std::string> args = {"--arg", x, "--arg", "bf16[3] {1, 1, 1}", "--arg", "bf16[3] {0, 0, 0}"};
    std::vector<std::string> none = args, upcast = args;
    none.push_back("--passes=none");
    upcast.push_back("--passes=batchnorm-training-upcast");
    double before = error(Run(path, none)), after = error(Run(path, upcast));
    CHECK_MESSAGE(after <= before, "seed " << seed << ": error with upcast " << after << " > without " << before);
    err_before_total += before;
    err_after_total += after;
  }
  MESSAGE("total error without upcast " << err_before_total << ", with upcast " << err_after_total);
  CHECK(err_after_total < err_before_total);
  std::filesystem::remove(path);
}

namespace {

std::string SharedTables() { return nhlo::testing::SharedTablesDir(); }

}  // namespace

TEST_CASE("QuantizeMX key blocks: zero, amax 1.0, NaN") {
  // Key vectors that run without ../shared: an all-zero block (scale 2^-127 = 0x00), amax 1.0
  // (e = 0 - 8 -> scale 0x77), a block with NaN (scale 0xff, NaN elements).
  float block[32] = {};
  uint8_t codes[32];
  CHECK(nhlo::QuantizeMxBlock(nhlo::PrimitiveType::kF8E4M3FN, block, 32, codes) == 0x00);
  CHECK(codes[0] == 0x00);
  block[0] = 1.0f;
  block[1] = -0.5f;
  CHECK(nhlo::QuantizeMxBlock(nhlo::PrimitiveType::kF8E4M3FN, block, 32, codes) == 0x77);
  CHECK(codes[0] == 0x78);                                                               // 1.0 / 2^-8 = 256 in e4m3fn
  CHECK(codes[1] == 0xf0);                                                               // -128
  CHECK(nhlo::QuantizeMxBlock(nhlo::PrimitiveType::kF8E5M2, block, 32, codes) == 0x70);  // e = 0 - 15
  block[5] = NAN;
  CHECK(nhlo::QuantizeMxBlock(nhlo::PrimitiveType::kF8E4M3FN, block, 32, codes) == 0xff);
  CHECK(codes[0] == 0x7f);
}

TEST_CASE("QuantizeMX blocks agree with every line of the shared MX tables" *
          doctest::skip(nhlo::testing::SharedTablesMissing())) {
  std::string dir = SharedTables();
  REQUIRE_MESSAGE(!dir.empty(), "NHLO_SHARED_DIR names no numerics/tables folder");
  int blocks = 0, mismatches = 0;
  for (auto [file, type] : {std::pair{"mx_f8e4m3fn.txt", nhlo::PrimitiveType::kF8E4M3FN},
                            std::pair{"mx_f8e5m2.txt", nhlo::PrimitiveType::kF8E5M2}}) {
    FILE* f = std::fopen((dir + "/" + file).c_str(), "r");
    REQUIRE(f);
    static char line[8192];
    float in[32];
    bool have_in = false;
    while (std::fgets(line, sizeof(line), f)) {
      if (std::strncmp(line, "in:", 3) == 0) {
        char* p = line + 3;
        for (float& v : in) {
          uint32_t bits = static_cast<uint32_t>(std::strtoul(p, &p, 16));
          std::memcpy(&v, &bits, 4);
        }
        have_in = true;
      } else if (have_in && std::strncmp(line, "ocp_floor_rne", 13) == 0) {
        char* p = std::strstr(line, "scale=") + 6;
        unsigned scale = static_cast<unsigned>(std::strtoul(p, &p, 16));
        p = std::strstr(p, "q=") + 2;
        uint8_t got[32];
        unsigned got_scale = nhlo::QuantizeMxBlock(type, in, 32, got);
        bool same = got_scale == scale;
        for (int i = 0; i < 32; ++i) same &= got[i] == static_cast<uint8_t>(std::strtoul(p, &p, 16));
        ++blocks;
        if (!same && ++mismatches < 5)
          MESSAGE(file << ": block " << blocks << " differs (scale " << got_scale << " vs " << scale << ")");
      }
    }
    std::fclose(f);
  }
  MESSAGE("compared " << blocks << " MX blocks");
  CHECK(blocks >= 98);
  CHECK(mismatches == 0);
}

TEST_CASE("metadata and frontend_attributes edited by a pass print as XLA writes them") {
  auto m = nhlo::ParseModule("t.hlo", R"(HloModule m
ENTRY e {
  a = s32[2,3] parameter(0)
  b = s32[3,2] parameter(1)
  ROOT d = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type='dot'  source_file="m.py", source_line=03}, frontend_attributes={z="1", b="x\001"}
})");
  REQUIRE(m.ok());
  int index = nhlo::FindPass("neuron-int-matmul-downcast");
  REQUIRE(index >= 0);
  size_t count = 0;
  auto pass = nhlo::RegisteredPasses(&count)[index].create();
  REQUIRE(pass->Run(**m).ok());
  std::string printed = nhlo::PrintModule(**m);
  // op_name goes where XLA's OpMetadataToString puts it (after op_type); every value is written
  // as XLA writes it, whatever the source's spelling; frontend attribute keys come sorted.
  CHECK(printed.find(
            R"(%d.1 = f32[2,2] dot(%convert.1, %convert.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, )"
            R"(frontend_attributes={auto_cast="none",b="x\001",z="1"}, )"
            R"(metadata={op_type="dot" op_name=" Downcast for int support " source_file="m.py" source_line=3})") !=
        std::string::npos);
  CHECK(printed.find(
            R"(%convert.1 = f32[2,3] convert(%a), frontend_attributes={auto_cast="none"}, )"
            R"(metadata={op_type="dot" op_name=" Downcast for int support " source_file="m.py" source_line=3})") !=
        std::string::npos);

  // The helpers on their own: an existing op_name gets the suffix, a missing one is created.
  nhlo::Module& module = **m;
  const nhlo::Attribute* md = module.entry->root->operands[0]->FindAttr(nhlo::AttrId::kMetadata);
  REQUIRE(md);
  nhlo::Attribute twice = nhlo::AppendToMetadataOpName(module, md, "!");
  const nhlo::KeyValue* op_name = nhlo::FindEntry(twice, "op_name");
  REQUIRE(op_name);
  CHECK(op_name->text == " Downcast for int support !");
  std::string fresh;
  nhlo::AppendAttributeValue(fresh, nhlo::AppendToMetadataOpName(module, nullptr, "x"));
  CHECK(fresh == R"({op_name="x"})");
}

// The use index (ir/uses.h): users found without a scan, ReplaceAllUses touching only the users,
// RemoveInstruction deferred to one compaction, and new instructions recorded by the builder.
TEST_CASE("use index: users, replace-all-uses and O(1) removal") {
  auto m = nhlo::ParseModule("t.hlo", R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] negate(a)
  c = f32[4] add(a, a)
  d = f32[4] multiply(b, c)
  ROOT t = (f32[4], f32[4]) tuple(d, b)
})");
  REQUIRE(m.ok());
  nhlo::Module& module = **m;
  nhlo::Computation* comp = module.entry;
  auto find = [&](std::string_view name) {
    for (nhlo::Instruction* inst : comp->instructions)
      if (inst->name == name) return inst;
    return static_cast<nhlo::Instruction*>(nullptr);
  };
  nhlo::Instruction *a = find("a"), *b = find("b"), *c = find("c"), *d = find("d"), *t = find("t");
  {
    nhlo::ScopedUseIndex scope(*comp);
    nhlo::UseIndex& uses = scope.index();
    CHECK(uses.Users(a) == std::vector<nhlo::Instruction*>{b, c});  // c uses a twice: one user
    CHECK(uses.Users(b) == std::vector<nhlo::Instruction*>{d, t});
    CHECK(uses.Users(t).empty());
    // A new instruction made through the builder is recorded; then every use of b becomes one of it.
    nhlo::Instruction* e = module.NewInstruction(comp, nhlo::Opcode::kExp, b->shape, {b}, "e");
    CHECK(uses.Users(b) == std::vector<nhlo::Instruction*>{d, t, e});
    nhlo::ReplaceAllUses(comp, b, e);
    CHECK(d->operands[0] == e);
    CHECK(t->operands[1] == e);
    CHECK(e->operands[0] == b);  // the replacement keeps its own use
    CHECK(uses.Users(b) == std::vector<nhlo::Instruction*>{e});
    CHECK(uses.Users(e) == std::vector<nhlo::Instruction*>{d, t});
    nhlo::RemoveInstruction(comp, c);
    CHECK(uses.IsRemoved(c));
    CHECK(comp->instructions.size() == 6);  // still listed until the scope ends
  }
  CHECK(comp->uses == nullptr);
  CHECK(comp->instructions.size() == 5);
  for (nhlo::Instruction* inst : comp->instructions) CHECK(inst != c);
}

namespace {
// Reports a change on each of its first `limit` runs, and none after.
class CountingPass final : public nhlo::Pass {
 public:
  explicit CountingPass(int limit) : limit_(limit) {}
  nhlo::Result<bool> Run(nhlo::Module&) override { return ++runs_ <= limit_; }
  int runs() const { return runs_; }

 private:
  int limit_;
  int runs_ = 0;
};
}  // namespace

// XLA's HloPassFix: run until a run changes nothing, or stop at the iteration limit.
TEST_CASE("fixed-point wrapper runs a pass to convergence") {
  auto m = nhlo::ParseModule("t.hlo", "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n");
  REQUIRE(m.ok());
  {
    auto inner = std::make_unique<CountingPass>(3);
    CountingPass* counting = inner.get();
    nhlo::FixedPointPass fix(std::move(inner));
    auto changed = fix.Run(**m);
    REQUIRE(changed.ok());
    CHECK(*changed);
    CHECK(counting->runs() == 4);  // three that changed, one that did not
    CHECK(fix.iterations() == 4);
  }
  {
    nhlo::FixedPointPass fix(std::make_unique<CountingPass>(0));
    auto changed = fix.Run(**m);
    REQUIRE(changed.ok());
    CHECK(!*changed);
    CHECK(fix.iterations() == 1);
  }
  {
    auto inner = std::make_unique<CountingPass>(1000);
    CountingPass* counting = inner.get();
    nhlo::FixedPointPass fix(std::move(inner), 5);
    std::vector<nhlo::Remark> remarks;
    fix.set_remarks(&remarks, false);
    auto changed = fix.Run(**m);
    REQUIRE(changed.ok());
    CHECK(*changed);
    CHECK(counting->runs() == 5);
    REQUIRE(remarks.size() == 1);
    CHECK(remarks[0].kind == nhlo::RemarkKind::kWarning);
    CHECK(remarks[0].message.find("after 5 runs") != std::string::npos);
  }
}
