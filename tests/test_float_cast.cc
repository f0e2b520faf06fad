// SPDX-License-Identifier: Apache-2.0
// Tests of the low-precision float casts: embedded key vectors (run anywhere) and an exhaustive
// comparison against every decode/encode/encode_sat table in shared/numerics/tables (skipped
// with a message when the shared directory is not found).
#include <doctest/doctest.h>

#include "shared_tables.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "types/float_cast.h"
#include "types/primitive_type.h"

namespace nhlo {
namespace {

using P = PrimitiveType;

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float FromBits(uint32_t b) { return std::bit_cast<float>(b); }

constexpr int64_t kNoSat = -1;  // no saturating reference for this row (bf16/f16)

struct EncodeVector {
  PrimitiveType type;
  uint32_t f32_bits;
  uint32_t plain;
  int64_t sat;
  const char* what;
};

// Special points of every type (values from the ml_dtypes oracle, shared/numerics/tables/
// summary.txt) plus two mid-range ties per type: the midpoint of 1.0 and its successor (rounds
// down to the even 1.0) and the midpoint of the next pair (rounds up to the even code).
constexpr EncodeVector kEncodeVectors[] = {
    {P::kBF16, 0x00000000, 0x0000, kNoSat, "+0"},
    {P::kBF16, 0x80000000, 0x8000, kNoSat, "-0"},
    {P::kBF16, 0x7f7f0000, 0x7f7f, kNoSat, "max"},
    {P::kBF16, 0x7f7f8000, 0x7f80, kNoSat, "max+ulp/2 (tie)"},
    {P::kBF16, 0x7f7f8001, 0x7f80, kNoSat, "next(max+ulp/2)"},
    {P::kBF16, 0x7f800000, 0x7f80, kNoSat, "2*max"},
    {P::kBF16, 0xff800000, 0xff80, kNoSat, "-2*max"},
    {P::kBF16, 0x7f800000, 0x7f80, kNoSat, "+inf"},
    {P::kBF16, 0xff800000, 0xff80, kNoSat, "-inf"},
    {P::kBF16, 0x7fc00000, 0x7fc0, kNoSat, "+qNaN"},
    {P::kBF16, 0xffc00000, 0xffc0, kNoSat, "-qNaN"},
    {P::kBF16, 0x00008000, 0x0000, kNoSat, "minsub/2 (tie)"},
    {P::kBF16, 0x00008001, 0x0001, kNoSat, "next(minsub/2)"},
    {P::kBF16, 0x80004000, 0x8000, kNoSat, "-minsub/4"},
    {P::kBF16, 0x3fc00000, 0x3fc0, kNoSat, "1.5"},
    {P::kBF16, 0xbf800000, 0xbf80, kNoSat, "-1.0"},
    {P::kBF16, 0x3f808000, 0x3f80, kNoSat, "mid tie"},
    {P::kBF16, 0x3f818000, 0x3f82, kNoSat, "mid tie"},
    {P::kF16, 0x00000000, 0x0000, kNoSat, "+0"},
    {P::kF16, 0x80000000, 0x8000, kNoSat, "-0"},
    {P::kF16, 0x477fe000, 0x7bff, kNoSat, "max"},
    {P::kF16, 0x477ff000, 0x7c00, kNoSat, "max+ulp/2 (tie)"},
    {P::kF16, 0x477ff001, 0x7c00, kNoSat, "next(max+ulp/2)"},
    {P::kF16, 0x47ffe000, 0x7c00, kNoSat, "2*max"},
    {P::kF16, 0xc7ffe000, 0xfc00, kNoSat, "-2*max"},
    {P::kF16, 0x7f800000, 0x7c00, kNoSat, "+inf"},
    {P::kF16, 0xff800000, 0xfc00, kNoSat, "-inf"},
    {P::kF16, 0x7fc00000, 0x7e00, kNoSat, "+qNaN"},
    {P::kF16, 0xffc00000, 0xfe00, kNoSat, "-qNaN"},
    {P::kF16, 0x33000000, 0x0000, kNoSat, "minsub/2 (tie)"},
    {P::kF16, 0x33000001, 0x0001, kNoSat, "next(minsub/2)"},
    {P::kF16, 0xb2800000, 0x8000, kNoSat, "-minsub/4"},
    {P::kF16, 0x3fc00000, 0x3e00, kNoSat, "1.5"},
    {P::kF16, 0xbf800000, 0xbc00, kNoSat, "-1.0"},
    {P::kF16, 0x3f801000, 0x3c00, kNoSat, "mid tie"},
    {P::kF16, 0x3f803000, 0x3c02, kNoSat, "mid tie"},
    {P::kF8E4M3FN, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF8E4M3FN, 0x80000000, 0x80, 0x80, "-0"},
    {P::kF8E4M3FN, 0x43e00000, 0x7e, 0x7e, "max"},
    {P::kF8E4M3FN, 0x43e80000, 0x7e, 0x7e, "max+ulp/2 (tie)"},
    {P::kF8E4M3FN, 0x43e80001, 0x7f, 0x7e, "next(max+ulp/2)"},
    {P::kF8E4M3FN, 0x44600000, 0x7f, 0x7e, "2*max"},
    {P::kF8E4M3FN, 0xc4600000, 0xff, 0xfe, "-2*max"},
    {P::kF8E4M3FN, 0x7f800000, 0x7f, 0x7f, "+inf"},
    {P::kF8E4M3FN, 0xff800000, 0xff, 0xff, "-inf"},
    {P::kF8E4M3FN, 0x7fc00000, 0x7f, 0x7f, "+qNaN"},
    {P::kF8E4M3FN, 0xffc00000, 0xff, 0xff, "-qNaN"},
    {P::kF8E4M3FN, 0x3a800000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E4M3FN, 0x3a800001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF8E4M3FN, 0xba000000, 0x80, 0x80, "-minsub/4"},
    {P::kF8E4M3FN, 0x3fc00000, 0x3c, 0x3c, "1.5"},
    {P::kF8E4M3FN, 0xbf800000, 0xb8, 0xb8, "-1.0"},
    {P::kF8E4M3FN, 0x3f880000, 0x38, 0x38, "mid tie"},
    {P::kF8E4M3FN, 0x3f980000, 0x3a, 0x3a, "mid tie"},
    {P::kF8E5M2, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF8E5M2, 0x80000000, 0x80, 0x80, "-0"},
    {P::kF8E5M2, 0x47600000, 0x7b, 0x7b, "max"},
    {P::kF8E5M2, 0x47700000, 0x7c, 0x7b, "max+ulp/2 (tie)"},
    {P::kF8E5M2, 0x47700001, 0x7c, 0x7b, "next(max+ulp/2)"},
    {P::kF8E5M2, 0x47e00000, 0x7c, 0x7b, "2*max"},
    {P::kF8E5M2, 0xc7e00000, 0xfc, 0xfb, "-2*max"},
    {P::kF8E5M2, 0x7f800000, 0x7c, 0x7c, "+inf"},
    {P::kF8E5M2, 0xff800000, 0xfc, 0xfc, "-inf"},
    {P::kF8E5M2, 0x7fc00000, 0x7e, 0x7e, "+qNaN"},
    {P::kF8E5M2, 0xffc00000, 0xfe, 0xfe, "-qNaN"},
    {P::kF8E5M2, 0x37000000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E5M2, 0x37000001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF8E5M2, 0xb6800000, 0x80, 0x80, "-minsub/4"},
    {P::kF8E5M2, 0x3fc00000, 0x3e, 0x3e, "1.5"},
    {P::kF8E5M2, 0xbf800000, 0xbc, 0xbc, "-1.0"},
    {P::kF8E5M2, 0x3f900000, 0x3c, 0x3c, "mid tie"},
    {P::kF8E5M2, 0x3fb00000, 0x3e, 0x3e, "mid tie"},
    {P::kF8E4M3, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF8E4M3, 0x80000000, 0x80, 0x80, "-0"},
    {P::kF8E4M3, 0x43700000, 0x77, 0x77, "max"},
    {P::kF8E4M3, 0x43780000, 0x78, 0x77, "max+ulp/2 (tie)"},
    {P::kF8E4M3, 0x43780001, 0x78, 0x77, "next(max+ulp/2)"},
    {P::kF8E4M3, 0x43f00000, 0x78, 0x77, "2*max"},
    {P::kF8E4M3, 0xc3f00000, 0xf8, 0xf7, "-2*max"},
    {P::kF8E4M3, 0x7f800000, 0x78, 0x78, "+inf"},
    {P::kF8E4M3, 0xff800000, 0xf8, 0xf8, "-inf"},
    {P::kF8E4M3, 0x7fc00000, 0x7c, 0x7c, "+qNaN"},
    {P::kF8E4M3, 0xffc00000, 0xfc, 0xfc, "-qNaN"},
    {P::kF8E4M3, 0x3a800000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E4M3, 0x3a800001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF8E4M3, 0xba000000, 0x80, 0x80, "-minsub/4"},
    {P::kF8E4M3, 0x3fc00000, 0x3c, 0x3c, "1.5"},
    {P::kF8E4M3, 0xbf800000, 0xb8, 0xb8, "-1.0"},
    {P::kF8E4M3, 0x3f880000, 0x38, 0x38, "mid tie"},
    {P::kF8E4M3, 0x3f980000, 0x3a, 0x3a, "mid tie"},
    {P::kF8E3M4, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF8E3M4, 0x80000000, 0x80, 0x80, "-0"},
    {P::kF8E3M4, 0x41780000, 0x6f, 0x6f, "max"},
    {P::kF8E3M4, 0x417c0000, 0x70, 0x6f, "max+ulp/2 (tie)"},
    {P::kF8E3M4, 0x417c0001, 0x70, 0x6f, "next(max+ulp/2)"},
    {P::kF8E3M4, 0x41f80000, 0x70, 0x6f, "2*max"},
    {P::kF8E3M4, 0xc1f80000, 0xf0, 0xef, "-2*max"},
    {P::kF8E3M4, 0x7f800000, 0x70, 0x70, "+inf"},
    {P::kF8E3M4, 0xff800000, 0xf0, 0xf0, "-inf"},
    {P::kF8E3M4, 0x7fc00000, 0x78, 0x78, "+qNaN"},
    {P::kF8E3M4, 0xffc00000, 0xf8, 0xf8, "-qNaN"},
    {P::kF8E3M4, 0x3c000000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E3M4, 0x3c000001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF8E3M4, 0xbb800000, 0x80, 0x80, "-minsub/4"},
    {P::kF8E3M4, 0x3fc00000, 0x38, 0x38, "1.5"},
    {P::kF8E3M4, 0xbf800000, 0xb0, 0xb0, "-1.0"},
    {P::kF8E3M4, 0x3f840000, 0x30, 0x30, "mid tie"},
    {P::kF8E3M4, 0x3f8c0000, 0x32, 0x32, "mid tie"},
    {P::kF8E4M3FNUZ, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF8E4M3FNUZ, 0x80000000, 0x00, 0x00, "-0"},
    {P::kF8E4M3FNUZ, 0x43700000, 0x7f, 0x7f, "max"},
    {P::kF8E4M3FNUZ, 0x43780000, 0x80, 0x7f, "max+ulp/2 (tie)"},
    {P::kF8E4M3FNUZ, 0x43780001, 0x80, 0x7f, "next(max+ulp/2)"},
    {P::kF8E4M3FNUZ, 0x43f00000, 0x80, 0x7f, "2*max"},
    {P::kF8E4M3FNUZ, 0xc3f00000, 0x80, 0xff, "-2*max"},
    {P::kF8E4M3FNUZ, 0x7f800000, 0x80, 0x80, "+inf"},
    {P::kF8E4M3FNUZ, 0xff800000, 0x80, 0x80, "-inf"},
    {P::kF8E4M3FNUZ, 0x7fc00000, 0x80, 0x80, "+qNaN"},
    {P::kF8E4M3FNUZ, 0xffc00000, 0x80, 0x80, "-qNaN"},
    {P::kF8E4M3FNUZ, 0x3a000000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E4M3FNUZ, 0x3a000001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF8E4M3FNUZ, 0xb9800000, 0x00, 0x00, "-minsub/4"},
    {P::kF8E4M3FNUZ, 0x3fc00000, 0x44, 0x44, "1.5"},
    {P::kF8E4M3FNUZ, 0xbf800000, 0xc0, 0xc0, "-1.0"},
    {P::kF8E4M3FNUZ, 0x3f880000, 0x40, 0x40, "mid tie"},
    {P::kF8E4M3FNUZ, 0x3f980000, 0x42, 0x42, "mid tie"},
    {P::kF8E5M2FNUZ, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF8E5M2FNUZ, 0x80000000, 0x00, 0x00, "-0"},
    {P::kF8E5M2FNUZ, 0x47600000, 0x7f, 0x7f, "max"},
    {P::kF8E5M2FNUZ, 0x47700000, 0x80, 0x7f, "max+ulp/2 (tie)"},
    {P::kF8E5M2FNUZ, 0x47700001, 0x80, 0x7f, "next(max+ulp/2)"},
    {P::kF8E5M2FNUZ, 0x47e00000, 0x80, 0x7f, "2*max"},
    {P::kF8E5M2FNUZ, 0xc7e00000, 0x80, 0xff, "-2*max"},
    {P::kF8E5M2FNUZ, 0x7f800000, 0x80, 0x80, "+inf"},
    {P::kF8E5M2FNUZ, 0xff800000, 0x80, 0x80, "-inf"},
    {P::kF8E5M2FNUZ, 0x7fc00000, 0x80, 0x80, "+qNaN"},
    {P::kF8E5M2FNUZ, 0xffc00000, 0x80, 0x80, "-qNaN"},
    {P::kF8E5M2FNUZ, 0x36800000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E5M2FNUZ, 0x36800001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF8E5M2FNUZ, 0xb6000000, 0x00, 0x00, "-minsub/4"},
    {P::kF8E5M2FNUZ, 0x3fc00000, 0x42, 0x42, "1.5"},
    {P::kF8E5M2FNUZ, 0xbf800000, 0xc0, 0xc0, "-1.0"},
    {P::kF8E5M2FNUZ, 0x3f900000, 0x40, 0x40, "mid tie"},
    {P::kF8E5M2FNUZ, 0x3fb00000, 0x42, 0x42, "mid tie"},
    {P::kF8E4M3B11FNUZ, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF8E4M3B11FNUZ, 0x80000000, 0x00, 0x00, "-0"},
    {P::kF8E4M3B11FNUZ, 0x41f00000, 0x7f, 0x7f, "max"},
    {P::kF8E4M3B11FNUZ, 0x41f80000, 0x80, 0x7f, "max+ulp/2 (tie)"},
    {P::kF8E4M3B11FNUZ, 0x41f80001, 0x80, 0x7f, "next(max+ulp/2)"},
    {P::kF8E4M3B11FNUZ, 0x42700000, 0x80, 0x7f, "2*max"},
    {P::kF8E4M3B11FNUZ, 0xc2700000, 0x80, 0xff, "-2*max"},
    {P::kF8E4M3B11FNUZ, 0x7f800000, 0x80, 0x80, "+inf"},
    {P::kF8E4M3B11FNUZ, 0xff800000, 0x80, 0x80, "-inf"},
    {P::kF8E4M3B11FNUZ, 0x7fc00000, 0x80, 0x80, "+qNaN"},
    {P::kF8E4M3B11FNUZ, 0xffc00000, 0x80, 0x80, "-qNaN"},
    {P::kF8E4M3B11FNUZ, 0x38800000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E4M3B11FNUZ, 0x38800001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF8E4M3B11FNUZ, 0xb8000000, 0x00, 0x00, "-minsub/4"},
    {P::kF8E4M3B11FNUZ, 0x3fc00000, 0x5c, 0x5c, "1.5"},
    {P::kF8E4M3B11FNUZ, 0xbf800000, 0xd8, 0xd8, "-1.0"},
    {P::kF8E4M3B11FNUZ, 0x3f880000, 0x58, 0x58, "mid tie"},
    {P::kF8E4M3B11FNUZ, 0x3f980000, 0x5a, 0x5a, "mid tie"},
    {P::kF8E8M0FNU, 0x00000000, 0xff, 0x00, "+0"},
    {P::kF8E8M0FNU, 0x80000000, 0xff, 0x00, "-0"},
    {P::kF8E8M0FNU, 0x7f000000, 0xfe, 0xfe, "max"},
    {P::kF8E8M0FNU, 0x7f200000, 0xfe, 0xfe, "max+ulp/2 (tie)"},
    {P::kF8E8M0FNU, 0x7f200001, 0xfe, 0xfe, "next(max+ulp/2)"},
    {P::kF8E8M0FNU, 0x7f800000, 0xff, 0xff, "2*max"},
    {P::kF8E8M0FNU, 0xff800000, 0xff, 0xff, "-2*max"},
    {P::kF8E8M0FNU, 0x7f800000, 0xff, 0xff, "+inf"},
    {P::kF8E8M0FNU, 0xff800000, 0xff, 0xff, "-inf"},
    {P::kF8E8M0FNU, 0x7fc00000, 0xff, 0xff, "+qNaN"},
    {P::kF8E8M0FNU, 0xffc00000, 0xff, 0xff, "-qNaN"},
    {P::kF8E8M0FNU, 0x00200000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF8E8M0FNU, 0x00200001, 0x00, 0x00, "next(minsub/2)"},
    {P::kF8E8M0FNU, 0x80100000, 0xff, 0x00, "-minsub/4"},
    {P::kF8E8M0FNU, 0x3fc00000, 0x80, 0x80, "1.5"},
    {P::kF8E8M0FNU, 0xbf800000, 0xff, 0x00, "-1.0"},
    {P::kF8E8M0FNU, 0x3fc00000, 0x80, 0x80, "mid tie"},
    {P::kF8E8M0FNU, 0x40400000, 0x81, 0x81, "mid tie"},
    {P::kF4E2M1FN, 0x00000000, 0x0, 0x0, "+0"},
    {P::kF4E2M1FN, 0x80000000, 0x8, 0x8, "-0"},
    {P::kF4E2M1FN, 0x40c00000, 0x7, 0x7, "max"},
    {P::kF4E2M1FN, 0x40e00000, 0x7, 0x7, "max+ulp/2 (tie)"},
    {P::kF4E2M1FN, 0x40e00001, 0x7, 0x7, "next(max+ulp/2)"},
    {P::kF4E2M1FN, 0x41400000, 0x7, 0x7, "2*max"},
    {P::kF4E2M1FN, 0xc1400000, 0xf, 0xf, "-2*max"},
    {P::kF4E2M1FN, 0x7f800000, 0x7, 0x7, "+inf"},
    {P::kF4E2M1FN, 0xff800000, 0xf, 0xf, "-inf"},
    {P::kF4E2M1FN, 0x7fc00000, 0x8, 0x8, "+qNaN"},
    {P::kF4E2M1FN, 0xffc00000, 0x0, 0x0, "-qNaN"},
    {P::kF4E2M1FN, 0x3e800000, 0x0, 0x0, "minsub/2 (tie)"},
    {P::kF4E2M1FN, 0x3e800001, 0x1, 0x1, "next(minsub/2)"},
    {P::kF4E2M1FN, 0xbe000000, 0x8, 0x8, "-minsub/4"},
    {P::kF4E2M1FN, 0x3fc00000, 0x3, 0x3, "1.5"},
    {P::kF4E2M1FN, 0xbf800000, 0xa, 0xa, "-1.0"},
    {P::kF4E2M1FN, 0x3fa00000, 0x2, 0x2, "mid tie"},
    {P::kF4E2M1FN, 0x3fe00000, 0x4, 0x4, "mid tie"},
    {P::kF6E2M3FN, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF6E2M3FN, 0x80000000, 0x20, 0x20, "-0"},
    {P::kF6E2M3FN, 0x40f00000, 0x1f, 0x1f, "max"},
    {P::kF6E2M3FN, 0x40f80000, 0x1f, 0x1f, "max+ulp/2 (tie)"},
    {P::kF6E2M3FN, 0x40f80001, 0x1f, 0x1f, "next(max+ulp/2)"},
    {P::kF6E2M3FN, 0x41700000, 0x1f, 0x1f, "2*max"},
    {P::kF6E2M3FN, 0xc1700000, 0x3f, 0x3f, "-2*max"},
    {P::kF6E2M3FN, 0x7f800000, 0x1f, 0x1f, "+inf"},
    {P::kF6E2M3FN, 0xff800000, 0x3f, 0x3f, "-inf"},
    {P::kF6E2M3FN, 0x7fc00000, 0x20, 0x20, "+qNaN"},
    {P::kF6E2M3FN, 0xffc00000, 0x00, 0x00, "-qNaN"},
    {P::kF6E2M3FN, 0x3d800000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF6E2M3FN, 0x3d800001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF6E2M3FN, 0xbd000000, 0x20, 0x20, "-minsub/4"},
    {P::kF6E2M3FN, 0x3fc00000, 0x0c, 0x0c, "1.5"},
    {P::kF6E2M3FN, 0xbf800000, 0x28, 0x28, "-1.0"},
    {P::kF6E2M3FN, 0x3f880000, 0x08, 0x08, "mid tie"},
    {P::kF6E2M3FN, 0x3f980000, 0x0a, 0x0a, "mid tie"},
    {P::kF6E3M2FN, 0x00000000, 0x00, 0x00, "+0"},
    {P::kF6E3M2FN, 0x80000000, 0x20, 0x20, "-0"},
    {P::kF6E3M2FN, 0x41e00000, 0x1f, 0x1f, "max"},
    {P::kF6E3M2FN, 0x41f00000, 0x1f, 0x1f, "max+ulp/2 (tie)"},
    {P::kF6E3M2FN, 0x41f00001, 0x1f, 0x1f, "next(max+ulp/2)"},
    {P::kF6E3M2FN, 0x42600000, 0x1f, 0x1f, "2*max"},
    {P::kF6E3M2FN, 0xc2600000, 0x3f, 0x3f, "-2*max"},
    {P::kF6E3M2FN, 0x7f800000, 0x1f, 0x1f, "+inf"},
    {P::kF6E3M2FN, 0xff800000, 0x3f, 0x3f, "-inf"},
    {P::kF6E3M2FN, 0x7fc00000, 0x20, 0x20, "+qNaN"},
    {P::kF6E3M2FN, 0xffc00000, 0x00, 0x00, "-qNaN"},
    {P::kF6E3M2FN, 0x3d000000, 0x00, 0x00, "minsub/2 (tie)"},
    {P::kF6E3M2FN, 0x3d000001, 0x01, 0x01, "next(minsub/2)"},
    {P::kF6E3M2FN, 0xbc800000, 0x20, 0x20, "-minsub/4"},
    {P::kF6E3M2FN, 0x3fc00000, 0x0e, 0x0e, "1.5"},
    {P::kF6E3M2FN, 0xbf800000, 0x2c, 0x2c, "-1.0"},
    {P::kF6E3M2FN, 0x3f900000, 0x0c, 0x0c, "mid tie"},
    {P::kF6E3M2FN, 0x3fb00000, 0x0e, 0x0e, "mid tie"},
};

TEST_CASE("float_cast: embedded encode key vectors (plain, saturating, from f64)") {
  for (const EncodeVector& v : kEncodeVectors) {
    CAPTURE(PrimitiveTypeName(v.type));
    CAPTURE(v.what);
    CAPTURE(v.f32_bits);
    float f = FromBits(v.f32_bits);
    CHECK(EncodeFromF32(v.type, f) == v.plain);
    CHECK(EncodeFromF64(v.type, static_cast<double>(f)) == v.plain);
    if (v.sat != kNoSat) CHECK(EncodeFromF32Saturating(v.type, f) == static_cast<uint32_t>(v.sat));
  }
}

struct DecodeVector {
  PrimitiveType type;
  uint32_t code;
  uint32_t f32_bits;  // for NaN rows: only "is NaN" and this sign bit are compared
  bool nan;
};

constexpr DecodeVector kDecodeVectors[] = {
    {P::kBF16, 0x7f7f, 0x7f7f0000, false},  // max finite
    {P::kBF16, 0x0001, 0x00010000, false},  // min subnormal (an f32 subnormal)
    {P::kBF16, 0x8000, 0x80000000, false},  // -0
    {P::kBF16, 0xff80, 0xff800000, false},  // -Inf
    {P::kF16, 0x7bff, 0x477fe000, false},   // 65504
    {P::kF16, 0x0001, 0x33800000, false},   // 2^-24
    {P::kF16, 0xfc00, 0xff800000, false},   // -Inf
    {P::kF16, 0xfe00, 0xffc00000, true},    // -NaN
    {P::kF8E5M2, 0x7b, 0x47600000, false},  // 57344
    {P::kF8E5M2, 0x01, 0x37800000, false},  // 2^-16
    {P::kF8E5M2, 0x7c, 0x7f800000, false},  // +Inf
    {P::kF8E5M2, 0xfd, 0xffc00000, true},         {P::kF8E4M3FN, 0x7e, 0x43e00000, false},  // 448
    {P::kF8E4M3FN, 0x01, 0x3b000000, false},                                                // 2^-9
    {P::kF8E4M3FN, 0x7f, 0x7fc00000, true},       {P::kF8E4M3FN, 0xff, 0xffc00000, true},
    {P::kF8E4M3FN, 0x80, 0x80000000, false},                                              // -0
    {P::kF8E4M3, 0x77, 0x43700000, false},                                                // 240
    {P::kF8E4M3, 0x78, 0x7f800000, false},                                                // +Inf
    {P::kF8E4M3, 0xf9, 0xffc00000, true},         {P::kF8E3M4, 0x6f, 0x41780000, false},  // 15.5
    {P::kF8E3M4, 0x01, 0x3c800000, false},                                                // 2^-6
    {P::kF8E3M4, 0xf0, 0xff800000, false},                                                // -Inf
    {P::kF8E4M3FNUZ, 0x7f, 0x43700000, false},                                            // 240
    {P::kF8E4M3FNUZ, 0x01, 0x3a800000, false},                                            // 2^-10
    {P::kF8E4M3FNUZ, 0x80, 0xffc00000, true},                                             // the only NaN, sign bit set
    {P::kF8E5M2FNUZ, 0x7f, 0x47600000, false},                                            // 57344
    {P::kF8E5M2FNUZ, 0x01, 0x37000000, false},                                            // 2^-17
    {P::kF8E5M2FNUZ, 0x80, 0xffc00000, true},     {P::kF8E4M3B11FNUZ, 0x7f, 0x41f00000, false},  // 30
    {P::kF8E4M3B11FNUZ, 0x01, 0x39000000, false},                                                // 2^-13
    {P::kF8E4M3B11FNUZ, 0xff, 0xc1f00000, false},                                                // -30
    {P::kF4E2M1FN, 0x7, 0x40c00000, false},                                                      // 6
    {P::kF4E2M1FN, 0x1, 0x3f000000, false},                                                      // 0.5
    {P::kF4E2M1FN, 0x8, 0x80000000, false},                                                      // -0
    {P::kF4E2M1FN, 0xf, 0xc0c00000, false},                                                      // -6
    {P::kF6E2M3FN, 0x1f, 0x40f00000, false},                                                     // 7.5
    {P::kF6E2M3FN, 0x01, 0x3e000000, false},                                                     // 0.125
    {P::kF6E2M3FN, 0x20, 0x80000000, false},                                                     // -0
    {P::kF6E3M2FN, 0x1f, 0x41e00000, false},                                                     // 28
    {P::kF6E3M2FN, 0x01, 0x3d800000, false},                                                     // 0.0625
    {P::kF6E3M2FN, 0x3f, 0xc1e00000, false},                                                     // -28
    {P::kF8E8M0FNU, 0x00, 0x00400000, false},  // 2^-127, an f32 subnormal
    {P::kF8E8M0FNU, 0x7f, 0x3f800000, false},  // 1.0
    {P::kF8E8M0FNU, 0xfe, 0x7f000000, false},  // 2^127
    {P::kF8E8M0FNU, 0xff, 0x7fc00000, true},
};

bool SameDecode(float got, uint32_t want_bits, bool want_nan) {
  if (want_nan) return std::isnan(got) && std::signbit(got) == ((want_bits >> 31) != 0);
  return Bits(got) == want_bits;
}

TEST_CASE("float_cast: embedded decode key vectors") {
  for (const DecodeVector& v : kDecodeVectors) {
    CAPTURE(PrimitiveTypeName(v.type));
    CAPTURE(v.code);
    CHECK(SameDecode(DecodeToF32(v.type, v.code), v.f32_bits, v.nan));
  }
  // Payload handling: Eigen widens bf16/f16 NaNs by shifting (payload kept, sNaN not quieted).
  CHECK(Bits(DecodeToF32(P::kBF16, 0x7f81)) == 0x7f810000u);
  CHECK(Bits(DecodeToF32(P::kF16, 0x7c01)) == 0x7f802000u);
  // The f8 types return the canonical quiet NaN with the code's sign.
  CHECK(Bits(DecodeToF32(P::kF8E5M2, 0x7d)) == 0x7fc00000u);
  CHECK(Bits(DecodeToF32(P::kF8E4M3FN, 0xff)) == 0xffc00000u);
  CHECK(Bits(DecodeToF32(P::kF8E4M3FNUZ, 0x80)) == 0xffc00000u);
}

TEST_CASE("float_cast: quirks and double inputs") {
  // f4/f6: +NaN -> the -0 code, -NaN -> +0 (ml_dtypes quiet_NaN quirk).
  CHECK(EncodeFromF32(P::kF4E2M1FN, std::numeric_limits<float>::quiet_NaN()) == 0x8u);
  CHECK(EncodeFromF32(P::kF4E2M1FN, -std::numeric_limits<float>::quiet_NaN()) == 0x0u);
  CHECK(EncodeFromF32(P::kF6E3M2FN, std::numeric_limits<float>::quiet_NaN()) == 0x20u);
  // E8M0: the (2^-127, 2^-126) range goes to code 1; ties at 1.5*2^k go up.
  CHECK(EncodeFromF32(P::kF8E8M0FNU, 1.2f * std::ldexp(1.0f, -127)) == 0x01u);
  CHECK(EncodeFromF32(P::kF8E8M0FNU, std::ldexp(1.0f, -127)) == 0x00u);
  CHECK(EncodeFromF32(P::kF8E8M0FNU, 6.0f) == 0x82u);  // 1.5 * 2^2 -> 2^3
  CHECK(EncodeFromF32(P::kF8E8M0FNU, 5.9f) == 0x81u);  // -> 2^2
  CHECK(EncodeFromF32(P::kF8E8M0FNU, 0.0f) == 0xffu);
  CHECK(EncodeFromF32Saturating(P::kF8E8M0FNU, -3.0f) == 0x00u);
  CHECK(EncodeFromF32Saturating(P::kF8E8M0FNU, 3.0e38f) == 0xfeu);
  // Saturation leaves Inf/NaN alone.
  CHECK(EncodeFromF32Saturating(P::kF8E4M3FN, std::numeric_limits<float>::infinity()) == 0x7fu);
  CHECK(EncodeFromF32Saturating(P::kF8E5M2, -std::numeric_limits<float>::infinity()) == 0xfcu);
  CHECK(EncodeFromF32Saturating(P::kF8E4M3FNUZ, 1e6f) == 0x7fu);
  CHECK(EncodeFromF32Saturating(P::kF8E4M3FNUZ, -1e6f) == 0xffu);
  // f8 types round a double once: 448 + 16 + tiny is above the e4m3fn tie -> NaN, although
  // (float) of it would be exactly the tie 464 (which goes to 448).
  const double above_tie = 464.0 + std::ldexp(1.0, -40);
  CHECK(static_cast<float>(above_tie) == 464.0f);
  CHECK(EncodeFromF64(P::kF8E4M3FN, above_tie) == 0x7fu);
  CHECK(EncodeFromF32(P::kF8E4M3FN, 464.0f) == 0x7eu);
  // bf16/f16 go through float (double rounding, as Eigen): 1 + 2^-8 + 2^-30 rounds to float
  // 1 + 2^-8, the bf16 tie, which goes to even 1.0; a single rounding would give 1 + 2^-7.
  const double bf16_case = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  CHECK(EncodeFromF64(P::kBF16, bf16_case) == 0x3f80u);
  CHECK(EncodeFromF64(P::kF32, 1.0 / 3.0) == Bits(static_cast<float>(1.0 / 3.0)));
  // Huge and tiny doubles.
  CHECK(EncodeFromF64(P::kF8E5M2, 1e300) == 0x7cu);
  CHECK(EncodeFromF64(P::kF8E4M3FN, -1e-300) == 0x80u);
  CHECK(EncodeFromF64(P::kF8E5M2FNUZ, -1e-300) == 0x00u);
  CHECK(EncodeFromF64(P::kF8E8M0FNU, 1e-300) == 0x00u);
  CHECK(EncodeFromF64(P::kF4E2M1FN, 1e300) == 0x7u);
}

TEST_CASE("float_cast: E8M0 host vs device decode") {
  CHECK(DecodeToF32(P::kF8E8M0FNU, 0x7f) == 1.0f);
  CHECK(DecodeE8M0DeviceRaw(0x7f) == 127.0f);
  CHECK(DecodeE8M0DeviceRaw(0x00) == 0.0f);
  CHECK(DecodeE8M0DeviceRaw(0xff) == 255.0f);
  CHECK(DecodeToF32(P::kF8E8M0FNU, 0x81) == 4.0f);
}

TEST_CASE("float_cast: float32r rounding") {
  CHECK(RoundToFloat32r(1.0f) == 1.0f);
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10: to even (1.0).
  CHECK(RoundToFloat32r(1.0f + std::ldexp(1.0f, -11)) == 1.0f);
  // 1 + 3*2^-11 ties between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  CHECK(RoundToFloat32r(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
  CHECK(RoundToFloat32r(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 1.0f + std::ldexp(1.0f, -10));
  CHECK(Bits(RoundToFloat32r(-0.0f)) == 0x80000000u);
  CHECK(std::isinf(RoundToFloat32r(std::numeric_limits<float>::max())));
  CHECK(RoundToFloat32r(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(RoundToFloat32r(std::numeric_limits<float>::quiet_NaN())));
  CHECK((Bits(RoundToFloat32r(3.14159f)) & 0x1fffu) == 0u);
}

TEST_CASE("float_cast: float -> integer convert") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(ConvertFloatToSignedInt(P::kS8, 127.9) == 127);
  CHECK(ConvertFloatToSignedInt(P::kS8, -128.9) == -128);
  CHECK(ConvertFloatToSignedInt(P::kS8, 1e10) == 127);
  CHECK(ConvertFloatToSignedInt(P::kS8, -2.7) == -2);
  CHECK(ConvertFloatToSignedInt(P::kS8, nan) == 0);
  CHECK(ConvertFloatToSignedInt(P::kS32, 2147483648.0) == 2147483647);
  CHECK(ConvertFloatToSignedInt(P::kS32, -inf) == -2147483647 - 1);
  CHECK(ConvertFloatToSignedInt(P::kS64, 9.3e18) == std::numeric_limits<int64_t>::max());
  CHECK(ConvertFloatToSignedInt(P::kS64, -9.3e18) == std::numeric_limits<int64_t>::min());
  CHECK(ConvertFloatToSignedInt(P::kS64, -4611686018427387904.0) == -4611686018427387904LL);
  CHECK(ConvertFloatToSignedInt(P::kS4, 7.5) == 7);
  CHECK(ConvertFloatToSignedInt(P::kS4, 9.0) == 7);
  CHECK(ConvertFloatToSignedInt(P::kS4, -9.0) == -8);
  CHECK(ConvertFloatToSignedInt(P::kS2, -1.5) == -1);
  CHECK(ConvertFloatToSignedInt(P::kS2, 5.0) == 1);
  CHECK(ConvertFloatToSignedInt(P::kS1, 0.9) == 0);
  CHECK(ConvertFloatToSignedInt(P::kS1, -3.0) == -1);
  CHECK(ConvertFloatToUnsignedInt(P::kU8, -0.5) == 0u);
  CHECK(ConvertFloatToUnsignedInt(P::kU8, -100.0) == 0u);
  CHECK(ConvertFloatToUnsignedInt(P::kU8, 255.99) == 255u);
  CHECK(ConvertFloatToUnsignedInt(P::kU8, 1e9) == 255u);
  CHECK(ConvertFloatToUnsignedInt(P::kU8, nan) == 0u);
  CHECK(ConvertFloatToUnsignedInt(P::kU4, 20.0) == 15u);
  CHECK(ConvertFloatToUnsignedInt(P::kU1, 1.5) == 1u);
  CHECK(ConvertFloatToUnsignedInt(P::kU32, 4294967296.0) == 4294967295u);
  CHECK(ConvertFloatToUnsignedInt(P::kU64, inf) == std::numeric_limits<uint64_t>::max());
  CHECK(ConvertFloatToUnsignedInt(P::kU64, 1.8446744073709552e19) == std::numeric_limits<uint64_t>::max());
  CHECK(ConvertFloatToUnsignedInt(P::kU64, 9223372036854775808.0) == 9223372036854775808ull);
}

TEST_CASE("float_cast: limits and properties") {
  CHECK(MaxFinite(P::kF8E4M3FN) == 448.0);
  CHECK(MaxFinite(P::kF8E5M2) == 57344.0);
  CHECK(MaxFinite(P::kF8E4M3) == 240.0);
  CHECK(MaxFinite(P::kF8E3M4) == 15.5);
  CHECK(MaxFinite(P::kF8E4M3FNUZ) == 240.0);
  CHECK(MaxFinite(P::kF8E5M2FNUZ) == 57344.0);
  CHECK(MaxFinite(P::kF8E4M3B11FNUZ) == 30.0);
  CHECK(MaxFinite(P::kF4E2M1FN) == 6.0);
  CHECK(MaxFinite(P::kF6E2M3FN) == 7.5);
  CHECK(MaxFinite(P::kF6E3M2FN) == 28.0);
  CHECK(MaxFinite(P::kF8E8M0FNU) == std::ldexp(1.0, 127));
  CHECK(MaxFinite(P::kF16) == 65504.0);
  CHECK(static_cast<float>(MaxFinite(P::kBF16)) == FromBits(0x7f7f0000));
  CHECK(MaxFinite(P::kF32) == static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(MaxFinite(P::kS8) == 127.0);
  CHECK(MaxFinite(P::kU16) == 65535.0);
  CHECK(MinSubnormal(P::kF8E4M3FNUZ) == std::ldexp(1.0, -10));
  CHECK(MinSubnormal(P::kBF16) == std::ldexp(1.0, -133));
  CHECK(MinSubnormal(P::kF8E8M0FNU) == std::ldexp(1.0, -127));

  const PrimitiveType with_inf[] = {P::kF16, P::kBF16, P::kF8E5M2, P::kF8E4M3, P::kF8E3M4, P::kF32, P::kF64};
  const PrimitiveType without_inf[] = {P::kF8E4M3FN,      P::kF8E4M3FNUZ, P::kF8E5M2FNUZ,
                                       P::kF8E4M3B11FNUZ, P::kF4E2M1FN,   P::kF6E2M3FN,
                                       P::kF6E3M2FN,      P::kF8E8M0FNU,  P::kS32};
  for (PrimitiveType t : with_inf) CHECK(HasInfinity(t));
  for (PrimitiveType t : without_inf) CHECK_FALSE(HasInfinity(t));
  CHECK(HasNaN(P::kF8E4M3FN));
  CHECK(HasNaN(P::kF8E8M0FNU));
  CHECK(HasNaN(P::kF8E5M2FNUZ));
  CHECK_FALSE(HasNaN(P::kF4E2M1FN));
  CHECK_FALSE(HasNaN(P::kF6E2M3FN));
  CHECK_FALSE(HasNaN(P::kF6E3M2FN));
  CHECK_FALSE(HasNaN(P::kS8));
  CHECK(HasNegativeZero(P::kF4E2M1FN));
  CHECK_FALSE(HasNegativeZero(P::kF8E4M3FNUZ));
  CHECK_FALSE(HasNegativeZero(P::kF8E8M0FNU));
  CHECK(IsCastableLowPrecisionFloat(P::kF8E4M3B11FNUZ));
  CHECK_FALSE(IsCastableLowPrecisionFloat(P::kF32));
}

TEST_CASE("float_cast: every code decodes and re-encodes to itself") {
  const PrimitiveType types[] = {P::kF16,      P::kBF16,       P::kF8E5M2,     P::kF8E4M3FN,      P::kF8E4M3,
                                 P::kF8E3M4,   P::kF8E4M3FNUZ, P::kF8E5M2FNUZ, P::kF8E4M3B11FNUZ, P::kF4E2M1FN,
                                 P::kF6E2M3FN, P::kF6E3M2FN,   P::kF8E8M0FNU};
  for (PrimitiveType t : types) {
    CAPTURE(PrimitiveTypeName(t));
    int bits = BitWidth(t);
    int mismatches = 0;
    for (uint32_t code = 0; code < (1u << bits); ++code) {
      float f = DecodeToF32(t, code);
      if (std::isnan(f)) continue;  // NaN codes collapse onto the canonical NaN
      if (EncodeFromF32(t, f) != code) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

// ---- exhaustive comparison with the shared oracle tables ----

std::string FindSharedTables() { return nhlo::testing::SharedTablesDir(); }

struct TableStats {
  int64_t lines = 0;
  int64_t mismatches = 0;
  std::string first_mismatch;
};

enum class TableKind { kDecode, kEncode, kEncodeSat };

// f16 NaN payloads depend on whether the oracle used the F16C instructions (NUMERICS.md §1),
// so for f16 a NaN is compared as "NaN with this sign" in both directions.
bool SameEncoded(PrimitiveType t, uint32_t got, uint32_t want) {
  if (got == want) return true;
  if (t != P::kF16) return false;
  float g = DecodeToF32(t, got);
  float w = DecodeToF32(t, want);
  return std::isnan(g) && std::isnan(w) && std::signbit(g) == std::signbit(w);
}

void CheckTable(const std::string& path, PrimitiveType t, TableKind kind, TableStats& stats) {
  FILE* file = std::fopen(path.c_str(), "r");
  REQUIRE_MESSAGE(file != nullptr, "cannot open " << path);
  char line[256];
  while (std::fgets(line, sizeof line, file) != nullptr) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char* end = nullptr;
    uint32_t in = static_cast<uint32_t>(std::strtoul(line, &end, 16));
    uint32_t want = static_cast<uint32_t>(std::strtoul(end, &end, 16));
    bool want_nan = std::strstr(end, "nan") != nullptr;
    ++stats.lines;
    bool ok = false;
    uint32_t got = 0;
    switch (kind) {
      case TableKind::kDecode: {
        float f = DecodeToF32(t, in);
        got = Bits(f);
        ok = SameDecode(f, want, want_nan);
        break;
      }
      case TableKind::kEncode: {
        float f = FromBits(in);
        got = EncodeFromF32(t, f);
        // f64 inputs holding the same value must give the same code.
        ok = SameEncoded(t, got, want) && EncodeFromF64(t, static_cast<double>(f)) == got;
        break;
      }
      case TableKind::kEncodeSat:
        got = EncodeFromF32Saturating(t, FromBits(in));
        ok = SameEncoded(t, got, want);
        break;
    }
    if (!ok) {
      if (stats.mismatches == 0) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s: in 0x%x want 0x%x got 0x%x", path.c_str(), in, want, got);
        stats.first_mismatch = buf;
      }
      ++stats.mismatches;
    }
  }
  std::fclose(file);
}

TEST_CASE("float_cast: 0 mismatches against every shared numerics table" *
          doctest::skip(nhlo::testing::SharedTablesMissing())) {
  const std::string dir = FindSharedTables();
  REQUIRE_MESSAGE(!dir.empty(), "NHLO_SHARED_DIR names no numerics/tables folder");
  int decode_files = 0;
  int encode_files = 0;
  int sat_files = 0;
  TableStats stats;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    // Names are <type>.<kind>.txt with the type's HLO spelling; mx_*.txt and summary.txt are
    // other kinds of file.
    std::string name = entry.path().filename().string();
    size_t first_dot = name.find('.');
    if (first_dot == std::string::npos || name.size() < 4 || name.compare(name.size() - 4, 4, ".txt") != 0) continue;
    std::string kind_text = name.substr(first_dot + 1, name.size() - 4 - first_dot - 1);
    TableKind kind;
    if (kind_text == "decode") {
      kind = TableKind::kDecode;
      ++decode_files;
    } else if (kind_text == "encode") {
      kind = TableKind::kEncode;
      ++encode_files;
    } else if (kind_text == "encode_sat") {
      kind = TableKind::kEncodeSat;
      ++sat_files;
    } else {
      continue;
    }
    std::optional<PrimitiveType> type = PrimitiveTypeFromName(name.substr(0, first_dot));
    REQUIRE_MESSAGE(type.has_value(), "table for an unknown type: " << name);
    CheckTable(entry.path().string(), *type, kind, stats);
  }
  REQUIRE(!ec);
  MESSAGE("compared " << stats.lines << " table lines from " << decode_files << " decode, " << encode_files
                      << " encode, " << sat_files << " encode_sat tables; " << stats.mismatches << " mismatches");
  // 13 types have decode and plain-encode tables; the 11 f8/f6/f4 ones also a saturating one.
  CHECK(decode_files == 13);
  CHECK(encode_files == 13);
  CHECK(sat_files == 11);
  CHECK_MESSAGE(stats.mismatches == 0, stats.first_mismatch);
}

}  // namespace
}  // namespace nhlo

TEST_CASE("bf16 and f16 fast encoders give the generic rounding's codes") {
  using namespace nhlo;
  // Every sign, exponent and top mantissa pattern (the upper 24 bits, in steps of 7 to keep the
  // sanitizer build quick) with low bytes at the rounding boundaries.
  for (PrimitiveType t : {PrimitiveType::kBF16, PrimitiveType::kF16}) {
    int64_t mismatches = 0;
    for (uint32_t upper = 0; upper < (1u << 24); upper += 7) {
      for (uint32_t low : {0x00u, 0x01u, 0x7fu, 0x80u, 0x81u, 0xffu}) {
        float v = std::bit_cast<float>(upper << 8 | low);
        if (EncodeFromF32(t, v) != EncodeFromF32Slow(t, v)) ++mismatches;
      }
    }
    for (uint32_t bits : {0x7f800000u, 0xff800000u, 0x7fc00001u, 0xffbfffffu, 0x477fefffu, 0x477ff000u, 0x38800000u,
                          0x387fffffu, 0x33000000u, 0x33000001u, 0x00000001u, 0x80000000u, 0x7f7fffffu})
      if (EncodeFromF32(t, std::bit_cast<float>(bits)) != EncodeFromF32Slow(t, std::bit_cast<float>(bits)))
        ++mismatches;
    CHECK_MESSAGE(mismatches == 0, PrimitiveTypeName(t));
  }
}
