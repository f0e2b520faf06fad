// SPDX-License-Identifier: Apache-2.0
// The module shapes nhlo-parser-bench generates: each stresses one dimension of real dumps
// (many small computations, long metadata, big literals, wide tuples, deep call chains, many
// attributes), so a cost that grows faster than the input shows up in one of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nhlo_bench {

struct ShapeInfo {
  std::string_view name;
  std::string_view what;
  std::string (*generate)(int64_t instructions);
};

/// Every shape, `flat` first; ends with an entry whose `generate` is null.
const ShapeInfo* Shapes();
/// The shape called `name`, or null.
const ShapeInfo* FindShape(std::string_view name);

}  // namespace nhlo_bench
