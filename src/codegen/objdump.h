// SPDX-License-Identifier: Apache-2.0
// Text rendering of a decoded bundle file (nhlo-objdump): header, sections, buffer table and
// every bundle with its wire tags and attributes.
#pragma once

#include <string>

#include "codegen/bundle_format.h"

namespace nhlo {

std::string DumpBundleProgram(const BundleProgram& program, std::string_view file_name);

}  // namespace nhlo
