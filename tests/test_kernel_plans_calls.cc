// SPDX-License-Identifier: Apache-2.0
// Kernel plans of calls, custom calls and the rarer kernels (src/interp/kernel_plans.h): each is
// checked and resolved at load, and a malformed record is refused with the message the run would
// give. The data-movement, dot, convolution and elementwise plans are in test_kernel_plans.cc.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "interp/kernel_plans.h"
#include "interp/kernels.h"
#include "interp/lower.h"
#include "interp/native_callees.h"
#include "kernel_plans_util.h"
#include "load_program.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

using testing::Lowered;
using testing::LowerFirst;
using testing::PlanOf;
using testing::StepBuffers;

TEST_CASE("kernel plans: called computations' signatures are checked at load, reported at the run") {
  const std::string computations =
      "cond {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  p = (s32[], f32[4]) parameter(0)\n  ROOT q = (s32[], f32[4]) copy(p)\n}\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
  SUBCASE("a while: nothing to report; its condition made to return s32: the run's message") {
    Lowered l = LowerFirst(
        "  x = f32[4] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], f32[4]) tuple(z, x)\n"
        "  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body\n",
        Opcode::kWhile, computations);
    REQUIRE(l.step.callee);
    CHECK(l.step.callee->error.ok());
    ComputationRecord& cond = l.program.computations[l.step.Find(AttrId::kCondition)->computations()[0]];
    cond.buffers[cond.root].type = PrimitiveType::kS32;
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    Result<Step> s = LowerBundle(l.program, entry, *l.step.bundle, ExecuteOptions{});
    REQUIRE(s.ok());  // the load succeeds: the error is the run's, when it reaches the loop
    REQUIRE(s->callee);
    CHECK(s->callee->error.ToString().find("while condition must return pred[]") != std::string::npos);
  }
  SUBCASE("a reduce: the reducer's root leaf; a root of another size: the run's message") {
    Lowered l = LowerFirst(
        "  x = f32[4,5] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n",
        Opcode::kReduce, computations);
    REQUIRE(l.step.callee);
    const ComputationRecord& add = l.program.computations[l.step.Find(AttrId::kToApply)->computations()[0]];
    CHECK(l.step.callee->leaves == std::vector<uint32_t>{add.root});
    ComputationRecord& mutable_add = l.program.computations[l.step.Find(AttrId::kToApply)->computations()[0]];
    mutable_add.buffers[mutable_add.root].size = 8;
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    Result<Step> s = LowerBundle(l.program, entry, *l.step.bundle, ExecuteOptions{});
    REQUIRE(s.ok());
    REQUIRE(s->callee);
    CHECK(s->callee->leaves.empty());
    CHECK(s->callee->error.ToString().find("the reducer's result does not match the accumulator") != std::string::npos);
  }
  SUBCASE("steps that call nothing per element carry no signature") {
    Lowered l = LowerFirst("  x = f32[4] parameter(0)\n  ROOT n = f32[4] negate(x)\n", Opcode::kNegate);
    CHECK(!l.step.callee);
  }
}

TEST_CASE("kernel plans: fft, cholesky and triangular-solve are checked and read at load") {
  Lowered r = LowerFirst("  x = f32[3,16] parameter(0)\n  ROOT f = c64[3,9] fft(x), fft_type=RFFT, fft_length={16}\n",
                         Opcode::kFft);
  CHECK(PlanOf<FftPlan>(r).type == FftType::kRfft);
  CHECK(PlanOf<FftPlan>(r).length == std::vector<int64_t>{16});
  CHECK(!PlanOf<FftPlan>(r).padded);
  Lowered p = LowerFirst("  x = c64[3,16] parameter(0)\n  ROOT f = c64[3,16] fft(x), fft_type=FFT, fft_length={8}\n",
                         Opcode::kFft);
  CHECK(PlanOf<FftPlan>(p).padded);  // XLA's evaluator: the common part, zeros elsewhere
  Lowered c =
      LowerFirst("  a = f32[5,4,4] parameter(0)\n  ROOT l = f32[5,4,4] cholesky(a), lower=false\n", Opcode::kCholesky);
  CHECK(PlanOf<LinalgPlan>(c).n == 4);
  CHECK(PlanOf<LinalgPlan>(c).matrices == 5);
  CHECK(!PlanOf<LinalgPlan>(c).lower);
  Lowered t = LowerFirst(
      "  a = f32[2,3,3] parameter(0)\n  b = f32[2,3,7] parameter(1)\n"
      "  ROOT x = f32[2,3,7] triangular-solve(a, b), left_side=true, lower=true, transpose_a=TRANSPOSE\n",
      Opcode::kTriangularSolve);
  const LinalgPlan& plan = PlanOf<LinalgPlan>(t);
  CHECK(plan.rows == 3);
  CHECK(plan.cols == 7);
  CHECK(plan.matrices == 2);
  CHECK((plan.left && plan.lower && plan.transposed && !plan.unit));
  // Records the run would refuse are refused here, with its message.
  BufferRecord a = t.program.computations[t.program.entry].buffers[t.step.bundle->operands[0]];
  BufferRecord b = t.program.computations[t.program.entry].buffers[t.step.bundle->operands[1]];
  b.dims = {2, 4, 7};
  Result<LinalgPlan> refused = PlanTriangularSolve(t.step, a, b, b);
  REQUIRE(!refused.ok());
  CHECK(refused.status().ToString().find("a is 3x3 but b's rows number 4") != std::string::npos);
}

TEST_CASE("kernel plans: batch norm is its feature layout, counts and epsilon, checked at load") {
  Lowered t = LowerFirst(
      "  x = f32[2,3,4,5] parameter(0)\n  s = f32[3] parameter(1)\n  o = f32[3] parameter(2)\n"
      "  ROOT t = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.1, feature_index=1\n",
      Opcode::kBatchNormTraining);
  const BatchNormPlan& plan = PlanOf<BatchNormPlan>(t);
  CHECK(plan.op == Opcode::kBatchNormTraining);
  CHECK((plan.outer == 2 && plan.features == 3 && plan.inner == 20));
  CHECK(plan.per_feature == 40);
  CHECK(plan.epsilon == 0.1f);  // an f32, as XLA keeps it
  Lowered g = LowerFirst(
      "  x = f32[6,4] parameter(0)\n  s = f32[4] parameter(1)\n  m = f32[4] parameter(2)\n  v = f32[4] parameter(3)\n"
      "  gy = f32[6,4] parameter(4)\n"
      "  ROOT g = (f32[6,4], f32[4], f32[4]) batch-norm-grad(x, s, m, v, gy), epsilon=0.001, feature_index=1\n",
      Opcode::kBatchNormGrad);
  CHECK((PlanOf<BatchNormPlan>(g).outer == 6 && PlanOf<BatchNormPlan>(g).inner == 1));
  CHECK(PlanOf<BatchNormPlan>(g).grad_count == 6);
  // An empty operand: no element loop (its other dimensions may multiply past 64 bits).
  Lowered e = LowerFirst(
      "  x = f32[7,0,4] parameter(0)\n  s = f32[0] parameter(1)\n  o = f32[0] parameter(2)\n"
      "  m = f32[0] parameter(3)\n  v = f32[0] parameter(4)\n"
      "  ROOT y = f32[7,0,4] batch-norm-inference(x, s, o, m, v), epsilon=0.1, feature_index=1\n",
      Opcode::kBatchNormInference);
  CHECK((PlanOf<BatchNormPlan>(e).outer == 0 && PlanOf<BatchNormPlan>(e).inner == 0));
  // The run's checks, made here with its messages: the arity, and a feature operand of another size.
  const ComputationRecord& entry = g.program.computations[g.program.entry];
  std::vector<const BufferRecord*> in, out;
  for (uint32_t o : g.step.bundle->operands) in.push_back(&entry.buffers[o]);
  for (uint32_t leaf : entry.buffers[g.step.bundle->result].tuple) out.push_back(&entry.buffers[leaf]);
  Result<BatchNormPlan> arity = PlanBatchNorm(g.step, in, {out[0]});
  REQUIRE(!arity.ok());
  CHECK(arity.status().ToString().find("'batch-norm-grad' has 5 operands and 1 results") != std::string::npos);
  BufferRecord wide = *in[1];
  wide.dims = {5};
  in[1] = &wide;
  Result<BatchNormPlan> mismatched = PlanBatchNorm(g.step, in, out);
  REQUIRE(!mismatched.ok());
  CHECK(mismatched.status().ToString().find("'batch-norm-grad' has mismatched feature shapes") != std::string::npos);
}

TEST_CASE("kernel plans: rng, rng-bit-generator and stochastic-convert are checked at load") {
  Lowered n = LowerFirst(
      "  m = f32[] parameter(0)\n  d = f32[] parameter(1)\n"
      "  ROOT r = f32[8] rng(m, d), distribution=rng_normal\n",
      Opcode::kRng);
  CHECK(PlanOf<RngPlan>(n).normal);
  // An integer rng_normal (the verifier refuses it; a bundle file may hold it) is refused with
  // the run's message: XLA defines none.
  const ComputationRecord& ne = n.program.computations[n.program.entry];
  BufferRecord a = ne.buffers[n.step.bundle->operands[0]], b = ne.buffers[n.step.bundle->operands[1]],
               out = ne.buffers[n.step.bundle->result];
  a.type = b.type = out.type = PrimitiveType::kS32;
  Result<RngPlan> refused = PlanRng(n.step, a, b, out);
  REQUIRE(!refused.ok());
  CHECK(refused.status().ToString().find("normal distribution is not defined for integer types") != std::string::npos);

  Lowered t = LowerFirst(
      "  s = u64[2] parameter(0)\n"
      "  ROOT r = (u64[2], u32[5]) rng-bit-generator(s), algorithm=rng_three_fry\n",
      Opcode::kRngBitGenerator);
  CHECK(PlanOf<RngBitsPlan>(t).three_fry);
  CHECK(PlanOf<RngBitsPlan>(t).words == 2);
  Lowered p = LowerFirst("  s = u64[3] parameter(0)\n  ROOT r = u8[7] rng-bit-generator(s), algorithm=rng_default\n",
                         Opcode::kRngBitGenerator);
  CHECK(!PlanOf<RngBitsPlan>(p).three_fry);  // rng_default is PHILOX, as on XLA's CPU and GPU
  CHECK(PlanOf<RngBitsPlan>(p).words == 3);

  Lowered c = LowerFirst(
      "  x = f32[4] parameter(0)\n  r = u32[4] parameter(1)\n"
      "  ROOT y = s8[4] stochastic-convert(x, r)\n",
      Opcode::kStochasticConvert);
  const StochasticConvertPlan& convert = PlanOf<StochasticConvertPlan>(c);
  CHECK((convert.min == -128.0 && convert.max == 127.0));
  CHECK((convert.type_min == -128 && convert.type_max == 127));
  CHECK(convert.scale == 4294967296.0);
  // s64's bounds as f32 holds them: 2^63 - 1 rounds to 2^63.
  Lowered w = LowerFirst(
      "  x = f32[4] parameter(0)\n  r = u32[4] parameter(1)\n"
      "  ROOT y = s64[4] stochastic-convert(x, r)\n",
      Opcode::kStochasticConvert);
  CHECK(PlanOf<StochasticConvertPlan>(w).max == 9223372036854775808.0);
  CHECK(PlanOf<StochasticConvertPlan>(w).type_max == INT64_MAX);  // formed with no signed overflow
  CHECK(PlanOf<StochasticConvertPlan>(w).type_min == INT64_MIN);
}

TEST_CASE("kernel plans: a sub-byte bitcast-convert is its split or join, run lane 0 low") {
  const std::string text =
      "HloModule m\nENTRY e {\n  x = u8[3] parameter(0)\n  s = u4[3,2] bitcast-convert(x)\n"
      "  j = u8[3] bitcast-convert(s)\n  ROOT t = (u4[3,2], u8[3]) tuple(s, j)\n}\n";
  BundleProgram p = testing::LoadProgram(text, "fields");
  const ComputationRecord& entry = p.computations[p.entry];
  int planned = 0;
  for (const BundleRecord& b : entry.bundles) {
    if (b.opcode != Opcode::kBitcastConvert) continue;
    Result<Step> step = LowerBundle(p, entry, b, ExecuteOptions{});
    REQUIRE(step.ok());
    REQUIRE(step->plan);
    REQUIRE(std::holds_alternative<BitFieldPlan>(*step->plan));
    const BitFieldPlan& plan = std::get<BitFieldPlan>(*step->plan);
    CHECK(plan.ratio == 2);
    CHECK(plan.wide_count == 3);  // u8 elements, split or joined
    CHECK(plan.split == (entry.buffers[b.result].type == PrimitiveType::kU4));
    ++planned;
  }
  CHECK(planned == 2);
  Value x{PrimitiveType::kU8, {3}, std::string("\xab\x07\xf0", 3), {}, {}};
  Result<Value> result = Execute(p, {x});
  REQUIRE(result.ok());
  CHECK(result->tuple[0].bytes == std::string("\x0b\x0a\x07\x00\x00\x0f", 6));  // one u4 per byte, lane 0 low
  CHECK(result->tuple[1].bytes == x.bytes);
}

TEST_CASE("kernel plans: a scaled-dot is its sides' scale forms and the dot of their f32 values") {
  Lowered mx = LowerFirst(
      "  da = f8e4m3fn[3,64] parameter(0)\n  db = f8e5m2[64,4] parameter(1)\n"
      "  sa = f8e8m0fnu[3,2] parameter(2)\n  sb = f8e8m0fnu[2,4] parameter(3)\n"
      "  ROOT d = f32[3,4] scaled-dot(da, db, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
      Opcode::kScaledDot);
  const ScaledDotPlan& plan = PlanOf<ScaledDotPlan>(mx);
  CHECK((plan.side[0].mx && plan.side[0].contracting == 1 && plan.side[0].block == 32));
  CHECK((plan.side[1].mx && plan.side[1].contracting == 0 && plan.side[1].block == 32));
  CHECK(plan.side[0].f32_record.type == PrimitiveType::kF32);
  CHECK(plan.side[0].f32_record.dims == std::vector<int64_t>{3, 64});
  CHECK(plan.side[0].f32_record.size == 3 * 64 * 4);
  CHECK((plan.dot.m == 3 && plan.dot.n == 4 && plan.dot.k == 64));
  // bf16 data with a scalar scale on one side: not an MX pair.
  Lowered any = LowerFirst(
      "  a = bf16[2,8] parameter(0)\n  b = bf16[8,3] parameter(1)\n  sa = bf16[] parameter(2)\n"
      "  sb = bf16[4,3] parameter(3)\n"
      "  ROOT d = bf16[2,3] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
      Opcode::kScaledDot);
  CHECK((!PlanOf<ScaledDotPlan>(any).side[0].mx && !PlanOf<ScaledDotPlan>(any).side[1].mx));
  // A scale that does not divide its operand is refused with the run's message.
  const ComputationRecord& entry = any.program.computations[any.program.entry];
  auto record = [&](size_t k) { return entry.buffers[any.step.bundle->operands[k]]; };
  BufferRecord odd = record(3);
  odd.dims = {3, 3};
  Result<ScaledDotPlan> refused =
      PlanScaledDot(any.step, record(0), record(1), record(2), odd, entry.buffers[any.step.bundle->result]);
  REQUIRE(!refused.ok());
  CHECK(refused.status().ToString().find("scaled-dot scale shape does not divide its operand's") != std::string::npos);
}

TEST_CASE("kernel plans: a kernel's operand and result counts are checked at load, with the run's message") {
  Lowered l = LowerFirst(
      "  x = f32[4,8] parameter(0)\n"
      "  ROOT s = f32[4,8] custom-call(x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"1\"\n",
      Opcode::kCustomCall);
  CHECK(l.step.custom_call == CustomCallKind::kNeuronSoftmax);
  ComputationRecord& entry = l.program.computations[l.program.entry];
  BundleRecord& softmax = entry.bundles[static_cast<size_t>(l.step.bundle - entry.bundles.data())];
  softmax.operands.push_back(softmax.operands[0]);  // a second operand, which the kernel does not take
  Result<Step> s = LowerBundle(l.program, entry, softmax, ExecuteOptions{});
  REQUIRE(!s.ok());
  CHECK(s.status().message() ==
        "bundle 'AwsNeuronSoftmax' has 2 operands and 1 results, which its kernel does not take");
  softmax.operands.pop_back();
  CHECK(LowerBundle(l.program, entry, softmax, ExecuteOptions{}).ok());
}

TEST_CASE("kernel plans: topk and the Neuron custom calls, checked at load") {
  SUBCASE("topk: rows, n and k; largest=false fixed at load") {
    Lowered l = LowerFirst(
        "  x = f32[3,10] parameter(0)\n  ROOT t = (f32[3,4], s32[3,4]) topk(x), k=4, largest=false\n", Opcode::kTopK);
    const TopKPlan& plan = PlanOf<TopKPlan>(l);
    CHECK(plan.rows == 3);
    CHECK(plan.n == 10);
    CHECK(plan.k == 4);
    CHECK(l.step.topk_order == TopKOrder::kAscending);
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    const BufferRecord& result = entry.buffers[l.step.bundle->result];
    const BufferRecord &x = entry.buffers[l.step.bundle->operands[0]], &values = entry.buffers[result.tuple[0]],
                       &indices = entry.buffers[result.tuple[1]];
    std::vector<float> xs(30), vs(12);
    std::vector<int32_t> is(12);
    for (int i = 0; i < 30; ++i) xs[i] = static_cast<float>((i * 7) % 10);  // row r: a permutation of 0..9
    REQUIRE(RunTopK(plan, Buf{&x, reinterpret_cast<uint8_t*>(xs.data())},
                    Buf{&values, reinterpret_cast<uint8_t*>(vs.data())},
                    Buf{&indices, reinterpret_cast<uint8_t*>(is.data())}, TopKOrder::kAscending, {})
                .ok());
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 4; ++i) {
        CHECK(vs[r * 4 + i] == static_cast<float>(i));  // the four smallest, in order
        CHECK(xs[r * 10 + is[r * 4 + i]] == static_cast<float>(i));
      }
  }
  SUBCASE("AwsNeuronSoftmax along dimension 0: the lines, and the values in double") {
    Lowered l = LowerFirst(
        "  x = f32[3,4] parameter(0)\n"
        "  ROOT s = f32[3,4] custom-call(x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"0\"\n",
        Opcode::kCustomCall);
    const NeuronPlan& plan = PlanOf<NeuronPlan>(l);
    CHECK(l.step.config->neuron_op == NeuronOp::kSoftmax);
    CHECK(plan.outer == 1);
    CHECK(plan.len == 3);
    CHECK(plan.inner == 4);
    CHECK(plan.lines == 4);
    StepBuffers bufs(
        l, [](size_t, int64_t i) -> uint32_t { return std::bit_cast<uint32_t>(0.25f * static_cast<float>(i)); });
    RunNeuron(plan, bufs.bufs.data(), bufs.out());
    for (int j = 0; j < 4; ++j) {
      double sum = 0;
      for (int i = 0; i < 3; ++i) sum += std::exp(0.25 * (i * 4 + j) - 0.25 * (8 + j));
      for (int i = 0; i < 3; ++i) {
        float got;
        std::memcpy(&got, bufs.out().data + 4 * (i * 4 + j), 4);
        CHECK(got == static_cast<float>(std::exp(0.25 * (i * 4 + j) - 0.25 * (8 + j)) / sum));
      }
    }
  }
  SUBCASE("AwsNeuronArgMax with a result of the wrong shape: no plan, the run's message") {
    Lowered l = LowerFirst(
        "  x = f32[3,4] parameter(0)\n"
        "  ROOT a = s32[3] custom-call(x), custom_call_target=\"AwsNeuronArgMax\", backend_config=\"1\"\n",
        Opcode::kCustomCall);
    CHECK(PlanOf<NeuronPlan>(l).lines == 3);
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    BufferRecord wrong = entry.buffers[l.step.bundle->result];
    wrong.dims = {4};
    Result<NeuronPlan> plan = PlanNeuron(NeuronOp::kArgMax, 1, {&entry.buffers[l.step.bundle->operands[0]]}, wrong);
    REQUIRE(!plan.ok());
    CHECK(plan.status().message().find("give integer indices of the operand's shape without the dimension") !=
          std::string::npos);
  }
}

TEST_CASE("kernel plans: the quantization custom calls, checked against their configs at load") {
  SUBCASE("QuantizeMX: blocks along dimension 1 between outer and inner") {
    Lowered l = LowerFirst(
        "  a = bf16[2,64,4] parameter(0)\n"
        "  ROOT q = (f8e5m2[2,64,4], f8e8m0fnu[2,2,4]) custom-call(a), custom_call_target=\"QuantizeMX\", "
        "backend_config={\"dtype\": \"float8_e5m2\", \"dim\": 1, \"block_size\": 32, \"scale_method\": \"EMAX\"}\n",
        Opcode::kCustomCall);
    const QuantizeMxPlan& plan = PlanOf<QuantizeMxPlan>(l);
    CHECK(plan.outer == 2);
    CHECK(plan.k == 64);
    CHECK(plan.inner == 4);
    CHECK(!plan.packed);
    QuantizeMxConfig wrong = l.step.config->quantize_mx;
    wrong.dim = 3;
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    const BufferRecord& result = entry.buffers[l.step.bundle->result];
    Result<QuantizeMxPlan> refused = PlanQuantizeMx(wrong, entry.buffers[l.step.bundle->operands[0]],
                                                    entry.buffers[result.tuple[0]], entry.buffers[result.tuple[1]]);
    REQUIRE(!refused.ok());
    CHECK(refused.status().message() == "QuantizeMX dim is out of range");
  }
  SUBCASE("uniform_quantize: the real side's strides") {
    Lowered l = LowerFirst(
        "  x = f32[4,3] parameter(0)\n"
        "  ROOT q = u8[4,3] custom-call(x), custom_call_target=\"uniform_quantize\", backend_config={\"scale\": "
        "[0.003, 0.007, 0.5], \"zero_point\": [128, 100, 3], \"quantization_dimension\": 1, \"storage_min\": 0, "
        "\"storage_max\": 255, \"storage_type\": \"u8\", \"expressed_type\": \"f32\"}\n",
        Opcode::kCustomCall);
    const UniformQuantPlan& plan = PlanOf<UniformQuantPlan>(l);
    CHECK(plan.quantize);
    CHECK(plan.strides == std::vector<int64_t>{3, 1});
  }
}

TEST_CASE("kernel plans: custom calls with only checks to make carry their verdict from load") {
  Lowered l = LowerFirst(
      "  k = u64[4] parameter(0)\n"
      "  ROOT s = u64[4] custom-call(k), custom_call_target=\"xla_builder.prng.ScramblePhiloxKey\"\n",
      Opcode::kCustomCall);
  (void)PlanOf<CheckedCallPlan>(l);
  const ComputationRecord& entry = l.program.computations[l.program.entry];
  BufferRecord wrong = entry.buffers[l.step.bundle->result];
  wrong.type = PrimitiveType::kU32;
  const Status refused = CheckScramblePhiloxKey(entry.buffers[l.step.bundle->operands[0]], wrong);
  REQUIRE(!refused.ok());
  CHECK(refused.message() == "ScramblePhiloxKey takes and gives u64 keys");
  Lowered t = LowerFirst(
      "  d = f32[3,3] parameter(0)\n  r = f32[3,3] parameter(1)\n"
      "  ROOT x = f32[3,3] custom-call(d, r), custom_call_target=\"xla_builder.tridiagonal.TridiagonalSolver\"\n",
      Opcode::kCustomCall);
  (void)PlanOf<CheckedCallPlan>(t);
}

TEST_CASE("kernel plans: a solver call's records are checked at load, a flag operand must hold a value") {
  auto record = [](PrimitiveType t, std::vector<int64_t> dims) {
    BufferRecord r;
    r.type = t;
    r.dims = std::move(dims);
    r.size = static_cast<uint64_t>(r.ElementCount() * HostByteSize(t));
    return r;
  };
  SolverConfig c;
  c.op = SolverOp::kCholesky;
  c.first_data = 1;
  c.lower.operand = 0;  // the legacy form's uplo operand
  const BufferRecord flag = record(PrimitiveType::kS32, {}), empty_flag = record(PrimitiveType::kS32, {0}),
                     a = record(PrimitiveType::kF32, {3, 4, 4}), factor = record(PrimitiveType::kF32, {3, 4, 4}),
                     info = record(PrimitiveType::kS32, {3}), bad_info = record(PrimitiveType::kS32, {4});
  CHECK(CheckSolver(c, {&flag, &a}, {&factor, &info}).ok());
  const Status no_value = CheckSolver(c, {&empty_flag, &a}, {&factor, &info});
  REQUIRE(!no_value.ok());
  CHECK(no_value.message() == "the solver custom call's flag operand must hold an integer");
  const Status wrong_info = CheckSolver(c, {&flag, &a}, {&factor, &bad_info});
  REQUIRE(!wrong_info.ok());
  CHECK(wrong_info.message() == "the custom call's result 1 is not its s32 info");
}

TEST_CASE("kernel plans: an einsum's labels are resolved at load") {
  Lowered l = LowerFirst(
      "  x = f32[2,3] parameter(0)\n  y = f32[4] parameter(1)\n"
      "  ROOT e = f32[2] custom-call(x, y), custom_call_target=\"xla_builder.matrix.Einsum\", "
      "backend_config=\"ij,k->i\"\n",
      Opcode::kCustomCall);
  const EinsumPlan& plan = PlanOf<EinsumPlan>(l);
  CHECK(plan.x.sums);  // j is summed inside x, k inside y
  CHECK(plan.x.kept_dims == std::vector<int64_t>{2});
  CHECK(plan.x.summed_dims == std::vector<int64_t>{3});
  CHECK(plan.y.sums);
  CHECK(plan.y.kept_count == 1);
  CHECK(plan.cdims.empty());
  CHECK(plan.dims == std::vector<int64_t>{2});
  StepBuffers bufs(l, [](size_t k, int64_t i) -> uint32_t {
    return std::bit_cast<uint32_t>(k == 0 ? static_cast<float>(i + 1) : 0.5f);  // x = 1..6, y = 0.5 each
  });
  RunEinsum(plan, bufs.bufs[0], bufs.bufs[1], bufs.out());
  float got[2];
  std::memcpy(got, bufs.out().data, 8);
  CHECK(got[0] == (1.0f + 2.0f + 3.0f) * 2.0f);  // (sum_j x[0, j]) * (sum_k y[k])
  CHECK(got[1] == (4.0f + 5.0f + 6.0f) * 2.0f);
}

TEST_CASE("kernel plans: a variadic scatter's walk is planned at load") {
  Lowered l = LowerFirst(
      "  a = s32[3,3,2] parameter(0)\n  b = f32[3,3,2] parameter(1)\n  i = s32[2,2] parameter(2)\n"
      "  u = s32[2,2] parameter(3)\n  v = f32[2,2] parameter(4)\n"
      "  ROOT s = (s32[3,3,2], f32[3,3,2]) scatter(a, b, i, u, v), to_apply=update, update_window_dims={1}, "
      "inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1\n",
      Opcode::kScatter,
      "update {\n  p0 = s32[] parameter(0)\n  p1 = f32[] parameter(1)\n  q0 = s32[] parameter(2)\n"
      "  q1 = f32[] parameter(3)\n  ROOT t = (s32[], f32[]) tuple(q0, q1)\n}\n");
  const ScatterWalkPlan& plan = PlanOf<ScatterWalkPlan>(l);
  CHECK(plan.operand_window == std::vector<int64_t>{2});
  CHECK(plan.window_size == std::vector<int64_t>{1, 1, 2});
  CHECK(plan.index_len == 2);
  CHECK(plan.is_window == std::vector<bool>{false, true});
  CHECK(plan.strides == std::vector<int64_t>{6, 2, 1});
  // The updates made to disagree with the inputs: no plan, and KernelScatter's message.
  const ComputationRecord& entry = l.program.computations[l.program.entry];
  std::vector<const BufferRecord*> ops;
  for (uint32_t o : l.step.bundle->operands) ops.push_back(&entry.buffers[o]);
  BufferRecord wrong = *ops[4];
  wrong.type = PrimitiveType::kS32;
  ops[4] = &wrong;
  const BufferRecord& result = entry.buffers[l.step.bundle->result];
  Result<ScatterWalkPlan> refused =
      PlanScatterWalk(l.step, ops, {&entry.buffers[result.tuple[0]], &entry.buffers[result.tuple[1]]});
  REQUIRE(!refused.ok());
  CHECK(refused.status().message() == "scatter inputs, updates and results do not match");
}

TEST_CASE("kernel plans: map, a reduce's accumulator convert and a converting copy are planned at load") {
  const std::string maximum =
      "maximum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT d = f32[] maximum(b, a)\n}\n";
  SUBCASE("a map of one binary op: its span, the operands in the computation's order") {
    Lowered l = LowerFirst(
        "  x = f32[5] parameter(0)\n  y = f32[5] parameter(1)\n  ROOT m = f32[5] map(x, y), dimensions={0}, "
        "to_apply=maximum\n",
        Opcode::kMap, maximum);
    const MapPlan& plan = PlanOf<MapPlan>(l);
    REQUIRE(static_cast<bool>(plan.native.fn));
    CHECK(plan.swapped);  // maximum(b, a): max(y, x)
    StepBuffers bufs(l, [](size_t k, int64_t i) -> uint32_t {
      return std::bit_cast<uint32_t>(static_cast<float>(k == 0 ? i : 10 * i - 20));
    });
    REQUIRE(RunMap(plan, {bufs.bufs[0], bufs.bufs[1]}, bufs.out(), {}).ok());
    for (int64_t i = 0; i < 5; ++i) {
      float got;
      std::memcpy(&got, bufs.out().data + 4 * i, 4);
      CHECK(got == static_cast<float>(std::max<int64_t>(i, 10 * i - 20)));
    }
  }
  SUBCASE("a bf16 reduce of an f32 reducer: the convert's span kept on the plan") {
    Lowered l = LowerFirst(
        "  x = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = bf16[4] reduce(x, z), dimensions={1}, to_apply=add\n",
        Opcode::kReduce, "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n");
    const ReducePlan& plan = PlanOf<ReducePlan>(l);
    CHECK(plan.accumulate == PrimitiveType::kF32);
    CHECK(static_cast<bool>(plan.convert.fn));
    CHECK(plan.convert.in_type == PrimitiveType::kF32);
    CHECK(plan.convert.out_type == PrimitiveType::kBF16);
  }
  SUBCASE("a copy from f32 to bf16: the convert") {
    Lowered l = LowerFirst("  x = f32[3] parameter(0)\n  ROOT c = bf16[3] copy(x)\n", Opcode::kCopy);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(l);
    CHECK(plan.count == 3);
    CHECK(plan.span.out_type == PrimitiveType::kBF16);
  }
}

TEST_CASE("kernel plans: a ragged-dot's mode and rows are resolved at load") {
  Lowered l = LowerFirst(
      "  a = f32[7,3] parameter(0)\n  b = f32[2,3,4] parameter(1)\n  g = s32[2] parameter(2)\n"
      "  ROOT d = f32[7,4] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
      "lhs_ragged_dims={0}, rhs_group_dims={0}\n",
      Opcode::kRaggedDot);
  const RaggedDotPlan& plan = PlanOf<RaggedDotPlan>(l);
  CHECK(plan.mode == RaggedMode::kNonContracting);
  CHECK(plan.m == 7);
  CHECK(plan.k == 3);
  CHECK(plan.n == 4);
  CHECK(plan.groups == 2);
  CHECK(plan.place == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6});  // row i sits at i on the ragged dimension
  CHECK(plan.rorder == std::vector<int64_t>{0, 1, 2});             // [group, k, n]
  // Group sizes {2, 3}: rows 0-1 use group 0, rows 2-4 group 1, rows 5-6 none (zeros).
  StepBuffers bufs(l, [](size_t k, int64_t i) -> uint32_t {
    if (k == 2) return i == 0 ? 2u : 3u;
    return std::bit_cast<uint32_t>(k == 0 ? 1.0f : static_cast<float>(i / 12 + 1));  // b: group j is all j + 1
  });
  REQUIRE(RunRaggedDot(plan, bufs.bufs[0], bufs.bufs[1], bufs.bufs[2], bufs.out()).ok());
  for (int64_t i = 0; i < 7; ++i) {
    float got;
    std::memcpy(&got, bufs.out().data + 4 * (i * 4), 4);
    CHECK(got == (i < 2 ? 3.0f : i < 5 ? 6.0f : 0.0f));  // a row of ones times k = 3 entries of j + 1
  }
}

TEST_CASE("kernel plans: a scan's leaves and blocks are resolved at load") {
  Lowered l = LowerFirst(
      "  input = f32[3,4] parameter(0)\n  init = f32[3] parameter(1)\n"
      "  ROOT scan = (f32[3,4], f32[3]) scan(input, init), dimensions={1}, is_reverse=true, num_carries=1, "
      "to_apply=scan_add\n",
      Opcode::kScan,
      "scan_add {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n  add = f32[3] add(x, y)\n"
      "  ROOT t = (f32[3], f32[3]) tuple(add, add)\n}\n");
  const ScanPlan& plan = PlanOf<ScanPlan>(l);
  CHECK(plan.inputs == 1);
  CHECK(plan.carries == 1);
  CHECK(plan.outputs == 1);
  CHECK(plan.length == 4);
  CHECK(plan.reverse);
  REQUIRE(plan.in_along.size() == 1);
  CHECK(plan.in_along[0].outer == 3);  // rows of 4 along dimension 1: 3 blocks of one f32 each
  CHECK(plan.in_along[0].inner == 4);
  CHECK(plan.out_along[0].length == 4);
}

TEST_CASE("kernel plans: planners that run at load on any records stay in range") {
  SUBCASE("QuantizeMX: a scales record of 2^59 elements is refused, counts compared without overflow") {
    Lowered l = LowerFirst(
        "  a = f32[2,64] parameter(0)\n"
        "  ROOT q = (f8e4m3fn[2,64], f8e8m0fnu[2,2]) custom-call(a), custom_call_target=\"QuantizeMX\", "
        "backend_config={\"dtype\": \"float8_e4m3fn\", \"dim\": 1, \"block_size\": 32, \"scale_method\": \"EMAX\"}\n",
        Opcode::kCustomCall);
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    const BufferRecord& result = entry.buffers[l.step.bundle->result];
    BufferRecord scales = entry.buffers[result.tuple[1]];
    scales.dims = {int64_t{1} << 29, int64_t{1} << 30};
    Result<QuantizeMxPlan> plan = PlanQuantizeMx(l.step.config->quantize_mx, entry.buffers[l.step.bundle->operands[0]],
                                                 entry.buffers[result.tuple[0]], scales);
    REQUIRE(!plan.ok());
    CHECK(plan.status().message() == "QuantizeMX custom call does not match its config");
  }
  SUBCASE("ragged-dot: more rows than the load lays out are left to the run") {
    Lowered l = LowerFirst(
        "  a = f32[7,3] parameter(0)\n  b = f32[2,3,4] parameter(1)\n  g = s32[2] parameter(2)\n"
        "  ROOT d = f32[7,4] ragged-dot(a, b, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
        "lhs_ragged_dims={0}, rhs_group_dims={0}\n",
        Opcode::kRaggedDot);
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    BufferRecord lhs = entry.buffers[l.step.bundle->operands[0]], out = entry.buffers[l.step.bundle->result];
    lhs.dims = {kMaxWindowReach + 1, 3};
    out.dims = {kMaxWindowReach + 1, 4};
    Result<RaggedDotPlan> plan = PlanRaggedDot(l.step, lhs, entry.buffers[l.step.bundle->operands[1]],
                                               entry.buffers[l.step.bundle->operands[2]], out);
    REQUIRE(!plan.ok());
    CHECK(plan.status().message() == "ragged-dot rows are laid out at the run");
  }
}

}  // namespace
}  // namespace nhlo
