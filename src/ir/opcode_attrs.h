// SPDX-License-Identifier: Apache-2.0
// Which attributes each opcode takes (shared/reference/HLO_GRAMMAR.md §7-8, XLA's parser): an
// attribute an opcode does not take is an error, as in XLA, and so is a missing required one.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace nhlo {

/// True if `op` accepts attribute `id` (its own attributes plus the ones every instruction takes).
bool AttrAllowed(Opcode op, AttrId id);
/// The attributes `op` cannot do without.
const std::vector<AttrId>& RequiredAttrs(Opcode op);
/// Where `id` goes among `op`'s attributes when printed: the op schema's print_first attributes
/// (attr_schemas.def: XLA's collectives print channel_id, replica_groups, ... first; topk k,
/// largest, is_stable; a call to_apply, is_composite), then the rest in attributes.def's order.
int AttrPrintRank(Opcode op, AttrId id);

}  // namespace nhlo
