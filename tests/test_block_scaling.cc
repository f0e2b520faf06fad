// SPDX-License-Identifier: Apache-2.0
// XLA's block-scaling custom calls (ir/block_scaling.h): the expansion of __op$block_scaled_dot
// computes what nhlo's own scaled-dot computes on the same operands, and no shape a user writes
// makes the checks or the expansion crash or build a module that does not verify.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/custom_call_expansions.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "ir/verifier.h"
#include "parser/parser.h"

namespace nhlo {
namespace {

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// A nested literal of `dims` whose elements come from `next()`.
template <typename Next>
std::string LiteralText(const std::vector<int64_t>& dims, size_t d, Next& next) {
  if (d == dims.size()) return next();
  std::string s = "{";
  for (int64_t i = 0; i < dims[d]; ++i) s += (i ? ", " : "") + LiteralText(dims, d + 1, next);
  return s + "}";
}

// Parsed, verified, expansions bound (as nhlo-compile does), written as a bundle and run.
Result<Value> CompileAndRun(const std::string& text) {
  NHLO_ASSIGN_OR_RETURN(std::unique_ptr<Module> m, ParseModule("block_scaling.hlo", text));
  NHLO_TRY(VerifyModule(*m));
  NHLO_TRY(BindCustomCallExpansions(*m, {}));
  NHLO_TRY(VerifyModule(*m));
  NHLO_ASSIGN_OR_RETURN(std::string bytes, EmitBundleFile(*m, CodegenOptions{}));
  NHLO_ASSIGN_OR_RETURN(BundleProgram program, ReadBundleFile(std::move(bytes), "block_scaling.bin"));
  return Execute(program, {});
}

TEST_CASE("__op$block_scaled_dot gives scaled-dot's bits on the same operands") {
  std::mt19937 rng(20261205);
  for (int trial = 0; trial < 40; ++trial) {
    const bool batch = trial % 2 == 1;
    const int64_t b = 1 + rng() % 3, m = 1 + rng() % 5, n = 1 + rng() % 5, blocks = 1 + rng() % 4;
    const int64_t block = int64_t{1} << (rng() % 4);
    const int64_t k = blocks * block;
    std::vector<int64_t> lhs = {m, k}, rhs = {n, k}, ls = {m, blocks}, rs = {n, blocks}, out = {m, n};
    if (batch) {
      for (auto* v : {&lhs, &rhs, &ls, &rs, &out}) v->insert(v->begin(), b);
    }
    // f8e4m3fn data of either sign in [-8, 8]; e8m0 scales 2^-6 .. 2^5.
    auto data = [&] {
      std::ostringstream os;
      os << (static_cast<int>(rng() % 129) - 64) / 8.0;
      return os.str();
    };
    auto scale = [&] {
      std::ostringstream os;
      os << std::ldexp(1.0, static_cast<int>(rng() % 12) - 6);
      return os.str();
    };
    const std::string type = rng() % 2 ? "f8e4m3fn" : "f8e5m2";
    std::string operands = "  lhs = " + type + DimsText(lhs) + " constant(" + LiteralText(lhs, 0, data) + ")\n" +
                           "  rhs = f8e4m3fn" + DimsText(rhs) + " constant(" + LiteralText(rhs, 0, data) + ")\n" +
                           "  ls = f8e8m0fnu" + DimsText(ls) + " constant(" + LiteralText(ls, 0, scale) + ")\n" +
                           "  rs = f8e8m0fnu" + DimsText(rs) + " constant(" + LiteralText(rs, 0, scale) + ")\n";
    const std::string contracting = batch ? "2" : "1";
    const std::string dims = "lhs_contracting_dims={" + contracting + "}, rhs_contracting_dims={" + contracting + "}" +
                             (batch ? ", lhs_batch_dims={0}, rhs_batch_dims={0}" : "");
    std::string custom = "HloModule custom\nENTRY e {\n" + operands + "  ROOT d = f32" + DimsText(out) +
                         " custom-call(lhs, rhs, ls, rs), custom_call_target=\"__op$block_scaled_dot\"\n}\n";
    std::string scaled = "HloModule scaled\nENTRY e {\n" + operands + "  ROOT d = f32" + DimsText(out) +
                         " scaled-dot(lhs, rhs, ls, rs), " + dims + "\n}\n";
    CAPTURE(custom);
    auto a = CompileAndRun(custom);
    auto e = CompileAndRun(scaled);
    REQUIRE(a.ok());
    REQUIRE(e.ok());
    REQUIRE(a->bytes.size() == e->bytes.size());
    CHECK(std::memcmp(a->bytes.data(), e->bytes.data(), a->bytes.size()) == 0);
  }
}

TEST_CASE("block-scaling calls of any shape are refused with a message or expand into a valid module") {
  // Valid calls, then one dimension or type changed in about half of them: both sides of every
  // check are reached.
  std::mt19937 rng(7);
  const char* data_types[] = {"f8e4m3fn", "f8e5m2", "f4e2m1fn", "bf16", "f32", "s8"};
  const char* scale_types[] = {"f8e8m0fnu", "f8e4m3fn", "f32"};
  const char* result_types[] = {"f32", "bf16", "f16"};
  auto pick = [&](auto& list) { return std::string(list[rng() % std::size(list)]); };
  int expanded = 0, refused = 0;
  for (int trial = 0; trial < 900; ++trial) {
    const int kind = trial % 3;
    const size_t rank = 1 + rng() % 3;
    const int64_t blocks = 1 + rng() % 3, block = 1 + rng() % 4;
    std::vector<int64_t> data(rank);
    for (int64_t& d : data) d = 1 + rng() % 3;
    data.back() = blocks * block;
    std::vector<int64_t> scale = data;
    scale.back() = blocks;
    std::vector<std::pair<std::string, std::vector<int64_t>>> operands;  // type, dims
    std::string result;
    std::string config;
    if (kind == 0) {
      const size_t r = rng() % 2 ? 3 : 2;
      std::vector<int64_t> lhs = {1 + int64_t(rng() % 3), blocks * block},
                           rhs = {1 + int64_t(rng() % 3), blocks * block};
      std::vector<int64_t> ls = {lhs[0], blocks}, rs = {rhs[0], blocks};
      std::vector<int64_t> out = {lhs[0], rhs[0]};
      if (r == 3)
        for (auto* v : {&lhs, &rhs, &ls, &rs, &out}) v->insert(v->begin(), 2);
      if (rng() % 3 == 0) {  // scales padded past the data, block size in the config
        ls[r - 2] += rng() % 3;
        ls[r - 1] += rng() % 2;
        config =
            ", backend_config={\"block_scaled_dot_backend_config\":{\"block_size\":\"" + std::to_string(block) + "\"}}";
      }
      const std::string res = pick(result_types);
      operands = {{pick(data_types), lhs}, {pick(data_types), rhs}, {pick(scale_types), ls}};
      const size_t count = 3 + rng() % 3;
      if (count >= 4) operands.push_back({pick(scale_types), rs});
      if (count == 5) operands.push_back({rng() % 4 ? res : pick(result_types), {}});
      result = res + DimsText(out);
    } else if (kind == 1) {
      operands = {{pick(data_types), data}, {pick(scale_types), scale}};
      result = pick(result_types) + DimsText(data);
    } else {
      operands = {{pick(result_types), data}};
      result = "(" + pick(data_types) + DimsText(data) + ", " + pick(scale_types) + DimsText(scale) + ")";
    }
    if (rng() % 2) {  // one dimension off by one, or one dimension more
      auto& dims = operands[rng() % operands.size()].second;
      if (!dims.empty() && rng() % 4) {
        int64_t& d = dims[rng() % dims.size()];
        d = rng() % 2 ? d + 1 : std::max<int64_t>(0, d - 1);
      } else {
        dims.push_back(1 + rng() % 2);
      }
    }
    std::string text = "HloModule fuzz\nENTRY e {\n";
    std::string args;
    for (size_t i = 0; i < operands.size(); ++i) {
      text += "  p" + std::to_string(i) + " = " + operands[i].first + DimsText(operands[i].second) + " parameter(" +
              std::to_string(i) + ")\n";
      args += (i ? ", p" : "p") + std::to_string(i);
    }
    const char* target = kind == 0 ? "__op$block_scaled_dot" : kind == 1 ? "__op$dequantize" : "__op$quantize";
    text +=
        "  ROOT r = " + result + " custom-call(" + args + "), custom_call_target=\"" + target + "\"" + config + "\n}\n";
    CAPTURE(text);
    auto m = ParseModule("fuzz.hlo", text);
    REQUIRE(m.ok());
    if (!VerifyModule(**m).ok()) {
      ++refused;
      continue;
    }
    REQUIRE(BindCustomCallExpansions(**m, {}).ok());
    REQUIRE(VerifyModule(**m).ok());
    auto bytes = EmitBundleFile(**m, CodegenOptions{});
    REQUIRE(bytes.ok());
    auto program = ReadBundleFile(std::move(*bytes), "fuzz.bin");
    REQUIRE(program.ok());
    std::vector<Value> values;
    for (const Instruction* p : (*m)->entry->Parameters()) values.push_back(RandomValue(p->shape, trial));
    auto run = Execute(*program, std::move(values));
    CHECK_MESSAGE(run.ok(), run.status().ToString());
    ++expanded;
  }
  MESSAGE("expanded " << expanded << ", refused " << refused);
  CHECK(expanded > 200);
  CHECK(refused > 100);
}

}  // namespace
}  // namespace nhlo
