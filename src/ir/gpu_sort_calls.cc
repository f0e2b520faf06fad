// SPDX-License-Identifier: Apache-2.0
#include "ir/gpu_sort_calls.h"

#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/expansion_builder.h"
#include "types/custom_call_configs.h"

namespace nhlo {
namespace {

std::string Str(const Shape& s) { return ShapeToString(s, false); }

// The key types CUB's radix sort takes (XLA's SortRewriter: integers and floats of 16-64 bits,
// 8-bit integers).
bool IsRadixKey(PrimitiveType t) {
  return (IsInteger(t) && BitWidth(t) >= 8) || t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 ||
         t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
}

}  // namespace

Status CheckCubSortCall(const Instruction& call) {
  NHLO_TRY(CustomCallConfigOf(call).As<CubSortConfig>().status());
  const size_t n = call.operands.size();
  if (n != 1 && n != 2)
    return CustomCallError(call, "takes keys and at most one values operand, not " + std::to_string(n));
  const Shape& keys = call.operands[0]->shape;
  if (!IsStaticArray(keys) || keys.rank() == 0)
    return CustomCallError(call, "keys " + Str(keys) + " must be an array of a static shape with a dimension to sort");
  if (!IsRadixKey(keys.type))
    return CustomCallError(call, "keys must be 8- to 64-bit integers or f16, bf16, f32, f64, not " + Str(keys));
  if (n == 2) {
    const Shape& values = call.operands[1]->shape;
    if (!IsStaticArray(values) || ShapeDims(values) != ShapeDims(keys))
      return CustomCallError(call, "values " + Str(values) + " must have the keys' dimensions " + Str(keys));
  }
  const Shape& r = call.shape;
  bool fits = r.IsTuple() && r.tuple.size() == n + 1;
  for (size_t i = 0; fits && i < n; ++i)
    fits = IsStaticArray(r.tuple[i]) && r.tuple[i].type == call.operands[i]->shape.type &&
           ShapeDims(r.tuple[i]) == ShapeDims(call.operands[i]->shape);
  if (fits) fits = IsStaticArray(r.tuple[n]) && r.tuple[n].rank() == 1 && r.tuple[n].type == PrimitiveType::kU8;
  if (!fits)
    return CustomCallError(call, "returns (keys" + std::string(n == 2 ? ", values" : "") +
                                     ", u8[scratch]) of the operands' shapes, not " + Str(r));
  return OkStatus();
}

Result<Instruction*> BuildCubSortCall(ExpansionBuilder& x, const Instruction& call) {
  NHLO_ASSIGN_OR_RETURN(const CubSortConfig* config, CustomCallConfigOf(call).As<CubSortConfig>());
  const size_t n = call.operands.size();
  std::vector<Instruction*> sorted;
  for (size_t i = 0; i < n; ++i) sorted.push_back(x.Parameter(i, i == 0 ? "keys" : "values"));
  Instruction* keys = sorted[0];
  const bool is_float = IsFloat(keys->shape.type);
  if (is_float) {
    // The comparison key: -0 read as +0 (x == 0 holds for both), the keys themselves carried along.
    Instruction* zero = x.Splat(0, keys->shape.type, keys);
    Instruction* is_zero = x.Compare(keys, zero, ComparisonDirection::kEq);
    Instruction* key = x.Array(Opcode::kSelect, keys->shape.type, ShapeDims(keys->shape), {is_zero, zero, keys});
    sorted.insert(sorted.begin(), key);
  }
  std::vector<PrimitiveType> types;
  for (const Instruction* op : sorted) types.push_back(op->shape.type);
  Computation* less =
      x.SortComparator(types, config->descending ? ComparisonDirection::kGt : ComparisonDirection::kLt, is_float);
  Instruction* sort = x.StableSort(sorted, static_cast<int64_t>(keys->shape.rank()) - 1, less);
  std::vector<Instruction*> results;
  for (size_t i = is_float ? 1 : 0; i < sorted.size(); ++i)
    results.push_back(sorted.size() == 1 ? sort : MakeGetTupleElement(x.module(), x.computation(), sort, i));
  const Shape& scratch = call.shape.tuple[n];
  results.push_back(
      x.Broadcast(MakeScalarConstant(x.module(), x.computation(), PrimitiveType::kU8, 0), ShapeDims(scratch), {}));
  return MakeTuple(x.module(), x.computation(), results);
}

}  // namespace nhlo
