// SPDX-License-Identifier: Apache-2.0
// The steps that run computations whole (call, while, conditional, async-start): their
// computations are resolved and their buffer trees compared at load (lower_control.cc), and a
// program whose records do not match is refused by the run that reaches the step, with the
// message the executor gave when it compared them on every run. The mismatches are made by
// pointing a step at another computation of the program, as a corrupted file could.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "interp/kernels.h"
#include "interp/lower.h"
#include "load_program.h"

namespace nhlo {
namespace {

uint32_t ComputationNamed(const BundleProgram& p, std::string_view name) {
  for (uint32_t i = 0; i < p.computations.size(); ++i)
    if (p.computations[i].name == name) return i;
  FAIL("no computation named " << name);
  return 0;
}

BundleRecord& EntryBundle(BundleProgram& p, Opcode opcode) {
  for (BundleRecord& b : p.computations[p.entry].bundles)
    if (b.opcode == opcode) return b;
  FAIL("no bundle with that opcode");
  return p.computations[p.entry].bundles[0];
}

// Points attribute `id` of the entry's `opcode` bundle, element `index`, at computation `name`.
void Repoint(BundleProgram& p, Opcode opcode, AttrId id, size_t index, std::string_view name) {
  BundleRecord& b = EntryBundle(p, opcode);
  for (AttrRecord& a : b.attrs)
    if (a.id == id) {
      REQUIRE(index < a.set_computations().size());
      a.set_computations()[index] = ComputationNamed(p, name);
      return;
    }
  FAIL("no such attribute");
}

Value F32(std::vector<float> v) {
  Value out;
  out.type = PrimitiveType::kF32;
  out.dims = {static_cast<int64_t>(v.size())};
  out.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return out;
}

Value Scalar(PrimitiveType t, int32_t v) {
  Value out;
  out.type = t;
  if (t == PrimitiveType::kPred)
    out.bytes.assign(1, static_cast<char>(v != 0));
  else
    out.bytes.assign(reinterpret_cast<const char*>(&v), 4);
  return out;
}

std::string ErrorOf(const Result<Value>& r) { return r.ok() ? "" : r.status().ToString(); }

// Two computations of f32[4] and one of f32[2], for the steps to be pointed at.
const char* kCallees =
    "neg4 { p = f32[4] parameter(0)  ROOT r = f32[4] negate(p) }\n"
    "abs4 { p = f32[4] parameter(0)  ROOT r = f32[4] abs(p) }\n"
    "neg2 { p = f32[2] parameter(0)  ROOT r = f32[2] negate(p) }\n"
    "pair { a = f32[4] parameter(0)  b = f32[4] parameter(1)  ROOT r = f32[4] add(a, b) }\n";

TEST_CASE("control flow: a call's computation is resolved at load and its trees compared") {
  BundleProgram p =
      testing::LoadProgram(std::string("HloModule m\n") + kCallees +
                               "ENTRY e { x = f32[4] parameter(0)  ROOT c = f32[4] call(x), to_apply=neg4 }\n",
                           "call");
  const ComputationRecord& entry = p.computations[p.entry];
  Result<Step> step = LowerBundle(p, entry, EntryBundle(p, Opcode::kCall), ExecuteOptions{});
  REQUIRE(step.ok());
  REQUIRE(step->callee);
  CHECK(step->callee->error.ok());
  REQUIRE(step->callee->computations.size() == 1);
  CHECK(step->callee->computations[0] == &p.computations[ComputationNamed(p, "neg4")]);
  auto ran = Execute(p, {F32({1, -2, 3, -4})});
  REQUIRE(ran.ok());
  CHECK(ran->bytes == F32({-1, 2, -3, 4}).bytes);

  SUBCASE("a parameter of another shape") {
    Repoint(p, Opcode::kCall, AttrId::kToApply, 0, "neg2");
    CHECK(ErrorOf(Execute(p, {F32({1, 2, 3, 4})})).find("argument 'x' does not match parameter 'p'") !=
          std::string::npos);
  }
  SUBCASE("another parameter count") {
    Repoint(p, Opcode::kCall, AttrId::kToApply, 0, "pair");
    CHECK(ErrorOf(Execute(p, {F32({1, 2, 3, 4})})).find("computation 'pair' takes 2 arguments") != std::string::npos);
  }
}

TEST_CASE("control flow: a conditional's bad branch is refused only by a run that takes it") {
  BundleProgram p = testing::LoadProgram(
      std::string("HloModule m\n") + kCallees +
          "ENTRY e { s = pred[] parameter(0)  x = f32[4] parameter(1)\n"
          "  ROOT c = f32[4] conditional(s, x, x), true_computation=neg4, false_computation=abs4 }\n",
      "cond");
  Repoint(p, Opcode::kConditional, AttrId::kFalseComputation, 0, "neg2");
  const Value x = F32({1, -2, 3, -4});
  auto taken_true = Execute(p, {Scalar(PrimitiveType::kPred, 1), x});
  REQUIRE(taken_true.ok());
  CHECK(taken_true->bytes == F32({-1, 2, -3, 4}).bytes);
  CHECK(ErrorOf(Execute(p, {Scalar(PrimitiveType::kPred, 0), x})).find("does not match parameter") !=
        std::string::npos);
}

TEST_CASE("control flow: an s32 conditional runs the last branch for an index out of range") {
  BundleProgram p =
      testing::LoadProgram(std::string("HloModule m\n") + kCallees +
                               "ENTRY e { s = s32[] parameter(0)  x = f32[4] parameter(1)\n"
                               "  ROOT c = f32[4] conditional(s, x, x), branch_computations={neg4, abs4} }\n",
                           "branches");
  const Value x = F32({1, -2, 3, -4});
  for (int32_t index : {-1, 1, 7}) {
    auto r = Execute(p, {Scalar(PrimitiveType::kS32, index), x});
    REQUIRE(r.ok());
    CHECK(r->bytes == F32({1, 2, 3, 4}).bytes);
  }
  auto first = Execute(p, {Scalar(PrimitiveType::kS32, 0), x});
  REQUIRE(first.ok());
  CHECK(first->bytes == F32({-1, 2, -3, 4}).bytes);
}

TEST_CASE("control flow: a while whose body returns another shape is refused") {
  const std::string text =
      "HloModule m\n"
      "cond { p = f32[4] parameter(0)  ROOT f = pred[] constant(false) }\n"
      "body { p = f32[4] parameter(0)  ROOT r = f32[4] negate(p) }\n"
      "body2 { p = f32[4] parameter(0)  ROOT r = f32[2] slice(p), slice={[0:2]} }\n"
      "ENTRY e { x = f32[4] parameter(0)  ROOT w = f32[4] while(x), condition=cond, body=body }\n";
  BundleProgram p = testing::LoadProgram(text, "while");
  auto ran = Execute(p, {F32({1, 2, 3, 4})});
  REQUIRE(ran.ok());
  CHECK(ran->bytes == F32({1, 2, 3, 4}).bytes);
  Repoint(p, Opcode::kWhile, AttrId::kBody, 0, "body2");
  CHECK(ErrorOf(Execute(p, {F32({1, 2, 3, 4})})).find("of different shapes") != std::string::npos);
}

}  // namespace
}  // namespace nhlo
