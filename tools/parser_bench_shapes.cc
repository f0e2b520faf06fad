// SPDX-License-Identifier: Apache-2.0
// Generators for nhlo-parser-bench's module shapes. Each writes about the asked number of
// instructions, deterministically (no randomness from the environment), in the forms XLA's
// dumps use, so the figures speak for real inputs of that shape.
#include "parser_bench_shapes.h"

#include <string>
#include <type_traits>

namespace nhlo_bench {
namespace {

// xorshift64: the same text on every run and machine.
struct Gen {
  uint64_t state = 0x243f6a8885a308d3ULL;
  uint64_t Next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

// Appends strings, characters and integers: generating a 1M-instruction module should take a
// fraction of the time parsing it does, which temporaries from `+` chains would not.
void Put(std::string&) {}
template <typename T, typename... Rest>
void Put(std::string& s, const T& first, const Rest&... rest) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, char>) {
    s += std::to_string(first);
  } else {
    s += first;
  }
  Put(s, rest...);
}

std::string Header(std::string_view shape, int64_t target) {
  std::string s;
  s.reserve(static_cast<size_t>(target) * 160);
  Put(s, "HloModule bench_", shape, "_", target, ", is_scheduled=true\n\n");
  return s;
}

void Metadata(std::string& s, Gen& g, int64_t i, std::string_view op) {
  Put(s, ", metadata={op_type=\"", op, "\" op_name=\"jit(train_step)/jit(main)/transformer/layer_", i % 48,
      "/attention/dot_general[dimension_numbers=(((2,), (1,)), ((0,), (0,)))]\" "
      "source_file=\"/home/user/model/layers.py\" "
      "source_line=",
      100 + g.Next() % 900, "}");
}

constexpr const char* kReducer =
    "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(%a, %b)\n}\n\n";

// flat: one big entry computation with a realistic mix (dots, fusions, a while loop,
// convolutions, 256-element constants, metadata); the benchmark's original module.
std::string Flat(int64_t target) {
  Gen g;
  std::string s = Header("flat", target);
  s += kReducer;
  s += "%fused_computation (p0: f32[64,256], p1: f32[64,256]) -> f32[64,256] {\n  %p0 = f32[64,256]{1,0} parameter(0)\n"
       "  %p1 = f32[64,256]{1,0} parameter(1)\n  %m = f32[64,256]{1,0} multiply(%p0, %p1)\n"
       "  ROOT %t = f32[64,256]{1,0} tanh(%m)\n}\n\n";
  s += "%cond (c: (s32[], f32[64,256])) -> pred[] {\n  %c = (s32[], f32[64,256]{1,0}) parameter(0)\n"
       "  %i = s32[] get-tuple-element(%c), index=0\n  %n = s32[] constant(10)\n  ROOT %lt = pred[] compare(%i, %n), "
       "direction=LT\n}\n\n";
  s += "%body (b: (s32[], f32[64,256])) -> (s32[], f32[64,256]) {\n  %b = (s32[], f32[64,256]{1,0}) parameter(0)\n"
       "  %i = s32[] get-tuple-element(%b), index=0\n  %x = f32[64,256]{1,0} get-tuple-element(%b), index=1\n"
       "  %one = s32[] constant(1)\n  %j = s32[] add(%i, %one)\n  %y = f32[64,256]{1,0} exponential(%x)\n"
       "  ROOT %r = (s32[], f32[64,256]{1,0}) tuple(%j, %y)\n}\n\n";
  s += "ENTRY %main (x: f32[64,256], w: f32[256,256]) -> f32[64,256] {\n  %x = f32[64,256]{1,0} parameter(0)\n"
       "  %w = f32[256,256]{1,0} parameter(1)\n  %img = f32[8,32,32,16]{3,2,1,0} parameter(2)\n"
       "  %ker = f32[3,3,16,16]{3,2,1,0} parameter(3)\n";
  std::string prev = "x";
  for (int64_t i = 0; i < target; ++i) {
    std::string name = "v" + std::to_string(i);
    switch (g.Next() % 16) {
      case 0:
      case 1:
        Put(s, "  %", name, " = f32[64,256]{1,0} dot(%", prev,
            ", %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
            "operand_precision={highest,highest}");
        Metadata(s, g, i, i % 3 ? "dot_general" : "add");
        s += '\n';
        break;
      case 2:
        Put(s, "  %", name, " = f32[64,256]{1,0} fusion(%", prev, ", %x), kind=kLoop, calls=%fused_computation");
        Metadata(s, g, i, i % 3 ? "dot_general" : "add");
        s += '\n';
        break;
      case 3:
        Put(s, "  %", name,
            ".c = f32[8,32,32,16]{3,2,1,0} convolution(%img, %ker), window={size=3x3 pad=1_1x1_1}, "
            "dim_labels=b01f_01io->b01f");
        Metadata(s, g, i, i % 3 ? "dot_general" : "add");
        Put(s, "\n  %", name, " = f32[64,256]{1,0} add(%", prev, ", %x)\n");
        ++i;
        break;
      case 4:
        Put(s, "  %", name, ".k = f32[256]{0} constant({");
        for (int k = 0; k < 256; ++k)
          Put(s, k ? ", " : "", static_cast<int>(g.Next() % 2000) - 1000, ".", g.Next() % 100);
        Put(s, "})\n  %", name, ".b = f32[64,256]{1,0} broadcast(%", name, ".k), dimensions={1}\n");
        Put(s, "  %", name, " = f32[64,256]{1,0} multiply(%", prev, ", %", name, ".b)");
        Metadata(s, g, i, i % 3 ? "dot_general" : "add");
        s += '\n';
        i += 2;
        break;
      case 5:
        Put(s, "  %", name, ".z = s32[] constant(0)\n  %", name, ".t = (s32[], f32[64,256]{1,0}) tuple(%", name,
            ".z, %", prev, ")\n");
        Put(s, "  %", name, ".w = (s32[], f32[64,256]{1,0}) while(%", name, ".t), condition=%cond, body=%body\n");
        Put(s, "  %", name, " = f32[64,256]{1,0} get-tuple-element(%", name, ".w), index=1\n");
        i += 3;
        break;
      case 6:
        Put(s, "  %", name, ".i = f32[] constant(0)\n");
        Put(s, "  %", name, ".r = f32[64]{0} reduce(%", prev, ", %", name, ".i), dimensions={1}, to_apply=%add\n");
        Put(s, "  %", name, " = f32[64,256]{1,0} broadcast(%", name, ".r), dimensions={0}\n");
        i += 2;
        break;
      default:
        Put(s, "  %", name, " = f32[64,256]{1,0} ", g.Next() % 2 ? "add" : "maximum", "(%", prev, ", %x)");
        Metadata(s, g, i, i % 3 ? "dot_general" : "add");
        s += '\n';
        break;
    }
    prev = name;
  }
  Put(s, "  ROOT %out = f32[64,256]{1,0} copy(%", prev, ")\n}\n");
  return s;
}

// fusions: XLA's post-fusion dumps. Every layer is a fused computation and a reducer of its
// own (XLA does not share them), called from the entry by a fusion and a reduce: 13
// instructions and 2 computations per layer, so 1M instructions make 150k computations.
std::string Fusions(int64_t target) {
  Gen g;
  std::string s = Header("fusions", target);
  int64_t layers = target / 13 + 1;
  for (int64_t l = 0; l < layers; ++l) {
    Put(s, "%fused_computation.", l, " (param_0.", l, ": f32[64,256], param_1.", l, ": f32[256]) -> f32[64,256] {\n",
        "  %param_0.", l, " = f32[64,256]{1,0} parameter(0)\n", "  %param_1.", l, " = f32[256]{0} parameter(1)\n",
        "  %broadcast.", l, " = f32[64,256]{1,0} broadcast(%param_1.", l, "), dimensions={1}\n", "  %multiply.", l,
        " = f32[64,256]{1,0} multiply(%param_0.", l, ", %broadcast.", l, ")\n", "  %constant.", l,
        " = f32[] constant(0.5)\n", "  %broadcast.", l, ".1 = f32[64,256]{1,0} broadcast(%constant.", l,
        "), dimensions={}\n", "  ROOT %add.", l, " = f32[64,256]{1,0} add(%multiply.", l, ", %broadcast.", l,
        ".1)\n}\n\n");
    Put(s, "%region_", l, ".", 3 * l + 7, " (Arg_0.", l, ": f32[], Arg_1.", l, ": f32[]) -> f32[] {\n", "  %Arg_0.", l,
        " = f32[] parameter(0)\n  %Arg_1.", l, " = f32[] parameter(1)\n", "  ROOT %add.", l, ".r = f32[] add(%Arg_0.",
        l, ", %Arg_1.", l, ")\n}\n\n");
  }
  s += "ENTRY %main.0 (x: f32[64,256], bias: f32[256]) -> f32[64,256] {\n  %x = f32[64,256]{1,0} parameter(0)\n"
       "  %bias = f32[256]{0} parameter(1)\n";
  std::string prev = "x";
  for (int64_t l = 0; l < layers; ++l) {
    Put(s, "  %fusion.", l, " = f32[64,256]{1,0} fusion(%", prev, ", %bias), kind=kLoop, calls=%fused_computation.", l);
    Metadata(s, g, l, "mul");
    Put(s, "\n  %constant.", l, " = f32[] constant(0)\n", "  %reduce.", l, " = f32[64]{0} reduce(%fusion.", l,
        ", %constant.", l, "), dimensions={1}, to_apply=%region_", l, ".", 3 * l + 7, "\n");
    prev = "fusion." + std::to_string(l);
  }
  Put(s, "  ROOT %out = f32[64,256]{1,0} copy(%", prev, ")\n}\n");
  return s;
}

// metadata: every instruction carries the long metadata JAX writes (op_name with the whole
// transformation path, source file and line range).
std::string MetadataShape(int64_t target) {
  Gen g;
  std::string s = Header("metadata", target);
  s += "ENTRY %main (p0: f32[128], p1: f32[128]) -> f32[128] {\n  %p0 = f32[128]{0} parameter(0)\n"
       "  %p1 = f32[128]{0} parameter(1)\n";
  std::string prev = "p0";
  static constexpr const char* kOps[] = {"add", "multiply", "subtract", "maximum"};
  for (int64_t i = 0; i < target; ++i) {
    const char* op = kOps[g.Next() % 4];
    Put(s, "  %", op, ".", i, " = f32[128]{0} ", op, "(%", prev, ", %p1), metadata={op_type=\"", op,
        "\" op_name=\"jit(train_step)/jit(main)/transpose(jvp(Transformer))/decoder/layers_", i % 32, "/mlp/dense_",
        i % 3, "/", op,
        "\" source_file=\"/usr/local/lib/python3.11/site-packages/flax/linen/linear.py\" "
        "source_line=",
        200 + g.Next() % 300, " source_end_line=", 520 + g.Next() % 10, " source_column=", g.Next() % 80,
        " source_end_column=", 80 + g.Next() % 40, "}\n");
    prev = std::string(op) + "." + std::to_string(i);
  }
  Put(s, "  ROOT %out = f32[128]{0} copy(%", prev, ")\n}\n");
  return s;
}

// Appends `n` random elements of `type` in a literal of rank 2 (rows of `row`).
void LiteralRows(std::string& s, Gen& g, std::string_view type, int64_t n, int64_t row) {
  s += '{';
  for (int64_t i = 0; i < n; ++i) {
    if (i % row == 0)
      s += i ? "}, {" : "{";
    else
      s += ", ";
    uint64_t r = g.Next();
    if (type == "s32") {
      Put(s, static_cast<int64_t>(r % 200000) - 100000);
    } else if (type == "pred") {
      s += r % 2 ? "true" : "false";
    } else {
      Put(s, static_cast<int64_t>(r % 2000) - 1000, ".", (r >> 20) % 1000);
    }
  }
  s += "}}";
}

// literals: a dense 2,048-element constant (f32, bf16, s32 or pred, written as a matrix) in
// every block of 64 instructions: most of the bytes are literal text.
std::string Literals(int64_t target) {
  Gen g;
  std::string s = Header("literals", target);
  s += "ENTRY %main (p0: f32[32,64]) -> f32[32,64] {\n  %p0 = f32[32,64]{1,0} parameter(0)\n";
  std::string prev = "p0";
  static constexpr std::string_view kTypes[] = {"f32", "bf16", "s32", "pred"};
  for (int64_t b = 0; b * 64 < target; ++b) {
    std::string_view type = kTypes[b % 4];
    Put(s, "  %constant.", b, " = ", type, "[32,64]{1,0} constant(");
    LiteralRows(s, g, type, 32 * 64, 64);
    s += ")\n";
    if (type == "pred") {
      Put(s, "  %c.", b, " = f32[32,64]{1,0} select(%constant.", b, ", %", prev, ", %p0)\n");
    } else {
      Put(s, "  %c.", b, " = f32[32,64]{1,0} convert(%constant.", b, ")\n");
    }
    prev = "c." + std::to_string(b);
    for (int k = 0; k < 62; ++k) {
      Put(s, "  %e.", b, ".", k, " = f32[32,64]{1,0} ", k % 2 ? "add" : "multiply", "(%", prev, ", %p0)\n");
      prev = "e." + std::to_string(b) + "." + std::to_string(k);
    }
  }
  Put(s, "  ROOT %out = f32[32,64]{1,0} copy(%", prev, ")\n}\n");
  return s;
}

// tuples: an entry with one parameter per 16 instructions (train steps take thousands of
// weights), and blocks of 1,024 values gathered by one tuple, whose shape is written out
// element by element, then read back by get-tuple-element.
std::string Tuples(int64_t target) {
  std::string s = Header("tuples", target);
  constexpr int64_t kWidth = 1024;
  int64_t params = target / 16 + 2;
  s += "ENTRY %main (";
  for (int64_t p = 0; p < params; ++p) Put(s, p ? ", " : "", "param.", p, ": f32[8]");
  s += ") -> f32[8] {\n";
  for (int64_t p = 0; p < params; ++p) Put(s, "  %param.", p, " = f32[8]{0} parameter(", p, ")\n");
  int64_t emitted = params;
  for (int64_t b = 0; emitted < target; ++b) {
    for (int64_t k = 0; k < kWidth; ++k)
      Put(s, "  %add.", b, ".", k, " = f32[8]{0} add(%param.", (b * kWidth + k) % params, ", %param.",
          (b * 7 + k * 3) % params, ")\n");
    Put(s, "  %tuple.", b, " = (");
    for (int64_t k = 0; k < kWidth; ++k) s += k ? ", f32[8]{0}" : "f32[8]{0}";
    s += ") tuple(";
    for (int64_t k = 0; k < kWidth; ++k) Put(s, k ? ", %add." : "%add.", b, ".", k);
    s += ")\n";
    Put(s, "  %gte.", b, " = f32[8]{0} get-tuple-element(%tuple.", b, "), index=", (b * 13) % kWidth, "\n");
    emitted += kWidth + 2;
  }
  s += "  ROOT %out = f32[8]{0} copy(%param.0)\n}\n";
  return s;
}

// calls: a chain of computations, each calling the one before it (call, and every 16th a
// while loop over it), 8 instructions each: call depth grows with the module.
std::string Calls(int64_t target) {
  std::string s = Header("calls", target);
  int64_t depth = target / 8 + 1;
  s += "%c.0 (p.0: f32[16]) -> f32[16] {\n  %p.0 = f32[16]{0} parameter(0)\n  ROOT %n.0 = f32[16]{0} "
       "negate(%p.0)\n}\n\n";
  s += "%cond (t: (s32[], f32[16])) -> pred[] {\n  %t = (s32[], f32[16]{0}) parameter(0)\n"
       "  %i = s32[] get-tuple-element(%t), index=0\n  %n = s32[] constant(4)\n  ROOT %lt = pred[] compare(%i, %n), "
       "direction=LT\n}\n\n";
  for (int64_t k = 1; k < depth; ++k) {
    if (k % 16 == 0) {
      Put(s, "%body.", k, " (t.", k, ": (s32[], f32[16])) -> (s32[], f32[16]) {\n  %t.", k,
          " = (s32[], f32[16]{0}) parameter(0)\n", "  %i.", k, " = s32[] get-tuple-element(%t.", k, "), index=0\n  %x.",
          k, " = f32[16]{0} get-tuple-element(%t.", k, "), index=1\n  %one.", k, " = s32[] constant(1)\n  %j.", k,
          " = s32[] add(%i.", k, ", %one.", k, ")\n", "  %y.", k, " = f32[16]{0} call(%x.", k, "), to_apply=%c.", k - 1,
          "\n", "  ROOT %r.", k, " = (s32[], f32[16]{0}) tuple(%j.", k, ", %y.", k, ")\n}\n\n");
      Put(s, "%c.", k, " (p.", k, ": f32[16]) -> f32[16] {\n  %p.", k, " = f32[16]{0} parameter(0)\n", "  %z.", k,
          " = s32[] constant(0)\n  %t.", k, " = (s32[], f32[16]{0}) tuple(%z.", k, ", %p.", k, ")\n", "  %w.", k,
          " = (s32[], f32[16]{0}) while(%t.", k, "), condition=%cond, body=%body.", k, "\n", "  ROOT %g.", k,
          " = f32[16]{0} get-tuple-element(%w.", k, "), index=1\n}\n\n");
      continue;
    }
    Put(s, "%c.", k, " (p.", k, ": f32[16]) -> f32[16] {\n  %p.", k, " = f32[16]{0} parameter(0)\n", "  %a.", k,
        " = f32[16]{0} call(%p.", k, "), to_apply=%c.", k - 1, "\n", "  %n.", k, " = f32[16]{0} negate(%a.", k,
        ")\n  %e.", k, " = f32[16]{0} exponential(%n.", k, ")\n", "  %m.", k, " = f32[16]{0} multiply(%e.", k, ", %p.",
        k, ")\n  %s.", k, " = f32[16]{0} subtract(%m.", k, ", %a.", k, ")\n", "  %x.", k, " = f32[16]{0} maximum(%s.",
        k, ", %p.", k, ")\n  ROOT %r.", k, " = f32[16]{0} add(%x.", k, ", %n.", k, ")\n}\n\n");
  }
  Put(s, "ENTRY %main (x: f32[16]) -> f32[16] {\n  %x = f32[16]{0} parameter(0)\n",
      "  ROOT %out = f32[16]{0} call(%x), to_apply=%c.", depth - 1, "\n}\n");
  return s;
}

// attrs: instructions carrying many attributes each (convolutions, dots, collectives and
// custom calls with sharding, frontend attributes, backend configs and metadata).
std::string Attrs(int64_t target) {
  Gen g;
  std::string s = Header("attrs", target);
  s += kReducer;
  s += "ENTRY %main (img: f32[8,32,32,16], ker: f32[3,3,16,16], x: f32[64,256], w: f32[256,256]) -> f32[64,256] {\n"
       "  %img = f32[8,32,32,16]{3,2,1,0} parameter(0)\n  %ker = f32[3,3,16,16]{3,2,1,0} parameter(1)\n"
       "  %x = f32[64,256]{1,0} parameter(2)\n  %w = f32[256,256]{1,0} parameter(3)\n";
  std::string prev = "x";
  for (int64_t i = 0; i < target; ++i) {
    std::string_view common =
        ", sharding={replicated}, frontend_attributes={_scheduling_group_id=\"3\" _xla_stream_annotation=\"1\"}";
    switch (i % 4) {
      case 0:
        Put(s, "  %conv.", i,
            " = f32[8,32,32,16]{3,2,1,0} convolution(%img, %ker), window={size=3x3 stride=1x1 pad=1_1x1_1 "
            "lhs_dilate=1x1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1, "
            "operand_precision={highest,highest}",
            common);
        break;
      case 1:
        Put(s, "  %dot.", i, " = f32[64,256]{1,0} dot(%", prev,
            ", %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
            "operand_precision={default,default}",
            common,
            ", backend_config={\"operation_queue_id\":\"0\","
            "\"wait_on_operation_queues\":[],\"force_earliest_schedule\":false}");
        prev = "dot." + std::to_string(i);
        break;
      case 2:
        Put(s, "  %all-reduce.", i, " = f32[64,256]{1,0} all-reduce(%", prev, "), channel_id=", i + 1,
            ", replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true, to_apply=%add", common);
        prev = "all-reduce." + std::to_string(i);
        break;
      default:
        Put(s, "  %custom-call.", i, " = f32[64,256]{1,0} custom-call(%", prev,
            ", %w), custom_call_target=\"my_kernel_", i % 7,
            "\", operand_layout_constraints={f32[64,256]{1,0}, f32[256,256]{1,0}}, custom_call_has_side_effect=true, "
            "output_to_operand_aliasing={{}: (0, {})}, schedule=SCHEDULE_LATEST, "
            "api_version=API_VERSION_STATUS_RETURNING",
            common, ", backend_config=\"opaque-", g.Next() % 1000, "\"");
        prev = "custom-call." + std::to_string(i);
        break;
    }
    Metadata(s, g, i, "op");
    s += '\n';
  }
  Put(s, "  ROOT %out = f32[64,256]{1,0} copy(%", prev, ")\n}\n");
  return s;
}

const ShapeInfo kShapes[] = {
    {"flat", "one entry computation, mixed ops, 256-element constants", Flat},
    {"fusions", "post-fusion dump: a fused computation and a reducer per layer", Fusions},
    {"metadata", "long JAX metadata on every instruction", MetadataShape},
    {"literals", "a 2,048-element constant every 64 instructions", Literals},
    {"tuples", "1,024-element tuples, a parameter per 16 instructions", Tuples},
    {"calls", "a call chain as deep as a computation per 8 instructions", Calls},
    {"attrs", "8-11 attributes on every instruction", Attrs},
    {{}, {}, nullptr},
};

}  // namespace

const ShapeInfo* Shapes() { return kShapes; }

const ShapeInfo* FindShape(std::string_view name) {
  for (const ShapeInfo* s = kShapes; s->generate; ++s)
    if (s->name == name) return s;
  return nullptr;
}

}  // namespace nhlo_bench
