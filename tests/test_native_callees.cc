// SPDX-License-Identifier: Apache-2.0
// Computations called per element that load recognises (callee_pattern.cc) and the native
// kernels that then run instead of them: which computations are recognised, and that a
// recognised reducer gives what the same reducer run as written gives, bit for bit, on random
// data with NaNs (several payloads) and signed zeros, over every set of reduced dimensions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "interp/interp.h"
#include "interp/native_callees.h"
#include "interp/op_table.h"
#include "ir/verifier.h"
#include "load_program.h"
#include "parser/parser.h"

using namespace nhlo;

namespace {

BundleProgram Load(const std::string& text) { return testing::LoadProgram(text, "callees"); }

// The pattern load gives each bundle of the entry computation, by its result's name.
std::map<std::string, CalleePattern> Patterns(const BundleProgram& p) {
  std::map<std::string, CalleePattern> out;
  const ComputationRecord& entry = p.computations[p.entry];
  for (const BundleRecord& b : entry.bundles) {
    Step s = StepFor(b);
    s.family = ExecutionOf(b.opcode).family;
    LowerCalleePattern(p, entry, s);
    out[std::string(entry.buffers[b.result].name)] = s.pattern;
  }
  return out;
}

const char* kReducers = R"(HloModule callees
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max_swapped { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(b, a) }
mul_swapped { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] multiply(b, a) }
add_copy { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)  ROOT c = f32[] copy(s) }
sub { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] subtract(a, b) }
twice { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, a) }
add_dead { a = f32[] parameter(0)  b = f32[] parameter(1)  d = f32[] multiply(a, b)  ROOT s = f32[] add(a, b) }
add_rng { a = f32[] parameter(0)  b = f32[] parameter(1)  d = f32[] rng(a, b), distribution=rng_uniform
          ROOT s = f32[] add(a, b) }
noise { lo = f32[] constant(0)  hi = f32[] constant(1)  ROOT r = f32[] rng(lo, hi), distribution=rng_uniform }
add_call { a = f32[] parameter(0)  b = f32[] parameter(1)  d = f32[] call(), to_apply=noise  ROOT s = f32[] add(a, b) }
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
     ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER }
gt_second { a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
     ROOT c = pred[] compare(j, i), direction=LT }
mixed { a = f32[] parameter(0)  b = f32[] parameter(1)  i = s32[] parameter(2)  j = s32[] parameter(3)
     ROOT c = pred[] compare(a, a), direction=LT }
ENTRY e {
  x = f32[4,6] parameter(0)
  k = s32[4,6] parameter(1)
  z = f32[] constant(0)
  one = s32[] constant(1)
  r.add = f32[4] reduce(x, z), dimensions={1}, to_apply=add
  r.max = f32[6] reduce(x, z), dimensions={0}, to_apply=max_swapped
  r.mul = s32[4] reduce(k, one), dimensions={1}, to_apply=mul_swapped
  r.copy = f32[4] reduce(x, z), dimensions={1}, to_apply=add_copy
  r.sub = f32[4] reduce(x, z), dimensions={1}, to_apply=sub
  r.twice = f32[4] reduce(x, z), dimensions={1}, to_apply=twice
  r.dead = f32[4] reduce(x, z), dimensions={1}, to_apply=add_dead
  r.rng = f32[4] reduce(x, z), dimensions={1}, to_apply=add_rng
  r.call = f32[4] reduce(x, z), dimensions={1}, to_apply=add_call
  s.lt = (f32[4,6], s32[4,6]) sort(x, k), dimensions={1}, to_apply=lt
  s.gt = (f32[4,6], s32[4,6]) sort(x, k), dimensions={1}, to_apply=gt_second
  s.mixed = (f32[4,6], s32[4,6]) sort(x, k), dimensions={1}, to_apply=mixed
  ROOT t = (f32[4], f32[6]) tuple(r.add, r.max)
})";

}  // namespace

TEST_CASE("load recognises one-op reducers and two-parameter comparators, and nothing more") {
  BundleProgram p = Load(kReducers);
  auto patterns = Patterns(p);
  CHECK(patterns["r.add"].op == ScalarOp::kAdd);
  CHECK(!patterns["r.add"].swapped);
  CHECK(patterns["r.max"].op == ScalarOp::kMaximum);
  CHECK(patterns["r.max"].swapped);  // float max keeps its operand order (NaN, -0)
  CHECK(patterns["r.mul"].op == ScalarOp::kMultiply);
  CHECK(!patterns["r.mul"].swapped);  // integer multiply commutes exactly
  CHECK(patterns["r.copy"].op == ScalarOp::kNone);
  CHECK(patterns["r.sub"].op == ScalarOp::kNone);
  CHECK(patterns["r.twice"].op == ScalarOp::kNone);
  // XLA's evaluator knows a reducer by its root (IsScalarAdd): dead steps do not matter, unless
  // one has a side effect.
  CHECK(patterns["r.dead"].op == ScalarOp::kAdd);
  CHECK(patterns["r.rng"].op == ScalarOp::kNone);
  CHECK(patterns["r.call"].op == ScalarOp::kNone);  // what a dead call calls may have one
  CHECK(patterns["s.lt"].compare_known);
  CHECK(patterns["s.lt"].total_order);
  CHECK(!patterns["s.lt"].descending);
  CHECK(patterns["s.lt"].key_operand == 0);
  CHECK(patterns["s.gt"].compare_known);
  CHECK(patterns["s.gt"].descending);  // compare(j, i) LT is i > j
  CHECK(patterns["s.gt"].key_operand == 1);
  CHECK(!patterns["s.mixed"].compare_known);
}

TEST_CASE("recognised reducers give what the reducer run as written gives, bit for bit") {
  // For each set of reduced dimensions of a [3,1,5,7] array: max (f32, NaN payloads, -0), min
  // swapped, and s32 add, each against the same reducer with a copy (not recognised).
  std::string text = R"(HloModule differential
mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
mx_copy { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] maximum(a, b)  ROOT c = f32[] copy(s) }
mn { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] minimum(b, a) }
mn_copy { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] minimum(b, a)  ROOT c = f32[] copy(s) }
ad { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
ad_copy { a = s32[] parameter(0)  b = s32[] parameter(1)  s = s32[] add(a, b)  ROOT c = s32[] copy(s) }
ENTRY e {
  x = f32[3,1,5,7] parameter(0)
  k = s32[3,1,5,7] parameter(1)
  ninf = f32[] constant(-inf)
  pinf = f32[] constant(inf)
  zero = s32[] constant(0)
)";
  const int64_t shape[4] = {3, 1, 5, 7};
  std::string outs, shapes;
  int n = 0;
  for (int mask = 0; mask < 16; ++mask) {
    std::string dims, kept;
    for (int d = 0; d < 4; ++d) {
      std::string& into = (mask >> d & 1) ? dims : kept;
      into += (into.empty() ? "" : ",") + std::to_string((mask >> d & 1) ? d : shape[d]);
    }
    const char* ops[3][4] = {{"f32", "ninf", "mx", "x"}, {"f32", "pinf", "mn", "x"}, {"s32", "zero", "ad", "k"}};
    for (auto& op : ops)
      for (std::string suffix : {"", "_copy"}) {
        std::string name = "r" + std::to_string(n++);
        std::string sh = std::string(op[0]) + "[" + kept + "]";
        text += "  " + name + " = " + sh + " reduce(" + op[3] + ", " + op[1] + "), dimensions={" + dims +
                "}, to_apply=" + op[2] + suffix + "\n";
        outs += (outs.empty() ? "" : ", ") + name;
        shapes += (shapes.empty() ? "" : ", ") + sh;
      }
  }
  text += "  ROOT t = (" + shapes + ") tuple(" + outs + ")\n}\n";
  BundleProgram p = Load(text);
  std::mt19937 rng(7);
  const uint32_t specials[] = {0x80000000u, 0, 0x7fc00001u, 0xffc00002u, 0x7f800000u, 0xff800000u, 0x3f800000u};
  Value x{PrimitiveType::kF32, {3, 1, 5, 7}, std::string(105 * 4, '\0'), {}, {}};
  Value k{PrimitiveType::kS32, {3, 1, 5, 7}, std::string(105 * 4, '\0'), {}, {}};
  for (int i = 0; i < 105; ++i) {
    uint32_t bits = specials[rng() % 7];
    if (rng() % 3 == 0) {  // mostly small values, so ties and -0/+0 meet
      float f = static_cast<float>(static_cast<int>(rng() % 5) - 2);
      std::memcpy(&bits, &f, 4);
    }
    std::memcpy(x.bytes.data() + 4 * i, &bits, 4);
    uint32_t wide = static_cast<uint32_t>(rng());
    std::memcpy(k.bytes.data() + 4 * i, &wide, 4);
  }
  auto result = Execute(p, {x, k});
  REQUIRE(result.ok());
  REQUIRE(result->tuple.size() == static_cast<size_t>(n));
  for (int i = 0; i < n; i += 2) {
    CAPTURE(i);
    CHECK(result->tuple[i].bytes == result->tuple[i + 1].bytes);
  }
}

TEST_CASE("reduce-window: recognised reducers give what the reducer run as written gives, bit for bit") {
  // Windows with padding, strides, base and window dilation, over f32 with NaN payloads and
  // signed zeros (max; min with swapped operands), s32 (add) and bf16 (add, of finite values:
  // which NaN a compiled `a + b` keeps when both are NaN depends on the compiler, see
  // docs/interpreter-performance.md), each against the same reducer with a copy, which is not
  // recognised and runs per element.
  const std::string text = R"(HloModule windows
mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
mx_copy { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] maximum(a, b)  ROOT c = f32[] copy(s) }
mn { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] minimum(b, a) }
mn_copy { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] minimum(b, a)  ROOT c = f32[] copy(s) }
ad { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }
ad_copy { a = s32[] parameter(0)  b = s32[] parameter(1)  s = s32[] add(a, b)  ROOT c = s32[] copy(s) }
bd { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }
bd_copy { a = bf16[] parameter(0)  b = bf16[] parameter(1)  s = bf16[] add(a, b)  ROOT c = bf16[] copy(s) }
ENTRY e {
  x = f32[3,9,7] parameter(0)
  k = s32[3,9,7] parameter(1)
  ninf = f32[] constant(-inf)
  pinf = f32[] constant(inf)
  zero = s32[] constant(0)
  xb = bf16[3,9,7] convert(k)
  zb = bf16[] constant(0.5)
  a0 = f32[3,5,4] reduce-window(x, ninf), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1}, to_apply=mx
  a1 = f32[3,5,4] reduce-window(x, ninf), window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1}, to_apply=mx_copy
  b0 = f32[2,16,5] reduce-window(x, pinf), window={size=2x3x2 pad=0_0x1_0x0_0 lhs_dilate=1x2x1 rhs_dilate=1x1x2}, to_apply=mn
  b1 = f32[2,16,5] reduce-window(x, pinf), window={size=2x3x2 pad=0_0x1_0x0_0 lhs_dilate=1x2x1 rhs_dilate=1x1x2}, to_apply=mn_copy
  c0 = s32[1,4,3] reduce-window(k, zero), window={size=3x3x3 stride=1x2x2}, to_apply=ad
  c1 = s32[1,4,3] reduce-window(k, zero), window={size=3x3x3 stride=1x2x2}, to_apply=ad_copy
  d0 = bf16[3,9,7] reduce-window(xb, zb), window={size=1x3x5 pad=0_0x1_1x2_2}, to_apply=bd
  d1 = bf16[3,9,7] reduce-window(xb, zb), window={size=1x3x5 pad=0_0x1_1x2_2}, to_apply=bd_copy
  ROOT t = (f32[3,5,4], f32[3,5,4], f32[2,16,5], f32[2,16,5], s32[1,4,3], s32[1,4,3], bf16[3,9,7], bf16[3,9,7])
      tuple(a0, a1, b0, b1, c0, c1, d0, d1)
}
)";
  BundleProgram p = Load(text);
  std::mt19937 rng(11);
  const uint32_t specials[] = {0x80000000u, 0, 0x7fc00001u, 0xffc00002u, 0x7f800000u, 0xff800000u, 0x3f800000u};
  Value x{PrimitiveType::kF32, {3, 9, 7}, std::string(189 * 4, '\0'), {}, {}};
  Value k{PrimitiveType::kS32, {3, 9, 7}, std::string(189 * 4, '\0'), {}, {}};
  for (int i = 0; i < 189; ++i) {
    uint32_t bits = specials[rng() % 7];
    if (rng() % 2 == 0) {
      float f = static_cast<float>(static_cast<int>(rng() % 9) - 4) * 0.37f;
      std::memcpy(&bits, &f, 4);
    }
    std::memcpy(x.bytes.data() + 4 * i, &bits, 4);
    uint32_t wide = static_cast<uint32_t>(rng());
    std::memcpy(k.bytes.data() + 4 * i, &wide, 4);
  }
  auto result = Execute(p, {x, k});
  REQUIRE(result.ok());
  REQUIRE(result->tuple.size() == 8);
  for (size_t i = 0; i < 8; i += 2) {
    CAPTURE(i);
    CHECK(result->tuple[i].bytes == result->tuple[i + 1].bytes);
  }
}

TEST_CASE("reduce-window: windows too wide to plan are found as the run meets them") {
  // 4095 positions of a 2048-element window over 2048 elements: a reach of 8.4M offsets, past
  // kMaxWindowReach, so the step runs unplanned. Result o is the max of x[o - 2047 .. o].
  const std::string text = R"(HloModule wide
mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(a, b) }
ENTRY e {
  x = f32[2048] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT r = f32[4095] reduce-window(x, ninf), window={size=2048 pad=2047_2047}, to_apply=mx
}
)";
  BundleProgram p = Load(text);
  std::vector<float> xs(2048);
  std::mt19937 rng(5);
  for (float& v : xs) v = static_cast<float>(rng() % 100000) / 7.0f;
  Value x{PrimitiveType::kF32, {2048}, std::string(reinterpret_cast<const char*>(xs.data()), 2048 * 4), {}, {}};
  auto result = Execute(p, {x});
  REQUIRE(result.ok());
  REQUIRE(result->bytes.size() == 4095 * 4);
  for (int64_t o = 0; o < 4095; o += 97) {
    float want = -std::numeric_limits<float>::infinity();
    for (int64_t j = std::max<int64_t>(0, o - 2047); j <= std::min<int64_t>(2047, o); ++j) want = std::max(want, xs[j]);
    float got;
    std::memcpy(&got, result->bytes.data() + 4 * o, 4);
    CAPTURE(o);
    CHECK(got == want);
  }
}

TEST_CASE("scatter: recognised combiners give what the combiner run as written gives, bit for bit") {
  // Repeated and out-of-range indices over f32 with NaN payloads and signed zeros (max
  // swapped), s32 (multiply), and f32 and bf16 add of finite values (which NaN a compiled
  // `a + b` keeps when both are NaN depends on the compiler and its flags: the sanitizer build
  // and the release build differ; docs/interpreter-performance.md), against the same combiner
  // with a copy.
  const std::string text = R"(HloModule scatters
mx { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] maximum(b, a) }
mx_copy { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] maximum(b, a)  ROOT c = f32[] copy(s) }
ad { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ad_copy { a = f32[] parameter(0)  b = f32[] parameter(1)  s = f32[] add(a, b)  ROOT c = f32[] copy(s) }
ml { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] multiply(a, b) }
ml_copy { a = s32[] parameter(0)  b = s32[] parameter(1)  s = s32[] multiply(a, b)  ROOT c = s32[] copy(s) }
bd { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }
bd_copy { a = bf16[] parameter(0)  b = bf16[] parameter(1)  s = bf16[] add(a, b)  ROOT c = bf16[] copy(s) }
ENTRY e {
  x = f32[8,3] parameter(0)
  u = f32[40,3] parameter(1)
  i = s32[40] parameter(2)
  k = s32[8,3] parameter(3)
  v = s32[40,3] parameter(4)
  xb = bf16[8,3] convert(k)
  ub = bf16[40,3] convert(v)
  xf = f32[8,3] convert(k)
  uf = f32[40,3] convert(v)
  a0 = f32[8,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mx
  a1 = f32[8,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mx_copy
  b0 = f32[8,3] scatter(xf, i, uf), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=ad
  b1 = f32[8,3] scatter(xf, i, uf), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=ad_copy
  c0 = s32[8,3] scatter(k, i, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=ml
  c1 = s32[8,3] scatter(k, i, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=ml_copy
  d0 = bf16[8,3] scatter(xb, i, ub), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=bd
  d1 = bf16[8,3] scatter(xb, i, ub), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=bd_copy
  ROOT t = (f32[8,3], f32[8,3], f32[8,3], f32[8,3], s32[8,3], s32[8,3], bf16[8,3], bf16[8,3]) tuple(a0, a1, b0, b1, c0, c1, d0, d1)
}
)";
  BundleProgram p = Load(text);
  std::mt19937 rng(3);
  const uint32_t specials[] = {0x80000000u, 0, 0x7fc00001u, 0xffc00002u, 0x7f800000u, 0xff800000u, 0x3f800000u};
  auto floats = [&](int64_t n) {
    std::string bytes(static_cast<size_t>(n) * 4, '\0');
    for (int64_t j = 0; j < n; ++j) {
      uint32_t bits = specials[rng() % 7];
      if (rng() % 2 == 0) {
        float f = static_cast<float>(static_cast<int>(rng() % 9) - 4) * 0.37f;
        std::memcpy(&bits, &f, 4);
      }
      std::memcpy(bytes.data() + 4 * j, &bits, 4);
    }
    return bytes;
  };
  auto ints = [&](int64_t n, int64_t modulo, int64_t offset) {
    std::string bytes(static_cast<size_t>(n) * 4, '\0');
    for (int64_t j = 0; j < n; ++j) {
      const int32_t value = static_cast<int32_t>(static_cast<int64_t>(rng() % modulo) + offset);
      std::memcpy(bytes.data() + 4 * j, &value, 4);
    }
    return bytes;
  };
  Value x{PrimitiveType::kF32, {8, 3}, floats(24), {}, {}};
  Value u{PrimitiveType::kF32, {40, 3}, floats(120), {}, {}};
  Value i{PrimitiveType::kS32, {40}, ints(40, 10, -1), {}, {}};  // -1 and 8 are out of range: skipped
  Value k{PrimitiveType::kS32, {8, 3}, ints(24, 1000, -500), {}, {}};
  Value v{PrimitiveType::kS32, {40, 3}, ints(120, 1000, -500), {}, {}};
  auto result = Execute(p, {x, u, i, k, v});
  REQUIRE(result.ok());
  REQUIRE(result->tuple.size() == 8);
  for (size_t j = 0; j < 8; j += 2) {
    CAPTURE(j);
    CHECK(result->tuple[j].bytes == result->tuple[j + 1].bytes);
  }
}

// A float add reduce sums each result in double, in chunks of 512 elements from +0 (XLA's
// evaluator); results whose inputs are rows run eight at a time, columns add four rows at a
// time. Each must still be its own chain: checked against that sum computed here, for 19 rows
// (two groups of eight and three alone), rows split across an outer reduced dimension (chunks
// end mid-run), and columns with a partial last group of rows.
TEST_CASE("reduce: float add sums each result in double chunks, rows and columns grouped") {
  // absorbing: along the first reduced dimension, index 0 is 2^53, the last -2^53, the rest 1. In
  // double, 2^53 + 1 rounds back to 2^53, so the ones in 2^53's chunk vanish and the result
  // counts the ones past it: it shows where each chunk ends.
  auto check = [](const std::string& x_shape, const std::string& out_shape, const std::string& dims,
                  const std::vector<int64_t>& shape, const std::vector<bool>& reduced, bool absorbing = false) {
    CAPTURE(x_shape);
    const std::string text =
        "HloModule r\nadd { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
        "ENTRY e {\n  x = f32[" +
        x_shape +
        "] parameter(0)\n  z = f32[] constant(0.25)\n"
        "  ROOT r = f32[" +
        out_shape + "] reduce(x, z), dimensions={" + dims + "}, to_apply=add\n}\n";
    BundleProgram p = Load(text);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> x(static_cast<size_t>(n));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-10, 30);
    for (float& v : x) v = std::ldexp(mantissa(rng), exponent(rng));  // magnitudes far apart: order shows
    if (absorbing) {                                                  // along the first reduced dimension
      size_t d = 0;
      while (!reduced[d]) ++d;
      int64_t stride = 1;
      for (size_t e = d + 1; e < shape.size(); ++e) stride *= shape[e];
      for (int64_t i = 0; i < n; ++i) {
        const int64_t at = (i / stride) % shape[d];
        x[static_cast<size_t>(i)] = at == 0 ? 0x1p53f : at == shape[d] - 1 ? -0x1p53f : 1.0f;
      }
    }
    Value in;
    in.type = PrimitiveType::kF32;
    in.dims = shape;
    in.bytes.assign(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
    auto r = Execute(p, {in});
    REQUIRE(r.ok());
    std::vector<float> got(r->bytes.size() / sizeof(float));
    std::memcpy(got.data(), r->bytes.data(), r->bytes.size());
    // The reference: results in row-major order of the kept dimensions, each summing its inputs
    // in row-major order of the reduced ones.
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * shape[d + 1];
    std::vector<double> total, chunk;
    std::vector<int64_t> in_chunk;
    std::map<int64_t, size_t> result_of;  // kept offset -> result index, in row-major order
    for (int64_t i = 0; i < n; ++i) {
      int64_t kept = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        if (!reduced[d]) kept += ((i / strides[d]) % shape[d]) * strides[d];
      auto [it, fresh] = result_of.emplace(kept, total.size());
      if (fresh) total.push_back(0.25), chunk.push_back(0), in_chunk.push_back(0);
      const size_t k = it->second;
      chunk[k] += static_cast<double>(x[static_cast<size_t>(i)]);
      if (++in_chunk[k] == 512) total[k] += chunk[k], chunk[k] = 0, in_chunk[k] = 0;
    }
    REQUIRE(got.size() == total.size());
    int64_t wrong = 0;
    for (size_t k = 0; k < total.size(); ++k)
      wrong += got[k] != static_cast<float>(in_chunk[k] > 0 ? total[k] + chunk[k] : total[k]);
    CHECK(wrong == 0);
  };
  check("19,1300", "19", "1", {19, 1300}, {false, true});
  check("3,9,4,200", "3,4", "1,3", {3, 9, 4, 200}, {false, true, false, true});
  // Columns (the innermost dimension kept), four rows at a time: 1303 rows end in a partial group.
  check("1303,19", "19", "0", {1303, 19}, {true, false});
  check("7,3,150,5", "3,5", "0,2", {7, 3, 150, 5}, {true, false, true, false});
  check("1303,19", "19", "0", {1303, 19}, {true, false}, true);
  check("19,1300", "19", "1", {19, 1300}, {false, true}, true);
  check("1300", "", "0", {1300}, {true}, true);
}

TEST_CASE("a reducer's dead steps do not change what its reduce computes") {
  // A fuzz-modules finding: DCE in the default pipeline removed a reducer's dead steps, so the
  // bf16 add reduce took XLA's double-sum path there and summed step by step in bf16 with
  // --passes=none (3.47 against 3.48).
  const char* text = R"(HloModule dead
add { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(b, a) }
add_dead { a = bf16[] parameter(0)  b = bf16[] parameter(1)  c = bf16[] constant(7)  d = bf16[] power(b, c)
           ROOT s = bf16[] add(b, a) }
add_copy { a = bf16[] parameter(0)  b = bf16[] parameter(1)  s = bf16[] add(b, a)  ROOT c = bf16[] copy(s) }
ENTRY e {
  x = bf16[4096] parameter(0)
  z = bf16[] constant(0)
  plain = bf16[] reduce(x, z), dimensions={0}, to_apply=add
  dead = bf16[] reduce(x, z), dimensions={0}, to_apply=add_dead
  stepwise = bf16[] reduce(x, z), dimensions={0}, to_apply=add_copy
  ROOT t = (bf16[], bf16[], bf16[]) tuple(plain, dead, stepwise)
})";
  BundleProgram p = Load(text);
  Module scratch;
  auto got = Execute(p, {RandomValue(scratch.MakeArrayShape(PrimitiveType::kBF16, {4096}), 21)});
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(got->tuple[1].bytes == got->tuple[0].bytes);
  CHECK(got->tuple[2].bytes != got->tuple[0].bytes);  // rounding every step: the path the dead steps took
}
