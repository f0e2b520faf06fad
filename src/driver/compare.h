// SPDX-License-Identifier: Apache-2.0
// Comparing a run's results with expected values under tolerances: the engine behind
// `nhlo-run --expected` and `nhlo-run --check-passes`. It returns a report per output and the
// report's text (docs/cli.md, "Checked runs"); it prints nothing and never exits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interp/value.h"

namespace nhlo {

struct OutputTolerance;

/// When an element of the actual result counts as equal to the expected one.
struct Tolerance {
  /// numpy.allclose's rule: |actual - expected| <= atol + rtol * |expected|. Like numpy's it is
  /// not symmetric: the relative part scales with the expected value. Applies when `allclose`.
  double rtol = 0, atol = 0;
  bool allclose = false;
  /// XLA's NearComparator rule instead of numpy's (`--compare-rule=xla`): an element passes when
  /// |actual - expected| <= atol, or when |actual - expected| / |expected| <= rtol (either bound
  /// alone suffices; LiteralTestUtil::Near in xla/literal_comparison.cc).
  bool xla_rule = false;
  /// XLA's LiteralTestUtil::Equal (`--compare-rule=bitwise`): floats and complex parts pass only
  /// with identical encodings (-0 is not +0; a NaN matches only the same NaN bits); the bounds
  /// above are not used.
  bool bitwise = false;
  /// Distance in units in the last place of the expected element's type, counted on that type's
  /// own encoding (bf16 ulps for a bf16 output). An element passes when it is within `ulp`
  /// or within the allclose bound, whichever is given; with neither, only equality passes.
  std::optional<uint64_t> ulp;
  /// NaN in the actual result matches NaN at the same position of the expected one (any sign or
  /// payload). When false, every NaN is a mismatch.
  bool nan_equal = true;
  /// Integers and pred are compared exactly unless this is set (the user gave --atol); then
  /// the allclose rule applies to them too.
  bool integers_use_atol = false;
  /// How many elements over the bounds each output's report line lists (`--max-mismatches`):
  /// the first one on the output's line, the others on lines of their own below it.
  int64_t mismatches_shown = 1;
  /// The actual leaf may hold another float type than the expected one (a pass that widened
  /// the entry's results, e.g. upcast-all-to-fp32): values are compared as doubles and ulps
  /// after rounding the actual value to the expected type.
  bool allow_float_type_change = false;
  /// Other bounds for named outputs (`--atol=out3:1e-3`; a tuple element's apply to its leaves
  /// that have none of their own); the rest use the fields above. Only their bounds count: how
  /// values compare otherwise (allow_float_type_change, nan_equal, mismatches_shown) is this
  /// Tolerance's.
  std::vector<OutputTolerance> per_output;

  /// The bounds given for the output `name` (NamedOutputs' names: out0, out1_0...), or null.
  const Tolerance* Find(std::string_view name) const;
};

/// The bounds of one output, by the name nhlo-run gives it (`out3`, `out1_0`).
struct OutputTolerance {
  std::string name;
  Tolerance tolerance;  ///< per_output empty
};

/// nhlo-run's bounds when none of --rtol, --atol, --ulp is given: floats within
/// rtol=1e-5, atol=1e-6; integers and pred exact.
Tolerance DefaultTolerance();

/// `rtol=1e-05, atol=1e-06, ulp=2`, or `exact`; integers are mentioned when --atol applies.
std::string FormatTolerance(const Tolerance& tolerance);

/// The comparison of one array output (a leaf of the result tuple).
struct OutputReport {
  std::string label;  ///< `output 2`; a leaf of a nested tuple is `output 2.1`
  std::string shape;  ///< the expected shape, `bf16[128,256]`
  std::string error;  ///< a structural mismatch (shape, type, tuple arity); no element figures then
  int64_t elements = 0;
  int64_t over = 0;                  ///< elements outside the bounds (NaN/Inf mismatches included)
  double max_abs = 0;                ///< over elements where both values are finite
  double max_rel = 0;                ///< |a - e| / |e|; inf when e == 0 and a != 0
  std::optional<uint64_t> max_ulps;  ///< float outputs only
  /// The first elements over the bounds, in row-major order (Tolerance::mismatches_shown of them).
  struct Mismatch {
    std::vector<int64_t> index;
    std::string actual, expected;
  };
  std::vector<Mismatch> mismatches;

  bool pass() const { return error.empty() && over == 0; }
};

struct CompareReport {
  std::vector<OutputReport> outputs;
  /// Names of Tolerance::per_output that no output of the result has (the report fails; they
  /// are not counted among the outputs).
  std::vector<std::string> unknown_outputs;

  bool pass() const;
  int failed() const;
};

/// Compares `actual` with `expected`. Tuples are compared element by element (each array leaf
/// is one output); a non-tuple result is `output 1`.
CompareReport CompareValues(const Value& actual, const Value& expected, const Tolerance& tolerance);

/// One output's part of a report line, after its label: `f32[2,3]: PASS: 6 elements, ...` or
/// `FAIL: shape mismatch: ...` (further mismatches on lines of their own, no final newline).
std::string FormatOutputReport(const OutputReport& output);

/// Which outputs FormatReport lists: every one, or only those that fail (`--report=failures`).
enum class ReportLines { kAll, kFailures };

/// One line per output (with kFailures only the failing ones), then the verdict line (docs/cli.md, "Checked runs"):
///   output 1: f32[2,3]: PASS: 6 elements, 0 over bounds, max abs error 0, max rel error 0, max ulps 0
///   output 2: s32[4]: FAIL: 4 elements, 1 over bounds, max abs error 2, max rel error 0.5; first mismatch
///     at [2]: actual 3, expected 1   (one line)
///   FAIL: 1 of 2 outputs differ (rtol=1e-05, atol=1e-06; integers exact)
std::string FormatReport(const CompareReport& report, const Tolerance& tolerance,
                         ReportLines lines = ReportLines::kAll);

}  // namespace nhlo
