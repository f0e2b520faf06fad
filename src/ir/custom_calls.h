// SPDX-License-Identifier: Apache-2.0
// The contracts of the custom calls nhlo gives meaning to, checked on IR instructions; their
// configs are types/custom_call_configs.h.
#pragma once

#include <string>
#include <string_view>

#include "ir/ir.h"
#include "support/status.h"
#include "types/custom_call_configs.h"
#include "types/custom_call_targets.h"
#include "types/solver_configs.h"

namespace nhlo {

/// Checks a config against the float tensor it describes (per-axis sizes, storage range).
Status CheckUniformQuantShape(const UniformQuantConfig& config, const Shape& float_shape);

/// Checks one QuantizeMX custom call (operands and result shape). Sets *device_form when the
/// data output is the packed u32 form. Messages name the rule broken.
Status CheckQuantizeMx(const Instruction& inst, const QuantizeMxConfig& config, bool* device_form);

/// The seed's ScaledMatmul contract: 4 operands (lhs, rhs, lhs_scale, rhs_scale), LHS U32
/// (packed MX format from QuantizeMX), rank >= 2, output F32/BF16, batch dims match,
/// contracting dims match in size and do not overlap batch dims, indices in range.
Status CheckScaledMatmul(const Instruction& inst, const ScaledMatmulConfig& config);

/// The backend_config of an instruction as the parser parsed it (Module::ParseJson); null when
/// there is none or its text is not valid JSON. The config readers of types/custom_call_configs.h
/// take it as it is.
const nlohmann::json* BackendConfigJson(const Instruction& inst);

/// Decodes the backend_config of custom call `inst` for its target into
/// module.custom_call_configs. The parser and the builder (SetAttr, RemoveAttr, CopyAttrs) call
/// it whenever a custom call's target or config is set, so the typed config is always there.
void DecodeCustomCallConfig(Module& module, const Instruction& inst);
/// The decoded config of custom call `inst` (of a module it belongs to).
const CustomCallConfig& CustomCallConfigOf(const Instruction& inst);

/// The custom_call_target of a custom call ("" for other instructions).
std::string_view CustomCallTarget(const Instruction& inst);

/// An error about custom call `call`: `'<target>' <message>`.
Status CustomCallError(const Instruction& call, const std::string& message);

/// The computation a custom call names (called_computations={c} or to_apply=c); null when it
/// names none. A call naming several is reported by CheckCustomCallExecutable.
const Computation* CustomCallComputation(const Instruction& inst);

/// What custom call `inst` runs as (types/custom_call_targets.def).
CustomCallKind CustomCallKindOf(const Instruction& inst);

/// A custom-call expansion: HLO text whose entry computation runs for every custom call of
/// `target` (docs/custom-calls.md; driver/custom_call_expansions.h binds them).
struct CustomCallExpansion {
  std::string target;
  std::string file;  ///< where the text came from, for diagnostics
  std::string text;
};

/// Whether nhlo can compile and run custom call `inst`: its target is known
/// (types/custom_call_targets.def) and its operands, result and called computation fit the
/// target's meaning. The message names the target; the caller adds the HLO line.
Status CheckCustomCallExecutable(const Instruction& inst);

}  // namespace nhlo
