// SPDX-License-Identifier: Apache-2.0
#include "passes/pass.h"

namespace nhlo {
namespace {

const PassInfo kPasses[] = {
#define NHLO_PASS(name, factory, default_on, description) {name, &factory, default_on, description},
#include "passes/passes.def"
#undef NHLO_PASS
};

}  // namespace

const PassInfo* RegisteredPasses(size_t* count) {
  *count = sizeof(kPasses) / sizeof(kPasses[0]);
  return kPasses;
}

int FindPass(std::string_view name) {
  size_t n;
  const PassInfo* passes = RegisteredPasses(&n);
  for (size_t i = 0; i < n; ++i)
    if (passes[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace nhlo
