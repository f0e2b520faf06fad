// SPDX-License-Identifier: Apache-2.0
// A module as a Graphviz graph (`nhlo-compile --emit=dot`, XLA's --xla_dump_hlo_as_dot): one
// cluster per computation, a node per instruction (name, opcode, shape; filled by kind), an edge
// per operand labelled with its shape, and a dashed edge from each instruction that calls a
// computation to that computation's root, labelled with the attribute that names it
// (to_apply, body, condition, calls, branch_computations...). Linear in the module's size.
// Render with `dot -Tsvg m.dot -o m.svg`.
#pragma once

#include <string>

#include "ir/ir.h"

namespace nhlo {

/// The module as one `digraph`; deterministic (computations and instructions in module order).
std::string ModuleToDot(const Module& module);

}  // namespace nhlo
