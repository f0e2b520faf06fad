// SPDX-License-Identifier: Apache-2.0
// Custom calls nhlo runs as the HLO they stand for (ir/expanded_calls.h). The expansion of
// __op$block_scaled_dot computes what nhlo's own scaled-dot computes on the same operands; the
// cuDNN backward convolutions are the adjoints of the forward one; CUB sorts order rows as a stable
// sort by CUB's radix key; and no shape a user writes makes the checks or the expansions crash or
// build a module that does not verify.
#include <doctest/doctest.h>

#include <algorithm>
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
#include "load_program.h"
#include "parser/parser.h"
#include "types/ffi_attributes.h"

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

// A module whose root is `result` custom-call(p0, p1, ...) of parameters of the given types and
// dimensions, with `attrs` after the operands.
using OperandList = std::vector<std::pair<std::string, std::vector<int64_t>>>;
std::string CallModule(const OperandList& operands, const std::string& result, const std::string& attrs) {
  std::string text = "HloModule fuzz\nENTRY e {\n";
  std::string args;
  for (size_t i = 0; i < operands.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + operands[i].first + DimsText(operands[i].second) + " parameter(" +
            std::to_string(i) + ")\n";
    args += (i ? ", p" : "p") + std::to_string(i);
  }
  return text + "  ROOT r = " + result + " custom-call(" + args + "), " + attrs + "\n}\n";
}

// Whether the verifier refused the call (false) or it expanded (true). A call the verifier takes
// must bind, compile, load and run on random arguments; with `bind_may_refuse` binding may also
// refuse it at the call by the expansion's own shape checks, never as the verifier's note of an
// nhlo bug.
bool ExpandsAndRuns(const std::string& text, uint64_t seed, bool bind_may_refuse) {
  CAPTURE(text);
  auto m = ParseModule("fuzz.hlo", text);
  REQUIRE(m.ok());
  if (!VerifyModule(**m).ok()) return false;
  Status bound = BindCustomCallExpansions(**m, {});
  if (bind_may_refuse && !bound.ok()) {
    CHECK_MESSAGE(bound.message().find("nhlo bug") == std::string::npos, bound.ToString());
    return false;
  }
  REQUIRE(bound.ok());
  auto run = testing::RunOnRandomArgs(**m, seed);
  CHECK_MESSAGE(run.ok(), run.status().ToString());
  return true;
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
    OperandList operands;
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
    const char* target = kind == 0 ? "__op$block_scaled_dot" : kind == 1 ? "__op$dequantize" : "__op$quantize";
    const std::string text =
        CallModule(operands, result, "custom_call_target=\"" + std::string(target) + "\"" + config);
    ++(ExpandsAndRuns(text, trial, /*bind_may_refuse=*/false) ? expanded : refused);
  }
  MESSAGE("expanded " << expanded << ", refused " << refused);
  CHECK(expanded > 200);
  CHECK(refused > 100);
}

// Reads the f32 scalars of a tuple result.
std::vector<float> Scalars(const Value& v) {
  std::vector<float> out;
  for (const Value& e : v.tuple) {
    float f = 0;
    std::memcpy(&f, e.bytes.data(), sizeof f);
    out.push_back(f);
  }
  return out;
}

TEST_CASE("cuDNN's backward convolutions are the adjoints of its forward one") {
  // <conv(x, w), dy> = <x, BackwardInput(dy, w)> = <w, BackwardFilter(x, dy)> holds exactly for
  // small integers in f32: one check of the windows, padding, dilations, groups, reversal and
  // dim_labels the expansion derives.
  std::mt19937 rng(11);
  int checked = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const size_t spatial = 1 + rng() % 2;
    const int64_t groups = 1 + rng() % 2, batch = 1 + rng() % 2, cg = 1 + rng() % 2, og = 1 + rng() % 2;
    const bool reversal = rng() % 4 == 0;
    std::vector<int64_t> k(spatial), s(spatial), p(spatial), dil(spatial), in(spatial), out(spatial);
    std::string size, stride, pad, rhs_dilate, rev;
    for (size_t i = 0; i < spatial; ++i) {
      k[i] = 1 + rng() % 3;
      s[i] = 1 + rng() % 3;
      dil[i] = 1 + rng() % 2;
      const int64_t k_eff = (k[i] - 1) * dil[i] + 1;
      p[i] = rng() % k_eff;
      in[i] = std::max<int64_t>(1, k_eff - 2 * p[i]) + rng() % 5;
      out[i] = (in[i] + 2 * p[i] - k_eff) / s[i] + 1;
      const std::string x = i ? "x" : "";
      size += x + std::to_string(k[i]);
      stride += x + std::to_string(s[i]);
      pad += x + std::to_string(p[i]) + "_" + std::to_string(p[i]);
      rhs_dilate += x + std::to_string(dil[i]);
      rev += x + (reversal ? "1" : "0");
    }
    // dim_labels with each operand's dimensions in a random order.
    auto order = [&](std::string labels) {
      std::shuffle(labels.begin(), labels.end(), rng);
      return labels;
    };
    const std::string sp = spatial == 1 ? "0" : "01";
    const std::string li = order("bf" + sp), lk = order("io" + sp), lo = order("bf" + sp);
    auto dims_for = [&](const std::string& labels, int64_t b_or_i, int64_t f_or_o, const std::vector<int64_t>& sizes) {
      std::vector<int64_t> dims;
      for (char ch : labels)
        dims.push_back(ch == 'b' || ch == 'i' ? b_or_i : ch == 'f' || ch == 'o' ? f_or_o : sizes[ch - '0']);
      return dims;
    };
    const std::vector<int64_t> xd = dims_for(li, batch, cg * groups, in), wd = dims_for(lk, cg, og * groups, k),
                               yd = dims_for(lo, batch, og * groups, out);
    auto small = [&] { return std::to_string(static_cast<int>(rng() % 7) - 3); };
    const std::string window = "window={size=" + size + " stride=" + stride + " pad=" + pad +
                               " rhs_dilate=" + rhs_dilate + " rhs_reversal=" + rev + "}, dim_labels=" + li + "_" + lk +
                               "->" + lo + (groups > 1 ? ", feature_group_count=" + std::to_string(groups) : "");
    auto sum_of_products = [&](const std::string& a, const std::string& b, const std::vector<int64_t>& dims,
                               const std::string& name) {
      std::string all;
      for (size_t i = 0; i < dims.size(); ++i) all += (i ? "," : "") + std::to_string(i);
      return "  " + name + "p = f32" + DimsText(dims) + " multiply(" + a + ", " + b + ")\n  " + name +
             " = f32[] reduce(" + name + "p, zero), dimensions={" + all + "}, to_apply=add\n";
    };
    std::string text =
        "HloModule adjoint\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  zero = f32[] constant(0)\n";
    text += "  x = f32" + DimsText(xd) + " constant(" + LiteralText(xd, 0, small) + ")\n";
    text += "  w = f32" + DimsText(wd) + " constant(" + LiteralText(wd, 0, small) + ")\n";
    text += "  dy = f32" + DimsText(yd) + " constant(" + LiteralText(yd, 0, small) + ")\n";
    text += "  yc = (f32" + DimsText(yd) + ", u8[0]) custom-call(x, w), " + window +
            ", custom_call_target=\"__cudnn$convForward\"\n  y = f32" + DimsText(yd) +
            " get-tuple-element(yc), index=0\n";
    text += "  dwc = (f32" + DimsText(wd) + ", u8[0]) custom-call(x, dy), " + window +
            ", custom_call_target=\"__cudnn$convBackwardFilter\"\n  dw = f32" + DimsText(wd) +
            " get-tuple-element(dwc), index=0\n";
    std::string results = "sum1, sum3";
    text += sum_of_products("y", "dy", yd, "sum1") + sum_of_products("w", "dw", wd, "sum3");
    if (groups == 1) {
      text += "  dxc = (f32" + DimsText(xd) + ", u8[0]) custom-call(dy, w), " + window +
              ", custom_call_target=\"__cudnn$convBackwardInput\"\n  dx = f32" + DimsText(xd) +
              " get-tuple-element(dxc), index=0\n";
      text += sum_of_products("x", "dx", xd, "sum2");
      results += ", sum2";
    }
    text += "  ROOT r = " + std::string(groups == 1 ? "(f32[], f32[], f32[])" : "(f32[], f32[])") + " tuple(" +
            results + ")\n}\n";
    CAPTURE(text);
    auto run = CompileAndRun(text);
    REQUIRE_MESSAGE(run.ok(), run.status().ToString());
    const std::vector<float> sums = Scalars(*run);
    for (size_t i = 1; i < sums.size(); ++i) CHECK(sums[i] == sums[0]);
    ++checked;
  }
  CHECK(checked == 150);
}

TEST_CASE("cuBLAS and cuDNN calls of any shape are refused with a message or expand into a valid module") {
  std::mt19937 rng(5);
  const char* epilogues[] = {"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "GELU_AUX", "BIAS_GELU", "BIAS_GELU_AUX"};
  const char* types[] = {"f32", "bf16", "f16", "f8e4m3fn", "f64", "s8"};
  const char* conv_targets[] = {"__cudnn$convForward", "__cudnn$convBackwardInput", "__cudnn$convBackwardFilter",
                                "__cudnn$convBiasActivationForward"};
  int expanded = 0, refused = 0;
  for (int trial = 0; trial < 600; ++trial) {
    OperandList operands;
    std::string result, attrs;
    if (trial % 2 == 0) {
      const int target = static_cast<int>(rng() % 3);
      const bool batch = rng() % 2;
      const int64_t b = 1 + rng() % 2, m = 1 + rng() % 3, k = 1 + rng() % 3, n = 1 + rng() % 3;
      const std::string epilogue = target == 0 ? "DEFAULT" : epilogues[rng() % 8];
      const bool bias = epilogue.find("BIAS") == 0, aux = epilogue.find("AUX") != std::string::npos;
      const int beta = rng() % 2;
      const std::string out = target == 2 && rng() % 2 ? "f8e4m3fn" : types[rng() % 3];
      std::vector<int64_t> a = {m, k}, bb = {k, n}, d = {m, n};
      if (batch)
        for (auto* v : {&a, &bb, &d}) v->insert(v->begin(), b);
      operands = {{target == 2 ? "f8e4m3fn" : out, a}, {target == 2 ? "f8e4m3fn" : out, bb}};
      if (beta) operands.push_back({out == "f8e4m3fn" ? "bf16" : out, d});
      if (target == 2) operands.insert(operands.end(), {{"f32", {}}, {"f32", {}}});
      if (bias) operands.push_back({out == "f8e4m3fn" ? "bf16" : out, {d.back()}});
      if (target == 2 && out == "f8e4m3fn") operands.push_back({"f32", {}});
      const std::string dd = out + DimsText(d);
      const bool amax = target == 2 && rng() % 2;
      result = "(" + dd + (aux ? ", " + dd : "") + (amax ? ", f32[]" : "") + ", s8[16])";
      const std::string dims = batch ? "\"lhs_batch_dimensions\":[\"0\"],\"rhs_batch_dimensions\":[\"0\"],"
                                       "\"lhs_contracting_dimensions\":[\"2\"],\"rhs_contracting_dimensions\":[\"1\"]"
                                     : "\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"]";
      const char* names[] = {"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"};
      attrs = std::string("custom_call_target=\"") + names[target] +
              "\", backend_config={\"gemm_backend_config\":{\"alpha_real\":" + std::to_string(1 + rng() % 2) +
              ",\"alpha_imag\":0,\"beta\":" + std::to_string(beta) + ",\"dot_dimension_numbers\":{" + dims +
              "},\"epilogue\":\"" + epilogue + "\",\"damax_output\":" + (amax ? "true" : "false") + "}}";
    } else {
      const int kind = static_cast<int>(rng() % 4);
      const int64_t n = 1 + rng() % 2, c = 1 + rng() % 3, o = 1 + rng() % 3, k = 1 + rng() % 3, s = 1 + rng() % 3;
      const int64_t pad = rng() % 3, dil = 1 + rng() % 2, k_eff = (k - 1) * dil + 1;
      // Inputs the window may not cover at all (an empty result) as well as ones it does.
      const int64_t x = std::max<int64_t>(0, k_eff - 2 * pad - 1) + rng() % 4;
      const int64_t y = x + 2 * pad < k_eff ? 0 : (x + 2 * pad - k_eff) / s + 1;
      const std::string type = types[rng() % 3];
      const bool alt = rng() % 2;  // dim_labels 0fb_i0o->f0b: every operand's dimensions in another order
      const std::vector<int64_t> xd = alt ? std::vector<int64_t>{x, c, n} : std::vector<int64_t>{n, c, x};
      const std::vector<int64_t> wd = alt ? std::vector<int64_t>{c, k, o} : std::vector<int64_t>{o, c, k};
      const std::vector<int64_t> yd = alt ? std::vector<int64_t>{o, y, n} : std::vector<int64_t>{n, o, y};
      const std::vector<int64_t>& out = kind == 1 ? xd : kind == 2 ? wd : yd;
      if (kind == 1)
        operands = {{type, yd}, {type, wd}};
      else if (kind == 2)
        operands = {{type, xd}, {type, yd}};
      else
        operands = {{type, xd}, {type, wd}};
      if (kind == 3) {
        operands.push_back({type, {o}});  // the bias
        if (rng() % 2) operands.push_back({type, yd});
      }
      result = "(" + type + DimsText(out) + ", u8[0])";
      attrs = "window={size=" + std::to_string(k) + " stride=" + std::to_string(s) + " pad=" + std::to_string(pad) +
              "_" + std::to_string(pad) + " rhs_dilate=" + std::to_string(dil) +
              "}, dim_labels=" + (alt ? "0fb_i0o->f0b" : "bf0_oi0->bf0") + ", custom_call_target=\"" +
              conv_targets[kind] +
              "\", backend_config={\"cudnn_conv_backend_config\":{\"conv_result_scale\":1,\"activation_mode\":\"" +
              (rng() % 2 ? "kRelu" : "kElu") + "\",\"side_input_scale\":" + std::to_string(rng() % 2) + "}}";
    }
    if (rng() % 2) {  // one dimension off by one, one dimension more, or one operand fewer
      const int how = static_cast<int>(rng() % 4);
      auto& dims = operands[rng() % operands.size()].second;
      if (how == 0 && operands.size() > 1) {
        operands.pop_back();
      } else if (how == 1 || dims.empty()) {
        dims.push_back(1 + rng() % 2);
      } else {
        int64_t& d = dims[rng() % dims.size()];
        d = rng() % 2 ? d + 1 : std::max<int64_t>(0, d - 1);
      }
    }
    ++(ExpandsAndRuns(CallModule(operands, result, attrs), trial, /*bind_may_refuse=*/true) ? expanded : refused);
  }
  MESSAGE("expanded " << expanded << ", refused " << refused);
  CHECK(expanded > 150);
  CHECK(refused > 100);
}

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

// CUB's radix key of an f32's bits: -0 as +0, then negative values' bits flipped and positive
// values' sign bit set, so that unsigned order is CUB's order (NaNs by sign and payload).
uint32_t CubFloatKey(uint32_t bits) {
  if (bits == 0x80000000u) bits = 0;
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

TEST_CASE("CUB sort calls order each row as CUB's stable radix sort does") {
  std::mt19937_64 rng(20261206);
  // Special values drawn often: zeros of both signs, infinities, NaNs with payloads, repeats.
  const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                              0xffc00000u, 0x7f800001u, 0xffc12345u, 0x3f800000u, 0xbf800000u};
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 3), cols = 1 + static_cast<int64_t>(rng() % 40);
    const bool descending = rng() % 2, floats = trial % 3 != 2;
    std::vector<uint32_t> keys(static_cast<size_t>(rows * cols));
    for (uint32_t& k : keys)
      k = floats ? (rng() % 2 ? special[rng() % 10] : static_cast<uint32_t>(rng()))
                 : static_cast<uint32_t>(static_cast<int32_t>(rng() % 7) - 3);
    size_t at = 0;
    auto next = [&] { return std::to_string(keys[at++]); };
    const std::string dims = DimsText({rows, cols});
    const std::string type = floats ? "f32" : "s32";
    std::string text =
        "HloModule cub\nENTRY e {\n  bits = u32" + dims + " constant(" + LiteralText({rows, cols}, 0, next) +
        ")\n  keys = " + type + dims + " bitcast-convert(bits)\n  values = s32" + dims +
        " iota(), iota_dimension=1\n  sort = (" + type + dims + ", s32" + dims +
        ", u8[4]) custom-call(keys, values), custom_call_target=\"__cub$DeviceRadixSort\", "
        "backend_config={\"descending\":" +
        (descending ? "true" : "false") + "}\n  k = " + type + dims + " get-tuple-element(sort), index=0\n  kb = u32" +
        dims + " bitcast-convert(k)\n  v = s32" + dims + " get-tuple-element(sort), index=1\n  ROOT t = (u32" + dims +
        ", s32" + dims + ") tuple(kb, v)\n}\n";
    CAPTURE(text);
    Result<Value> run = CompileAndRun(text);
    REQUIRE_MESSAGE(run.ok(), run.status().ToString());
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int32_t> order(static_cast<size_t>(cols));
      for (int32_t i = 0; i < cols; ++i) order[static_cast<size_t>(i)] = i;
      auto key = [&](int32_t i) -> uint64_t {
        uint32_t bits = keys[static_cast<size_t>(r * cols + i)];
        return floats ? CubFloatKey(bits) : bits ^ 0x80000000u;  // signed order as unsigned
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](int32_t a, int32_t b) { return descending ? key(a) > key(b) : key(a) < key(b); });
      for (int64_t c = 0; c < cols; ++c) {
        const size_t i = static_cast<size_t>(r * cols + c);
        uint32_t got_key;
        int32_t got_value;
        std::memcpy(&got_key, run->tuple[0].bytes.data() + 4 * i, 4);
        std::memcpy(&got_value, run->tuple[1].bytes.data() + 4 * i, 4);
        const int32_t want = order[static_cast<size_t>(c)];
        CHECK(got_value == want);
        CHECK(got_key == keys[static_cast<size_t>(r * cols + want)]);  // the key itself, -0 kept
      }
    }
  }
}

// The FFI attribute dictionary every typed-FFI target's decoder reads (types/ffi_attributes.h).
TEST_CASE("FFI attribute dictionaries: values keep their brackets, types are dropped") {
  Result<FfiAttributes> a = ParseFfiAttributes(
      " {mode = 86 : ui8, uplo = 76 : ui8, dims = array<i64: 1, 2>, name = \"a, b: c\", f = (i32) -> i32,}\n");
  REQUIRE(a.ok());
  CHECK(a->size() == 5);
  CHECK(a->at("mode") == "86");
  CHECK(a->at("uplo") == "76");
  CHECK(a->at("dims") == "array<i64: 1, 2>");
  CHECK(a->at("name") == "\"a, b: c\"");
  CHECK(a->at("f") == "(i32) -> i32");
  for (const char* empty : {"", "  ", "{}", "{ }"}) {
    Result<FfiAttributes> e = ParseFfiAttributes(empty);
    REQUIRE(e.ok());
    CHECK(e->empty());
  }
  const std::pair<const char*, const char*> bad[] = {
      {"lower = true", "is not an attribute dictionary {name = value, ...}"},
      {"{lower}", "attribute 'lower' is not name = value"},
      {"{= 1}", "attribute '= 1' is not name = value"},
      {"{a = }", "attribute 'a' has no value"},
      {"{a = 1,, b = 2}", "has an empty attribute"},
      {"{a = 1, a = 2}", "names attribute 'a' twice"},
      {"{a = [1, 2}", "has an unclosed '['"},
      {"{a = [1, 2}}", "has an unbalanced '}'"},
      {"{a = (1]}", "has an unbalanced ']'"},
      {"{a = \"x}", "has an unterminated string"},
      {"{a = <1, 2}", "has an unclosed '<'"},
  };
  for (const auto& [text, message] : bad) {
    CAPTURE(text);
    Result<FfiAttributes> e = ParseFfiAttributes(text);
    REQUIRE(!e.ok());
    CHECK(e.status().message() == message);
  }
}

}  // namespace
}  // namespace nhlo
