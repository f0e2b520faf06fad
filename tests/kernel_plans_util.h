// SPDX-License-Identifier: Apache-2.0
// Helpers of the kernel-plan tests (test_kernel_plans*.cc): lower one bundle of a small module as
// Executable::Load lowers it, look at its plan, and give its buffers bytes to run over.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "interp/kernel_plans.h"
#include "interp/kernels.h"
#include "interp/lower.h"
#include "load_program.h"

namespace nhlo::testing {

// The entry's step for its first bundle with `opcode`, lowered as Executable::Load lowers it.
struct Lowered {
  BundleProgram program;
  Step step;
};

inline Lowered LowerFirst(const std::string& entry_body, Opcode opcode, const std::string& computations = "") {
  Lowered l{LoadProgram("HloModule m\n" + computations + "ENTRY e {\n" + entry_body + "}\n", "plans"), Step{}};
  const ComputationRecord& entry = l.program.computations[l.program.entry];
  for (const BundleRecord& b : entry.bundles) {
    if (b.opcode != opcode) continue;
    Result<Step> s = LowerBundle(l.program, entry, b, ExecuteOptions{});
    REQUIRE(s.ok());
    l.step = std::move(*s);
    return l;
  }
  FAIL("no bundle with that opcode");
  return l;
}

// The lowered step's plan, which must be a P.
template <typename P>
const P& PlanOf(const Lowered& l) {
  REQUIRE(l.step.plan);
  REQUIRE(std::holds_alternative<P>(*l.step.plan));
  return std::get<P>(*l.step.plan);
}

// The buffers of l's step (operands, then the result) over fresh bytes, operand k's element i
// being fill(k, i) (bit patterns, NaNs among them).
struct StepBuffers {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<Buf> bufs;
  StepBuffers(const Lowered& l, uint32_t (*fill)(size_t, int64_t)) {
    const ComputationRecord& entry = l.program.computations[l.program.entry];
    std::vector<uint32_t> ids(l.step.bundle->operands.begin(), l.step.bundle->operands.end());
    ids.push_back(l.step.bundle->result);
    bytes.resize(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      const BufferRecord& r = entry.buffers[ids[k]];
      const int64_t size = HostByteSize(r.type);
      bytes[k].assign(static_cast<size_t>(r.ElementCount() * size), 0);
      for (int64_t i = 0; k + 1 < ids.size() && i < r.ElementCount(); ++i) {
        uint32_t v = fill(k, i);
        std::memcpy(bytes[k].data() + i * size, &v, static_cast<size_t>(std::min<int64_t>(size, 4)));
      }
      bufs.push_back(Buf{&r, bytes[k].data()});
    }
  }
  const Buf& out() const { return bufs.back(); }
};

}  // namespace nhlo::testing
