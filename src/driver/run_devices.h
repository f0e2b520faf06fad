// SPDX-License-Identifier: Apache-2.0
// The devices nhlo-run runs a bundle on. Its own file so the bundle fuzz target drives the same
// path as nhlo-run, header counts included.
#pragma once

#include <string>

#include "codegen/bundle_format.h"
#include "interp/devices.h"
#include "support/status.h"

namespace nhlo {

/// The devices of a run: --devices=RxP, --devices=N (GridForDeviceCount splits it), the module
/// header's counts (at most kMaxDevices, checked before anything is made per device), or, when
/// the header gives neither count, the devices the collectives imply (as --devices=auto; `note`,
/// when not null, then says so when that is more than one).
Result<DeviceGrid> RunDevices(const BundleProgram& program, const std::string& flag, std::string* note);

}  // namespace nhlo
