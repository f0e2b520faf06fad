// SPDX-License-Identifier: Apache-2.0
// upcast-all-to-fp32 (seed 000 "UpcastAllToFP32", off by default): every float element type in
// the module becomes F32 — instruction result shapes are changed in place (tuples element-wise)
// and constants are rebuilt by converting their literals. The per-type decision is the seed's
// UpcastShapeToFP32 dispatch, reproduced on XLA's type codes: F16, F64, BF16 always; codes
// 0x13..0x21 through the 15-entry selector table CSWTCH_446, with the special case that sends
// 0x20 (f4e2m1fn, selector byte 0) and 0x21 to F32 anyway. Integers (S4/U4 included), PRED,
// complex types and tokens are untouched. Inferred: the f6 types (codes 35, 36), which postdate
// the seed's binary, are floats and are upcast too.
#include <cstring>

#include "ir/builder.h"
#include "ir/literal.h"
#include "passes/pass.h"

namespace nhlo {
namespace {

// CSWTCH_446 @ VA 0x410830, indexed by code - 0x13 (seed 000, "Data Tables").
constexpr uint8_t kSelector[15] = {0x01, 0x01, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00,
                                   0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01};

bool UpcastsToF32(PrimitiveType t) {
  unsigned code = static_cast<unsigned>(t);
  if ((code - 0x0a) <= 2 || code == 0x10) return code != 0x0b;  // F16, F64, BF16 (F32 unchanged)
  if ((code - 0x13) <= 0x0e) {
    if (kSelector[code - 0x13] != 0) return true;
    return (code - 0x20) <= 1;  // the 0x20/0x21 guard: the only path that converts 0x20
  }
  return t == PrimitiveType::kF6E2M3FN || t == PrimitiveType::kF6E3M2FN;  // inferred, see above
}

Shape UpcastShape(Module& module, const Shape& shape, bool* changed) {
  if (shape.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& e : shape.tuple) elements.push_back(UpcastShape(module, e, changed));
    return *changed ? module.MakeTupleShape(elements) : shape;
  }
  if (!UpcastsToF32(shape.type)) return shape;
  *changed = true;
  return ChangeElementType(module, shape, PrimitiveType::kF32);
}

// The literal converted element by element (LiteralBase::ConvertToShape in the seed).
const Literal* ConvertLiteral(Module& module, const Literal& lit, const Shape& shape) {
  Literal* out = module.arena.New<Literal>();
  out->shape = shape;
  out->elided = lit.elided;
  if (shape.IsTuple()) {
    std::vector<const Literal*> elements;
    for (size_t i = 0; i < lit.tuple.size(); ++i)
      elements.push_back(ConvertLiteral(module, *lit.tuple[i], shape.tuple[i]));
    out->tuple = module.arena.Copy(elements);
    return out;
  }
  if (lit.elided || shape.type == lit.shape.type) {
    out->data = lit.data;
    return out;
  }
  int64_t count = shape.ElementCount();
  out->data = module.arena.NewArray<uint8_t>(static_cast<size_t>(HostBytes(shape)));
  int in_size = HostByteSize(lit.shape.type);
  for (int64_t i = 0; i < count; ++i) {
    float v = static_cast<float>(LoadAsDouble(lit.shape.type, lit.data.data() + i * in_size));
    std::memcpy(out->data.data() + i * 4, &v, 4);
  }
  return out;
}

class UpcastAllToFp32 final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    bool changed = false;
    for (auto& comp : module.computations) {
      // One remark a computation, at its first widened instruction (one an instruction would
      // bury the others' remarks in a large module).
      const Instruction* first = nullptr;
      size_t widened = 0;
      for (Instruction* inst : comp->instructions) {
        bool shape_changed = false;
        Shape upcast = UpcastShape(module, inst->shape, &shape_changed);
        if (!shape_changed) continue;
        if (inst->opcode == Opcode::kConstant && inst->literal)
          inst->literal = ConvertLiteral(module, *inst->literal, upcast);
        if (!first) first = inst;
        ++widened;
        inst->shape = upcast;
        changed = true;
      }
      if (first)
        Emit(RemarkKind::kApplied, *first, "WidenedToF32",
             std::to_string(widened) + " instruction" + (widened == 1 ? "" : "s") + " of computation '" +
                 std::string(comp->name) + "' widened to f32, from '" + std::string(first->name) + "' on");
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateUpcastAllToFp32Pass() { return std::make_unique<UpcastAllToFp32>(); }

}  // namespace nhlo
