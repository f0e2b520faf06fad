// SPDX-License-Identifier: Apache-2.0
// The dimension numbers of dot, ragged-dot, gather, scatter and convolution as one typed value
// each, the way XLA's protos group them (DotDimensionNumbers, GatherDimensionNumbers,
// ScatterDimensionNumbers, ConvolutionDimensionNumbers with the window and group counts).
//
// In HLO text and in bundle files each list is an attribute of its own; these structs are the
// views consumers read instead of looking the lists up one by one. The lists are spans into
// storage that outlives the view: the module's arena for the IR (ir/dimension_numbers.h makes
// the view of an instruction), the bundle record's attributes for a decoded bundle (the reader
// fills BundleRecord::dims once, and refuses a record that lacks a list XLA requires).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>

#include "types/hlo_attrs.h"
#include "types/opcode.h"

namespace nhlo {

using DimIndexList = std::span<const int64_t>;

/// Whether dimension `x` is in the list.
inline bool Contains(DimIndexList v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

struct DotDimensionNumbers {
  DimIndexList lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;  // each may be empty
};

/// XLA's RaggedDotDimensionNumbers: a dot plus where the groups are.
struct RaggedDotDimensionNumbers {
  DotDimensionNumbers dot;
  DimIndexList lhs_ragged, rhs_group;
};

struct GatherDimensionNumbers {
  DimIndexList offset_dims, collapsed_slice_dims, start_index_map;
  DimIndexList operand_batching_dims, start_indices_batching_dims;  // StableHLO batching; may be empty
  DimIndexList slice_sizes;
  int64_t index_vector_dim = 0;
};

struct ScatterDimensionNumbers {
  DimIndexList update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  DimIndexList input_batching_dims, scatter_indices_batching_dims;  // may be empty
  int64_t index_vector_dim = 0;
};

/// A convolution's dim_labels with its window (empty: size 1, stride 1, no padding in every
/// spatial dimension) and group counts (1 when not written).
struct ConvolutionDimensionNumbers {
  const ConvDimLabels* dim_labels = nullptr;  // never null in numbers MakeDimensionNumbers made
  std::span<const WindowDim> window;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
};

/// The dimension numbers an op carries: none for every opcode but the five above.
using DimensionNumbers = std::variant<std::monostate, DotDimensionNumbers, RaggedDotDimensionNumbers,
                                      GatherDimensionNumbers, ScatterDimensionNumbers, ConvolutionDimensionNumbers>;

/// Builds `op`'s dimension numbers from its attributes; which kind an op has follows from its
/// attribute schema (opcodes.def's attrs column: Dot, RaggedDot, Gather, Scatter, Convolution).
/// `attrs` answers
///   std::optional<DimIndexList> List(AttrId)        an integer list attribute, nullopt when absent
///   std::optional<int64_t> Int(AttrId)         an integer attribute, nullopt when absent
///   std::span<const WindowDim> Window()        the window (empty when absent)
///   const ConvDimLabels* Labels()              dim_labels, null when absent
/// When an attribute XLA requires is absent, `missing` names it and the result is monostate.
template <typename Attrs>
DimensionNumbers MakeDimensionNumbers(Opcode op, const Attrs& attrs, std::optional<AttrId>& missing) {
  missing.reset();
  auto optional = [&](AttrId id) { return attrs.List(id).value_or(DimIndexList{}); };
  auto required = [&](AttrId id) {
    std::optional<DimIndexList> list = attrs.List(id);
    if (!list && !missing) missing = id;
    return list.value_or(DimIndexList{});
  };
  auto required_int = [&](AttrId id) {
    std::optional<int64_t> value = attrs.Int(id);
    if (!value && !missing) missing = id;
    return value.value_or(0);
  };
  auto dot = [&] {
    return DotDimensionNumbers{optional(AttrId::kLhsBatchDims), optional(AttrId::kLhsContractingDims),
                               optional(AttrId::kRhsBatchDims), optional(AttrId::kRhsContractingDims)};
  };
  const AttrSchema schema = OpcodeAttrSchema(op);
  DimensionNumbers out;
  if (schema == AttrSchema::kDot) {
    out = dot();
  } else if (schema == AttrSchema::kRaggedDot) {
    out = RaggedDotDimensionNumbers{dot(), optional(AttrId::kLhsRaggedDims), optional(AttrId::kRhsGroupDims)};
  } else if (schema == AttrSchema::kGather) {
    GatherDimensionNumbers g;
    g.offset_dims = required(AttrId::kOffsetDims);
    g.collapsed_slice_dims = required(AttrId::kCollapsedSliceDims);
    g.start_index_map = required(AttrId::kStartIndexMap);
    g.operand_batching_dims = optional(AttrId::kOperandBatchingDims);
    g.start_indices_batching_dims = optional(AttrId::kStartIndicesBatchingDims);
    g.slice_sizes = required(AttrId::kSliceSizes);
    g.index_vector_dim = required_int(AttrId::kIndexVectorDim);
    out = g;
  } else if (schema == AttrSchema::kScatter) {
    ScatterDimensionNumbers sc;
    sc.update_window_dims = required(AttrId::kUpdateWindowDims);
    sc.inserted_window_dims = required(AttrId::kInsertedWindowDims);
    sc.scatter_dims_to_operand_dims = required(AttrId::kScatterDimsToOperandDims);
    sc.input_batching_dims = optional(AttrId::kInputBatchingDims);
    sc.scatter_indices_batching_dims = optional(AttrId::kScatterIndicesBatchingDims);
    sc.index_vector_dim = required_int(AttrId::kIndexVectorDim);
    out = sc;
  } else if (schema == AttrSchema::kConvolution) {
    ConvolutionDimensionNumbers c;
    const ConvDimLabels* labels = attrs.Labels();
    c.dim_labels = labels;
    if (!labels) missing = AttrId::kDimLabels;
    c.window = attrs.Window();
    c.feature_group_count = attrs.Int(AttrId::kFeatureGroupCount).value_or(1);
    c.batch_group_count = attrs.Int(AttrId::kBatchGroupCount).value_or(1);
    out = c;
  }
  if (missing) return std::monostate{};
  return out;
}

}  // namespace nhlo
