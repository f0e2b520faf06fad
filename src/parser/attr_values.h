// SPDX-License-Identifier: Apache-2.0
// Readers for structured attribute values (window, slice ranges, padding config, dim_labels,
// enum words and lists, replica groups, source/target pairs, metadata and frontend_attributes). The parser calls
// DecodeStructuredValue once per such attribute; errors are plain messages the parser places.
#pragma once

#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

Result<std::vector<WindowDim>> ReadWindow(std::string_view text);
Result<std::vector<SliceDim>> ReadSliceRanges(std::string_view text);
Result<std::vector<PaddingDim>> ReadPadding(std::string_view text);
Result<ConvDimLabels> ReadDimLabels(std::string_view text);
Result<ReplicaGroupList> ReadReplicaGroups(Arena& arena, std::string_view text);
/// Flattened: source0, target0, source1, target1, ...
Result<std::vector<int64_t>> ReadPairList(std::string_view text);
/// `{true,false}` (parameter_replication); `{}` is an empty list.
Result<std::vector<uint8_t>> ReadBoolList(std::string_view text);

/// Reads a KeyValues attribute (metadata, frontend_attributes) straight from `source`, which
/// starts at the value's '{', when the block is written plainly: nothing whitespace folding
/// would change and nothing malformed. Returns the length of the block, or 0 when the block
/// must be captured, folded and decoded the general way (DecodeStructuredValue).
size_t ReadPlainKeyValues(Arena& arena, Attribute& attr, std::string_view source);

/// Fills the typed value of a structured-kind attribute from its captured `text` (a view that
/// outlives the module) and keeps `text` only when the printer would spell the value otherwise.
/// Other kinds are left as they are.
Status DecodeStructuredValue(Arena& arena, Attribute& attr, std::string_view text);

}  // namespace nhlo
