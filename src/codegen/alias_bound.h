// SPDX-License-Identifier: Apache-2.0
// How many bytes a computation must hold at once if every value that XLA's buffer assignment
// would alias shared its operand's storage (issue 32, item 3): a get-tuple-element and the tuple
// element it reads, a tuple and its operands, a bitcast or reshape and its operand (the host
// layout is row-major, so a reshape keeps the bytes), a while loop's state and its init; and
// broadcasts and iotas read only by elementwise ops are not stored (they run fused). A class
// of aliased values holding a parameter or a constant costs no frame bytes; the others live from
// their first definition to the last reader of any member. Informational (ArenaReport::
// aliased_bound beside the frame and its bound): nhlo's buffer assignment takes these aliases
// (bundle_writer.cc) but still stores broadcasts, and lets a loop state take over a dying init.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "codegen/bundle_format.h"
#include "ir/ir.h"

namespace nhlo {

/// `position` gives each instruction of `comp` its index, `value[i]` is the buffer (in `buffers`)
/// of instruction i, `last_use[i]` the position of its last reader (the root's is the instruction
/// count) and `callee_bound[i]` the most the computations instruction i calls need at once, with
/// aliases taken.
uint64_t AliasedLiveBound(const Computation& comp, const std::unordered_map<const Instruction*, uint32_t>& position,
                          const std::vector<BufferRecord>& buffers, const std::vector<uint32_t>& value,
                          const std::vector<uint32_t>& last_use, const std::vector<uint64_t>& callee_bound);

}  // namespace nhlo
