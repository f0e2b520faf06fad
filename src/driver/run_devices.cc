// SPDX-License-Identifier: Apache-2.0
#include "driver/run_devices.h"

#include <string_view>

#include "interp/interp.h"

namespace nhlo {

Result<DeviceGrid> RunDevices(const BundleProgram& program, const std::string& flag, std::string* note) {
  if (flag.empty() && !program.device_counts_given) {
    NHLO_ASSIGN_OR_RETURN(DeviceGrid implied, InferDevices(program));
    if (implied.count() > 1 && note)
      *note = "the module header gives no replica_count or num_partitions; running on " +
              std::to_string(implied.count()) + " devices (" + std::to_string(implied.replicas) + " replica" +
              (implied.replicas == 1 ? "" : "s") + " x " + std::to_string(implied.partitions) + " partition" +
              (implied.partitions == 1 ? "" : "s") + "), as its collectives imply (--devices sets them)";
    return implied;
  }
  if (flag.empty()) {
    // The header's counts come from the file: checked before anything is made per device.
    DeviceGrid grid = ProgramDevices(program);
    if (grid.count() > kMaxDevices)
      return Status::Error("the module asks for " + std::to_string(grid.replicas) + " x " +
                           std::to_string(grid.partitions) + " devices (replica_count x num_partitions), more than " +
                           std::to_string(kMaxDevices));
    return grid;
  }
  if (flag == "auto") return InferDevices(program);
  auto number = [&](std::string_view text, uint64_t& n) {
    n = 0;
    for (char c : text) {
      if (c < '0' || c > '9' || n > kMaxDevices) return false;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    return !text.empty() && n >= 1 && n <= kMaxDevices;
  };
  const std::string_view text(flag);
  size_t x = text.find('x');
  uint64_t replicas = 0, partitions = 0;
  bool ok = x == std::string_view::npos ? number(text, replicas)
                                        : number(text.substr(0, x), replicas) && number(text.substr(x + 1), partitions);
  if (!ok || (x != std::string_view::npos && replicas * partitions > kMaxDevices))
    return Status::Error("--devices: '" + flag + "' is not N, RxP (replicas x partitions) or auto, with 1 to " +
                         std::to_string(kMaxDevices) + " devices");
  if (x != std::string_view::npos)
    return DeviceGrid{static_cast<uint32_t>(replicas), static_cast<uint32_t>(partitions)};
  return GridForDeviceCount(program, static_cast<uint32_t>(replicas));
}

}  // namespace nhlo
