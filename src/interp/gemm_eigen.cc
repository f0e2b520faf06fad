// SPDX-License-Identifier: Apache-2.0
// One GEMM tile through Eigen's general_matrix_matrix_product with a fixed blocking. meson
// compiles this file once per ISA level with -DNHLO_GEMM_ISA=Avx512|Avx2|Baseline and that
// level's -m flags; gemm.cc picks one at run time.
//
// `Eigen` is renamed per ISA (a macro, so every Eigen template here gets its own mangled name):
// without it the linker would merge the AVX-512, AVX2 and SSE2 instantiations of the same Eigen
// functions and keep an arbitrary one. These files are built without -ffp-contract=off: the
// FMAs are intended (Eigen's packet kernels call them explicitly; contraction makes its scalar
// tails fuse too).
#ifndef NHLO_GEMM_ISA
#error "compile with -DNHLO_GEMM_ISA=<Avx512|Avx2|Baseline>"
#endif

#define NHLO_GEMM_CAT2(a, b) a##b
#define NHLO_GEMM_CAT(a, b) NHLO_GEMM_CAT2(a, b)
#define Eigen NHLO_GEMM_CAT(NhloEigen, NHLO_GEMM_ISA)
#define EIGEN_DONT_PARALLELIZE 1
#define EIGEN_NO_DEBUG 1

#include <Eigen/Core>

#include "interp/gemm.h"

namespace nhlo::gemm_internal {
namespace {

// Eigen's blocking object with sizes we choose instead of ones derived from the cache sizes it
// queries; null blocks make Eigen allocate the packing buffers per call.
template <typename T>
class FixedBlocking : public Eigen::internal::level3_blocking<T, T> {
 public:
  explicit FixedBlocking(const Blocking& b) {
    this->m_kc = b.kc;
    this->m_mc = b.mc;
    this->m_nc = b.nc;
  }
};

template <typename T, int LhsOrder, int RhsOrder>
void Product(const Tile<T>& t, FixedBlocking<T>& blocking) {
  using P = Eigen::internal::general_matrix_matrix_product<Eigen::Index, T, LhsOrder, false, T, RhsOrder, false,
                                                           Eigen::ColMajor, 1>;
  P::run(t.n, t.m, t.k, t.b, t.ldb, t.a, t.lda, t.c, 1, t.ldc, T(1), blocking, nullptr);
}

template <typename T>
void RunTile(const Tile<T>& t, const Blocking& blocking) {
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) t.c[i * t.ldc + j] = T(0);
  if (t.k == 0) return;
  FixedBlocking<T> fixed(blocking);
  // Row-major C = A * B is column-major C^T = B^T * A^T. B stored k x n row-major is B^T
  // column-major; stored n x k it is B^T row-major. Likewise for A.
  constexpr int kCol = Eigen::ColMajor, kRow = Eigen::RowMajor;
  if (!t.b_t && !t.a_t)
    Product<T, kCol, kCol>(t, fixed);
  else if (!t.b_t && t.a_t)
    Product<T, kCol, kRow>(t, fixed);
  else if (t.b_t && !t.a_t)
    Product<T, kRow, kCol>(t, fixed);
  else
    Product<T, kRow, kRow>(t, fixed);
}

}  // namespace

void NHLO_GEMM_CAT(GemmTileF32, NHLO_GEMM_ISA)(const Tile<float>& t, const Blocking& blocking) { RunTile(t, blocking); }

void NHLO_GEMM_CAT(GemmTileF64, NHLO_GEMM_ISA)(const Tile<double>& t, const Blocking& blocking) {
  RunTile(t, blocking);
}

}  // namespace nhlo::gemm_internal
