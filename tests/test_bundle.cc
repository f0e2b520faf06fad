// SPDX-License-Identifier: Apache-2.0
// Bundle writer, reader and interpreter end to end: determinism, the format's fixed fields,
// and corrupted files (also with a re-forged checksum) that must be rejected or executed
// safely, never crash.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "codegen/buffer_assignment.h"
#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "interp/op_table.h"
#include "ir/verifier.h"
#include "load_program.h"
#include "parser/parser.h"

using namespace nhlo;

namespace {

const char* kModule = R"(HloModule unit
ENTRY e {
  x = f32[2,3] parameter(0)
  w = f32[3,2] constant({ {1, 2}, {3, 4}, {5, 6} })
  d = f32[2,2] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  n = s4[3] constant({-8, 1, 7})
  c = bf16[2,2] convert(d)
  ROOT t = (f32[2,2], bf16[2,2], s4[3]) tuple(d, c, n)
})";

std::string Compile(const char* text, TargetArch arch = TargetArch::kV4) {
  auto m = ParseModule("unit.hlo", text);
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  CodegenOptions options;
  options.arch = arch;
  auto bytes = EmitBundleFile(**m, options);
  REQUIRE(bytes.ok());
  return *bytes;
}

uint32_t U32At(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

void Reseal(std::string& b) {
  uint32_t sum = BundleChecksum(b);
  std::memcpy(b.data() + 16, &sum, 4);
}

}  // namespace

TEST_CASE("bundle files are deterministic and carry the documented header") {
  std::string a = Compile(kModule), b = Compile(kModule);
  CHECK(a == b);
  CHECK(std::memcmp(a.data(), "NHLOBNDL", 8) == 0);
  CHECK(static_cast<uint8_t>(a[8]) == kBundleVersion);
  CHECK(static_cast<uint8_t>(a[10]) == 4);
  CHECK(U32At(a, 12) == a.size());
  CHECK(U32At(a, 16) == BundleChecksum(a));
  CHECK(U32At(a, 20) == kSectionCount);
  CHECK(static_cast<uint8_t>(Compile(kModule, TargetArch::kV3)[10]) == 3);
}

TEST_CASE("the reader decodes what the writer wrote, and the interpreter runs it") {
  auto program = ReadBundleFile(Compile(kModule), "unit.bin");
  REQUIRE(program.ok());
  CHECK(program->module_name == "unit");
  REQUIRE(program->computations.size() == 1);
  CHECK(program->computations[0].bundles.size() == 6);
  auto x = ParseValue("f32[2,3] {{1, 0, 0}, {0, 1, 1}}", "x");
  REQUIRE(x.ok());
  auto result = Execute(*program, {*x});
  REQUIRE(result.ok());
  REQUIRE(result->tuple.size() == 3);
  CHECK(PrintValue(result->tuple[0]) == "f32[2,2] { {1, 2}, {8, 10} }");
  CHECK(PrintValue(result->tuple[1]) == "bf16[2,2] { {1, 2}, {8, 10} }");
  CHECK(PrintValue(result->tuple[2]) == "s4[3] {-8, 1, 7}");
  auto wrong = ParseValue("f32[3,2] {{1, 0}, {0, 1}, {1, 1}}", "x");
  CHECK(!Execute(*program, {*wrong}).ok());
  CHECK(!Execute(*program, {}).ok());
}

TEST_CASE("every single-byte corruption is rejected or runs safely, even with a forged checksum") {
  std::string good = Compile(kModule);
  auto x = ParseValue("f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "x");
  REQUIRE(x.ok());
  int checksum_rejections = 0;
  std::mt19937 rng(99);
  for (size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    if (!ReadBundleFile(bad, "bad.bin").ok()) ++checksum_rejections;
    Reseal(bad);  // now only the structural validation stands between the bytes and the kernels
    auto program = ReadBundleFile(bad, "bad.bin");
    if (program.ok()) (void)Execute(*program, {*x});
  }
  CHECK(checksum_rejections == static_cast<int>(good.size()));
  for (size_t n = 0; n < good.size(); ++n) CHECK(!ReadBundleFile(good.substr(0, n), "cut.bin").ok());
}

// The wire codes are the bundle format's contract: a file written today must decode the same
// way after rows are added or reordered. These tables are the codes as first assigned; a test
// that fails here means a code was changed or reused, which needs a new format version.
TEST_CASE("bundle wire codes are pinned") {
  std::string opcodes;
  for (int i = 0; i < kOpcodeCount; ++i) {
    Opcode op = static_cast<Opcode>(i);
    opcodes += std::string(OpcodeName(op)) + "=" + std::to_string(OpcodeWireCode(op)) + " ";
    CHECK(OpcodeFromWireCode(OpcodeWireCode(op)) == op);
  }
  const std::string kOpcodeCodes =
      "abs=0 acos=1 acosh=2 add=3 add-dependency=4 after-all=5 all-gather=6 all-gather-done=7 "
      "all-gather-start=8 all-reduce=9 all-reduce-done=10 all-reduce-start=11 all-to-all=12 and=13 asin=14 "
      "asinh=15 async-done=16 async-start=17 async-update=18 atan2=19 atanh=20 batch-norm-grad=21 "
      "batch-norm-inference=22 batch-norm-training=23 bitcast=24 bitcast-convert=25 broadcast=26 call=27 "
      "cbrt=28 ceil=29 cholesky=30 clamp=31 collective-broadcast=32 collective-permute=33 "
      "collective-permute-done=34 collective-permute-start=35 compare=36 complex=37 concatenate=38 "
      "conditional=39 constant=40 convert=41 convolution=42 copy=43 copy-done=44 copy-start=45 cosh=46 "
      "cosine=47 count-leading-zeros=48 custom-call=49 divide=50 domain=51 dot=52 dynamic-reshape=53 "
      "dynamic-slice=54 dynamic-update-slice=55 erf=56 exponential=57 exponential-minus-one=58 fft=59 "
      "floor=60 fusion=61 gather=62 get-dimension-size=63 get-tuple-element=64 imag=65 infeed=66 iota=67 "
      "is-finite=68 log=69 log-plus-one=70 logistic=71 map=72 maximum=73 minimum=74 mulhi=75 multiply=76 "
      "negate=77 not=78 opt-barrier=79 or=80 outfeed=81 pad=82 parameter=83 partition-id=84 popcnt=85 "
      "power=86 ragged-all-to-all=87 ragged-dot=88 real=89 recv=90 recv-done=91 reduce=92 "
      "reduce-precision=93 reduce-scatter=94 reduce-window=95 remainder=96 replica-id=97 reshape=98 "
      "reverse=99 rng=100 rng-bit-generator=101 rng-get-and-update-state=102 round-nearest-afz=103 "
      "round-nearest-even=104 rsqrt=105 scaled-dot=106 scan=107 scatter=108 select=109 "
      "select-and-scatter=110 send=111 send-done=112 set-dimension-size=113 shift-left=114 "
      "shift-right-arithmetic=115 shift-right-logical=116 sign=117 sine=118 sinh=119 slice=120 sort=121 "
      "sqrt=122 stochastic-convert=123 subtract=124 tan=125 tanh=126 topk=127 transpose=128 "
      "triangular-solve=129 tuple=130 while=131 xor=132 ";
  CHECK(opcodes == kOpcodeCodes);

  std::string attrs;
  for (int i = 0; i < kAttrCount; ++i) {
    AttrId id = static_cast<AttrId>(i);
    attrs += std::string(AttrName(id)) + "=" + std::to_string(AttrWireCode(id)) + " ";
    CHECK(AttrFromWireCode(AttrWireCode(id)) == id);
  }
  const std::string kAttrCodes =
      "index=0 iota_dimension=1 slice=2 dynamic_slice_sizes=3 padding=4 window=5 dim_labels=6 "
      "feature_group_count=7 batch_group_count=8 convolution_kind=9 sparsity_config=10 dimensions=11 "
      "inferred_dimension=12 lhs_batch_dims=13 lhs_contracting_dims=14 rhs_batch_dims=15 "
      "rhs_contracting_dims=16 lhs_ragged_dims=17 rhs_group_dims=18 operand_precision=19 algorithm=20 "
      "direction=21 type=22 exponent_bits=23 mantissa_bits=24 epsilon=25 feature_index=26 offset_dims=27 "
      "collapsed_slice_dims=28 start_index_map=29 operand_batching_dims=30 start_indices_batching_dims=31 "
      "update_window_dims=32 inserted_window_dims=33 scatter_dims_to_operand_dims=34 "
      "input_batching_dims=35 scatter_indices_batching_dims=36 index_vector_dim=37 slice_sizes=38 "
      "indices_are_sorted=39 unique_indices=40 is_stable=41 k=42 largest=43 num_carries=44 is_reverse=45 "
      "is_associative=46 fft_type=47 fft_length=48 left_side=49 lower=50 unit_diagonal=51 transpose_a=52 "
      "kind=53 custom_call_target=54 operand_layout_constraints=55 custom_call_has_side_effect=56 "
      "output_to_operand_aliasing=57 padding_type=58 literal=59 schedule=60 api_version=61 channel_id=62 "
      "replica_groups=63 constrain_layout=64 use_global_device_ids=65 mode=66 source_target_pairs=67 "
      "has_dynamic_root=68 is_host_transfer=69 infeed_config=70 outfeed_shape=71 outfeed_config=72 "
      "distribution=73 delta=74 cross_program_prefetch_index=75 domain=76 is_composite=77 "
      "parameter_replication=78 async_execution_thread=79 condition=80 body=81 select=82 scatter=83 "
      "true_computation=84 false_computation=85 branch_computations=86 to_apply=87 called_computations=88 "
      "calls=89 sharding=90 frontend_attributes=91 control-predecessors=92 statistics=93 "
      "result_accuracy=94 origin=95 metadata=96 backend_config=97 nhlo_bitcast_layouts=98 nhlo_send_recv_pairs=99 ";
  CHECK(attrs == kAttrCodes);

  // Attribute kinds and enum values travel as codes too.
  CHECK(static_cast<int>(AttrKind::Window) == 13);
  CHECK(static_cast<int>(AttrKind::PairList) == 20);
  CHECK(static_cast<int>(AttrKind::KeyValues) == 21);
  CHECK(kAttrKindCount == 24);
  CHECK(EnumValueName(EnumSet::kComparisonDirection, 5) == "LT");
  CHECK(EnumValueName(EnumSet::kAlgorithm, 2) == "rng_philox");
  CHECK(EnumValueName(EnumSet::kAlgorithm, 28) == "dot_f64_f64_f64");
  CHECK(EnumValueName(EnumSet::kPrecision, 2) == "highest");
  CHECK(EnumValueName(EnumSet::kPrecision, 3) == "packed_nibble");  // read only: lowered by the parser
  CHECK(!OpcodeFromWireCode(60000).has_value());
}

// The interpreter's dispatch covers every opcode: a step family that runs it, or a stated reason
// why it cannot (reported when a program holding it is loaded).
TEST_CASE("every opcode has a kernel or a reason") {
  int executable = 0;
  for (int i = 0; i < kOpcodeCount; ++i) {
    Opcode op = static_cast<Opcode>(i);
    OpExecution e = ExecutionOf(op);
    CAPTURE(OpcodeName(op));
    if (e.family == OpFamily::kNotExecutable) {
      CHECK(!e.not_executable.empty());
    } else {
      ++executable;
      CHECK(e.not_executable.empty());
    }
  }
  CHECK(executable > 80);
  CHECK(ExecutionOf(Opcode::kAdd).family == OpFamily::kBinary);
  CHECK(ExecutionOf(Opcode::kAllReduce).family == OpFamily::kCollective);
  CHECK(ExecutionOf(Opcode::kSend).family == OpFamily::kSend);
  CHECK(ExecutionOf(Opcode::kInfeed).family == OpFamily::kTransferIn);
  CHECK(ExecutionOf(Opcode::kRecv).family == OpFamily::kTransferIn);
  CHECK(ExecutionOf(Opcode::kCopyDone).family == OpFamily::kCopyDone);
  CHECK(ExecutionOf(Opcode::kScan).family == OpFamily::kScan);
  CHECK(ExecutionOf(Opcode::kSetDimensionSize).family == OpFamily::kDynamicShape);
}

// A program holding an op the interpreter cannot run is refused when it is loaded, before any
// work, naming the op and why.
TEST_CASE("non-executable ops are refused at load") {
  auto program = ReadBundleFile(Compile(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  ROOT i = (f32[4], token[]) infeed(t)
})"),
                                "infeed.bin");
  REQUIRE(program.ok());
  Status loaded = LoadForExecution(*program);
  REQUIRE(!loaded.ok());
  CHECK(loaded.message().find("cannot execute 'infeed'") != std::string::npos);
  CHECK(loaded.message().find("--host-data=zeros") != std::string::npos);
}

// Buffer assignment: slots live at the same time never share bytes, every slot keeps its
// alignment, and the frame is at least the bytes live at the busiest point.
TEST_CASE("frame slots never overlap while both are live") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<FrameSlot> slots(1 + rng() % 40);
    for (FrameSlot& s : slots) {
      s.start = rng() % 30;
      s.end = s.start + rng() % 10;
      s.size = rng() % 5 == 0 ? 0 : 1 + rng() % 300;
      s.align = uint64_t(1) << (rng() % 7);
    }
    uint64_t frame = PlaceSlots(slots);
    uint64_t busiest = 0;
    for (uint32_t t = 0; t < 40; ++t) {
      uint64_t live = 0;
      for (const FrameSlot& s : slots)
        if (s.start <= t && t <= s.end) live += s.size;
      busiest = std::max(busiest, live);
    }
    CHECK(frame >= busiest);
    for (size_t i = 0; i < slots.size(); ++i) {
      const FrameSlot& a = slots[i];
      if (a.size == 0) continue;
      CHECK(a.offset % a.align == 0);
      CHECK(a.offset + a.size <= frame);
      for (size_t j = i + 1; j < slots.size(); ++j) {
        const FrameSlot& b = slots[j];
        if (b.size == 0 || a.end < b.start || b.end < a.start) continue;
        CHECK((a.offset + a.size <= b.offset || b.offset + b.size <= a.offset));
      }
    }
  }
}

// Whole-module assignment: values that are dead before others are born share bytes, an
// elementwise op writes over its dying operand, and a reducer's frame lies inside its caller's.
TEST_CASE("buffer assignment reuses bytes and stays within its bound") {
  auto m = ParseModule("assign.hlo", R"(HloModule assign
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256] parameter(0)
  e1 = f32[256] exponential(x)
  n1 = f32[256] negate(e1)
  c = f32[256] cosine(x)
  m = f32[256] multiply(n1, c)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(m, zero), dimensions={0}, to_apply=add
})");
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  ArenaReport report;
  auto bytes = EmitBundleFile(**m, CodegenOptions{}, &report);
  REQUIRE(bytes.ok());
  auto program = ReadBundleFile(*bytes, "assign.bin");
  REQUIRE(program.ok());
  const ComputationRecord& entry = program->computations[program->entry];
  auto location = [&](std::string_view name) {
    for (const BufferRecord& b : entry.buffers)
      if (b.name == name) return b.location;
    FAIL("no buffer " << name);
    return uint64_t(0);
  };
  CHECK(location("n1") == location("e1"));  // negate writes over exp, which dies there
  CHECK(location("m") == location("n1"));   // and multiply over negate
  CHECK(location("c") != location("n1"));   // cosine is live beside them
  // Three 1 KiB arrays at most are live at once (x is a parameter, outside the arena).
  CHECK(report.arena <= 2 * 1024 + 64);
  CHECK(report.arena >= report.lower_bound);
  CHECK(static_cast<double>(report.arena) <= 1.2 * static_cast<double>(report.lower_bound));
  // The reducer runs in a block of the entry's frame reserved at the reduce.
  const BundleRecord& reduce = entry.bundles.back();
  const ComputationRecord& add = program->computations[0];
  CHECK(reduce.callee_frame + add.frame_size <= entry.frame_size);
  // The reused bytes hold the right values: compare with the sum computed directly.
  Module scratch;
  Value arg = RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {256}), 3);
  auto result = Execute(*program, std::vector<Value>{arg});
  REQUIRE(result.ok());
  const float* xs = reinterpret_cast<const float*>(arg.bytes.data());
  double want = 0;
  for (int i = 0; i < 256; ++i) want += -std::exp(static_cast<double>(xs[i])) * std::cos(static_cast<double>(xs[i]));
  float got;
  std::memcpy(&got, result->bytes.data(), 4);
  CHECK(std::abs(got - want) <= 1e-3 * std::abs(want) + 1e-3);
}

TEST_CASE("the aliased bound counts a tuple, its elements and their get-tuple-elements once") {
  // n lives as itself, as t's element 0 and as g: one 1 KiB class. t's element 1 is the parameter
  // (no frame bytes) and the broadcast is read only by an add (never stored). At r, n's class, s
  // and r are live (a bound counts what dies at an instruction beside what it defines): 3 KiB.
  // nhlo's assignment stores the broadcast, but the tuple holds n's bytes and aliases p, g shares
  // n's bytes and s takes the dying broadcast's over: at s, n = t.0 = g and ones = s, 2 KiB.
  auto m = ParseModule("alias.hlo", R"(HloModule alias
ENTRY e {
  p = f32[256] parameter(0)
  n = f32[256] negate(p)
  t = (f32[256], f32[256]) tuple(n, p)
  g = f32[256] get-tuple-element(t), index=0
  one = f32[] constant(1)
  ones = f32[256] broadcast(one), dimensions={}
  s = f32[256] add(g, ones)
  ROOT r = f32[256] add(s, n)
})");
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  ArenaReport report;
  REQUIRE(EmitBundleFile(**m, CodegenOptions{}, &report).ok());
  CHECK(report.aliased_bound == 3 * 1024);
  CHECK(report.lower_bound == 2 * 1024);
  REQUIRE(report.computations.size() == 1);
  CHECK(report.computations[0].aliased_bound == report.aliased_bound);
}

// A get-tuple-element shares the bytes of the element it reads (XLA aliases them): no copy, and
// no op may write over those bytes while the tuple or another get-tuple-element still reads them.
TEST_CASE("a get-tuple-element shares its tuple element's bytes, which stay until the last reader") {
  const char* with_tuple = R"(HloModule gte
ENTRY e {
  p = f32[256] parameter(0)
  n = f32[256] negate(p)
  e1 = f32[256] exponential(p)
  t = (f32[256], f32[256]) tuple(n, e1)
  g = f32[256] get-tuple-element(t), index=0
  h = f32[256] cosine(g)
  g2 = f32[256] get-tuple-element(t), index=0
  g3 = f32[256] get-tuple-element(t), index=1
  s = f32[256] add(h, g2)
  ROOT r = f32[256] multiply(s, g3)
})";
  // The same computation without the tuple: the bits must be the same.
  const char* direct = R"(HloModule direct
ENTRY e {
  p = f32[256] parameter(0)
  n = f32[256] negate(p)
  e1 = f32[256] exponential(p)
  h = f32[256] cosine(n)
  s = f32[256] add(h, n)
  ROOT r = f32[256] multiply(s, e1)
})";
  std::vector<BundleProgram> programs;
  for (const char* text : {with_tuple, direct}) programs.push_back(testing::LoadProgram(text, "gte"));
  const ComputationRecord& entry = programs[0].computations[programs[0].entry];
  // The buffer a name's value is (a tuple's elements are buffers of their own).
  auto buffer = [&](std::string_view name) -> const BufferRecord& {
    for (const BufferRecord& b : entry.buffers)
      if (b.name == name && (b.type == PrimitiveType::kTuple || name != "t")) return b;
    FAIL("no buffer " << name);
    return entry.buffers[0];
  };
  const BufferRecord& tuple = buffer("t");
  REQUIRE(tuple.tuple.size() == 2);
  CHECK(buffer("g").location == entry.buffers[tuple.tuple[0]].location);
  CHECK(buffer("g2").location == buffer("g").location);
  CHECK(buffer("g3").location == entry.buffers[tuple.tuple[1]].location);
  CHECK(buffer("h").location != buffer("g").location);  // g dies at h, but g2 reads those bytes after
  CHECK(buffer("s").location == buffer("h").location);  // h's own bytes are free to take over
  Module scratch;
  Value arg = RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {256}), 5);
  auto got = Execute(programs[0], std::vector<Value>{arg});
  auto want = Execute(programs[1], std::vector<Value>{arg});
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  CHECK(got->bytes == want->bytes);
}

// A reshape and a bitcast without layouts share their operand's bytes; a bitcast whose layouts
// permute the bytes does not. The results are those of the assignment without aliasing.
TEST_CASE("reshapes and plain bitcasts share their operand's bytes; --buffer-aliasing=off does not") {
  const char* text = R"(HloModule shapes
ENTRY e {
  p = f32[4,8] parameter(0)
  x = f32[4,8] exponential(p)
  r = f32[32] reshape(x)
  c = f32[32] cosine(r)
  b = f32[8,4] bitcast(x)
  t = f32[8,4]{0,1} bitcast(x)
  n = f32[4,8] negate(x)
  ROOT out = (f32[32], f32[8,4], f32[8,4], f32[4,8]) tuple(c, b, t, n)
})";
  std::vector<BundleProgram> programs;
  for (bool aliasing : {true, false}) {
    CodegenOptions options;
    options.buffer_aliasing = aliasing;
    programs.push_back(testing::LoadProgram(text, "shapes", options));
  }
  auto location = [](const BundleProgram& p, std::string_view name) {
    const ComputationRecord& entry = p.computations[p.entry];
    for (const BufferRecord& b : entry.buffers)
      if (b.name == name && b.type != PrimitiveType::kTuple) return b.location;
    FAIL("no buffer " << name);
    return uint64_t(0);
  };
  CHECK(location(programs[0], "r") == location(programs[0], "x"));
  CHECK(location(programs[0], "b") == location(programs[0], "x"));
  CHECK(location(programs[0], "t") != location(programs[0], "x"));  // a physical transpose
  CHECK(location(programs[0], "c") != location(programs[0], "x"));  // x is read after r dies
  CHECK(location(programs[1], "r") != location(programs[1], "x"));
  CHECK(location(programs[1], "b") != location(programs[1], "x"));
  Module scratch;
  Value arg = RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {4, 8}), 9);
  auto got = Execute(programs[0], std::vector<Value>{arg});
  auto want = Execute(programs[1], std::vector<Value>{arg});
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  REQUIRE(got->tuple.size() == 4);
  REQUIRE(want->tuple.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(got->tuple[i].bytes == want->tuple[i].bytes);
}
