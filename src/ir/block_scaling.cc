// SPDX-License-Identifier: Apache-2.0
#include "ir/block_scaling.h"

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/expansion_builder.h"
#include "support/checked_math.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

using DimVector = std::vector<int64_t>;

std::string Quoted(const Instruction& call) { return "'" + std::string(CustomCallTarget(call)) + "'"; }

Status Invalid(std::string message) { return Status::Error(std::move(message)); }

// XLA's GetBlockSize: the quantized data's minor dimension `m` over the scales' `n`.
Result<int64_t> BlockSizeOf(int64_t m, int64_t n) {
  if (m <= 0 || n <= 0 || m % n != 0)
    return Invalid("the scales' minor dimension " + std::to_string(n) + " must divide the data's, " +
                   std::to_string(m));
  return m / n;
}

Result<int64_t> BlockSize(const Shape& data, const Shape& scale) {
  const size_t rank = data.rank();
  if (rank < 1 || scale.rank() != rank)
    return Invalid("the data and its scales must have the same rank, at least 1 (they are " +
                   ShapeToString(data, false) + " and " + ShapeToString(scale, false) + ")");
  return BlockSizeOf(data.dims[rank - 1], scale.dims[rank - 1]);
}

bool SameLeadingDims(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank() || a.rank() == 0) return false;
  for (size_t d = 0; d + 1 < a.rank(); ++d)
    if (a.dims[d] != b.dims[d]) return false;
  return true;
}

// The emax XLA divides the block's amax by: 2^(OverflowExponent - 1), OverflowExponent being
// numeric_limits<T>::max_exponent, the exponent just past the largest finite value's.
double QuantizedEmax(PrimitiveType t) {
  int exponent = 0;
  std::frexp(MaxFinite(t), &exponent);
  return std::ldexp(1.0, exponent - 1);
}

// What XLA's BuildBlockScaledDotInput does to one side of the dot: the scale's dimensions after
// cutting the padding past the data (the data's own when nothing is cut).
struct DotSide {
  bool cut = false;
  DimVector scale_dims;
};

// One side's checks (XLA's TF_RET_CHECKs; their messages are nhlo's).
Result<DotSide> PlanDotSide(const Shape& data, const Shape& scale, int64_t block_size, const char* side) {
  const std::string where = std::string(side) + " scale " + ShapeToString(scale, false);
  const size_t rank = data.rank();
  if (scale.rank() != rank) return Invalid(where + " must have the rank of its data " + ShapeToString(data, false));
  DotSide out;
  out.scale_dims = ShapeDims(scale);
  if (rank == 3 && data.dims[0] != scale.dims[0])
    return Invalid(where + " must have its data's batch dimension " + std::to_string(data.dims[0]));
  if (data.dims[rank - 2] > scale.dims[rank - 2])
    return Invalid(where + " is shorter than its data in the noncontracting dimension");
  out.cut = data.dims[rank - 2] < scale.dims[rank - 2];
  out.scale_dims[rank - 2] = data.dims[rank - 2];
  if (block_size > 0) {
    int64_t dequantized = 0;
    if (MulOverflows(block_size, scale.dims[rank - 1], &dequantized) || data.dims[rank - 1] > dequantized)
      return Invalid(where + " with blocks of " + std::to_string(block_size) + " does not cover its data " +
                     ShapeToString(data, false));
    out.cut |= data.dims[rank - 1] < dequantized;
    out.scale_dims[rank - 1] = (data.dims[rank - 1] + block_size - 1) / block_size;
  }
  // After the cut, XLA's dequantize derives the block from the shapes again.
  if (Result<int64_t> b = BlockSizeOf(data.dims[rank - 1], out.scale_dims[rank - 1]); !b.ok())
    return Invalid(std::string(side) + ": " + b.status().message());
  return out;
}

// The dot's result dimensions, as ShapeInference::InferDotOpShape gives them for XLA's numbers:
// contracting the minor dimension of each side, batch dimension 0 when lhs has rank 3.
Result<DimVector> DotResultDims(const Shape& lhs, const Shape& rhs) {
  const size_t lr = lhs.rank(), rr = rhs.rank();
  const bool batch = lr == 3;
  if (lr < 1 || rr < 1 || (batch && rr < 2) || lhs.dims[lr - 1] != rhs.dims[rr - 1] ||
      (batch && lhs.dims[0] != rhs.dims[0]))
    return Invalid("Incorrect output shape for block scaled dot op");
  DimVector dims;
  if (batch) dims.push_back(lhs.dims[0]);
  for (size_t d = batch ? 1 : 0; d + 1 < lr; ++d) dims.push_back(lhs.dims[d]);
  for (size_t d = batch ? 1 : 0; d + 1 < rr; ++d) dims.push_back(rhs.dims[d]);
  return dims;
}

int64_t ConfiguredBlockSize(const Instruction& call) {
  Result<const BlockScaledDotConfig*> c = CustomCallConfigOf(call).As<BlockScaledDotConfig>();
  return c.ok() ? (*c)->block_size : 0;
}

Status CheckQuantize(const Instruction& call) {
  if (call.operands.size() != 1) return Invalid("Incorrect number of operands for quantize op");
  const Shape& input = call.operands[0]->shape;
  const Shape& out = call.shape;
  if (!out.IsTuple() || out.tuple.size() != 2 || !IsStaticArray(input) || !IsStaticArray(out.tuple[0]) ||
      ShapeDims(input) != ShapeDims(out.tuple[0]))
    return Invalid("Incorrect output shape for quantize op");
  if (!IsStaticArray(out.tuple[1]) || !SameLeadingDims(out.tuple[0], out.tuple[1]))
    return Invalid("Output and scale shape dimensions do not match");
  if (!IsFloat(input.type) || !IsFloat(out.tuple[0].type) || !IsFloat(out.tuple[1].type))
    return Invalid(Quoted(call) + " quantizes a floating-point input into floating-point data and scales");
  return BlockSize(out.tuple[0], out.tuple[1]).status();
}

Status CheckDequantize(const Instruction& call) {
  if (call.operands.size() != 2) return Invalid("Incorrect number of operands for dequantize op");
  const Shape& input = call.operands[0]->shape;
  const Shape& scale = call.operands[1]->shape;
  if (!IsStaticArray(call.shape) || !IsStaticArray(input) || ShapeDims(input) != ShapeDims(call.shape))
    return Invalid("Incorrect output shape for dequantize op");
  if (!IsStaticArray(scale) || !SameLeadingDims(input, scale))
    return Invalid("Input and scale shape dimensions do not match");
  return BlockSize(input, scale).status();
}

Status CheckScaledDot(const Instruction& call) {
  const size_t n = call.operands.size();
  if (n < 3 || n > 5) return Invalid("Incorrect number of operands for block scaled dot op");
  for (const Instruction* op : call.operands)
    if (!IsStaticArray(op->shape)) return Invalid(Quoted(call) + " takes arrays of static shapes");
  const Shape& lhs = call.operands[0]->shape;
  const Shape& rhs = call.operands[1]->shape;
  if (!IsStaticArray(call.shape)) return Invalid("Incorrect output shape for block scaled dot op");
  NHLO_ASSIGN_OR_RETURN(DimVector dims, DotResultDims(lhs, rhs));
  if (dims != ShapeDims(call.shape)) return Invalid("Incorrect output shape for block scaled dot op");
  if (n == 5 && (!call.operands[4]->shape.IsScalar() || call.operands[4]->shape.type != call.shape.type))
    return Invalid("Global scale shape must be a scalar with the result's type");
  NHLO_TRY(CustomCallConfigOf(call).status);
  const int64_t block_size = ConfiguredBlockSize(call);
  if (lhs.rank() != 2 && lhs.rank() != 3) return Invalid(Quoted(call) + " data must have rank 2 or 3");
  NHLO_TRY(PlanDotSide(lhs, call.operands[2]->shape, block_size, "lhs").status());
  if (n >= 4) {
    if (rhs.rank() != 2 && rhs.rank() != 3) return Invalid(Quoted(call) + " data must have rank 2 or 3");
    NHLO_TRY(PlanDotSide(rhs, call.operands[3]->shape, block_size, "rhs").status());
  }
  return OkStatus();
}

// The scales spread over their blocks: broadcast [..., n] -> [..., n, block], then reshape to
// [..., n * block] (XLA's BuildDequantize and BuildQuantize).
Instruction* SpreadScale(ExpansionBuilder& x, Instruction* scale, int64_t block) {
  DimVector dims = ShapeDims(scale->shape);
  DimVector mapped(dims.size());
  std::iota(mapped.begin(), mapped.end(), 0);
  dims.push_back(block);
  Instruction* b = x.Broadcast(scale, dims, mapped);
  dims.pop_back();
  dims.back() *= block;
  return MakeReshape(x.module(), x.computation(), b, dims);
}

Instruction* Dequantize(ExpansionBuilder& x, Instruction* input, Instruction* scale, PrimitiveType result,
                        int64_t block) {
  Instruction* data = x.Convert(input, result);
  Instruction* s = SpreadScale(x, x.Convert(scale, result), block);
  return x.Array(Opcode::kMultiply, result, ShapeDims(data->shape), {data, s});
}

Instruction* DotSideValue(ExpansionBuilder& x, Instruction* data, Instruction* scale, const DotSide& side,
                          PrimitiveType result) {
  if (side.cut) {
    std::vector<SliceDim> ranges;
    for (int64_t d : side.scale_dims) ranges.push_back({0, d, 1});
    scale = x.Slice(scale, ranges);
  }
  const int64_t block = data->shape.dims[data->shape.rank() - 1] / side.scale_dims.back();
  return Dequantize(x, data, scale, result, block);
}

}  // namespace

Status CheckBlockQuantize(const Instruction& call) { return CheckQuantize(call); }
Status CheckBlockDequantize(const Instruction& call) { return CheckDequantize(call); }
Status CheckBlockScaledDot(const Instruction& call) { return CheckScaledDot(call); }

Result<Instruction*> BuildBlockQuantize(ExpansionBuilder& x, const Instruction& call) {
  // XLA's BuildQuantize: amax per block, over the quantized type's emax, rounded to the scale's
  // type; the data is the input over its block's (rounded) scale.
  Module& module = x.module();
  Computation* comp = x.computation();
  Instruction* input = x.Parameter(0, "input");
  const PrimitiveType in_type = input->shape.type;
  const Shape& data_shape = call.shape.tuple[0];
  const Shape& scale_shape = call.shape.tuple[1];
  const int64_t block = *BlockSize(data_shape, scale_shape);
  DimVector blocks = ShapeDims(scale_shape);
  blocks.push_back(block);
  Instruction* grouped = MakeReshape(module, comp, input, blocks);
  Instruction* zero = MakeScalarConstant(module, comp, in_type, 0.0);
  Instruction* amax = x.Reduce(grouped, zero, static_cast<int64_t>(scale_shape.rank()), x.AbsMaxReducer(in_type));
  Instruction* emax = MakeScalarConstant(module, comp, in_type, QuantizedEmax(data_shape.type));
  Instruction* emax_all = MakeBroadcast(module, comp, emax, amax->shape, {});
  Instruction* normalized = x.Array(Opcode::kDivide, in_type, ShapeDims(amax->shape), {amax, emax_all});
  Instruction* scale = x.Convert(normalized, scale_shape.type);
  Instruction* spread = SpreadScale(x, x.Convert(scale, in_type), block);
  Instruction* scaled = x.Array(Opcode::kDivide, in_type, ShapeDims(input->shape), {input, spread});
  return MakeTuple(module, comp, {x.Convert(scaled, data_shape.type), scale});
}

Result<Instruction*> BuildBlockDequantize(ExpansionBuilder& x, const Instruction& call) {
  Instruction* input = x.Parameter(0, "input");
  Instruction* scale = x.Parameter(1, "scale");
  const int64_t block = *BlockSize(input->shape, scale->shape);
  return Dequantize(x, input, scale, call.shape.type, block);
}

Result<Instruction*> BuildBlockScaledDot(ExpansionBuilder& x, const Instruction& call) {
  // XLA's BuildBlockScaledDot without cuDNN: each scaled side dequantized to the result type
  // (scales cut to the data first), one dot in the result type, then the global scale.
  const size_t n = call.operands.size();
  Instruction* lhs = x.Parameter(0, "lhs");
  Instruction* rhs = x.Parameter(1, "rhs");
  Instruction* lhs_scale = x.Parameter(2, "lhs_scale");
  Instruction* rhs_scale = n >= 4 ? x.Parameter(3, "rhs_scale") : nullptr;
  Instruction* global = n == 5 ? x.Parameter(4, "global_scale") : nullptr;
  const PrimitiveType result = call.shape.type;
  const int64_t block_size = ConfiguredBlockSize(call);
  DotSide lhs_side = *PlanDotSide(lhs->shape, lhs_scale->shape, block_size, "lhs");
  Instruction* lhs_value = DotSideValue(x, lhs, lhs_scale, lhs_side, result);
  Instruction* rhs_value = rhs;
  if (rhs_scale) {
    DotSide rhs_side = *PlanDotSide(rhs->shape, rhs_scale->shape, block_size, "rhs");
    rhs_value = DotSideValue(x, rhs, rhs_scale, rhs_side, result);
  }
  const DimVector dims = ShapeDims(call.shape);
  const int64_t lhs_rank = static_cast<int64_t>(lhs_value->shape.rank());
  const int64_t rhs_rank = static_cast<int64_t>(rhs_value->shape.rank());
  const DimVector batch = lhs_rank == 3 ? DimVector{0} : DimVector{};
  Instruction* root = x.Dot(lhs_value, rhs_value, result, dims, batch, {lhs_rank - 1}, batch, {rhs_rank - 1});
  if (!global) return root;
  Instruction* all = MakeBroadcast(x.module(), x.computation(), global, root->shape, {});
  return x.Array(Opcode::kMultiply, result, dims, {root, all});
}

}  // namespace nhlo
