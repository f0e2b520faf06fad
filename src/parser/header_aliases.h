// SPDX-License-Identifier: Apache-2.0
// Module header attributes with rules of their own: input_output_alias and buffer_donor (read and
// checked against the entry), and debug_attributes (checked) (header_aliases.cc).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

struct AliasEntry {
  std::vector<int64_t> output_index;
  int64_t param = 0;
  std::vector<int64_t> param_index;
  bool must = false;  // must-alias (else may-alias)
};

struct DonorEntry {
  int64_t param = 0;
  std::vector<int64_t> param_index;
};

/// `{ {0}: (0, {}, may-alias), ... }`; an error naming what is malformed.
Result<std::vector<AliasEntry>> ParseInputOutputAlias(std::string_view text);
/// `{ (0, {}), ... }`.
Result<std::vector<DonorEntry>> ParseBufferDonor(std::string_view text);
/// The entries against the entry computation: parameters and shape indices exist, aliased
/// buffers have one size, nothing aliased or donated twice.
Status CheckAliases(const std::vector<AliasEntry>& aliases, const std::vector<DonorEntry>& donors,
                    const Computation& entry);

/// `debug_attributes={ {"name"}:({log_mode=default,callback_id=1}), ... }` (XLA's
/// ParseDebugAttributesTable): an error naming what is malformed or unknown.
Status CheckDebugAttributes(std::string_view text);

}  // namespace nhlo
