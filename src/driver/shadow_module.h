// SPDX-License-Identifier: Apache-2.0
// The program nhlo-run --shadow runs (docs/numerics-debugging.md): the module as it runs, with a
// shadow twin of every instruction computed in a wider type and probes that hand both values to
// the run's observer.
//
// Each instruction x of the entry computation and of the computations it runs as control flow
// (while bodies and conditions, conditional branches, calls and fusions) gets, beside itself:
//   - S(x), its shadow: the same op in the shadow type (floats → f64 or f32, complex → c128,
//     integers narrower than 64 bits → s64 so that nothing wraps or saturates), fed by the shadow
//     values of its operands. Computations an op applies per element (reducers, comparators,
//     scatter combiners) are cloned in the shadow type for it. The entry's parameters and the
//     module's constants enter the shadow exactly (a widening convert).
//   - L(x), the local value: x's own op in its own types, fed by its operands' shadow values
//     rounded to those types, i.e. the op's error on exact inputs. Only for floating-point ops
//     that compute (data movement is exact).
//   - a probe: custom-call "nhlo.shadow_probe"(x, S(x)[, L(x)]) that the interpreter hands to
//     ExecuteOptions::probe each time it runs.
// Control flow follows the real values: a while loop carries the tuple (real state, shadow
// state) and its condition reads the real one; a conditional picks its branch by the real
// selector; a call's callee takes the real and then the shadow arguments. Ops whose meaning
// depends on their types (bitcast-convert, integer bit operations, shape queries, custom calls
// without side effects) run on their operands' shadow values rounded to their own types, and the
// result is widened; ops with side effects or state (rng, I/O, async pairs, device ids) run once
// and the shadow takes their value. reduce-precision is the identity in the shadow: the rounding
// it asks for is the error it adds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// One probed instruction of the source module.
struct ShadowProbe {
  std::string name;         // the probe's instruction (what ExecuteOptions::probe receives)
  const Instruction* inst;  // the instruction it watches (in the module, unchanged)
  std::string computation;  // inst's computation
  bool has_local = false;   // the probe's third operand is L(inst)
  bool moves_data = false;  // inst only moves or selects elements (exact; hidden in the table)
  std::string op;           // inst's opcode; `batch-norm-training#0` for an element of a computing op's tuple
  /// The probes of inst's operands (indices into ShadowPlan::probes; operands without a probe,
  /// such as entry parameters and constants, are exact and not listed).
  std::vector<size_t> operand_probes;
};

struct ShadowPlan {
  std::vector<ShadowProbe> probes;
  PrimitiveType float_type = PrimitiveType::kF64;  // the shadow type of floating-point values
};

/// Adds the shadowed program to `module` (verified, after its pass pipeline) and makes its entry
/// the new program's entry. The source instructions stay in the module, untouched (their
/// computations are no longer reached from the entry), so ShadowProbe::inst stays valid while
/// the module lives. `float_type` is F64 or F32.
Result<ShadowPlan> BuildShadowModule(Module& module, PrimitiveType float_type);

}  // namespace nhlo
