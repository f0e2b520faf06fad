// SPDX-License-Identifier: Apache-2.0
// nhlo-run --shadow: where a program loses precision (docs/numerics-debugging.md). The module
// runs once as the shadowed program of driver/shadow_module.h; its probes' values are reduced to
// error figures per instruction, aggregated over every run of the instruction (loop
// iterations, calls), and reported as a table (`file:line` of each instruction) and, with
// --shadow-report, as JSON that `nhlo-compile --emit=html --shadow-report` colours a graph with.
//
// Figures, for an instruction x of floating-point type T with real value r, shadow value s and
// local value l (element by element, over the elements where r and s are both finite):
//   rel  = |r - s| / max(|s|, smallest normal of T)     (total; the same with l for local)
//   ulps = |r - s| / ulp_T(s), the spacing of T at |s| (subnormal spacing below the normals)
//   nrel = max |r - s| / max |s|, the normwise relative error of one run
//   amplification = nrel(x) / max(nrel of each probed operand in the same run, 2^-p(T)): how
//                   much larger x's error is than what flowed in (or than one rounding of T)
// Elements where exactly one of r and s is finite (an overflow the shadow does not have, a NaN)
// are counted as `nonfinite`. Integer instructions count the elements that differ from the
// exact (64-bit) value: wrapping and saturation.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "codegen/codegen.h"
#include "driver/check_passes.h"
#include "passes/pass_manager.h"

namespace nhlo {

struct ShadowFlags {
  PrimitiveType type = PrimitiveType::kF64;                                          // --shadow=f64|f32
  enum class Sort : uint8_t { kTotal, kLocal, kAmplification } sort = Sort::kTotal;  // --shadow-sort
  int64_t top = 20;                                                                  // --shadow-top (0: all)
  std::string report_file;                                                           // --shadow-report
  bool with_and_without_passes = false;                                              // --check-passes
};

/// `f64`, `f32`; `total`, `local`, `amplification`.
Result<PrimitiveType> ParseShadowType(const std::string& text);
Result<ShadowFlags::Sort> ParseShadowSort(const std::string& text);

/// --shadow on one module of HLO text: compiles it with the pipeline (and, with
/// `with_and_without_passes`, with --passes=none too), runs the shadowed program on the
/// arguments a plain run would make, and prints the report on `out`. Returns 0, or 1 after an
/// error printed on `err`.
int RunShadow(const std::string& name, const std::string& text, const PipelineOptions& options,
              const CodegenOptions& codegen, const ShadowFlags& flags, const ProgramRunner& runner, std::ostream& out,
              std::ostream& err);

}  // namespace nhlo
