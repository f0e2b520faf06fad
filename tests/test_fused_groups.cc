// SPDX-License-Identifier: Apache-2.0
// Fused elementwise groups (src/interp/fused_groups.h): which steps the planner groups and which
// results it stores, and runs with fusion on and off giving the same bytes — on NaNs, on element
// counts that are not a multiple of the tile, over several ParallelFor chunks, for 1 and 2
// threads, through converts to bf16 and back, compares, selects and scalar broadcasts.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "interp/fused_groups.h"
#include "interp/gemm.h"
#include "interp/interp.h"
#include "interp/op_table.h"
#include "ir/verifier.h"
#include "load_program.h"
#include "parser/parser.h"
#include "support/parallel.h"

using namespace nhlo;

namespace {

BundleProgram Load(const std::string& text) { return testing::LoadProgram(text, "fused"); }

FusionPlan PlanOfEntry(const BundleProgram& p, std::vector<Step>& steps) {
  const ComputationRecord& entry = p.computations[p.entry];
  for (const BundleRecord& b : entry.bundles) {
    Step s = StepFor(b);
    s.family = ExecutionOf(b.opcode).family;
    steps.push_back(std::move(s));
  }
  return PlanFusion(entry, steps);
}

// f32 values in [-2, 2) with NaNs, infinities and signed zeros sprinkled in.
Value F32Arg(int64_t n, uint32_t seed) {
  Value v;
  v.type = PrimitiveType::kF32;
  v.dims = {n};
  std::vector<float> x(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (float& f : x) f = u(rng);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -0.0f,
                            0.0f,
                            1e-40f};
  for (int64_t i = 0; i < n; i += 37) x[static_cast<size_t>(i)] = specials[(i / 37 + seed) % 6];
  v.bytes.assign(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
  return v;
}

void CheckSameBytes(const Value& a, const Value& b) {
  REQUIRE(a.type == b.type);
  if (a.IsTuple()) {
    REQUIRE(a.tuple.size() == b.tuple.size());
    for (size_t i = 0; i < a.tuple.size(); ++i) CheckSameBytes(a.tuple[i], b.tuple[i]);
    return;
  }
  CHECK(a.dims == b.dims);
  CHECK(a.bytes == b.bytes);
}

std::string Chain(int64_t n) {
  std::string t = "f32[" + std::to_string(n) + "]", h = "bf16[" + std::to_string(n) + "]",
              p = "pred[" + std::to_string(n) + "]";
  return "HloModule fused\nENTRY e {\n"
         "  x = " +
         t + " parameter(0)\n  y = " + t +
         " parameter(1)\n"
         "  half = f32[] constant(0.5)\n  halves = " +
         t +
         " broadcast(half), dimensions={}\n"
         "  a = " +
         t + " multiply(x, halves)\n  b = " + t + " add(a, y)\n  c = " + t +
         " maximum(b, x)\n"
         "  lt = " +
         p + " compare(c, y), direction=LT\n  d = " + t +
         " select(lt, c, a)\n"
         "  e16 = " +
         h + " convert(d)\n  e32 = " + t + " convert(e16)\n  f = " + t +
         " exponential(e32)\n"
         "  g = " +
         t + " divide(f, b)\n  r2 = f32[" + std::to_string(n) +
         ",1] reshape(g)\n"
         "  total = " +
         t +
         " reshape(r2)\n"
         "  ROOT out = (" +
         t + ", " + t + ", " + p + ") tuple(total, b, lt)\n}\n";
}

}  // namespace

TEST_CASE("fused groups: the planner groups an elementwise chain and stores what is read after it") {
  BundleProgram p = Load(Chain(5000));
  std::vector<Step> steps;
  FusionPlan plan = PlanOfEntry(p, steps);
  REQUIRE(plan.groups.size() == 1);
  const FusedGroup& g = plan.groups[0];
  CHECK(g.elements == 5000);
  CHECK(g.step_count == 12);  // halves .. total: every step between the constant and the tuple
  // Stored: b and lt (tuple operands) and total; the rest lives in tile scratch.
  CHECK(g.stored == 3);
  CHECK(g.scratch_tiles >= 1);
  CHECK(g.scratch_tiles < 10);
}

TEST_CASE("fused groups: results are the same bytes with fusion on and off") {
  int threads = ParallelThreads();
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1024}, int64_t{5000}, int64_t{3 * 65536 + 123}}) {
    BundleProgram p = Load(Chain(n));
    std::vector<Value> args = {F32Arg(n, 1), F32Arg(n, 2)};
    ExecuteOptions off;
    off.fusion = false;
    auto reference = Execute(p, args, off);
    REQUIRE(reference.ok());
    for (int t : {1, 2}) {
      SetParallelThreads(t);
      auto fused = Execute(p, args);
      REQUIRE(fused.ok());
      CAPTURE(n);
      CAPTURE(t);
      CheckSameBytes(*fused, *reference);
    }
  }
  SetParallelThreads(threads);
}

// bf16 ops whose spans came later (reduce-precision, a clamp of scalar bounds, is-finite) in one
// chain with converts, a multiply and a select.
std::string LowPrecisionChain(int64_t n) {
  const std::string t = "f32[" + std::to_string(n) + "]", h = "bf16[" + std::to_string(n) + "]",
                    p = "pred[" + std::to_string(n) + "]";
  return "HloModule lowp\nENTRY e {\n  x = " + t + " parameter(0)\n  y = " + t +
         " parameter(1)\n  lo = bf16[] constant(-1.5)\n  hi = bf16[] constant(1.25)\n"
         "  xh = " +
         h + " convert(x)\n  yh = " + h + " convert(y)\n  s = " + h +
         " multiply(xh, yh)\n"
         "  r = " +
         h +
         " reduce-precision(s), exponent_bits=4, mantissa_bits=2\n"
         "  c = " +
         h + " clamp(lo, r, hi)\n  f = " + p + " is-finite(r)\n  z = " + h + " select(f, c, s)\n  ROOT out = (" + h +
         ", " + p + ") tuple(z, f)\n}\n";
}

TEST_CASE("fused groups: reduce-precision, scalar-bound bf16 clamp and is-finite fuse, same bytes") {
  BundleProgram p = Load(LowPrecisionChain(5000));
  std::vector<Step> steps;
  FusionPlan plan = PlanOfEntry(p, steps);
  REQUIRE(plan.groups.size() == 1);
  CHECK(plan.groups[0].step_count == 7);  // xh .. z
  int threads = ParallelThreads();
  for (int64_t n : {int64_t{1}, int64_t{5000}, int64_t{3 * 65536 + 123}}) {
    BundleProgram q = Load(LowPrecisionChain(n));
    std::vector<Value> args = {F32Arg(n, 3), F32Arg(n, 4)};
    ExecuteOptions off;
    off.fusion = false;
    auto reference = Execute(q, args, off);
    REQUIRE(reference.ok());
    for (int t : {1, 2}) {
      SetParallelThreads(t);
      auto fused = Execute(q, args);
      REQUIRE(fused.ok());
      CAPTURE(n);
      CAPTURE(t);
      CheckSameBytes(*fused, *reference);
    }
  }
  SetParallelThreads(threads);
}

// hardtanh as torch-xla writes it: clamp(broadcast(lo), x, broadcast(hi)), its bounds broadcast
// from a parameter and a constant long before, a step that cannot join a group (reverse) in
// between. `keep` adds tuple operands reading the bounds' broadcasts, which must then be stored.
std::string Hardtanh(int64_t n, bool keep) {
  const std::string t = "f32[" + std::to_string(n) + "]";
  return "HloModule hardtanh\nENTRY e {\n"
         "  x = " +
         t +
         " parameter(0)\n"
         "  lo = f32[] parameter(1)\n"
         "  six = f32[] constant(6)\n"
         "  los = " +
         t +
         " broadcast(lo), dimensions={}\n"
         "  scaled = " +
         t +
         " multiply(x, los)\n"
         "  rev = " +
         t +
         " reverse(scaled), dimensions={0}\n"
         "  his = " +
         t +
         " broadcast(six), dimensions={}\n"
         "  back = " +
         t +
         " reverse(rev), dimensions={0}\n"
         "  clamped = " +
         t +
         " clamp(los, back, his)\n"
         "  shifted = " +
         t +
         " subtract(clamped, his)\n"
         "  squared = " +
         t +
         " multiply(shifted, shifted)\n"
         "  ROOT out = (" +
         t + (keep ? ", " + t + ", " + t : "") + ") tuple(squared" + (keep ? ", his, los" : "") + ")\n}\n";
}

Value F32Scalar(float v) {
  Value s;
  s.type = PrimitiveType::kF32;
  s.bytes.assign(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

TEST_CASE("fused groups: scalar broadcasts are filled in the groups that read them, never stored") {
  BundleProgram p = Load(Hardtanh(5000, false));
  std::vector<Step> steps;
  FusionPlan plan = PlanOfEntry(p, steps);
  const ComputationRecord& entry = p.computations[p.entry];
  std::map<std::string, size_t> step_of;
  for (size_t i = 0; i < entry.bundles.size(); ++i)
    step_of[std::string(entry.buffers[entry.bundles[i].result].name)] = i;
  // `his` stands alone: elided. `los` is in the group {los, scaled}, where it stays in a tile,
  // and the group {clamped, shifted} fills both bounds' tiles from their scalars.
  CHECK(plan.elided[step_of["his"]]);
  CHECK(!plan.elided[step_of["los"]]);
  CHECK(!plan.elided[step_of["rev"]]);
  REQUIRE(plan.groups.size() == 2);
  CHECK(plan.groups[0].stored == 1);  // scaled; los lives in a tile
  // Two fills, clamp, subtract, multiply. The fills' tiles are filled once per chunk and never
  // handed to a later member (subtract would otherwise take the lower bound's).
  REQUIRE(plan.groups[1].members.size() == 5);
  CHECK(plan.groups[1].members[0].once);
  CHECK(plan.groups[1].members[1].once);
  CHECK(!plan.groups[1].members[2].once);
  CHECK(plan.groups[1].stored == 1);
  // Read by the root tuple, the broadcast is stored again.
  BundleProgram kept = Load(Hardtanh(5000, true));
  std::vector<Step> kept_steps;
  FusionPlan kept_plan = PlanOfEntry(kept, kept_steps);
  for (uint8_t e : kept_plan.elided) CHECK(!e);

  for (bool keep : {false, true})
    for (int64_t n : {int64_t{2}, int64_t{1500}, int64_t{3 * 65536 + 123}}) {
      BundleProgram q = Load(Hardtanh(n, keep));
      std::vector<Value> args = {F32Arg(n, 9), F32Scalar(-0.0f)};
      ExecuteOptions off;
      off.fusion = false;
      auto reference = Execute(q, args, off);
      REQUIRE(reference.ok());
      auto fused = Execute(q, args);
      REQUIRE(fused.ok());
      CAPTURE(n);
      CHECK(fused->tuple.size() == (keep ? 3u : 1u));
      CheckSameBytes(*fused, *reference);
      ExecuteOptions stepped;  // --max-steps runs the broadcasts: the same bytes
      stepped.max_steps = 100;
      auto limited = Execute(q, args, stepped);
      REQUIRE(limited.ok());
      CheckSameBytes(*limited, *reference);
    }
}

TEST_CASE("fused groups: a profile gives the group's time to its last member") {
  BundleProgram p = Load(Chain(4096));
  std::vector<Value> args = {F32Arg(4096, 3), F32Arg(4096, 4)};
  ExecutionProfile profile;
  ExecuteOptions options;
  options.profile = &profile;
  REQUIRE(Execute(p, args, options).ok());
  std::map<std::string, const BundleProfile*> by_name;
  for (const BundleProfile& b : profile.bundles) by_name[b.result] = &b;
  REQUIRE(by_name.count("total") == 1);
  REQUIRE(by_name.count("a") == 1);
  CHECK(by_name["a"]->runs == 1);
  CHECK(by_name["a"]->seconds == 0.0);
  CHECK(by_name["total"]->seconds > 0.0);
}

TEST_CASE("fused groups: --max-steps stops inside a group where it says") {
  BundleProgram p = Load(Chain(64));
  std::vector<Value> args = {F32Arg(64, 5), F32Arg(64, 6)};
  ExecuteOptions options;
  options.max_steps = 6;
  ExecutionErrorSite site;
  options.error_site = &site;
  auto r = Execute(p, args, options);
  REQUIRE(!r.ok());
  CHECK(r.status().ToString().find("stopped after 6 steps") != std::string::npos);
  ExecuteOptions off = options;
  off.fusion = false;
  ExecutionErrorSite off_site;
  off.error_site = &off_site;
  auto r_off = Execute(p, args, off);
  REQUIRE(!r_off.ok());
  CHECK(site.result == off_site.result);
}

TEST_CASE("fused groups: the AVX2 and AVX-512 span kernels give the baseline's bytes") {
  GemmIsa isa = ActiveGemmIsa();
  const int64_t n = 3 * 65536 + 123;
  BundleProgram p = Load(Chain(n));
  std::vector<Value> args = {F32Arg(n, 7), F32Arg(n, 8)};
  REQUIRE(SetGemmIsa(GemmIsa::kBaseline));
  auto baseline = Execute(p, args);
  REQUIRE(baseline.ok());
  for (GemmIsa wider : {GemmIsa::kAvx2, GemmIsa::kAvx512}) {
    if (!SetGemmIsa(wider)) continue;  // the CPU does not have it
    for (bool fusion : {true, false}) {
      ExecuteOptions options;
      options.fusion = fusion;
      auto r = Execute(p, args, options);
      REQUIRE(r.ok());
      CAPTURE(GemmIsaName(wider));
      CAPTURE(fusion);
      CheckSameBytes(*r, *baseline);
    }
  }
  SetGemmIsa(isa);
}

TEST_CASE("Executable: loaded once, every run gives what Execute gives") {
  // rng draws from a stream that starts again with each run.
  std::string text =
      "HloModule again\nENTRY e {\n  x = f32[1000] parameter(0)\n  lo = f32[] constant(0)\n"
      "  hi = f32[] constant(1)\n  r = f32[1000] rng(lo, hi), distribution=rng_uniform\n"
      "  s = f32[1000] add(x, r)\n  ROOT m = f32[1000] multiply(s, s)\n}\n";
  BundleProgram p = Load(text);
  std::vector<Value> args = {F32Arg(1000, 9)};
  auto once = Execute(p, args);
  REQUIRE(once.ok());
  auto loaded = Executable::Load(p);
  REQUIRE(loaded.ok());
  for (int run = 0; run < 3; ++run) {
    auto again = (*loaded)->Run(args);
    REQUIRE(again.ok());
    CheckSameBytes(*again, *once);
  }
  // A wrong argument count is an error of that run, and the next run still works.
  CHECK(!(*loaded)->Run({}).ok());
  auto after = (*loaded)->Run(args);
  REQUIRE(after.ok());
  CheckSameBytes(*after, *once);
}

TEST_CASE("Executable::RunBorrowed reads the arguments in place and leaves them as they were") {
  // A while loop whose state starts from parameters, an in-place update and a sort of a
  // parameter, and a bounded dynamic parameter given a smaller value (padded into a copy).
  std::string text =
      "HloModule borrowed\n"
      "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
      "cond {\n  p = (s32[], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] constant(3)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  p = (s32[], f32[64]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  v = f32[64] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
      "  v2 = f32[64] add(v, v)\n  ROOT t = (s32[], f32[64]) tuple(i2, v2)\n}\n"
      "ENTRY e {\n  x = f32[64] parameter(0)\n  u = f32[8] parameter(1)\n  i = s32[] parameter(2)\n"
      "  y = f32[<=64] parameter(3)\n"
      "  t = (s32[], f32[64]) tuple(i, x)\n  w = (s32[], f32[64]) while(t), condition=cond, body=body\n"
      "  wv = f32[64] get-tuple-element(w), index=1\n  d = f32[64] dynamic-update-slice(x, u, i)\n"
      "  s = f32[64] sort(x), dimensions={0}, to_apply=lt\n  ys = f32[<=64] negate(y)\n"
      "  ROOT r = (f32[64], f32[64], f32[64], f32[<=64]) tuple(wv, d, s, ys)\n}\n";
  BundleProgram p = Load(text);
  Value start;
  start.type = PrimitiveType::kS32;
  const int32_t zero = 0;
  start.bytes.assign(reinterpret_cast<const char*>(&zero), sizeof zero);
  const std::vector<Value> args = {F32Arg(64, 3), F32Arg(8, 4), start, F32Arg(40, 5)};
  const std::vector<Value> kept = args;
  auto once = Execute(p, args);
  REQUIRE(once.ok());
  auto loaded = Executable::Load(p);
  REQUIRE(loaded.ok());
  for (int run = 0; run < 2; ++run) {
    auto again = (*loaded)->RunBorrowed(args);
    REQUIRE(again.ok());
    CheckSameBytes(*again, *once);
    for (size_t i = 0; i < args.size(); ++i) CheckSameBytes(args[i], kept[i]);
  }
}

TEST_CASE("Executable reruns over the last run's bytes give what a fresh run gives") {
  // The arena is not cleared between runs, so a kernel that left part of its result unwritten
  // would show there what the previous run (on other arguments) left in that slot, where a fresh
  // run shows zeros (checked: with the reused arena filled with 0xA5 and a span kernel made to
  // skip its last element, this fails). Kernels of many kinds, a padded bounded parameter and s4
  // (two values a byte) results.
  std::string text =
      "HloModule rerun\n"
      "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = f32[] add(a, b) }\n"
      "lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }\n"
      "ENTRY e {\n  x = f32[64] parameter(0)\n  u = f32[8] parameter(1)\n  y = f32[<=64] parameter(2)\n"
      "  m = f32[8,8] reshape(x)\n  d = f32[8,8] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  img = f32[1,8,8,1] reshape(x)\n  k = f32[3,3,1,1] constant({{{{1}},{{2}},{{3}}},{{{4}},{{5}},{{6}}},"
      "{{{7}},{{8}},{{9}}}})\n"
      "  cv = f32[1,8,8,1] convolution(img, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
      "  z = f32[] constant(0)\n  rs = f32[8] reduce(m, z), dimensions={1}, to_apply=add\n"
      "  rw = f32[4,4] reduce-window(m, z), window={size=2x2 stride=2x2}, to_apply=add\n"
      "  pd = f32[12,10] pad(m, z), padding=2_2x1_1\n  i = s32[] constant(5)\n"
      "  du = f32[64] dynamic-update-slice(x, u, i)\n  so = f32[64] sort(x), dimensions={0}, to_apply=lt\n"
      "  q = s4[64] convert(x)\n  qb = f32[64] convert(q)\n  ys = f32[<=64] negate(y)\n"
      "  tr = f32[8,8] transpose(m), dimensions={1,0}\n  sq = f32[64] multiply(x, x)\n"
      "  ROOT r = (f32[8,8], f32[1,8,8,1], f32[8], f32[4,4], f32[12,10], f32[64], f32[64], s4[64], f32[64], "
      "f32[<=64], f32[8,8], f32[64]) tuple(d, cv, rs, rw, pd, du, so, q, qb, ys, tr, sq)\n}\n";
  BundleProgram p = Load(text);
  const std::vector<Value> first = {F32Arg(64, 3), F32Arg(8, 4), F32Arg(40, 5)};
  const std::vector<Value> second = {F32Arg(64, 6), F32Arg(8, 7), F32Arg(20, 8)};
  auto fresh = Execute(p, second);
  REQUIRE(fresh.ok());
  auto loaded = Executable::Load(p);
  REQUIRE(loaded.ok());
  CHECK(!(*loaded)->ReadResult().ok());  // no run yet
  REQUIRE((*loaded)->RunInPlace(first).ok());
  REQUIRE((*loaded)->RunInPlace(second).ok());
  auto again = (*loaded)->ReadResult();
  REQUIRE(again.ok());
  CheckSameBytes(*again, *fresh);
  CHECK(!(*loaded)->RunInPlace({}).ok());  // a failed run leaves no result to read
  CHECK(!(*loaded)->ReadResult().ok());
}

TEST_CASE("Executable reruns start a send to itself afresh") {
  // One device sends x to itself every run; only a run whose flag is true takes it (in a
  // conditional branch). A run that leaves its letter behind must not hand it to the next run:
  // the second run takes its own x (checked: without CollectiveSteps::BeginRun the second run
  // returned the first run's {1, 2}).
  const std::string text =
      "HloModule rerun_send\n"
      "take {\n  p = (f32[2], token[]) parameter(0)\n  tok = token[] get-tuple-element(p), index=1\n"
      "  r = (f32[2], u32[], token[]) recv(tok), channel_id=1, "
      "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,0}}\"}\n"
      "  rd = (f32[2], token[]) recv-done(r), channel_id=1\n  ROOT d = f32[2] get-tuple-element(rd), index=0\n}\n"
      "skip {\n  p = (f32[2], token[]) parameter(0)\n  ROOT z = f32[2] constant({0, 0})\n}\n"
      "ENTRY e {\n  x = f32[2] parameter(0)\n  flag = pred[] parameter(1)\n  tok = token[] after-all()\n"
      "  s = (f32[2], u32[], token[]) send(x, tok), channel_id=1, "
      "frontend_attributes={_xla_send_recv_source_target_pairs=\"{{0,0}}\"}\n"
      "  sd = token[] send-done(s), channel_id=1\n  t = (f32[2], token[]) tuple(x, tok)\n"
      "  ROOT c = f32[2] conditional(flag, t, t), true_computation=take, false_computation=skip\n}\n";
  BundleProgram p = Load(text);
  auto args = [](float a, float b, bool flag) {
    Value x, f;
    x.type = PrimitiveType::kF32;
    x.dims = {2};
    const float v[2] = {a, b};
    x.bytes.assign(reinterpret_cast<const char*>(v), sizeof v);
    f.type = PrimitiveType::kPred;
    f.bytes.assign(1, flag ? '\1' : '\0');
    return std::vector<Value>{x, f};
  };
  auto loaded = Executable::Load(p);
  REQUIRE(loaded.ok());
  REQUIRE((*loaded)->RunInPlace(args(1, 2, false)).ok());
  REQUIRE((*loaded)->RunInPlace(args(3, 4, true)).ok());
  auto got = (*loaded)->ReadResult();
  REQUIRE(got.ok());
  REQUIRE(got->bytes.size() == 8);
  float out[2];
  std::memcpy(out, got->bytes.data(), sizeof out);
  CHECK(out[0] == 3.0f);
  CHECK(out[1] == 4.0f);
}

TEST_CASE("pred binary ops run as spans with the evaluator's rules") {
  // XLA's evaluator: and/minimum/multiply are and, or/maximum/add are or, xor is xor (the verifier
  // refuses subtract and power on pred, as XLA's does).
  const char* ops[] = {"and", "minimum", "multiply", "or", "maximum", "add", "xor"};
  std::string text = "HloModule p\nENTRY e {\n  x = pred[1000] parameter(0)\n  y = pred[1000] parameter(1)\n";
  std::string root = "  ROOT t = (";
  for (size_t i = 0; i < std::size(ops); ++i) {
    text += "  r" + std::to_string(i) + " = pred[1000] " + ops[i] + "(x, y)\n";
    root += std::string(i ? ", " : "") + "pred[1000]";
  }
  root += ") tuple(";
  for (size_t i = 0; i < std::size(ops); ++i) root += std::string(i ? ", " : "") + "r" + std::to_string(i);
  text += root + ")\n}\n";
  BundleProgram p = Load(text);
  Value x, y;
  x.type = y.type = PrimitiveType::kPred;
  x.dims = y.dims = {1000};
  for (int i = 0; i < 1000; ++i) {
    x.bytes.push_back(static_cast<char>(i % 2));
    y.bytes.push_back(static_cast<char>((i / 2) % 2));
  }
  for (bool fusion : {true, false}) {
    ExecuteOptions options;
    options.fusion = fusion;
    auto r = Execute(p, {x, y}, options);
    REQUIRE(r.ok());
    REQUIRE(r->tuple.size() == std::size(ops));
    for (size_t k = 0; k < std::size(ops); ++k)
      for (int i = 0; i < 1000; ++i) {
        bool a = x.bytes[i] != 0, b = y.bytes[i] != 0;
        bool want = k < 3 ? (a && b) : k < 6 ? (a || b) : (a != b);
        CAPTURE(ops[k]);
        REQUIRE(r->tuple[k].bytes[i] == static_cast<char>(want));
      }
  }
}
