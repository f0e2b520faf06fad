// SPDX-License-Identifier: Apache-2.0
// Kernel plans (src/interp/kernel_plans.h): LowerBundle plans every static dot and convolution
// once, with the fast convolution kernels its shape fits; a step of bounded dynamic shape gets no
// plan; a malformed record is refused by the planner with the message the run would give.
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
#include "load_program.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

// The entry's step for its first bundle with `opcode`, lowered as Executable::Load lowers it.
struct Lowered {
  BundleProgram program;
  Step step;
};

Lowered LowerFirst(const std::string& entry_body, Opcode opcode, const std::string& computations = "") {
  Lowered l{testing::LoadProgram("HloModule m\n" + computations + "ENTRY e {\n" + entry_body + "}\n", "plans"), Step{}};
  const ComputationRecord& entry = l.program.computations[l.program.entry];
  for (const BundleRecord& b : entry.bundles) {
    if (b.opcode != opcode) continue;
    Result<Step> s = LowerBundle(l.program, entry, b, ExecuteOptions{});
    REQUIRE(s.ok());
    l.step = std::move(*s);
    return l;
  }
  FAIL("no bundle with that opcode");
  return l;
}

// The lowered step's plan, which must be a P.
template <typename P>
const P& PlanOf(const Lowered& l) {
  REQUIRE(l.step.plan);
  REQUIRE(std::holds_alternative<P>(*l.step.plan));
  return std::get<P>(*l.step.plan);
}

uint8_t Bits(std::initializer_list<ConvKernel> kernels) {
  uint8_t bits = 0;
  for (ConvKernel k : kernels) bits |= 1 << static_cast<int>(k);
  return bits;
}

TEST_CASE("kernel plans: a dot is planned at load, sizes and operand orders") {
  Lowered l = LowerFirst(
      "  a = f32[4,3,5] parameter(0)\n  b = f32[4,7,5] parameter(1)\n"
      "  ROOT d = f32[4,3,7] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={2}\n",
      Opcode::kDot);
  const DotPlan& plan = PlanOf<DotPlan>(l);
  CHECK(plan.batch == 4);
  CHECK(plan.m == 3);
  CHECK(plan.n == 7);
  CHECK(plan.k == 5);
  CHECK(plan.work == 3 * 7 * 5);
  CHECK(plan.l_mk == std::vector<int64_t>{0, 1, 2});
  CHECK(plan.r_nk == std::vector<int64_t>{0, 1, 2});  // the GEMM reads rhs as [batch, n, k]
  CHECK(plan.r_kn == std::vector<int64_t>{0, 2, 1});
}

TEST_CASE("kernel plans: each convolution form finds the fast kernels its shape fits") {
  SUBCASE("depthwise 3x3: the direct kernel, then im2col") {
    Lowered l = LowerFirst(
        "  x = f32[2,8,9,9] parameter(0)\n  w = f32[8,1,3,3] parameter(1)\n"
        "  ROOT c = f32[2,8,9,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, "
        "feature_group_count=8\n",
        Opcode::kConvolution);
    CHECK(PlanOf<ConvPlan>(l).fits == Bits({ConvKernel::kDepthwise, ConvKernel::kViaGemm}));
    CHECK(PlanOf<ConvPlan>(l).depthwise != nullptr);  // its padded-plane layout, laid out at load
  }
  SUBCASE("4 groups of 16 features into b01f: the direct grouped kernel, then im2col") {
    Lowered l = LowerFirst(
        "  x = f32[2,9,9,64] parameter(0)\n  w = f32[3,3,16,64] parameter(1)\n"
        "  ROOT c = f32[2,9,9,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
        "feature_group_count=4\n",
        Opcode::kConvolution);
    CHECK(PlanOf<ConvPlan>(l).fits == Bits({ConvKernel::kGrouped, ConvKernel::kViaGemm}));
  }
  SUBCASE("groups of 3 features, or the features not last in the output: im2col only") {
    Lowered odd = LowerFirst(
        "  x = f32[2,9,9,12] parameter(0)\n  w = f32[3,3,3,12] parameter(1)\n"
        "  ROOT c = f32[2,9,9,12] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
        "feature_group_count=4\n",
        Opcode::kConvolution);
    CHECK(PlanOf<ConvPlan>(odd).fits == Bits({ConvKernel::kViaGemm}));
    CHECK(PlanOf<ConvPlan>(odd).im2col != nullptr);  // its strides and tap offsets, laid out at load
    Lowered planes = LowerFirst(
        "  x = f32[2,9,9,64] parameter(0)\n  w = f32[3,3,16,64] parameter(1)\n"
        "  ROOT c = f32[2,64,9,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->bf01, "
        "feature_group_count=4\n",
        Opcode::kConvolution);
    CHECK(PlanOf<ConvPlan>(planes).fits == Bits({ConvKernel::kViaGemm}));
  }
  SUBCASE("1x1 with features first: GEMMs in place, then im2col") {
    Lowered l = LowerFirst(
        "  x = f32[2,16,10,10] parameter(0)\n  w = f32[32,16,1,1] parameter(1)\n"
        "  ROOT c = f32[2,32,10,10] convolution(x, w), window={size=1x1}, dim_labels=bf01_oi01->bf01\n",
        Opcode::kConvolution);
    CHECK(PlanOf<ConvPlan>(l).fits == Bits({ConvKernel::kPointwise, ConvKernel::kViaGemm}));
  }
  SUBCASE("a window over the whole input: one dot, planned with it") {
    Lowered l = LowerFirst(
        "  x = f32[4,6,5,5] parameter(0)\n  w = f32[3,6,5,5] parameter(1)\n"
        "  ROOT c = f32[4,3,1,1] convolution(x, w), window={size=5x5}, dim_labels=bf01_oi01->bf01\n",
        Opcode::kConvolution);
    const ConvPlan& plan = PlanOf<ConvPlan>(l);
    CHECK(plan.Fits(ConvKernel::kAsDot));
    CHECK(plan.as_dot.m == 4);
    CHECK(plan.as_dot.n == 3);
    CHECK(plan.as_dot.k == 6 * 5 * 5);
    CHECK(plan.as_dot_out.dims == std::vector<int64_t>{4, 3});
  }
  SUBCASE("a kernel of millions of taps: im2col fits, its layout made at the run, not at load") {
    Lowered l = LowerFirst(
        "  x = f32[1,1,2097152] parameter(0)\n  w = f32[1,1,2097152] parameter(1)\n"
        "  ROOT c = f32[1,1,9] convolution(x, w), window={size=2097152 pad=4_4}, dim_labels=bf0_oi0->bf0\n",
        Opcode::kConvolution);
    CHECK(PlanOf<ConvPlan>(l).Fits(ConvKernel::kViaGemm));
    CHECK(PlanOf<ConvPlan>(l).im2col == nullptr);
  }
  SUBCASE("integers: the reference kernel only") {
    Lowered l = LowerFirst(
        "  x = s32[1,4,6,6] parameter(0)\n  w = s32[4,4,3,3] parameter(1)\n"
        "  ROOT c = s32[1,4,4,4] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01\n",
        Opcode::kConvolution);
    CHECK(PlanOf<ConvPlan>(l).fits == 0);
    CHECK(PlanOf<ConvPlan>(l).im2col == nullptr);
  }
}

TEST_CASE("kernel plans: a step of bounded dynamic shape is planned at its run, not at load") {
  Lowered l = LowerFirst(
      "  a = f32[<=8,4] parameter(0)\n  b = f32[4,3] parameter(1)\n"
      "  ROOT d = f32[<=8,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
      Opcode::kDot);
  CHECK(l.step.dynamic);
  CHECK(!l.step.plan);
}

TEST_CASE("kernel plans: records that do not match the numbers are refused") {
  BufferRecord lhs, rhs, out;
  lhs.type = rhs.type = out.type = PrimitiveType::kF32;
  lhs.dims = {2, 3};
  rhs.dims = {4, 5};
  out.dims = {2, 5};
  DotDimensionNumbers dims;
  const int64_t lc[] = {1}, rc[] = {0};
  dims.lhs_contracting = lc;
  dims.rhs_contracting = rc;
  Result<DotPlan> plan = PlanDot(dims, lhs, rhs, out);  // contracting 3 against 4
  REQUIRE(!plan.ok());
  CHECK(plan.status().ToString().find("invalid dimension numbers") != std::string::npos);
  rhs.dims = {3, 5};
  CHECK(PlanDot(dims, lhs, rhs, out).ok());
  out.dims = {2, 6};
  CHECK(!PlanDot(dims, lhs, rhs, out).ok());  // the result's element count
}

TEST_CASE("kernel plans: data movement is one walk, checked and simplified at load") {
  SUBCASE("transpose: the source-contiguous dimension tiled against the last") {
    Lowered l = LowerFirst("  x = f32[64,48] parameter(0)\n  ROOT t = f32[48,64] transpose(x), dimensions={1,0}\n",
                           Opcode::kTranspose);
    const CopyPlan& plan = PlanOf<CopyPlan>(l);
    CHECK(plan.walk.dims == std::vector<int64_t>{48, 64});
    CHECK(plan.walk.src == std::vector<int64_t>{1, 48});
    CHECK(plan.walk.dst == std::vector<int64_t>{64, 1});
    CHECK(plan.tile_dim == 0);
    CHECK(plan.tile_outer.dims == std::vector<int64_t>{2});  // 48 rows in bands of 32
    CHECK(plan.element_bytes == 4);
  }
  SUBCASE("broadcast of one element: a single run of stride 0") {
    Lowered l =
        LowerFirst("  x = f32[] parameter(0)\n  ROOT b = f32[3,5,7] broadcast(x), dimensions={}\n", Opcode::kBroadcast);
    const CopyPlan& plan = PlanOf<CopyPlan>(l);
    CHECK(plan.walk.dims == std::vector<int64_t>{105});
    CHECK(plan.walk.src == std::vector<int64_t>{0});
    CHECK(plan.tile_dim == -1);
  }
  SUBCASE("slice: rows of a matrix merged into runs, the start as the base") {
    Lowered l = LowerFirst("  x = s8[10,16] parameter(0)\n  ROOT s = s8[4,16] slice(x), slice={[2:6], [0:16]}\n",
                           Opcode::kSlice);
    const CopyPlan& plan = PlanOf<CopyPlan>(l);
    CHECK(plan.walk.dims == std::vector<int64_t>{64});
    CHECK(plan.src_base == 32);
    CHECK(plan.element_bytes == 1);
  }
  SUBCASE("pad: fill, then the operand at its place") {
    Lowered l = LowerFirst(
        "  x = f32[3,4] parameter(0)\n  v = f32[] constant(0)\n"
        "  ROOT p = f32[5,8] pad(x, v), padding=1_1x2_2\n",
        Opcode::kPad);
    const CopyPlan& plan = PlanOf<CopyPlan>(l);
    CHECK(plan.fill_first);
    CHECK(plan.copies);
    CHECK(plan.dst_base == 8 + 2);
    CHECK(plan.walk.dims == std::vector<int64_t>{3, 4});
  }
  SUBCASE("pad that cuts the whole operand away: the fill alone") {
    Lowered l = LowerFirst(
        "  x = f32[3,4] parameter(0)\n  v = f32[] constant(1)\n"
        "  ROOT p = f32[1,4] pad(x, v), padding=-3_1x0_0\n",
        Opcode::kPad);
    const CopyPlan& plan = PlanOf<CopyPlan>(l);
    CHECK(plan.fill_first);
    CHECK(!plan.copies);
  }
  SUBCASE("reverse: a negative stride from the last element") {
    Lowered l =
        LowerFirst("  x = f32[6] parameter(0)\n  ROOT r = f32[6] reverse(x), dimensions={0}\n", Opcode::kReverse);
    const CopyPlan& plan = PlanOf<CopyPlan>(l);
    CHECK(plan.src_base == 5);
    CHECK(plan.walk.src == std::vector<int64_t>{-1});
  }
}

TEST_CASE("kernel plans: concatenate, iota and reshape are planned at load") {
  SUBCASE("concatenate: one walk per operand to its place along the axis") {
    Lowered l = LowerFirst(
        "  a = f32[2,3] parameter(0)\n  b = f32[2,5] parameter(1)\n"
        "  ROOT c = f32[2,8] concatenate(a, b), dimensions={1}\n",
        Opcode::kConcatenate);
    const ConcatPlan& plan = PlanOf<ConcatPlan>(l);
    REQUIRE(plan.parts.size() == 2);
    CHECK(plan.parts[0].walk.dims == std::vector<int64_t>{2, 3});
    CHECK(plan.parts[0].walk.dst == std::vector<int64_t>{8, 1});
    CHECK(plan.parts[1].dst_base == 3);
    CHECK(plan.parts[1].walk.src == std::vector<int64_t>{5, 1});
  }
  SUBCASE("iota: the result as [outer, n, inner]") {
    Lowered l = LowerFirst("  ROOT i = s32[4,6,5] iota(), iota_dimension=1\n", Opcode::kIota);
    const IotaPlan& plan = PlanOf<IotaPlan>(l);
    CHECK(plan.outer == 4);
    CHECK(plan.n == 6);
    CHECK(plan.inner == 5);
    CHECK(plan.element_bytes == 4);
  }
  SUBCASE("reshape: its byte count") {
    Lowered l = LowerFirst("  x = bf16[6,4] parameter(0)\n  ROOT r = bf16[24] reshape(x)\n", Opcode::kReshape);
    CHECK(PlanOf<ReshapePlan>(l).bytes == 48);
  }
}

TEST_CASE("kernel plans: a gather is strides over the result's index") {
  SUBCASE("rows of a table by s32 indices: an embedding lookup") {
    Lowered l = LowerFirst(
        "  t = f32[10,4] parameter(0)\n  i = s32[3] parameter(1)\n"
        "  ROOT g = f32[3,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
        "index_vector_dim=1, slice_sizes={1,4}\n",
        Opcode::kGather);
    const GatherPlan& plan = PlanOf<GatherPlan>(l);
    CHECK(plan.src_stride == std::vector<int64_t>{0, 1});    // the slice's column
    CHECK(plan.index_stride == std::vector<int64_t>{1, 0});  // the index of the row
    CHECK(plan.start_stride == std::vector<int64_t>{4});
    CHECK(plan.start_limit == std::vector<int64_t>{9});  // starts clamp to [0, 10 - 1]
    CHECK(plan.index_vector_stride == 0);
  }
  SUBCASE("batching dimensions fold into the source strides") {
    Lowered l = LowerFirst(
        "  t = f32[2,5,3] parameter(0)\n  i = s64[2,4,1] parameter(1)\n"
        "  ROOT g = f32[2,4,3] gather(t, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
        "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}\n",
        Opcode::kGather);
    const GatherPlan& plan = PlanOf<GatherPlan>(l);
    CHECK(plan.src_stride == std::vector<int64_t>{15, 0, 1});
    CHECK(plan.index_stride == std::vector<int64_t>{4, 1, 0});
    CHECK(plan.start_stride == std::vector<int64_t>{3});
  }
}

TEST_CASE("kernel plans: a scatter is strides over the update's index") {
  const std::string add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
  SUBCASE("rows into a table: each update row shares its index") {
    Lowered l = LowerFirst(
        "  t = f32[10,4] parameter(0)\n  i = s32[3] parameter(1)\n  u = f32[3,4] parameter(2)\n"
        "  ROOT s = f32[10,4] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n",
        Opcode::kScatter, add);
    const ScatterPlan& plan = PlanOf<ScatterPlan>(l);
    CHECK(plan.dst_stride == std::vector<int64_t>{0, 1});
    CHECK(plan.index_stride == std::vector<int64_t>{1, 0});
    CHECK(plan.start_stride == std::vector<int64_t>{4});
    CHECK(plan.start_limit == std::vector<int64_t>{9});  // a start past 9 skips the update
    CHECK(plan.row_window);
    CHECK(!plan.skips_all);
    CHECK(plan.bytes == 160);
  }
  SUBCASE("batching dimensions fold into the result strides") {
    Lowered l = LowerFirst(
        "  t = f32[2,5,3] parameter(0)\n  i = s64[2,4,1] parameter(1)\n  u = f32[2,4,3] parameter(2)\n"
        "  ROOT s = f32[2,5,3] scatter(t, i, u), update_window_dims={2}, inserted_window_dims={1}, "
        "scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, "
        "index_vector_dim=2, to_apply=add\n",
        Opcode::kScatter, add);
    const ScatterPlan& plan = PlanOf<ScatterPlan>(l);
    CHECK(plan.dst_stride == std::vector<int64_t>{15, 0, 1});
    CHECK(plan.index_stride == std::vector<int64_t>{4, 1, 0});
    CHECK(plan.start_stride == std::vector<int64_t>{3});
    CHECK(plan.start_limit == std::vector<int64_t>{4});
  }
}

TEST_CASE("kernel plans: a reduce is its kept and reduced groups") {
  const std::string add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
  SUBCASE("size-1 dimensions dropped, neighbours of one kind merged") {
    Lowered l = LowerFirst(
        "  x = f32[4,1,5,6] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[4,1] reduce(x, z), dimensions={2,3}, to_apply=add\n",
        Opcode::kReduce, add);
    const ReducePlan& plan = PlanOf<ReducePlan>(l);
    REQUIRE(plan.kept.size() == 1);
    CHECK(plan.kept[0].size == 4);
    CHECK(plan.kept[0].stride == 30);
    REQUIRE(plan.reduced.size() == 1);
    CHECK(plan.reduced[0].size == 30);
    CHECK(plan.reduced[0].stride == 1);
    CHECK(!plan.inner_kept);
    CHECK(plan.accumulate == PrimitiveType::kInvalid);
  }
  SUBCASE("a two-input reduce with a tuple of results: columns") {
    const std::string argmax =
        "argmax {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n  b = f32[] parameter(2)\n"
        "  j = s32[] parameter(3)\n  g = pred[] compare(a, b), direction=GE\n  v = f32[] select(g, a, b)\n"
        "  k = s32[] select(g, i, j)\n  ROOT t = (f32[], s32[]) tuple(v, k)\n}\n";
    Lowered l = LowerFirst(
        "  x = f32[7,3] parameter(0)\n  i = s32[7,3] parameter(1)\n  z = f32[] constant(-inf)\n"
        "  n = s32[] constant(0)\n  ROOT r = (f32[3], s32[3]) reduce(x, i, z, n), dimensions={0}, to_apply=argmax\n",
        Opcode::kReduce, argmax);
    const ReducePlan& plan = PlanOf<ReducePlan>(l);
    REQUIRE(plan.kept.size() == 1);
    CHECK(plan.kept[0].stride == 1);
    REQUIRE(plan.reduced.size() == 1);
    CHECK(plan.reduced[0].size == 7);
    CHECK(plan.reduced[0].stride == 3);
    CHECK(plan.inner_kept);
  }
}

TEST_CASE("kernel plans: a window op's reach, per dimension and position") {
  const std::string max =
      "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
      "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
  SUBCASE("reduce-window: padding meets nothing, rows are offsets of the row stride") {
    Lowered l = LowerFirst(
        "  x = f32[2,5] parameter(0)\n  n = f32[] constant(-inf)\n"
        "  ROOT r = f32[2,3] reduce-window(x, n), window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=max\n",
        Opcode::kReduceWindow, max);
    const WindowReach& reach = PlanOf<ReduceWindowPlan>(l).reach;
    CHECK(reach.positions == std::vector<int64_t>{2, 3});
    CHECK(reach.first[0] == std::vector<int64_t>{0, 1, 2});
    CHECK(reach.offsets[0] == std::vector<int64_t>{0, 5});
    CHECK(reach.first[1] == std::vector<int64_t>{0, 2, 5, 7});
    CHECK(reach.offsets[1] == std::vector<int64_t>{0, 1, 1, 2, 3, 3, 4});
    std::vector<int64_t> at, met;
    const int64_t position[2] = {1, 2};
    ForEachInWindow(reach, position, at, [&](int64_t offset) { met.push_back(offset); });
    CHECK(met == std::vector<int64_t>{8, 9});
  }
  SUBCASE("reduce-window: base dilation's holes meet nothing") {
    Lowered l = LowerFirst(
        "  x = f32[3] parameter(0)\n  n = f32[] constant(-inf)\n"
        "  ROOT r = f32[4] reduce-window(x, n), window={size=2 stride=1 lhs_dilate=2}, to_apply=max\n",
        Opcode::kReduceWindow, max);
    const WindowReach& reach = PlanOf<ReduceWindowPlan>(l).reach;
    CHECK(reach.first[0] == std::vector<int64_t>{0, 1, 2, 3, 4});  // each window meets one element
    CHECK(reach.offsets[0] == std::vector<int64_t>{0, 1, 1, 2});
  }
  SUBCASE("select-and-scatter: the source's positions") {
    Lowered l = LowerFirst(
        "  x = f32[4,6] parameter(0)\n  s = f32[2,3] parameter(1)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[4,6] select-and-scatter(x, s, z), window={size=2x2 stride=2x2}, select=ge, scatter=add\n",
        Opcode::kSelectAndScatter, max);
    const WindowReach& reach = PlanOf<SelectAndScatterPlan>(l).reach;
    CHECK(reach.positions == std::vector<int64_t>{2, 3});
    CHECK(reach.offsets[0] == std::vector<int64_t>{0, 6, 12, 18});
    CHECK(reach.first[1] == std::vector<int64_t>{0, 2, 4, 6});
  }
}

TEST_CASE("kernel plans: a bitcast between layouts is two walks through the physical order") {
  Lowered l = LowerFirst("  x = f32[2,3]{0,1} parameter(0)\n  ROOT b = f32[3,2]{1,0} bitcast(x)\n", Opcode::kBitcast);
  const BitcastPlan& plan = PlanOf<BitcastPlan>(l);
  CHECK(plan.bytes == 24);
  // Physical order of x is [3][2] (dimension 1 major): a transpose of the row-major operand...
  CHECK(plan.to_physical.walk.dims == std::vector<int64_t>{3, 2});
  CHECK(plan.to_physical.walk.src == std::vector<int64_t>{1, 3});
  CHECK(plan.to_physical.walk.dst == std::vector<int64_t>{2, 1});
  // ...which is the result's row-major order: the second walk is a plain copy, run not at all.
  CHECK(plan.from_physical.walk.dims == std::vector<int64_t>{6});
  CHECK(plan.from_physical.walk.src == std::vector<int64_t>{1});
}

TEST_CASE("kernel plans: a sort, of one operand or several") {
  const std::string lt =
      "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  i = s32[] parameter(2)\n"
      "  j = s32[] parameter(3)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n";
  Lowered l = LowerFirst(
      "  x = f32[4,7,3] parameter(0)\n  i = s32[4,7,3] parameter(1)\n"
      "  ROOT s = (f32[4,7,3], s32[4,7,3]) sort(x, i), dimensions={1}, to_apply=lt\n",
      Opcode::kSort, lt);
  const SortPlan& plan = PlanOf<SortPlan>(l);
  CHECK(plan.dim == 1);
  CHECK(plan.len == 7);
  CHECK(plan.stride == 3);
  CHECK(plan.total == 84);
  // The comparator is a recognised LT on operand 0: the native sort's key, decided at load.
  CHECK(plan.native);
  CHECK(plan.key.operand == 0);
  CHECK(plan.key.kind == SortKeyKind::kFloatPlain);
  CHECK(!plan.key.descending);
  CHECK(plan.key.narrow);
  CHECK(plan.key.fast);
  CHECK(!plan.key.carry_value);  // two operands: the index travels with the key
  CHECK(plan.sizes == std::vector<int>{4, 4});
  const std::string by_index_gt =
      "gt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  i = s32[] parameter(2)\n"
      "  j = s32[] parameter(3)\n  ROOT c = pred[] compare(i, j), direction=GT, type=TOTALORDER\n}\n";
  Lowered g = LowerFirst(
      "  x = f32[4,7,3] parameter(0)\n  i = s32[4,7,3] parameter(1)\n"
      "  ROOT s = (f32[4,7,3], s32[4,7,3]) sort(x, i), dimensions={1}, to_apply=gt\n",
      Opcode::kSort, by_index_gt);
  CHECK(PlanOf<SortPlan>(g).native);
  CHECK(PlanOf<SortPlan>(g).key.operand == 1);
  CHECK(PlanOf<SortPlan>(g).key.kind == SortKeyKind::kSigned);
  CHECK(PlanOf<SortPlan>(g).key.descending);
  const std::string two_keys =
      "two {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  i = s32[] parameter(2)\n"
      "  j = s32[] parameter(3)\n  x = pred[] compare(a, b), direction=LT\n"
      "  y = pred[] compare(i, j), direction=LT\n  ROOT c = pred[] and(x, y)\n}\n";
  Lowered t = LowerFirst(
      "  x = f32[4,7,3] parameter(0)\n  i = s32[4,7,3] parameter(1)\n"
      "  ROOT s = (f32[4,7,3], s32[4,7,3]) sort(x, i), dimensions={1}, to_apply=two\n",
      Opcode::kSort, two_keys);
  CHECK(!PlanOf<SortPlan>(t).native);  // a comparator the executor runs
}

TEST_CASE("kernel plans: dynamic slices keep only their starts for the run") {
  Lowered l = LowerFirst(
      "  x = f32[8,6] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
      "  ROOT d = f32[3,6] dynamic-slice(x, i, j), dynamic_slice_sizes={3,6}\n",
      Opcode::kDynamicSlice);
  const DynamicSlicePlan& plan = PlanOf<DynamicSlicePlan>(l);
  CHECK(!plan.update);
  CHECK(!plan.vector_starts);
  CHECK(plan.limit == std::vector<int64_t>{5, 0});  // starts clamp to [0, 8 - 3] and [0, 0]
  CHECK(plan.stride == std::vector<int64_t>{6, 1});
  CHECK(plan.copy.walk.dims == std::vector<int64_t>{18});  // whole rows: one run
  Lowered u = LowerFirst(
      "  x = f32[8,6] parameter(0)\n  v = f32[2,2] parameter(1)\n  i = s32[] parameter(2)\n"
      "  ROOT d = f32[8,6] dynamic-update-slice(x, v, i, i)\n",
      Opcode::kDynamicUpdateSlice);
  const DynamicSlicePlan& update = PlanOf<DynamicSlicePlan>(u);
  CHECK(update.update);
  CHECK(update.first_index == 2);
  CHECK(update.limit == std::vector<int64_t>{6, 4});
  CHECK(update.copy.walk.dst == std::vector<int64_t>{6, 1});
}

TEST_CASE("kernel plans: a copy whose records do not match its attributes is refused as the run refuses it") {
  Lowered l = LowerFirst("  x = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(x), dimensions={1,0}\n",
                         Opcode::kTranspose);
  BufferRecord in, out;
  in.type = out.type = PrimitiveType::kF32;
  in.dims = {2, 3};
  out.dims = {2, 3};  // not the permuted shape
  Result<CopyPlan> plan = PlanCopy(l.step, in, nullptr, out);
  REQUIRE(!plan.ok());
  CHECK(plan.status().ToString().find("bundle 'transpose' has an invalid permutation") != std::string::npos);
  out.dims = {3, 2};
  CHECK(PlanCopy(l.step, in, nullptr, out).ok());
  CHECK(PlanCopy(l.step, in, &in, out).ok());  // a pad value is ignored by a transpose
}

// The buffers of l's step (operands, then the result) over fresh bytes, operand k's element i
// being fill(k, i) (bit patterns, NaNs among them).
struct StepBuffers {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<Buf> bufs;
  StepBuffers(const Lowered& l, uint32_t (*fill)(size_t, int64_t)) {
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    std::vector<uint32_t> ids(l.step.bundle->operands.begin(), l.step.bundle->operands.end());
    ids.push_back(l.step.bundle->result);
    bytes.resize(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      const BufferRecord& r = entry.buffers[ids[k]];
      const int64_t size = HostByteSize(r.type);
      bytes[k].assign(static_cast<size_t>(r.ElementCount() * size), 0);
      for (int64_t i = 0; k + 1 < ids.size() && i < r.ElementCount(); ++i) {
        uint32_t v = fill(k, i);
        std::memcpy(bytes[k].data() + i * size, &v, static_cast<size_t>(std::min<int64_t>(size, 4)));
      }
      bufs.push_back(Buf{&r, bytes[k].data()});
    }
  }
  const Buf& out() const { return bufs.back(); }
};

uint32_t MixedBits(size_t k, int64_t i) {
  if (i % 97 == 5) return 0x7fc00001u + static_cast<uint32_t>(k);  // NaNs with payloads
  return static_cast<uint32_t>((i * 2654435761u + k * 40503u) % 2000000u) + 0x3f000000u;
}

TEST_CASE("kernel plans: an elementwise step is its span, resolved at load, with the kernel's bytes") {
  SUBCASE("a binary op: the span, operands read element by element") {
    Lowered l = LowerFirst(
        "  x = f32[1000] parameter(0)\n  y = f32[1000] parameter(1)\n"
        "  ROOT a = f32[1000] add(x, y)\n",
        Opcode::kAdd);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(l);
    CHECK(plan.count == 1000);
    CHECK(plan.element[0] == 4);
    CHECK(plan.element[1] == 4);
    const SpanFn plain = BinarySpanOp(Opcode::kAdd, PrimitiveType::kF32, PrimitiveType::kF32, PrimitiveType::kF32).fn;
    CHECK(reinterpret_cast<const void*>(plan.span.fn) == reinterpret_cast<const void*>(plain));
  }
  SUBCASE("an add over 8 MiB: the streaming span, the kernel's bytes") {
    Lowered l = LowerFirst(
        "  x = f32[2097152] parameter(0)\n  y = f32[2097152] parameter(1)\n"
        "  ROOT a = f32[2097152] add(x, y)\n",
        Opcode::kAdd);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(l);
    const SpanFn plain = BinarySpanOp(Opcode::kAdd, PrimitiveType::kF32, PrimitiveType::kF32, PrimitiveType::kF32).fn;
    CHECK(reinterpret_cast<const void*>(plan.span.fn) != reinterpret_cast<const void*>(plain));
    StepBuffers planned(l, MixedBits), kernel(l, MixedBits);
    RunElementwise(plan, planned.bufs.data(), planned.out());
    REQUIRE(KernelBinary(Opcode::kAdd, kernel.bufs[0], kernel.bufs[1], kernel.out()).ok());
    CHECK(planned.bytes.back() == kernel.bytes.back());
  }
  SUBCASE("a clamp with scalar bounds reads their one element for every element") {
    Lowered l = LowerFirst(
        "  lo = f32[] parameter(0)\n  x = f32[3000] parameter(1)\n  hi = f32[] parameter(2)\n"
        "  ROOT c = f32[3000] clamp(lo, x, hi)\n",
        Opcode::kClamp);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(l);
    CHECK(plan.element[0] == 0);
    CHECK(plan.element[1] == 4);
    CHECK(plan.element[2] == 0);
    StepBuffers planned(l, MixedBits), kernel(l, MixedBits);
    RunElementwise(plan, planned.bufs.data(), planned.out());
    REQUIRE(KernelClamp(kernel.bufs[0], kernel.bufs[1], kernel.bufs[2], kernel.out()).ok());
    CHECK(planned.bytes.back() == kernel.bytes.back());
    // A clamp to [lo, hi] of these bits moves some elements and keeps others.
    CHECK(planned.bytes.back() != planned.bytes[1]);
  }
  SUBCASE("a compare and a convert") {
    Lowered c = LowerFirst(
        "  x = bf16[300] parameter(0)\n  y = bf16[300] parameter(1)\n"
        "  ROOT c = pred[300] compare(x, y), direction=LT, type=TOTALORDER\n",
        Opcode::kCompare);
    CHECK(PlanOf<ElementwisePlan>(c).element[1] == 2);
    Lowered v = LowerFirst("  x = s32[300] parameter(0)\n  ROOT c = f16[300] convert(x)\n", Opcode::kConvert);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(v);
    StepBuffers planned(v, MixedBits), kernel(v, MixedBits);
    RunElementwise(plan, planned.bufs.data(), planned.out());
    REQUIRE(KernelConvert(kernel.bufs[0], kernel.out()).ok());
    CHECK(planned.bytes.back() == kernel.bytes.back());
  }
  SUBCASE("is-finite of bf16, and a bf16 clamp: block spans, the evaluator's values") {
    Lowered f = LowerFirst("  x = bf16[300] parameter(0)\n  ROOT n = pred[300] is-finite(x)\n", Opcode::kIsFinite);
    StepBuffers finite(f, [](size_t, int64_t i) -> uint32_t {
      const uint32_t special[4] = {0x7f80, 0xff80, 0x7fc1, 0x0001};  // inf, -inf, NaN, a denormal
      return i % 7 == 3 ? special[(i / 7) % 4] : static_cast<uint32_t>(0x3f80 + i);
    });
    RunElementwise(PlanOf<ElementwisePlan>(f), finite.bufs.data(), finite.out());
    for (int64_t i = 0; i < 300; ++i) {
      const bool special = i % 7 == 3 && (i / 7) % 4 != 3;
      CHECK(finite.bytes.back()[i] == (special ? 0 : 1));
    }
    Lowered c = LowerFirst(
        "  lo = bf16[300] parameter(0)\n  x = bf16[300] parameter(1)\n  hi = bf16[] parameter(2)\n"
        "  ROOT c = bf16[300] clamp(lo, x, hi)\n",
        Opcode::kClamp);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(c);
    CHECK(plan.element[0] == 2);
    CHECK(plan.element[2] == 0);
    auto bits = [](size_t k, int64_t i) -> uint32_t {
      if (k == 2) return 0x4100;                                        // hi = 8
      if (i % 11 == 4) return k == 0 ? 0x7fc1u : 0x3f80u;               // lo NaN: the result is lo
      if (i % 13 == 6) return k == 1 ? 0xffc2u : 0x3f80u;               // x NaN: the result is x
      return k == 0 ? 0x3f80u : static_cast<uint32_t>(0x3e00 + i * 5);  // lo = 1, x from 0.125 up
    };
    StepBuffers clamp(c, bits);
    RunElementwise(plan, clamp.bufs.data(), clamp.out());
    for (int64_t i = 0; i < 300; ++i) {
      uint16_t got;
      std::memcpy(&got, clamp.out().data + 2 * i, 2);
      const float lo = DecodeToF32(PrimitiveType::kBF16, bits(0, i)), x = DecodeToF32(PrimitiveType::kBF16, bits(1, i));
      uint32_t want = x < lo ? bits(0, i) : bits(1, i);
      if (DecodeToF32(PrimitiveType::kBF16, want) > 8.0f) want = 0x4100;
      // A NaN operand wins, computed in f32 and rounded back as the evaluator's bf16: the quiet
      // NaN of its sign, the payload dropped (float_cast.h's F32ToBf16, Eigen's rounding).
      if (std::isnan(x)) want = (bits(1, i) & 0x8000u) | 0x7fc0u;
      if (std::isnan(lo)) want = (bits(0, i) & 0x8000u) | 0x7fc0u;
      CHECK(got == want);
    }
  }
  SUBCASE("a select of one predicate copies the operand it picks") {
    Lowered l = LowerFirst(
        "  p = pred[] parameter(0)\n  x = s32[8] parameter(1)\n  y = s32[8] parameter(2)\n"
        "  ROOT s = s32[8] select(p, x, y)\n",
        Opcode::kSelect);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(l);
    CHECK(plan.pick_bytes == 32);
    for (uint32_t p : {0u, 1u, 2u}) {  // any byte other than 0 is true
      StepBuffers bufs(l, [](size_t k, int64_t i) -> uint32_t { return static_cast<uint32_t>(k * 100 + i); });
      bufs.bytes[0][0] = static_cast<uint8_t>(p);
      RunElementwise(plan, bufs.bufs.data(), bufs.out());
      CHECK(bufs.bytes.back() == bufs.bytes[p != 0 ? 1 : 2]);
    }
  }
  SUBCASE("reduce-precision: the span with its widths, capped at 64") {
    Lowered l = LowerFirst(
        "  x = f32[100] parameter(0)\n  ROOT r = f32[100] reduce-precision(x), exponent_bits=5, mantissa_bits=10\n",
        Opcode::kReducePrecision);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(l);
    CHECK(plan.span.exponent_bits == 5);
    CHECK(plan.span.mantissa_bits == 10);
    StepBuffers bufs(l, [](size_t, int64_t i) -> uint32_t { return 0x3f800001u + static_cast<uint32_t>(i) * 4099u; });
    RunElementwise(plan, bufs.bufs.data(), bufs.out());
    for (int64_t i = 0; i < 100; ++i) {  // f16's precision: an f32 of [1, 2) keeps 10 mantissa bits
      float x, got;
      std::memcpy(&x, bufs.bytes[0].data() + 4 * i, 4);
      std::memcpy(&got, bufs.out().data + 4 * i, 4);
      CHECK(got == DecodeToF32(PrimitiveType::kF16, EncodeFromF32(PrimitiveType::kF16, x)));
    }
  }
  SUBCASE("complex: planned at load, std::complex's values as the evaluator's") {
    Lowered c = LowerFirst("  x = c64[300] parameter(0)\n  ROOT e = c64[300] exponential(x)\n", Opcode::kExp);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(c);
    CHECK(plan.element[0] == 8);
    StepBuffers bufs(c, [](size_t, int64_t) -> uint32_t { return 0; });
    auto value = [](int64_t i) {
      return std::complex<float>(0.01f * static_cast<float>(i), -0.03f * static_cast<float>(i));
    };
    for (int64_t i = 0; i < 300; ++i) {
      const std::complex<float> v = value(i);
      std::memcpy(bufs.bytes[0].data() + 8 * i, &v, 8);
    }
    RunElementwise(plan, bufs.bufs.data(), bufs.out());
    for (int64_t i = 0; i < 300; ++i) {
      std::complex<float> got;
      std::memcpy(&got, bufs.out().data + 8 * i, 8);
      const std::complex<float> want = std::exp(value(i));
      CHECK(std::memcmp(&got, &want, 8) == 0);
    }
    // abs (a real result), complex() from two f32 operands, NE: planned too
    CHECK(PlanOf<ElementwisePlan>(LowerFirst("  x = c128[4] parameter(0)\n  ROOT a = f64[4] abs(x)\n", Opcode::kAbs))
              .element[0] == 16);
    Lowered build = LowerFirst(
        "  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n  ROOT c = c64[4] complex(x, y)\n", Opcode::kComplex);
    StepBuffers parts(build,
                      [](size_t k, int64_t i) -> uint32_t { return 0x3f800000u + static_cast<uint32_t>(k + i); });
    RunElementwise(PlanOf<ElementwisePlan>(build), parts.bufs.data(), parts.out());
    CHECK(std::memcmp(parts.out().data + 8, parts.bytes[0].data() + 4, 4) == 0);  // element 1: (x[1], y[1])
    CHECK(std::memcmp(parts.out().data + 12, parts.bytes[1].data() + 4, 4) == 0);
    CHECK(PlanOf<ElementwisePlan>(LowerFirst("  x = c64[4] parameter(0)\n  y = c64[4] parameter(1)\n"
                                             "  ROOT c = pred[4] compare(x, y), direction=NE\n",
                                             Opcode::kCompare))
              .span.code == 1);
  }
  SUBCASE("sub-byte integers: planned at load, wrapping in their width") {
    Lowered l =
        LowerFirst("  x = s4[64] parameter(0)\n  y = s4[64] parameter(1)\n  ROOT a = s4[64] add(x, y)\n", Opcode::kAdd);
    const ElementwisePlan& plan = PlanOf<ElementwisePlan>(l);
    StepBuffers bufs(l, [](size_t k, int64_t i) -> uint32_t {
      return k == 0 ? static_cast<uint8_t>(static_cast<int8_t>(i % 16 - 8)) : 5u;  // s4 is one sign-extended byte
    });
    RunElementwise(plan, bufs.bufs.data(), bufs.out());
    for (int64_t i = 0; i < 64; ++i) {
      const int sum = static_cast<int>(i % 16) - 8 + 5;
      const int wrapped = sum > 7 ? sum - 16 : sum;
      CHECK(static_cast<int8_t>(bufs.out().data[i]) == wrapped);
    }
    Lowered pop = LowerFirst("  x = u4[8] parameter(0)\n  ROOT p = u4[8] popcnt(x)\n", Opcode::kPopulationCount);
    StepBuffers counts(pop, [](size_t, int64_t i) -> uint32_t { return static_cast<uint32_t>(i * 2 + 1) & 15u; });
    RunElementwise(PlanOf<ElementwisePlan>(pop), counts.bufs.data(), counts.out());
    for (int64_t i = 0; i < 8; ++i)
      CHECK(counts.out().data[i] == std::popcount(static_cast<unsigned>(i * 2 + 1) & 15u));
  }
  SUBCASE("an op the kernel does not implement on the type: refused at load with the run's message") {
    Lowered l = LowerFirst("  x = s32[8] parameter(0)\n  ROOT c = s32[8] count-leading-zeros(x)\n", Opcode::kClz);
    ComputationRecord& entry = l.program.computations[l.program.entry];
    entry.buffers[l.step.bundle->operands[0]].type = PrimitiveType::kF32;
    entry.buffers[l.step.bundle->result].type = PrimitiveType::kF32;
    Result<ElementwisePlan> plan = PlanElementwise(entry, l.step);
    REQUIRE(!plan.ok());
    CHECK(plan.status().message().find("does not implement 'count-leading-zeros' on f32") != std::string::npos);
  }
  SUBCASE("left to the kernel: mismatched records") {
    Lowered b = LowerFirst("  x = f32[8] parameter(0)\n  ROOT n = f32[8] negate(x)\n", Opcode::kNegate);
    BufferRecord wrong = b.program.computations[b.program.entry].buffers[b.step.bundle->operands[0]];
    wrong.dims = {9};
    b.program.computations[b.program.entry].buffers[b.step.bundle->operands[0]] = wrong;
    CHECK(!PlanElementwise(b.program.computations[b.program.entry], b.step).ok());
  }
}

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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

}  // namespace
}  // namespace nhlo

namespace nhlo {
namespace {

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
