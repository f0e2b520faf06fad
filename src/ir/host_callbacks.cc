// SPDX-License-Identifier: Apache-2.0
#include "ir/host_callbacks.h"

#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/expansion_builder.h"

namespace nhlo {
namespace {

// Whether `s` holds no array: tokens and tuples of them only.
bool OnlyTokens(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple)
      if (!OnlyTokens(e)) return false;
    return true;
  }
  return s.type == PrimitiveType::kToken;
}

// The value of `shape` with a fresh token for each token leaf.
Instruction* Tokens(ExpansionBuilder& x, const Shape& shape) {
  if (!shape.IsTuple())
    return x.module().NewInstruction(x.computation(), Opcode::kAfterAll,
                                     x.module().MakeArrayShape(PrimitiveType::kToken, {}), {});
  std::vector<Instruction*> elements;
  for (const Shape& e : shape.tuple) elements.push_back(Tokens(x, e));
  return MakeTuple(x.module(), x.computation(), elements);
}

}  // namespace

Status CheckHostCallback(const Instruction& call) {
  if (OnlyTokens(call.shape)) return OkStatus();
  return Status::Error("'" + std::string(CustomCallTarget(call)) + "' returns " + ShapeToString(call.shape, false) +
                       ", values a Python function computes (jax.pure_callback or io_callback with results); nhlo "
                       "runs no Python, so it cannot run this program (callbacks that only return tokens, such as "
                       "jax.debug.print, are skipped)");
}

Result<Instruction*> BuildHostCallback(ExpansionBuilder& x, const Instruction& call) {
  NHLO_TRY(CheckHostCallback(call));
  for (size_t i = 0; i < call.operands.size(); ++i) x.Parameter(i, "arg");  // read by nothing
  return Tokens(x, call.shape);
}

}  // namespace nhlo
