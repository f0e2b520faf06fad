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
#include "kernel_plans_util.h"
#include "load_program.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

using testing::Lowered;
using testing::LowerFirst;
using testing::PlanOf;
using testing::StepBuffers;

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
