// SPDX-License-Identifier: Apache-2.0
#include "ir/expanded_calls.h"

#include "ir/block_scaling.h"
#include "ir/custom_calls.h"
#include "ir/gpu_library_calls.h"

namespace nhlo {
namespace {

bool IsGpuLibraryCall(const Instruction& call) {
  const CustomCallKind kind = CustomCallKindOf(call);
  return kind == CustomCallKind::kCublasGemm || kind == CustomCallKind::kCudnnConv;
}

}  // namespace

Status CheckExpandedCall(const Instruction& call) {
  return IsGpuLibraryCall(call) ? CheckGpuLibraryCall(call) : CheckBlockScalingCall(call);
}

Result<Computation*> ExpandCall(Module& module, const Instruction& call, std::vector<Computation*>& added) {
  return IsGpuLibraryCall(call) ? ExpandGpuLibraryCall(module, call, added)
                                : ExpandBlockScalingCall(module, call, added);
}

}  // namespace nhlo
