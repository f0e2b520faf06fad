// SPDX-License-Identifier: Apache-2.0
// Buffer assignment's aliases (issue 32, item 3): a get-tuple-element or tuple
// element holding a parameter's or constant's bytes names that buffer (kind alias) instead of
// copying it, and a while loop's state shares its init's bytes where its body passes them on
// untouched, or takes them over where the init dies at the loop; an update writes into a dying
// operand. Each case is compared bit for bit with an assignment that copies, and the load
// refuses a file that would let a step write an alias's bytes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "load_program.h"

using namespace nhlo;

namespace {

// A loop state of (counter, weights passed on, accumulator, a temp passed on): the weights are a
// parameter of the entry, the accumulator's init dies at the loop, the passed-on temp is read
// again after it.
const char* kLoop = R"(HloModule loop
body {
  s = (s32[], f32[64], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  w = f32[64] get-tuple-element(s), index=1
  acc = f32[64] get-tuple-element(s), index=2
  x = f32[64] get-tuple-element(s), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  m = f32[64] multiply(acc, w)
  a = f32[64] add(m, x)
  ROOT r = (s32[], f32[64], f32[64], f32[64]) tuple(i1, w, a, x)
}
cond {
  s = (s32[], f32[64], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT c = pred[] compare(i, n), direction=LT
}
ENTRY e {
  w = f32[64] parameter(0)
  a0 = f32[64] parameter(1)
  x = f32[64] exponential(a0)
  acc = f32[64] negate(a0)
  zero = s32[] constant(0)
  init = (s32[], f32[64], f32[64], f32[64]) tuple(zero, w, acc, x)
  loop = (s32[], f32[64], f32[64], f32[64]) while(init), condition=cond, body=body
  r = f32[64] get-tuple-element(loop), index=2
  y = f32[64] cosine(x)
  ROOT out = (f32[64], f32[64], f32[64]) tuple(r, y, w)
})";

const ComputationRecord& Named(const BundleProgram& p, std::string_view name) {
  for (const ComputationRecord& c : p.computations)
    if (c.name == name) return c;
  FAIL("no computation " << name);
  return p.computations[0];
}

// The leaves of a tuple buffer named `name` (the tuple itself, not its elements' records).
std::vector<const BufferRecord*> Leaves(const ComputationRecord& c, std::string_view name) {
  std::vector<const BufferRecord*> leaves;
  for (const BufferRecord& b : c.buffers)
    if (b.name == name && b.type == PrimitiveType::kTuple)
      for (uint32_t e : b.tuple) leaves.push_back(&c.buffers[e]);
  return leaves;
}

const BufferRecord& Array(const ComputationRecord& c, std::string_view name) {
  for (const BufferRecord& b : c.buffers)
    if (b.name == name && b.type != PrimitiveType::kTuple) return b;
  FAIL("no array buffer " << name);
  return c.buffers[0];
}

uint32_t IndexOf(const ComputationRecord& c, std::string_view name) {
  for (uint32_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].name == name && c.buffers[i].type != PrimitiveType::kTuple) return i;
  FAIL("no array buffer " << name);
  return 0;
}

// Runs `text` with buffer aliasing on and off on the same random arguments; both must succeed
// and give the same bytes.
void CheckSameAsWithoutAliasing(const char* text, const std::vector<Value>& args) {
  std::vector<Value> results;
  for (bool aliasing : {true, false}) {
    CodegenOptions options;
    options.buffer_aliasing = aliasing;
    BundleProgram p = testing::LoadProgram(text, "loop", options);
    auto got = Execute(p, args);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    results.push_back(std::move(*got));
  }
  REQUIRE(results[0].tuple.size() == results[1].tuple.size());
  for (size_t k = 0; k < results[0].tuple.size(); ++k) CHECK(results[0].tuple[k].bytes == results[1].tuple[k].bytes);
}

std::vector<Value> LoopArgs() {
  Module scratch;
  return {RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {64}), 3),
          RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {64}), 4)};
}

}  // namespace

TEST_CASE("a loop's state aliases what its body passes on and takes over an init that dies there") {
  BundleProgram p = testing::LoadProgram(kLoop, "loop");
  const ComputationRecord& entry = Named(p, "e");
  const ComputationRecord& body = Named(p, "body");
  // The init tuple: the counter and the weights are the constant's and the parameter's bytes.
  std::vector<const BufferRecord*> init = Leaves(entry, "init");
  REQUIRE(init.size() == 4);
  CHECK(init[0]->kind == BufferKind::kAlias);
  CHECK(init[0]->location == IndexOf(entry, "zero"));
  CHECK(init[1]->kind == BufferKind::kAlias);
  CHECK(init[1]->location == IndexOf(entry, "w"));
  CHECK(init[2]->location == Array(entry, "acc").location);
  CHECK(init[3]->location == Array(entry, "x").location);
  // The state: the counter gets bytes of its own (the body writes it and its init is a
  // constant), the weights stay the parameter's, the accumulator takes over acc's dying bytes,
  // and x's bytes are passed on and still read after the loop.
  std::vector<const BufferRecord*> state = Leaves(entry, "loop");
  REQUIRE(state.size() == 4);
  CHECK(state[0]->kind == BufferKind::kTemp);
  CHECK(state[1]->kind == BufferKind::kAlias);
  CHECK(state[1]->location == IndexOf(entry, "w"));
  CHECK(state[2]->kind == BufferKind::kTemp);
  CHECK(state[2]->location == Array(entry, "acc").location);
  CHECK(state[3]->kind == BufferKind::kTemp);
  CHECK(state[3]->location == Array(entry, "x").location);
  // In the body the weights and x are the parameter's leaves; the root passes them on as such.
  std::vector<const BufferRecord*> param = Leaves(body, "s");
  REQUIRE(param.size() == 4);
  CHECK(Array(body, "w").kind == BufferKind::kAlias);
  std::vector<const BufferRecord*> root = Leaves(body, "r");
  REQUIRE(root.size() == 4);
  CHECK(root[1]->kind == BufferKind::kAlias);
  CHECK(&body.buffers[root[1]->location] == param[1]);
  CHECK(root[3]->kind == BufferKind::kAlias);
  CHECK(&body.buffers[root[3]->location] == param[3]);
  CHECK(root[2]->kind == BufferKind::kTemp);  // the new accumulator is copied back into the state
  // The entry's root passes the parameter w on as an alias too: no caller copies it back.
  std::vector<const BufferRecord*> out = Leaves(entry, "out");
  REQUIRE(out.size() == 3);
  CHECK(out[2]->kind == BufferKind::kAlias);
  CheckSameAsWithoutAliasing(kLoop, LoopArgs());
}

TEST_CASE("a body that permutes its state's leaves copies them instead of aliasing") {
  // Swapping two leaves: the root may alias a parameter leaf only at its own position, or the
  // copy back into the state would read a leaf it had already overwritten.
  const char* swap = R"(HloModule swap
body {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[64] get-tuple-element(s), index=1
  b = f32[64] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT r = (s32[], f32[64], f32[64]) tuple(i1, b, a)
}
cond {
  s = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[64], f32[64]) tuple(zero, p, q)
  loop = (s32[], f32[64], f32[64]) while(init), condition=cond, body=body
  x = f32[64] get-tuple-element(loop), index=1
  y = f32[64] get-tuple-element(loop), index=2
  ROOT out = (f32[64], f32[64]) tuple(x, y)
})";
  BundleProgram p = testing::LoadProgram(swap, "swap");
  const ComputationRecord& body = Named(p, "body");
  std::vector<const BufferRecord*> root = Leaves(body, "r");
  REQUIRE(root.size() == 3);
  CHECK(root[1]->kind == BufferKind::kTemp);
  CHECK(root[2]->kind == BufferKind::kTemp);
  // The state's leaves are written by the body, so they do not alias the parameters.
  std::vector<const BufferRecord*> state = Leaves(Named(p, "e"), "loop");
  REQUIRE(state.size() == 3);
  for (const BufferRecord* leaf : state) CHECK(leaf->kind == BufferKind::kTemp);
  std::vector<Value> args = LoopArgs();
  auto got = Execute(p, args);
  REQUIRE(got.ok());
  REQUIRE(got->tuple.size() == 2);
  // Three swaps: the leaves end swapped.
  CHECK(got->tuple[0].bytes == args[1].bytes);
  CHECK(got->tuple[1].bytes == args[0].bytes);
  CheckSameAsWithoutAliasing(swap, args);
}

TEST_CASE("the load refuses a file whose step would write an alias's bytes") {
  BundleProgram p = testing::LoadProgram(kLoop, "loop");
  ComputationRecord& entry = p.computations[p.entry];
  // x = exponential(a0) made an alias of a0: the kernel would write the argument's bytes.
  BufferRecord& x = entry.buffers[IndexOf(entry, "x")];
  x.kind = BufferKind::kAlias;
  x.location = IndexOf(entry, "a0");
  auto got = Execute(p, LoopArgs());
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message().find("would write 'x', which shares the bytes of 'a0'") != std::string::npos);

  // The state's weights leaf is an alias, but a body that writes that leaf would copy into it.
  BundleProgram q = testing::LoadProgram(kLoop, "loop");
  ComputationRecord& body = const_cast<ComputationRecord&>(Named(q, "body"));
  std::vector<const BufferRecord*> root = Leaves(body, "r");
  REQUIRE(root.size() == 4);
  BufferRecord& passed = body.buffers[static_cast<size_t>(root[1] - body.buffers.data())];
  passed.kind = BufferKind::kTemp;
  passed.location = 0;
  auto written = Execute(q, LoopArgs());
  REQUIRE_FALSE(written.ok());
  CHECK(written.status().message().find("would write") != std::string::npos);

  // A tuple listing the weights' alias twice: its second copy would write acc's bytes into w's.
  BundleProgram r = testing::LoadProgram(kLoop, "loop");
  ComputationRecord& e = r.computations[r.entry];
  for (BufferRecord& b : e.buffers)
    if (b.name == "init" && b.type == PrimitiveType::kTuple) b.tuple[2] = b.tuple[1];
  auto twice = Execute(r, LoopArgs());
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message().find("which shares the bytes of 'w'") != std::string::npos);
}

TEST_CASE("an opt-barrier of a tuple holding one value twice loads and runs") {
  // The tuple's two leaves share x's bytes; the opt-barrier's leaves are written ranges of its
  // step, which the load keeps disjoint, so only its first leaf shares them (a review finding).
  const char* twice = R"(HloModule twice
ENTRY e {
  p = f32[4] parameter(0)
  x = f32[4] negate(p)
  t = (f32[4], f32[4]) tuple(x, x)
  ob = (f32[4], f32[4]) opt-barrier(t)
  a = f32[4] get-tuple-element(ob), index=0
  b = f32[4] get-tuple-element(ob), index=1
  ROOT r = (f32[4], f32[4]) tuple(a, b)
})";
  BundleProgram p = testing::LoadProgram(twice, "twice");
  std::vector<const BufferRecord*> barrier = Leaves(p.computations[p.entry], "ob");
  REQUIRE(barrier.size() == 2);
  CHECK(barrier[0]->location == Array(p.computations[p.entry], "x").location);
  CHECK(barrier[1]->location != barrier[0]->location);
  Module scratch;
  CheckSameAsWithoutAliasing(twice, {RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {4}), 7)});
}

TEST_CASE("a dynamic-update-slice or scatter writes into the bytes of an operand that dies there") {
  // x dies at the update in `dies`, so the update is written into x's bytes; in `lives` x is read
  // again and the update copies it first. The updated values must be the same.
  const std::string updates = R"(HloModule updates
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[8,16] parameter(0)
  u = f32[2,16] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  x = f32[8,16] exponential(p)
  d = f32[8,16] dynamic-update-slice(x, u, i, z)
  idx = s32[2,1] constant({{1}, {6}})
  sc = f32[8,16] scatter(d, idx, u), update_window_dims={1}, inserted_window_dims={0},
       scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)";
  const std::string dies = updates + "  ROOT r = (f32[8,16], f32[8,16]) tuple(sc, p)\n}";
  const std::string lives = updates + "  ROOT r = (f32[8,16], f32[8,16], f32[8,16]) tuple(sc, x, d)\n}";
  BundleProgram in_place = testing::LoadProgram(dies, "dies");
  const ComputationRecord& entry = in_place.computations[in_place.entry];
  CHECK(Array(entry, "d").location == Array(entry, "x").location);
  CHECK(Array(entry, "sc").location == Array(entry, "d").location);
  BundleProgram copied = testing::LoadProgram(lives, "lives");
  const ComputationRecord& other = copied.computations[copied.entry];
  CHECK(Array(other, "d").location != Array(other, "x").location);
  CHECK(Array(other, "sc").location != Array(other, "d").location);
  Module scratch;
  std::vector<Value> args = {RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {8, 16}), 1),
                             RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {2, 16}), 2),
                             RandomValue(scratch.MakeArrayShape(PrimitiveType::kS32, {}), 3)};
  // Without buffer aliasing the update copies its operand even where it dies.
  CodegenOptions off;
  off.buffer_aliasing = false;
  BundleProgram unaliased = testing::LoadProgram(dies, "dies", off);
  const ComputationRecord& plain = unaliased.computations[unaliased.entry];
  CHECK(Array(plain, "d").location != Array(plain, "x").location);
  auto got = Execute(in_place, args);
  auto want = Execute(copied, args);
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  CHECK(got->tuple[0].bytes == want->tuple[0].bytes);
  CHECK(got->tuple[1].bytes == args[0].bytes);  // the parameter was not written
}

TEST_CASE("an update whose update operand shares its operand's bytes copies first") {
  // u is a reshape of x, so it holds x's bytes: the scatter may not write over x while it still
  // reads u (a fuzz-modules finding: the load refused the file the writer made).
  const char* text = R"(HloModule shared
keep {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  p = f32[1,1,4] parameter(0)
  x = f32[1,1,4] exponential(p)
  u = f32[4] reshape(x)
  idx = s32[2] constant({0, 0})
  sc = f32[1,1,4] scatter(x, idx, u), update_window_dims={0}, inserted_window_dims={0,1},
       scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=keep
  ROOT r = f32[1,1,4] negate(sc)
})";
  BundleProgram p = testing::LoadProgram(text, "shared");
  const ComputationRecord& entry = p.computations[p.entry];
  CHECK(Array(entry, "sc").location != Array(entry, "x").location);
  Module scratch;
  auto got = Execute(p, {RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {1, 1, 4}), 9)});
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
}

TEST_CASE("opcodes.def's bytes column agrees with each op's step family") {
  // The column decides placements in the writer and at load; a row whose family cannot honour it
  // (a Lanes op that does not read element i before writing it, a Moves op that writes new bytes)
  // would let buffer assignment corrupt a value.
  for (int k = 0; k < kOpcodeCount; ++k) {
    const Opcode op = static_cast<Opcode>(k);
    const OpFamily family = OpcodeFamily(op);
    CAPTURE(OpcodeName(op));
    switch (OpcodeResultBytes(op)) {
      case ResultBytes::kLanes:
        CHECK((family == OpFamily::kUnary || family == OpFamily::kBinary || family == OpFamily::kCompare ||
               family == OpFamily::kSelect || family == OpFamily::kClamp || family == OpFamily::kConvert ||
               family == OpFamily::kReducePrecision || op == Opcode::kCopy));
        break;
      case ResultBytes::kUpdate: CHECK((op == Opcode::kDynamicUpdateSlice || op == Opcode::kScatter)); break;
      case ResultBytes::kMoves:
        CHECK((family == OpFamily::kGetTupleElement || family == OpFamily::kTuple || family == OpFamily::kReshape ||
               family == OpFamily::kAddDependency || (family == OpFamily::kCopy && op != Opcode::kCopy)));
        break;
      case ResultBytes::kLoop: CHECK(op == Opcode::kWhile); break;
      case ResultBytes::kOwn:
        CHECK(family != OpFamily::kUnary);
        CHECK(family != OpFamily::kBinary);
        CHECK(family != OpFamily::kGetTupleElement);
        CHECK(family != OpFamily::kTuple);
        break;
    }
  }
}

TEST_CASE("a reduce-precision or copy takes the bytes of an operand that dies there") {
  const char* text = R"(HloModule lanes
ENTRY e {
  p = f32[256] parameter(0)
  x = f32[256] exponential(p)
  rp = f32[256] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  c = f32[256] copy(rp)
  ROOT r = (f32[256], f32[256]) tuple(c, p)
})";
  BundleProgram p = testing::LoadProgram(text, "lanes");
  const ComputationRecord& entry = p.computations[p.entry];
  CHECK(Array(entry, "rp").location == Array(entry, "x").location);
  CHECK(Array(entry, "c").location == Array(entry, "rp").location);
  Module scratch;
  CheckSameAsWithoutAliasing(text, {RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {256}), 5)});
}
