// SPDX-License-Identifier: Apache-2.0
// Dense row-major matrix products for the dot and convolution kernels, computed by Eigen's
// GEMM compiled once per x86 ISA level (AVX-512, AVX2+FMA, baseline) and picked at run time.
// Results depend only on the shape and the ISA picked: the blocking is fixed (not read from
// the cache sizes) and the output is cut into tiles whose boundaries depend only on m and n, so
// every --threads value gives the same bits. See docs/interpreter-performance.md.
#pragma once

#include <cstdint>

namespace nhlo {

/// The instruction set the GEMM runs with. kBaseline is the build's default target (SSE2 on
/// x86-64, no FMA); the others need the CPU features their names say (and FMA).
enum class GemmIsa : uint8_t { kBaseline, kAvx2, kAvx512 };

/// The best ISA this CPU and this build support.
GemmIsa BestGemmIsa();
/// The ISA GemmF32/GemmF64 use now: BestGemmIsa() unless SetGemmIsa chose another.
GemmIsa ActiveGemmIsa();
/// Makes the GEMM use `isa` (for tests and benchmarks); false, with nothing changed, when the
/// CPU or the build does not support it. Not to be called while a GEMM runs.
bool SetGemmIsa(GemmIsa isa);
/// "avx512", "avx2", or "sse2" ("generic" off x86-64).
const char* GemmIsaName(GemmIsa isa);

/// For each of `batch` problems: c[b] (m x n) = a[b] (m x k) * b[b] (k x n), all dense and
/// row-major, the problems stored one after another. With a_t, a[b] is stored as its transpose
/// (k x m), with b_t b[b] as n x k: the packing reads either layout, and the bits are the same
/// as for the transposed copy. c may not overlap a or b. Tiles of the output run in parallel
/// through ParallelFor.
void GemmF32(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a, bool a_t, const float* b, bool b_t,
             float* c);
void GemmF64(int64_t batch, int64_t m, int64_t n, int64_t k, const double* a, bool a_t, const double* b, bool b_t,
             double* c);

/// One problem as GemmF32/GemmF64, with c's rows ldc elements apart (ldc >= n): the product
/// written straight into columns of a wider matrix, the elements between its rows untouched.
/// The tiles and bits are those of the dense call with the same m, n and k.
void GemmF32Into(int64_t m, int64_t n, int64_t k, const float* a, bool a_t, const float* b, bool b_t, float* c,
                 int64_t ldc);
void GemmF64Into(int64_t m, int64_t n, int64_t k, const double* a, bool a_t, const double* b, bool b_t, double* c,
                 int64_t ldc);

namespace gemm_internal {

/// Eigen's blocking for one tile: kc (depth), mc (rows of the packed left panel, our n since
/// the row-major product runs transposed) and nc (our m).
struct Blocking {
  int64_t kc, mc, nc;
};

/// One tile's operands: a is m x k (k x m when a_t) with row stride lda, b is k x n (n x k when
/// b_t) with row stride ldb, c is m x n with row stride ldc.
template <typename T>
struct Tile {
  int64_t m, n, k;
  const T* a;
  int64_t lda;
  bool a_t;
  const T* b;
  int64_t ldb;
  bool b_t;
  T* c;
  int64_t ldc;
};

// One tile, c overwritten with a * b.
#define NHLO_GEMM_DECLARE(Isa)                                           \
  void GemmTileF32##Isa(const Tile<float>& t, const Blocking& blocking); \
  void GemmTileF64##Isa(const Tile<double>& t, const Blocking& blocking);
NHLO_GEMM_DECLARE(Baseline)
NHLO_GEMM_DECLARE(Avx2)
NHLO_GEMM_DECLARE(Avx512)
#undef NHLO_GEMM_DECLARE

}  // namespace gemm_internal
}  // namespace nhlo
