// SPDX-License-Identifier: Apache-2.0
// The one decoder of bundle files. It validates every count, offset, index and size before use
// and returns a BundleProgram that the interpreter and nhlo-objdump both consume, so the two
// cannot disagree about the format. A truncated or corrupted file is an error that names the
// byte offset, never a crash.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "codegen/bundle_format.h"
#include "support/status.h"

namespace nhlo {

/// Decodes and validates `bytes` (the whole file); `file` names it in diagnostics.
Result<BundleProgram> ReadBundleFile(std::string bytes, std::string_view file);

/// Fills `record.dims` from its attributes (the reader does this for every record; tests that
/// build records by hand call it too). Returns the attribute XLA requires that is absent, if any.
std::optional<AttrId> FillDimensionNumbers(BundleRecord& record);

/// True if `bytes` starts with the bundle magic (used to tell bundles from HLO text).
bool LooksLikeBundle(std::string_view bytes);

/// The constant buffer's elements unpacked into the host layout.
std::string UnpackConstant(const BundleProgram& program, const BufferRecord& buffer);

}  // namespace nhlo
