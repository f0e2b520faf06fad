// SPDX-License-Identifier: Apache-2.0
// The attribute dictionary an XLA typed-FFI custom call carries in backend_config, as JAX and
// XLA print it: MLIR attribute syntax, `{lower = true}`, `{mode = 86 : ui8, uplo = 76 : ui8}`,
// `{descending = true, batch_size = 10 : i64}`. One reader for every FFI target's decoder.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "support/status.h"

namespace nhlo {

/// Attribute name -> its value's text, the type after a top-level ':' dropped (`86 : ui8` -> `86`).
using FfiAttributes = std::map<std::string, std::string, std::less<>>;

/// Reads `{name = value, ...}`; blank text is an empty dictionary. Commas, colons and equals
/// signs inside brackets, braces, angle brackets, parentheses or a quoted string belong to the
/// value (`dims = array<i64: 1, 2>`, `name = "a, b"`). The error names what is wrong and where;
/// the caller prefixes the target.
Result<FfiAttributes> ParseFfiAttributes(std::string_view text);

}  // namespace nhlo
