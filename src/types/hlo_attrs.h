// SPDX-License-Identifier: Apache-2.0
// Typed values of the structured HLO attributes that both the IR (parsed from text) and the
// bundle program (decoded from a file) carry: window, slice ranges, padding config and
// convolution dimension numbers. Plain data, no text: whoever reads them never parses.
#pragma once

#include <cstdint>

#include <cstddef>

namespace nhlo {

/// One dimension of `window={size=3x3 stride=2x2 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2
/// rhs_reversal=0x1}`; absent fields have their defaults.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t pad_low = 0;
  int64_t pad_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;
};

/// One `[start:limit:stride]` of `slice={[0:10], [2:8:2]}`.
struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
};

/// One `low_high[_interior]` of `padding=0_1x2_3_1`.
struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
};

/// The spatial dimensions of one dim_labels group: at most 10, since labels spell them with the
/// digits 0-9. Fixed storage keeps ConvDimLabels plain data (it lives in the IR arena).
struct SpatialDims {
  static constexpr size_t kMax = 10;
  int64_t dims[kMax] = {};
  size_t count = 0;

  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  int64_t operator[](size_t i) const { return dims[i]; }
  int64_t& operator[](size_t i) { return dims[i]; }
  const int64_t* begin() const { return dims; }
  const int64_t* end() const { return dims + count; }
  /// False (and nothing stored) when full.
  bool push_back(int64_t v) {
    if (count == kMax) return false;
    dims[count++] = v;
    return true;
  }
};

/// `dim_labels=b01f_01io->b01f` as dimension numbers: which operand dimension is the batch,
/// feature and each spatial dimension. A `?` label leaves a dimension undescribed; such labels
/// are read but `has_unknown` is set (XLA's shape rules do not cover them).
struct ConvDimLabels {
  int64_t input_batch = -1;
  int64_t input_feature = -1;
  SpatialDims input_spatial;
  int64_t kernel_input_feature = -1;
  int64_t kernel_output_feature = -1;
  SpatialDims kernel_spatial;
  int64_t output_batch = -1;
  int64_t output_feature = -1;
  SpatialDims output_spatial;
  size_t input_rank = 0;
  size_t kernel_rank = 0;
  size_t output_rank = 0;
  bool has_unknown = false;
};

}  // namespace nhlo
