// SPDX-License-Identifier: Apache-2.0
// `nhlo-run --expected=@FILE.npz` (or `.npy`): the expected result read from numpy's files and
// compared with the run's. A member that differs from its output in shape or element type, that
// is missing, or that no output takes is a FAIL line of the report, as a mismatched literal is;
// only a file that is not a readable .npy/.npz at all is a file error (docs/cli.md, "Checked
// runs").
#pragma once

#include <string>
#include <vector>

#include "driver/compare.h"
#include "interp/value.h"
#include "support/status.h"

namespace nhlo {

/// An expected result read against `result`'s outputs.
struct ExpectedOutputs {
  /// Shaped like the result; each leaf as the file holds it (its own type and shape), or an
  /// empty placeholder where `problems` says why there is none.
  Value value;
  /// Per output, in NamedOutputs order: why the file gives no value for it (empty: it does).
  std::vector<std::string> problems;
  /// Members no output takes (by name, or past the outputs' count), as `out7` (np.load's names).
  std::vector<std::string> extra;
};

/// Reads a .npy (for a result that is one array) or a .npz whose members match the outputs by
/// name as --output writes them (out0, out1, out1_0...), else by position (arr_0... as np.savez
/// writes), else in archive order. Refused (before reading) beyond twice the bytes the result's
/// arrays take, plus headers: room for an f64 file of an f32 result.
Result<ExpectedOutputs> LoadExpectedOutputs(const std::string& path, const Value& result);

/// The comparison of `result` with what the file gave: CompareValues, then a FAIL line for each
/// output the file has no value for and for each member left over.
CompareReport CompareWithExpected(const Value& result, const ExpectedOutputs& expected, const Tolerance& tolerance);

}  // namespace nhlo
