// SPDX-License-Identifier: Apache-2.0
// Shape rules per opcode (XLA's ShapeInference), shared by the parser (to fill an omitted result
// shape) and the verifier (to check a written one); plus readers for the attribute values those
// rules need and the IR keeps as text (window, slice, padding, dim_labels).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/small_vec.h"
#include "support/status.h"

namespace nhlo {

/// What InferShape knows about an instruction.
enum class InferOutcome { kInferred, kNotInferable, kError };

/// Who asks. The parser may fill in only the shapes XLA's parser fills in (HLO_GRAMMAR.md §8,
/// "shape ✓"), so every text nhlo accepts without a shape XLA accepts too. The verifier wants
/// every shape that follows from operands and attributes, including slice, dynamic-slice,
/// reduce-precision, fusion, send and the collectives whose text must spell the shape out.
enum class InferMode { kParse, kVerify };

struct Inference {
  InferOutcome outcome = InferOutcome::kNotInferable;
  Shape shape;          // kInferred
  std::string message;  // kError: what is wrong with the operands or attributes
};

/// Infers `inst`'s result shape from its opcode, operands, attributes and called computations.
/// Opcodes whose result cannot be derived (reshape, convert, iota, custom-call, ...) give
/// kNotInferable; operands, attributes or called computations that break the opcode's rules give
/// kError with a message naming the rule. Where a result element type is free (dot and
/// convolution accumulate in a preferred type) the written one is used when there is one.
Inference InferShape(Module& module, const Instruction& inst, InferMode mode = InferMode::kParse);

// ----------------------------------------------------------------------------------------
// Attribute values kept as text in the IR

/// One dimension of `window={size=3x3 stride=2x2 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2
/// rhs_reversal=0x1}`; absent fields have their defaults.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t pad_low = 0;
  int64_t pad_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;
};
/// Reads a window attribute ("{...}" as the IR stores it); `{}` is a window of rank 0.
Result<std::vector<WindowDim>> ParseWindow(std::string_view text);

/// One `[start:limit:stride]` of `slice={[0:10], [2:8:2]}`.
struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
};
Result<std::vector<SliceDim>> ParseSliceRanges(std::string_view text);

/// One `low_high[_interior]` of `padding=0_1x2_3_1`.
struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
};
Result<std::vector<PaddingDim>> ParsePadding(std::string_view text);

/// `dim_labels=b01f_01io->b01f` as dimension numbers: which operand dimension is the batch,
/// feature and each spatial dimension. A `?` label leaves a dimension undescribed; such labels
/// are read but `has_unknown` is set (XLA's shape rules do not cover them).
struct ConvDimLabels {
  int64_t input_batch = -1;
  int64_t input_feature = -1;
  SmallVec<int64_t, 8> input_spatial;
  int64_t kernel_input_feature = -1;
  int64_t kernel_output_feature = -1;
  SmallVec<int64_t, 8> kernel_spatial;
  int64_t output_batch = -1;
  int64_t output_feature = -1;
  SmallVec<int64_t, 8> output_spatial;
  size_t input_rank = 0;
  size_t kernel_rank = 0;
  size_t output_rank = 0;
  bool has_unknown = false;
};
Result<ConvDimLabels> ParseDimLabels(std::string_view text);

}  // namespace nhlo
