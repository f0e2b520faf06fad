// SPDX-License-Identifier: Apache-2.0
// A map whose callee is a chain of scalar elementwise steps runs as one group over its arrays
// (fused_groups.h, LiftedCallee): torch-neuronx's GELU expansions are such maps, and ran through
// the executor once per element and step before. The lifted run must give the bytes the same ops
// give over whole arrays, op by op.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "interp/fused_groups.h"
#include "interp/lower.h"
#include "load_program.h"
#include "support/parallel.h"

using namespace nhlo;

namespace {

// GELU's exact form and a clamp/select/convert tail, as a scalar callee of a map (`mapped`) and
// as the same ops over arrays (`direct`, broadcasts of the constants).
const char* kMapped = R"(HloModule mapped
gelu {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  inv_sqrt2 = f32[] constant(0.70710678118654752)
  scaled = f32[] multiply(x, inv_sqrt2)
  erf = f32[] erf(scaled)
  one = f32[] constant(1)
  one_plus = f32[] add(one, erf)
  half = f32[] constant(0.5)
  half_x = f32[] multiply(x, half)
  g = f32[] multiply(half_x, one_plus)
  e = f32[] exponential(y)
  lo = f32[] constant(-2)
  hi = f32[] constant(3)
  c = f32[] clamp(lo, e, hi)
  gt = pred[] compare(g, c), direction=GT
  s = f32[] select(gt, g, c)
  b = bf16[] convert(s)
  ROOT r = f32[] convert(b)
}
ENTRY e {
  p = f32[150000] parameter(0)
  q = f32[150000] parameter(1)
  ROOT m = f32[150000] map(p, q), dimensions={0}, to_apply=gelu
})";

const char* kDirect = R"(HloModule direct
ENTRY e {
  x = f32[150000] parameter(0)
  y = f32[150000] parameter(1)
  inv_sqrt2 = f32[] constant(0.70710678118654752)
  b_inv = f32[150000] broadcast(inv_sqrt2), dimensions={}
  scaled = f32[150000] multiply(x, b_inv)
  erf = f32[150000] erf(scaled)
  one = f32[] constant(1)
  b_one = f32[150000] broadcast(one), dimensions={}
  one_plus = f32[150000] add(b_one, erf)
  half = f32[] constant(0.5)
  b_half = f32[150000] broadcast(half), dimensions={}
  half_x = f32[150000] multiply(x, b_half)
  g = f32[150000] multiply(half_x, one_plus)
  e = f32[150000] exponential(y)
  lo = f32[] constant(-2)
  b_lo = f32[150000] broadcast(lo), dimensions={}
  hi = f32[] constant(3)
  b_hi = f32[150000] broadcast(hi), dimensions={}
  c = f32[150000] clamp(b_lo, e, b_hi)
  gt = pred[150000] compare(g, c), direction=GT
  s = f32[150000] select(gt, g, c)
  b = bf16[150000] convert(s)
  ROOT r = f32[150000] convert(b)
})";

// The lifted form of the entry's map in `p`, or null.
std::shared_ptr<const LiftedCallee> LiftedOf(const BundleProgram& p) {
  const ComputationRecord& entry = p.computations[p.entry];
  for (const BundleRecord& b : entry.bundles) {
    if (b.opcode != Opcode::kMap) continue;
    const AttrRecord* to_apply = b.Find(AttrId::kToApply);
    REQUIRE(to_apply);
    const ComputationRecord& callee = p.computations[to_apply->computations()[0]];
    std::vector<Step> steps;
    for (const BundleRecord& cb : callee.bundles) {
      auto step = LowerBundle(p, callee, cb, ExecuteOptions{});
      REQUIRE(step.ok());
      steps.push_back(std::move(*step));
    }
    return LiftCallee(p, entry, b, callee, steps);
  }
  FAIL("no map");
  return nullptr;
}

std::vector<Value> Args(int64_t n) {
  Module scratch;
  RandomRange range{-6, 6};
  return {RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {n}), 11, range),
          RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {n}), 12, range)};
}

}  // namespace

TEST_CASE("a map of scalar elementwise steps runs lifted, with the bytes the array ops give") {
  BundleProgram mapped = testing::LoadProgram(kMapped, "mapped");
  std::shared_ptr<const LiftedCallee> lifted = LiftedOf(mapped);
  REQUIRE(lifted);
  CHECK(lifted->constants.size() == 5);  // inv_sqrt2, one, half, lo, hi
  BundleProgram direct = testing::LoadProgram(kDirect, "direct");
  std::vector<Value> args = Args(150000);
  for (int threads : {1, 3}) {
    ExecuteOptions options;
    options.fusion = false;  // the reference: every array op on its own
    auto want = Execute(direct, args, options);
    REQUIRE(want.ok());
    const int before = ParallelThreads();
    SetParallelThreads(threads);  // 150,000 elements: three chunks of 64 tiles
    auto got = Execute(mapped, args);
    SetParallelThreads(before);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(got->bytes == want->bytes);
  }
}

TEST_CASE("a map whose callee is not a chain of scalar steps runs element by element") {
  // A broadcast's span reads one element for all, so a callee with one does not lift; it still
  // runs, per element.
  const char* text = R"(HloModule not_lifted
twice {
  x = f32[] parameter(0)
  b = f32[] broadcast(x), dimensions={}
  ROOT r = f32[] add(b, x)
}
ENTRY e {
  p = f32[64] parameter(0)
  ROOT m = f32[64] map(p), dimensions={0}, to_apply=twice
})";
  BundleProgram p = testing::LoadProgram(text, "not_lifted");
  CHECK(LiftedOf(p) == nullptr);
  Module scratch;
  Value arg = RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {64}), 3);
  auto got = Execute(p, {arg});
  REQUIRE(got.ok());
  const float* x = reinterpret_cast<const float*>(arg.bytes.data());
  const float* r = reinterpret_cast<const float*>(got->bytes.data());
  for (int i = 0; i < 64; ++i) CHECK(r[i] == x[i] + x[i]);
}

TEST_CASE("maps nested in maps' callees load in time linear in the nesting") {
  // Each level's callee holds two maps of the level below: lowering a callee to see whether it
  // lifts, before knowing it cannot, lowered 2^24 bundles here (a review finding). Only loaded:
  // running it calls the innermost computation 2^24 times by the program's own nature.
  std::string text = "HloModule nested\nc0 {\n  x = f32[] parameter(0)\n  ROOT e = f32[] exponential(x)\n}\n";
  for (int k = 1; k <= 24; ++k) {
    const std::string below = "c" + std::to_string(k - 1);
    text += "c" + std::to_string(k) +
            " {\n  x = f32[] parameter(0)\n  a = f32[] map(x), dimensions={}, to_apply=" + below +
            "\n  b = f32[] map(a), dimensions={}, to_apply=" + below + "\n  ROOT r = f32[] subtract(b, a)\n}\n";
  }
  text += "ENTRY e {\n  p = f32[8] parameter(0)\n  ROOT m = f32[8] map(p), dimensions={0}, to_apply=c24\n}\n";
  BundleProgram p = testing::LoadProgram(text, "nested");
  auto loaded = Executable::Load(p);
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().ToString());
}
