// SPDX-License-Identifier: Apache-2.0
// GEMM dispatch: picks the ISA once, fixes Eigen's blocking from the problem's shape alone and
// cuts each product into output tiles that ParallelFor spreads over the threads. A tile is its
// own Eigen product; its boundaries depend only on the shape, so the bits do not depend on the
// thread count (or on this machine's cache sizes, which Eigen would otherwise query).
#include "interp/gemm.h"

#include "support/parallel.h"

namespace nhlo {
namespace {

using gemm_internal::Blocking;

// Tile sizes (rows of A / columns of B per tile) and the depth of one packed block. Chosen by
// measurement on an AVX-512 core; any fixed values give deterministic results. kTileN is a
// multiple of 48, three AVX-512 float packets: see docs/interpreter-performance.md for why.
constexpr int64_t kTileM = 256;
constexpr int64_t kTileN = 480;
constexpr int64_t kMaxKc = 256;
constexpr int64_t kMinTiles = 4;

bool CpuHasAvx2() {
#if defined(NHLO_GEMM_X86)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

bool CpuHasAvx512() {
#if defined(NHLO_GEMM_X86)
  return CpuHasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#else
  return false;
#endif
}

GemmIsa& Active() {
  static GemmIsa isa = BestGemmIsa();
  return isa;
}

// The depth block: all of k when it is small, else k cut into equal blocks of at most kMaxKc
// (rounded up to a multiple of 8), so the last block is not a sliver.
int64_t DepthBlock(int64_t k) {
  if (k <= kMaxKc) return k < 1 ? 1 : k;
  int64_t blocks = (k + kMaxKc - 1) / kMaxKc;
  int64_t kc = (k + blocks - 1) / blocks;
  return (kc + 7) / 8 * 8;
}

template <typename T, typename TileFn>
void Run(int64_t batch, int64_t m, int64_t n, int64_t k, const T* a, bool a_t, const T* b, bool b_t, T* c, int64_t ldc,
         TileFn tile_fn) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  // Fewer than kMinTiles tiles: smaller row tiles (down to 64 rows), so that a mid-sized product
  // still spreads over a few threads. Depends only on the shape, like everything here.
  int64_t tile_m = kTileM, tiles_n = (n + kTileN - 1) / kTileN;
  while (tile_m > 64 && batch * tiles_n * ((m + tile_m - 1) / tile_m) < kMinTiles) tile_m /= 2;
  int64_t tiles_m = (m + tile_m - 1) / tile_m;
  int64_t per_batch = tiles_m * tiles_n;
  int64_t kc = DepthBlock(k);
  // Small tiles (a batch of small products) go to the threads a few at a time. Grouping tiles
  // does not change how each is computed.
  int64_t tile_work = (m < tile_m ? m : tile_m) * (n < kTileN ? n : kTileN) * (k < 1 ? 1 : k);
  ParallelFor(batch * per_batch, ChunkFor(tile_work, 1 << 20), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t bi = t / per_batch, ti = (t % per_batch) / tiles_n, tj = t % tiles_n;
      int64_t i0 = ti * tile_m, j0 = tj * kTileN;
      int64_t tm = m - i0 < tile_m ? m - i0 : tile_m, tn = n - j0 < kTileN ? n - j0 : kTileN;
      const T* ab = a + bi * m * k;
      const T* bb = b + bi * k * n;
      gemm_internal::Tile<T> tile{tm,
                                  tn,
                                  k,
                                  a_t ? ab + i0 : ab + i0 * k,
                                  a_t ? m : k,
                                  a_t,
                                  b_t ? bb + j0 * k : bb + j0,
                                  b_t ? k : n,
                                  b_t,
                                  c + bi * m * ldc + i0 * ldc + j0,
                                  ldc};
      tile_fn(tile, Blocking{kc, tn, tm});
    }
  });
}

}  // namespace

GemmIsa BestGemmIsa() {
  if (CpuHasAvx512()) return GemmIsa::kAvx512;
  if (CpuHasAvx2()) return GemmIsa::kAvx2;
  return GemmIsa::kBaseline;
}

GemmIsa ActiveGemmIsa() { return Active(); }

bool SetGemmIsa(GemmIsa isa) {
  bool ok = isa == GemmIsa::kBaseline || (isa == GemmIsa::kAvx2 && CpuHasAvx2()) ||
            (isa == GemmIsa::kAvx512 && CpuHasAvx512());
  if (ok) Active() = isa;
  return ok;
}

const char* GemmIsaName(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx512: return "avx512";
    case GemmIsa::kAvx2: return "avx2";
    case GemmIsa::kBaseline:
#if defined(NHLO_GEMM_X86)
      return "sse2";
#else
      return "generic";
#endif
  }
  return "unknown";
}

void GemmF32(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a, bool a_t, const float* b, bool b_t,
             float* c) {
  using namespace gemm_internal;
  switch (Active()) {
#if defined(NHLO_GEMM_X86)
    case GemmIsa::kAvx512: return Run(batch, m, n, k, a, a_t, b, b_t, c, n, GemmTileF32Avx512);
    case GemmIsa::kAvx2: return Run(batch, m, n, k, a, a_t, b, b_t, c, n, GemmTileF32Avx2);
#else
    case GemmIsa::kAvx512:
    case GemmIsa::kAvx2:
#endif
    case GemmIsa::kBaseline: return Run(batch, m, n, k, a, a_t, b, b_t, c, n, GemmTileF32Baseline);
  }
}

void GemmF64(int64_t batch, int64_t m, int64_t n, int64_t k, const double* a, bool a_t, const double* b, bool b_t,
             double* c) {
  using namespace gemm_internal;
  switch (Active()) {
#if defined(NHLO_GEMM_X86)
    case GemmIsa::kAvx512: return Run(batch, m, n, k, a, a_t, b, b_t, c, n, GemmTileF64Avx512);
    case GemmIsa::kAvx2: return Run(batch, m, n, k, a, a_t, b, b_t, c, n, GemmTileF64Avx2);
#else
    case GemmIsa::kAvx512:
    case GemmIsa::kAvx2:
#endif
    case GemmIsa::kBaseline: return Run(batch, m, n, k, a, a_t, b, b_t, c, n, GemmTileF64Baseline);
  }
}

void GemmF32Into(int64_t m, int64_t n, int64_t k, const float* a, bool a_t, const float* b, bool b_t, float* c,
                 int64_t ldc) {
  using namespace gemm_internal;
  switch (Active()) {
#if defined(NHLO_GEMM_X86)
    case GemmIsa::kAvx512: return Run(1, m, n, k, a, a_t, b, b_t, c, ldc, GemmTileF32Avx512);
    case GemmIsa::kAvx2: return Run(1, m, n, k, a, a_t, b, b_t, c, ldc, GemmTileF32Avx2);
#else
    case GemmIsa::kAvx512:
    case GemmIsa::kAvx2:
#endif
    case GemmIsa::kBaseline: return Run(1, m, n, k, a, a_t, b, b_t, c, ldc, GemmTileF32Baseline);
  }
}

void GemmF64Into(int64_t m, int64_t n, int64_t k, const double* a, bool a_t, const double* b, bool b_t, double* c,
                 int64_t ldc) {
  using namespace gemm_internal;
  switch (Active()) {
#if defined(NHLO_GEMM_X86)
    case GemmIsa::kAvx512: return Run(1, m, n, k, a, a_t, b, b_t, c, ldc, GemmTileF64Avx512);
    case GemmIsa::kAvx2: return Run(1, m, n, k, a, a_t, b, b_t, c, ldc, GemmTileF64Avx2);
#else
    case GemmIsa::kAvx512:
    case GemmIsa::kAvx2:
#endif
    case GemmIsa::kBaseline: return Run(1, m, n, k, a, a_t, b, b_t, c, ldc, GemmTileF64Baseline);
  }
}

}  // namespace nhlo
