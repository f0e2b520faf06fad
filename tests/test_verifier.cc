// SPDX-License-Identifier: Apache-2.0
// Shape inference per opcode (the shapes the verifier expects and the parser fills in), the
// readers of window/slice/padding/dim_labels text, and the verifier's report of every problem.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "ir/custom_calls.h"
#include "ir/printer.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "parser/attr_values.h"
#include "parser/parser.h"

using namespace nhlo;

namespace {

// Parses `body` (instructions of an ENTRY computation after the shared callees below) and infers
// the shape of its instruction `name`: the shape without layout, "error: ...", "not inferable",
// or "parse: ..." when the parser itself failed (it infers omitted shapes with the same rules).
// Written result shapes are placeholders: inference must not depend on them, except for the
// element type of dot-like ops, which is free.
const char* kCallees = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
add_pair {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  x = f32[] add(a, c)
  y = s32[] add(b, d)
  ROOT t = (f32[], s32[]) tuple(x, y)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[3]) tuple(j, v)
}
first {
  x = (f32[3], s32[]) parameter(0)
  ROOT v = f32[3] get-tuple-element(x), index=0
}
iota3 {
  x = s32[] parameter(0)
  ROOT v = f32[3] iota(), iota_dimension=0
}
)";

std::string Infer(const std::string& body, std::string_view name, InferMode mode = InferMode::kVerify) {
  std::string text = std::string("HloModule t\n") + kCallees + "ENTRY e {\n" + body + "\n}\n";
  auto m = ParseModule("t.hlo", text);
  if (!m.ok()) return "parse: " + m.status().message();
  for (Instruction* inst : (*m)->entry->instructions) {
    if (inst->name != name) continue;
    Inference inf = InferShape(**m, *inst, mode);
    switch (inf.outcome) {
      case InferOutcome::kInferred: return ShapeToString(inf.shape, false);
      case InferOutcome::kError: return "error: " + inf.message;
      case InferOutcome::kNotInferable: return "not inferable";
    }
  }
  return "no instruction " + std::string(name);
}

// Every diagnostic of verifying `text`, one "line: message" each.
std::vector<std::string> VerifyAll(const std::string& text) {
  auto m = ParseModule("v.hlo", text);
  if (!m.ok()) return {"parse: " + m.status().message()};
  std::vector<std::string> out;
  Status s = VerifyModule(**m);
  for (const Diagnostic& d : s.diagnostics()) out.push_back(std::to_string(d.line) + ": " + d.message);
  return out;
}

}  // namespace

TEST_CASE("reduce: kept dimensions, reducer result type, variadic tuples") {
  std::string params =
      "x = f32[2,3,4] parameter(0)\n k = s32[2,3,4] parameter(1)\n z = f32[] constant(0)\n"
      " zi = s32[] constant(0)\n";
  CHECK(Infer(params + "r = f32[] reduce(x, z), dimensions={0,2}, to_apply=add", "r") == "f32[3]");
  CHECK(Infer(params + "r = f32[] reduce(x, z), dimensions={}, to_apply=add", "r") == "f32[2,3,4]");
  CHECK(Infer(params + "r = f32[] reduce(x, k, z, zi), dimensions={1}, to_apply=add_pair", "r") ==
        "(f32[2,4], s32[2,4])");
  CHECK(Infer(params + "r = f32[] reduce(x, z), dimensions={3}, to_apply=add", "r") ==
        "error: reduce dimension 3 is out of range for f32[2,3,4]");
  CHECK(Infer(params + "r = f32[] reduce(x, zi), dimensions={0}, to_apply=add", "r")
            .rfind("error: reduce computation 'add'", 0) == 0);
  // The parser fills in the same shape.
  CHECK(Infer(params + "r = reduce(x, z), dimensions={0,2}, to_apply=add", "r", InferMode::kParse) == "f32[3]");
}

TEST_CASE("slice and dynamic-slice: verify mode derives them, parse mode leaves them to the text") {
  std::string x = "x = f32[10,8] parameter(0)\n i = s32[] parameter(1)\n";
  CHECK(Infer(x + "s = f32[] slice(x), slice={[0:10], [2:8:2]}", "s") == "f32[10,3]");
  CHECK(Infer(x + "s = f32[] slice(x), slice={[1:8:3], [0:0]}", "s") == "f32[3,0]");
  CHECK(Infer(x + "s = f32[] slice(x), slice={[0:10], [2:8:2]}", "s", InferMode::kParse) == "not inferable");
  CHECK(Infer(x + "s = f32[] slice(x), slice={[0:11], [0:8]}", "s") ==
        "error: slice limit 11 is past the end in dimension 0 of f32[10,8]");
  CHECK(Infer(x + "d = f32[] dynamic-slice(x, i, i), dynamic_slice_sizes={3,8}", "d") == "f32[3,8]");
  CHECK(Infer(x + "u = f32[2,8] parameter(2)\n d = f32[] dynamic-update-slice(x, u, i, i)", "d") == "f32[10,8]");
}

TEST_CASE("concatenate and pad") {
  std::string p = "a = f32[2,3] parameter(0)\n b = f32[2,5] parameter(1)\n z = f32[] constant(0)\n";
  CHECK(Infer(p + "c = concatenate(a, b, a), dimensions={1}", "c", InferMode::kParse) == "f32[2,11]");
  CHECK(Infer(p + "c = f32[] concatenate(a, b), dimensions={0}", "c").rfind("error: concatenate operands", 0) == 0);
  // low 1, high 2, interior 1: 2 + 1 + 2 + 1; negative padding trims: 3 - 1 - 1.
  CHECK(Infer(p + "q = pad(a, z), padding=1_2_1x-1_-1", "q", InferMode::kParse) == "f32[6,1]");
  CHECK(Infer(p + "q = f32[] pad(a, z), padding=0_0", "q") ==
        "error: pad has padding for 1 dimension but the operand f32[2,3] has rank 2");
}

TEST_CASE("gather and scatter, including batching dimensions") {
  std::string p = "x = f32[5,6,7] parameter(0)\n idx = s32[4,2] parameter(1)\n";
  CHECK(Infer(p + "g = gather(x, idx), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, "
                  "index_vector_dim=1, slice_sizes={1,6,3}",
              "g", InferMode::kParse) == "f32[4,6,3]");
  // index_vector_dim == rank(indices): each index is a scalar.
  CHECK(Infer("x = f32[5,6] parameter(0)\n idx = s32[4] parameter(1)\n"
              "g = gather(x, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
              "index_vector_dim=1, slice_sizes={1,6}",
              "g", InferMode::kParse) == "f32[4,6]");
  // Batch dimension 0 of the operand pairs with dimension 0 of the indices.
  CHECK(Infer("x = f32[3,5,6] parameter(0)\n idx = s32[3,4,1] parameter(1)\n"
              "g = gather(x, idx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, "
              "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,6}",
              "g", InferMode::kParse) == "f32[3,4,6]");
  CHECK(Infer("x = f32[5,6] parameter(0)\n idx = s32[4,1] parameter(1)\n u = f32[4,6] parameter(2)\n"
              "s = scatter(x, idx, u), update_window_dims={1}, inserted_window_dims={0}, "
              "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
              "s", InferMode::kParse) == "f32[5,6]");
  CHECK(Infer("x = f32[5,6] parameter(0)\n idx = s32[4,1] parameter(1)\n u = f32[4,7] parameter(2)\n"
              "s = f32[] scatter(x, idx, u), update_window_dims={1}, inserted_window_dims={0}, "
              "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
              "s")
            .rfind("error: scatter update window dimension 1", 0) == 0);
}

TEST_CASE("convolution: dim_labels, windows, groups, preferred element type") {
  std::string p = "img = bf16[2,9,9,4] parameter(0)\n ker = bf16[3,3,4,8] parameter(1)\n";
  CHECK(Infer(p + "c = convolution(img, ker), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f", "c",
              InferMode::kParse) == "bf16[2,4,4,8]");
  // The written type wins (bf16 operands accumulated in f32); dilation widens the window.
  CHECK(Infer(p + "c = f32[] convolution(img, ker), window={size=3x3 pad=2_2x2_2 rhs_dilate=2x2}, "
                  "dim_labels=b01f_01io->bf01",
              "c") == "f32[2,8,9,9]");
  // feature_group_count 2: kernel input features are half the input features.
  CHECK(Infer("img = f32[1,5,4] parameter(0)\n ker = f32[1,2,6] parameter(1)\n"
              "c = convolution(img, ker), window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2",
              "c", InferMode::kParse) == "f32[1,5,6]");
  // batch_group_count 2 divides the batch.
  CHECK(Infer("img = f32[4,5,3] parameter(0)\n ker = f32[1,3,6] parameter(1)\n"
              "c = convolution(img, ker), window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2",
              "c", InferMode::kParse) == "f32[2,5,6]");
  CHECK(Infer(p + "c = f32[] convolution(img, ker), window={size=2x2}, dim_labels=b01f_01io->b01f", "c") ==
        "error: convolution window size 2 does not match kernel dimension 0 of bf16[3,3,4,8]");
}

TEST_CASE("windows: reduce-window and select-and-scatter") {
  std::string p = "x = f32[8,6] parameter(0)\n z = f32[] constant(0)\n";
  CHECK(Infer(p + "w = reduce-window(x, z), window={size=3x2 stride=2x2 pad=1_1x0_0}, to_apply=add", "w",
              InferMode::kParse) == "f32[4,3]");
  // Base dilation 2 turns 8 into 15 positions.
  CHECK(Infer(p + "w = reduce-window(x, z), window={size=2x1 lhs_dilate=2x1}, to_apply=add", "w", InferMode::kParse) ==
        "f32[14,6]");
  CHECK(Infer(p + "src = f32[4,3] parameter(1)\n s = select-and-scatter(x, src, z), window={size=2x2 stride=2x2}, "
                  "select=ge, scatter=add",
              "s", InferMode::kParse) == "f32[8,6]");
}

TEST_CASE("batch norm, fft, linear algebra, sort, topk") {
  std::string p = "x = f32[2,3,5] parameter(0)\n s = f32[3] parameter(1)\n";
  CHECK(Infer(p + "b = batch-norm-training(x, s, s), epsilon=0.001, feature_index=1", "b", InferMode::kParse) ==
        "(f32[2,3,5], f32[3], f32[3])");
  CHECK(Infer(p + "b = batch-norm-inference(x, s, s, s, s), epsilon=0.001, feature_index=1", "b", InferMode::kParse) ==
        "f32[2,3,5]");
  CHECK(Infer(p + "b = batch-norm-grad(x, s, s, s, x), epsilon=0.001, feature_index=1", "b", InferMode::kParse) ==
        "(f32[2,3,5], f32[3], f32[3])");
  CHECK(Infer(p + "b = f32[] batch-norm-training(x, s, s), epsilon=0.001, feature_index=2", "b") ==
        "error: batch-norm-training scale f32[3] must have one entry per feature (dimension 2 of f32[2,3,5])");
  CHECK(Infer("r = f32[4,8] parameter(0)\n f = fft(r), fft_type=RFFT, fft_length={8}", "f", InferMode::kParse) ==
        "c64[4,5]");
  CHECK(Infer("c = c64[4,5] parameter(0)\n f = fft(c), fft_type=IRFFT, fft_length={8}", "f", InferMode::kParse) ==
        "f32[4,8]");
  CHECK(Infer("a = f32[2,3,3] parameter(0)\n b = f32[2,3,4] parameter(1)\n"
              "t = triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE",
              "t", InferMode::kParse) == "f32[2,3,4]");
  CHECK(Infer("x = f32[2,7] parameter(0)\n t = topk(x), k=3, largest=true", "t", InferMode::kParse) ==
        "(f32[2,3], s32[2,3])");
  CHECK(Infer("x = f32[2,7] parameter(0)\n y = f32[2,7] parameter(1)\n"
              "s = f32[] sort(x, y), dimensions={1}, to_apply=ge",
              "s") == "error: sort comparator 'ge' (f32[], f32[]) -> pred[] must take 4 parameters, it takes 2");
}

TEST_CASE("dot, ragged-dot and scaled-dot") {
  CHECK(
      Infer("a = f32[7,2,3] parameter(0)\n b = f32[7,3,4,5] parameter(1)\n"
            "d = dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
            "d", InferMode::kParse) == "f32[7,2,4,5]");
  std::string p = "l = f32[19,11,5] parameter(0)\n g = s64[19,3] parameter(2)\n";
  // Ragged non-contracting dimension: the rhs group dimension disappears.
  CHECK(Infer(p + "r = f32[3,5,7] parameter(1)\n d = ragged-dot(l, r, g), lhs_contracting_dims={2}, "
                  "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}",
              "d", InferMode::kParse) == "f32[19,11,7]");
  // Ragged contracting dimension: one result per group, in front.
  CHECK(Infer("l = f32[11,19,5] parameter(0)\n r = f32[19,5,7] parameter(1)\n g = s64[19,3] parameter(2)\n"
              "d = ragged-dot(l, r, g), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}, lhs_ragged_dims={2}",
              "d", InferMode::kParse) == "f32[3,11,7]");
  CHECK(Infer("a = f8e4m3fn[2,256] parameter(0)\n b = f8e4m3fn[256,256] parameter(1)\n"
              "as = f8e8m0fnu[2,8] parameter(2)\n bs = f8e8m0fnu[256,8] parameter(3)\n"
              "d = f32[] scaled-dot(a, b, as, bs), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
              "d") == "f32[2,256]");
}

TEST_CASE("control flow: call, while, conditional, fusion") {
  std::string p =
      "x = f32[3] parameter(0)\n k = s32[] parameter(1)\n p = pred[] parameter(2)\n"
      "init = (s32[], f32[3]) tuple(k, x)\n pair = (f32[3], s32[]) tuple(x, k)\n";
  CHECK(Infer(p + "w = while(init), condition=cond, body=body", "w", InferMode::kParse) == "(s32[], f32[3])");
  CHECK(Infer(p + "c = conditional(k, pair, k), branch_computations={first, iota3}", "c", InferMode::kParse) ==
        "f32[3]");
  CHECK(Infer(p + "c = conditional(p, pair, k), true_computation=first, false_computation=iota3", "c",
              InferMode::kParse) == "f32[3]");
  CHECK(Infer(p + "c = call(pair), to_apply=first", "c", InferMode::kParse) == "f32[3]");
  CHECK(Infer(p + "f = f32[] fusion(pair), kind=kLoop, calls=first", "f") == "f32[3]");
  CHECK(Infer(p + "f = f32[] fusion(pair), kind=kLoop, calls=first", "f", InferMode::kParse) == "not inferable");
  CHECK(Infer(p + "w = f32[] while(x), condition=cond, body=body", "w") ==
        "error: while condition 'cond' ((s32[], f32[3])) -> pred[] takes (s32[], f32[3]) but is given f32[3]");
  CHECK(Infer(p + "c = f32[] conditional(k, pair, pair), branch_computations={first, iota3}", "c") ==
        "error: conditional branch 1 'iota3' (s32[]) -> f32[3] takes s32[] but is given (f32[3], s32[])");
}

TEST_CASE("collectives, channels and copies") {
  std::string p = "x = f32[4,6] parameter(0)\n y = s32[4,6] parameter(1)\n t = token[] parameter(2)\n";
  CHECK(Infer(p + "a = f32[] all-reduce(x), replica_groups={}, to_apply=add", "a") == "f32[4,6]");
  CHECK(Infer(p + "a = f32[] all-to-all(x, y), replica_groups={}", "a") == "(f32[4,6], s32[4,6])");
  CHECK(Infer(p + "a = f32[] all-gather(x), replica_groups={}, dimensions={1}", "a") == "not inferable");
  CHECK(Infer(p + "s = f32[] send(x, t), channel_id=1", "s") == "(f32[4,6], u32[], token[])");
  CHECK(Infer(p + "r = (f32[2], u32[], token[]) recv(t), channel_id=1\n d = f32[] recv-done(r), channel_id=1", "d") ==
        "(f32[2], token[])");
  CHECK(Infer(p + "c = f32[] copy-start(x)", "c") == "(f32[4,6], f32[4,6], u32[])");
  CHECK(Infer("x = f32[4,6] parameter(0)\n k = s32[] parameter(1)\n s = set-dimension-size(x, k), dimensions={1}", "s",
              InferMode::kParse) == "f32[4,<=6]");
}

TEST_CASE("dynamic dimensions: bounds are compared, unbounded dimensions match anything") {
  CHECK(Infer("a = f32[<=4,3] parameter(0)\n b = f32[4,3] parameter(1)\n c = add(a, b)", "c", InferMode::kParse) ==
        "f32[<=4,3]");
  CHECK(Infer("a = f32[?,3] parameter(0)\n b = f32[5,3] parameter(1)\n c = add(a, b)", "c", InferMode::kParse) ==
        "f32[5,3]");
  CHECK(Infer("a = f32[<=4,3] parameter(0)\n b = f32[5,3] parameter(1)\n c = add(a, b)", "c", InferMode::kParse) ==
        "parse: operands of 'add' have different dimensions: f32[<=4,3] and f32[5,3]");
  CHECK(VerifyAll("HloModule m\nENTRY e {\n  a = f32[<=4,3] parameter(0)\n  ROOT c = f32[4,3] negate(a)\n}\n").empty());
}

TEST_CASE("attribute-text readers") {
  auto w = ReadWindow("{size=3x2 stride=2x1 pad=-1_1x0_2 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}");
  REQUIRE(w.ok());
  REQUIRE(w->size() == 2);
  CHECK((*w)[0].size == 3);
  CHECK((*w)[0].pad_low == -1);
  CHECK((*w)[1].pad_high == 2);
  CHECK((*w)[1].base_dilation == 2);
  CHECK((*w)[0].window_dilation == 2);
  CHECK((*w)[1].reversal);
  CHECK(ReadWindow("{}")->empty());
  CHECK(ReadWindow("{size=3 stride=1x1}").status().message() == "window stride= has 2 dimensions but size= has 1");
  CHECK(!ReadWindow("{stride=2}").ok());

  auto s = ReadSliceRanges("{[0:10], [2:8:2]}");
  REQUIRE(s.ok());
  REQUIRE(s->size() == 2);
  CHECK((*s)[1].start == 2);
  CHECK((*s)[1].limit == 8);
  CHECK((*s)[1].stride == 2);
  CHECK((*s)[0].stride == 1);
  CHECK(ReadSliceRanges("{}")->empty());
  CHECK(!ReadSliceRanges("{[0:a]}").ok());

  auto p = ReadPadding("0_1x-2_3_1");
  REQUIRE(p.ok());
  REQUIRE(p->size() == 2);
  CHECK((*p)[1].low == -2);
  CHECK((*p)[1].interior == 1);
  CHECK(!ReadPadding("0_1_2_3").ok());

  auto l = ReadDimLabels("b01f_01io->f01b");
  REQUIRE(l.ok());
  CHECK(l->input_batch == 0);
  CHECK(l->input_feature == 3);
  CHECK(l->kernel_input_feature == 2);
  CHECK(l->output_feature == 0);
  auto list = [](const SpatialDims& v) { return std::vector<int64_t>(v.begin(), v.end()); };
  CHECK(list(l->output_spatial) == std::vector<int64_t>{1, 2});
  CHECK(list(ReadDimLabels("bf10_oi01->bf01")->input_spatial) == std::vector<int64_t>{3, 2});
  CHECK(ReadDimLabels("b0?f_0io->b0f")->has_unknown);
  CHECK(!ReadDimLabels("b01f_01io->b0f").ok());
  CHECK(!ReadDimLabels("bb1f_01io->b01f").ok());
}

TEST_CASE("the verifier reports every problem, each at its instruction") {
  std::vector<std::string> d = VerifyAll(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[2] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={1}, to_apply=add
  s = f32[3] slice(x), slice={[0:2]}
  ROOT c = f32[4] sqrt(s)
})");
  REQUIRE(d.size() == 4);
  CHECK(d[0] == "5: 'add' result shape is f32[2] but its operands give f32[]");
  CHECK(d[1] == "10: reduce dimension 1 is out of range for f32[4]");
  CHECK(d[2] == "11: 'slice' result shape is f32[3] but its operands give f32[2]");
  CHECK(d[3] == "12: 'sqrt' result shape is f32[4] but its operands give f32[3]");
}

TEST_CASE("backend_config is parsed once; text that is not JSON is still a config") {
  auto m = nhlo::ParseModule("t.hlo", R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0), backend_config={"x": {"y": "}"}, "n": [1, 2]}
  b = f32[2] negate(a), backend_config="{\"k\": 7}"
  c = f32[2] abs(b), backend_config="opaque\001bytes"
  d = f32[2] sign(c), backend_config={"unclosed": [1, 2}
  ROOT q = (f8e4m3fn[2,32], f8e8m0fnu[2,1]) custom-call(f32[2,32] parameter(1)), custom_call_target="QuantizeMX", backend_config="42"
})");
  REQUIRE(m.ok());  // XLA accepts any backend_config string: malformed JSON is no parse error
  const auto& insts = (*m)->entry->instructions;
  auto json_of = [&](size_t i) { return nhlo::BackendConfigJson(*insts[i]); };
  REQUIRE(json_of(0));
  CHECK((*json_of(0))["x"]["y"] == "}");
  CHECK((*json_of(0))["n"].size() == 2);
  REQUIRE(json_of(1));
  CHECK((*json_of(1))["k"] == 7);
  CHECK(json_of(2) == nullptr);
  CHECK(json_of(3) == nullptr);
  // The text, not the parsed value, is what prints.
  std::string printed = nhlo::PrintModule(**m);
  CHECK(printed.find(R"(backend_config={"x": {"y": "}"}, "n": [1, 2]})") != std::string::npos);
  CHECK(printed.find(R"(backend_config={"k": 7})") != std::string::npos);
  CHECK(printed.find(R"(backend_config="opaque\001bytes")") != std::string::npos);
  CHECK(printed.find(R"(backend_config={"unclosed": [1, 2})") != std::string::npos);
  // Only the custom calls nhlo gives meaning to reject a config, with the readers' messages.
  nhlo::Status v = nhlo::VerifyModule(**m);
  REQUIRE(!v.ok());
  CHECK(v.ToString().find("'q': QuantizeMX backend_config must be a JSON object") != std::string::npos);
  CHECK(v.ToString().find("'d'") == std::string::npos);
  // The text readers (the interpreter's) and the parsed-value readers agree.
  for (std::string_view text :
       {"", "42", "{\"dtype\": \"float8_e5m2\", \"dim\": 1, \"block_size\": 32, \"scale_method\": \"EMAX\"}",
        "{\"dtype\": 1}", "{"}) {
    nhlo::Module scratch;
    auto from_text = nhlo::ParseQuantizeMxConfig(text);
    auto from_value = nhlo::ParseQuantizeMxConfig(scratch.ParseJson(text));
    CHECK(from_text.ok() == from_value.ok());
    if (!from_text.ok()) CHECK(from_text.status().ToString() == from_value.status().ToString());
  }
}
