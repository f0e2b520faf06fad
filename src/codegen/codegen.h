// SPDX-License-Identifier: Apache-2.0
// Lowering a verified module to a bundle file: buffer assignment, one bundle per instruction,
// and the byte writer. The output is a pure function of the module and the options.
#pragma once

#include <string>

#include "codegen/bundle_format.h"
#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

struct CodegenOptions {
  TargetArch arch = TargetArch::kV4;
  /// Reject host-only ("golden") element types that have no backend dtype.
  bool device_only = false;
};

/// The whole bundle file as bytes.
Result<std::string> EmitBundleFile(const Module& module, const CodegenOptions& options);

}  // namespace nhlo
