// SPDX-License-Identifier: Apache-2.0
// The Eigen GEMM behind dot and convolution (src/interp/gemm.h): bit-identical results for
// every thread count and across the AVX-512 and AVX2 paths, accuracy against a double
// reference, and the dot and convolution kernels on layouts that need permuting, on bf16, on
// integers and on windows with padding, strides, dilations and groups.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "codegen/bundle_reader.h"
#include "interp/dense_operands.h"
#include "interp/float_blocks.h"
#include "interp/gemm.h"
#include "interp/kernels.h"
#include "support/parallel.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

// Restores the thread count and the ISA when a test ends.
struct Restore {
  GemmIsa isa = ActiveGemmIsa();
  int threads = ParallelThreads();
  ~Restore() {
    SetGemmIsa(isa);
    SetParallelThreads(threads);
  }
};

template <typename T>
std::vector<T> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> u(T(-1), T(1));
  std::vector<T> v(n);
  for (T& x : v) x = u(rng);
  return v;
}

template <typename T>
std::vector<T> RunGemm(int64_t batch, int64_t m, int64_t n, int64_t k, const std::vector<T>& a, const std::vector<T>& b,
                       bool a_t = false, bool b_t = false) {
  std::vector<T> c(static_cast<size_t>(batch * m * n), T(-7));
  if constexpr (std::is_same_v<T, float>)
    GemmF32(batch, m, n, k, a.data(), a_t, b.data(), b_t, c.data());
  else
    GemmF64(batch, m, n, k, a.data(), a_t, b.data(), b_t, c.data());
  return c;
}

// Each of `batch` rows x cols matrices transposed.
template <typename T>
std::vector<T> Transposed(const std::vector<T>& x, int64_t batch, int64_t rows, int64_t cols) {
  std::vector<T> y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) y[(b * cols + j) * rows + i] = x[(b * rows + i) * cols + j];
  return y;
}

struct Shape {
  int64_t batch, m, n, k;
};
const Shape kShapes[] = {{3, 257, 129, 300}, {1, 300, 1100, 531}, {2, 1, 700, 33}, {1, 65, 1, 1000}, {2, 77, 960, 301}};

template <typename T>
void CheckThreadsAndIsas() {
  Restore restore;
  std::vector<GemmIsa> isas = {GemmIsa::kBaseline};
  if (SetGemmIsa(GemmIsa::kAvx2)) isas.push_back(GemmIsa::kAvx2);
  if (SetGemmIsa(GemmIsa::kAvx512)) isas.push_back(GemmIsa::kAvx512);
  for (const Shape& s : kShapes) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    auto a = Random<T>(static_cast<size_t>(s.batch * s.m * s.k), 1);
    auto b = Random<T>(static_cast<size_t>(s.batch * s.k * s.n), 2);
    std::vector<std::vector<T>> per_isa;
    for (GemmIsa isa : isas) {
      CAPTURE(GemmIsaName(isa));
      REQUIRE(SetGemmIsa(isa));
      SetParallelThreads(1);
      std::vector<T> one = RunGemm(s.batch, s.m, s.n, s.k, a, b);
      for (int threads : {2, 3}) {
        SetParallelThreads(threads);
        std::vector<T> many = RunGemm(s.batch, s.m, s.n, s.k, a, b);
        CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(T)) == 0);
      }
      // Operands stored transposed give the same bits.
      auto at = Transposed(a, s.batch, s.m, s.k), bt = Transposed(b, s.batch, s.k, s.n);
      for (int layout = 1; layout < 4; ++layout) {
        CAPTURE(layout);
        std::vector<T> other =
            RunGemm(s.batch, s.m, s.n, s.k, layout & 1 ? at : a, layout & 2 ? bt : b, layout & 1, (layout & 2) != 0);
        CHECK(std::memcmp(one.data(), other.data(), one.size() * sizeof(T)) == 0);
      }
      // Against a double reference: |error| <= k * eps * sum |a||b| (a loose bound).
      double worst = 0;
      for (int64_t bi = 0; bi < s.batch; ++bi)
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t j = 0; j < s.n; ++j) {
            double ref = 0, mag = 0;
            for (int64_t p = 0; p < s.k; ++p) {
              double x = a[(bi * s.m + i) * s.k + p], y = b[(bi * s.k + p) * s.n + j];
              ref += x * y;
              mag += std::fabs(x * y);
            }
            double err = std::fabs(one[(bi * s.m + i) * s.n + j] - ref) / (mag > 0 ? mag : 1);
            worst = err > worst ? err : worst;
          }
      CHECK(worst <= static_cast<double>(s.k) * std::numeric_limits<T>::epsilon());
      per_isa.push_back(std::move(one));
    }
    // The two FMA paths agree bit for bit when n is a multiple of 48 (every column goes through
    // Eigen's three-packet kernel on both); other columns may differ in the last bits, see
    // docs/interpreter-performance.md.
    if (per_isa.size() == 3 && s.n % 48 == 0)
      CHECK(std::memcmp(per_isa[1].data(), per_isa[2].data(), per_isa[1].size() * sizeof(T)) == 0);
  }
}

TEST_CASE("gemm: f32 results are identical for 1, 2 and 3 threads") { CheckThreadsAndIsas<float>(); }
TEST_CASE("gemm: f64 results are identical for 1, 2 and 3 threads") { CheckThreadsAndIsas<double>(); }

TEST_CASE("dot kernel: the f32 -> bf16 store (the elementwise block codec) rounds as EncodeFromF32") {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65521) {
    for (uint32_t low : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      uint32_t b = (static_cast<uint32_t>(bits) & 0xffff0000u) | low;
      float v;
      std::memcpy(&v, &b, 4);
      uint8_t stored[2];
      EncodeFloatBlock(PrimitiveType::kBF16, &v, stored, 1);
      REQUIRE((stored[0] | stored[1] << 8) == EncodeFromF32(PrimitiveType::kBF16, v));
    }
  }
}

TEST_CASE("gemm: an ISA name for the benchmarks") {
  std::string name = GemmIsaName(BestGemmIsa());
  CHECK((name == "avx512" || name == "avx2" || name == "sse2" || name == "generic"));
}

// A buffer of `type` with `dims` filled from doubles.
struct TestBuf {
  BufferRecord rec;
  std::vector<uint8_t> bytes;
  TestBuf(PrimitiveType type, std::vector<int64_t> dims) {
    rec.type = type;
    rec.dims = std::move(dims);
    int64_t n = 1;
    for (int64_t d : rec.dims) n *= d;
    rec.size = static_cast<uint64_t>(n * HostByteSize(type));
    bytes.assign(rec.size, 0);
    bytes.resize(rec.size + kGuardBytes, kGuard);  // past the buffer: a kernel must leave it alone
  }
  static constexpr size_t kGuardBytes = 256;
  static constexpr uint8_t kGuard = 0xa5;
  bool GuardIntact() const {
    return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(rec.size), bytes.end(),
                       [](uint8_t b) { return b == kGuard; });
  }
  Buf buf() { return Buf{&rec, bytes.data()}; }
  int64_t count() const { return static_cast<int64_t>(rec.size) / HostByteSize(rec.type); }
  // f32, bf16 and s32 by their bytes; the other castable floats through the generic encoder.
  void Set(int64_t i, double v) {
    if (rec.type == PrimitiveType::kF32) {
      float f = static_cast<float>(v);
      std::memcpy(&bytes[4 * i], &f, 4);
    } else if (rec.type == PrimitiveType::kBF16) {
      uint16_t h = static_cast<uint16_t>(EncodeFromF32(rec.type, static_cast<float>(v)));
      std::memcpy(&bytes[2 * i], &h, 2);
    } else if (rec.type == PrimitiveType::kS32) {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(&bytes[4 * i], &x, 4);
    } else {
      REQUIRE(IsCastableLowPrecisionFloat(rec.type));
      StoreBits(rec.type, &bytes[HostByteSize(rec.type) * i], EncodeFromF32(rec.type, static_cast<float>(v)));
    }
  }
  double Get(int64_t i) const {
    if (rec.type == PrimitiveType::kF32) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      return f;
    }
    if (rec.type == PrimitiveType::kBF16) {
      uint16_t h;
      std::memcpy(&h, &bytes[2 * i], 2);
      return DecodeToF32(rec.type, h);
    }
    if (rec.type == PrimitiveType::kS32) {
      int32_t x;
      std::memcpy(&x, &bytes[4 * i], 4);
      return x;
    }
    REQUIRE(IsCastableLowPrecisionFloat(rec.type));
    return DecodeToF32(rec.type, static_cast<uint32_t>(LoadBits(rec.type, &bytes[HostByteSize(rec.type) * i])));
  }
  void Fill(uint32_t seed, bool integers = false) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < count(); ++i) Set(i, integers ? std::floor(u(rng) * 100) : u(rng));
  }
};

// dot lhs [k, b, m] x rhs [b, n, k] -> [b, m, n]: batch in the middle, contraction first/last.
void CheckPermutedDot(PrimitiveType type, double tolerance) {
  const int64_t B = 3, M = 37, N = 45, K = 70;
  TestBuf lhs(type, {K, B, M}), rhs(type, {B, N, K}), out(type, {B, M, N});
  CAPTURE(PrimitiveTypeName(type));
  bool integers = type == PrimitiveType::kS32;
  lhs.Fill(3, integers);
  rhs.Fill(4, integers);
  const int64_t lhs_batch[] = {1}, rhs_batch[] = {0}, lhs_contracting[] = {0}, rhs_contracting[] = {2};
  const DotDimensionNumbers dims{lhs_batch, lhs_contracting, rhs_batch, rhs_contracting};
  REQUIRE(KernelDot(dims, lhs.buf(), rhs.buf(), out.buf()).ok());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0;
        for (int64_t p = 0; p < K; ++p) ref += lhs.Get((p * B + b) * M + i) * rhs.Get((b * N + j) * K + p);
        double got = out.Get((b * M + i) * N + j);
        if (integers)
          REQUIRE(got == ref);
        else
          REQUIRE(std::fabs(got - ref) <= tolerance * (1 + std::fabs(ref)));
      }
}

TEST_CASE("dot kernel: permuted operands, f32, bf16, s32, f16 and f8") {
  CheckPermutedDot(PrimitiveType::kF32, 1e-5);
  CheckPermutedDot(PrimitiveType::kBF16, 1e-2);  // one rounding of the f32 sum to bf16
  CheckPermutedDot(PrimitiveType::kS32, 0);
  CheckPermutedDot(PrimitiveType::kF16, 2e-3);
  CheckPermutedDot(PrimitiveType::kF8E4M3FN, 0.07);
}

struct ConvCase {
  int64_t batch, in_f, out_f, h, w, kh, kw, fgc, bgc;
  WindowDim wd;
  // Puts infinities and NaNs into some weights and inputs: the depthwise kernel must still give
  // the reference's bits (a weight of inf times a padding zero would be a NaN the reference
  // never computes).
  bool non_finite = false;
  // The output as bf01 (planes contiguous: the depthwise kernel's row copies and interleaves)
  // instead of b01f (features innermost: its strided stores).
  bool planes_out = false;
};

// The dims of a convolution's output for `c`: [b, f, y, x] (planes_out) or [b, y, x, f].
std::vector<int64_t> ConvOutDims(const ConvCase& c) {
  std::vector<int64_t> out_sp(2);
  int64_t in_sp[2] = {c.h, c.w}, k_sp[2] = {c.kh, c.kw};
  for (int s = 0; s < 2; ++s) {
    int64_t dilated_in = (in_sp[s] - 1) * c.wd.base_dilation + 1 + c.wd.pad_low + c.wd.pad_high;
    int64_t dilated_k = (k_sp[s] - 1) * c.wd.window_dilation + 1;
    out_sp[s] = (dilated_in - dilated_k) / c.wd.stride + 1;
  }
  if (c.planes_out) return {c.batch / c.bgc, c.out_f, out_sp[0], out_sp[1]};
  return {c.batch / c.bgc, out_sp[0], out_sp[1], c.out_f};
}

// The convolution record for `c`: labels bf01_oi01->b01f, or ->bf01 with planes_out.
// A 2-D convolution record with these labels and window, its dimension numbers filled.
BundleRecord ConvRecordWith(const ConvDimLabels& dim_labels, const WindowDim& wy, const WindowDim& wx, int64_t groups,
                            int64_t batch_groups) {
  BundleRecord rec;
  rec.opcode = Opcode::kConvolution;
  AttrRecord labels;
  labels.id = AttrId::kDimLabels;
  labels.kind = AttrKind::DimLabels;
  labels.set_dim_labels() = dim_labels;
  AttrRecord window;
  window.id = AttrId::kWindow;
  window.kind = AttrKind::Window;
  window.set_window() = {wy, wx};
  AttrRecord fgc, bgc;
  fgc.id = AttrId::kFeatureGroupCount, fgc.kind = AttrKind::Int, fgc.set_i() = groups;
  bgc.id = AttrId::kBatchGroupCount, bgc.kind = AttrKind::Int, bgc.set_i() = batch_groups;
  rec.attrs = {labels, window, fgc, bgc};
  REQUIRE(!FillDimensionNumbers(rec));
  return rec;
}

// The convolution record for `c`: labels bf01_oi01->b01f, or ->bf01 with planes_out.
BundleRecord ConvRecord(const ConvCase& c) {
  ConvDimLabels l;
  l.input_batch = 0, l.input_feature = 1, l.input_spatial.push_back(2), l.input_spatial.push_back(3);
  l.kernel_output_feature = 0, l.kernel_input_feature = 1, l.kernel_spatial.push_back(2), l.kernel_spatial.push_back(3);
  if (c.planes_out)
    l.output_batch = 0, l.output_feature = 1, l.output_spatial.push_back(2), l.output_spatial.push_back(3);
  else
    l.output_batch = 0, l.output_feature = 3, l.output_spatial.push_back(1), l.output_spatial.push_back(2);
  l.input_rank = l.kernel_rank = l.output_rank = 4;
  WindowDim wy = c.wd, wx = c.wd;
  wy.size = c.kh, wx.size = c.kw;
  return ConvRecordWith(l, wy, wx, c.fgc, c.bgc);
}

// A convolution with labels bf01_oi01->b01f (or ->bf01), computed by the kernel and by the
// reference formula in double.
void CheckConv(const ConvCase& c) {
  const std::vector<int64_t> out_dims = ConvOutDims(c);
  const int64_t out_sp[2] = {out_dims[c.planes_out ? 2 : 1], out_dims[c.planes_out ? 3 : 2]};
  int64_t in_sp[2] = {c.h, c.w};
  TestBuf in(PrimitiveType::kF32, {c.batch, c.in_f, c.h, c.w});
  TestBuf k(PrimitiveType::kF32, {c.out_f, c.in_f / c.fgc, c.kh, c.kw});
  TestBuf out(PrimitiveType::kF32, out_dims);
  in.Fill(5);
  k.Fill(6);
  if (c.non_finite) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    k.Set(0, inf);                                                 // the first output feature's first tap
    if (k.count() > 2 * c.kh * c.kw) k.Set(c.kh * c.kw + 1, nan);  // the second's second tap
    in.Set(0, -inf);                                               // a corner of the first plane
    in.Set(in.count() / 2, nan);
    in.Set(in.count() - 1, inf);
  }
  const BundleRecord rec = ConvRecord(c);
  Step step = StepFor(rec);
  Status st = KernelConvolution(step, in.buf(), k.buf(), out.buf());
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(out.GuardIntact());  // nothing written past the output
  const bool depthwise = c.fgc > 1 && c.fgc == c.in_f && c.bgc == 1;
  // Narrow groups into b01f (ConvolutionGroupedFits): summed directly in the reference's order.
  const bool grouped = !depthwise && c.fgc > 1 && c.bgc == 1 && c.wd.base_dilation == 1 && !c.planes_out &&
                       (c.out_f / c.fgc * 4) % 16 == 0 && c.out_f / c.fgc * 4 <= 256;
  // A weight gradient (ConvolutionLargeWindowFits): summed directly in 16 lanes, the same bits
  // at every ISA level.
  const bool large_window =
      c.fgc == 1 && c.kh * c.kw >= 128 && out_sp[0] * out_sp[1] * 16 <= c.kh * c.kw && c.wd.base_dilation == 1;
  {
    // The same bits with 2 and 3 threads.
    Restore restore;
    for (int threads : {2, 3}) {
      SetParallelThreads(threads);
      TestBuf again(PrimitiveType::kF32, out.rec.dims);
      REQUIRE(KernelConvolution(step, in.buf(), k.buf(), again.buf()).ok());
      CHECK(again.bytes == out.bytes);
    }
    // A depthwise convolution's at every vector ISA level the CPU has (a GEMM's sums differ by
    // level: it contracts to FMA on purpose, gemm_eigen.cc).
    SetParallelThreads(1);
    for (GemmIsa isa : {GemmIsa::kBaseline, GemmIsa::kAvx2, GemmIsa::kAvx512}) {
      if ((!depthwise && !large_window && !grouped) || !SetGemmIsa(isa)) continue;
      const std::string isa_name = GemmIsaName(isa);
      CAPTURE(isa_name);
      TestBuf again(PrimitiveType::kF32, out.rec.dims);
      REQUIRE(KernelConvolution(step, in.buf(), k.buf(), again.buf()).ok());
      CHECK(again.bytes == out.bytes);
    }
  }
  int64_t kin = c.in_f / c.fgc, per_fg = c.out_f / c.fgc, per_bg = c.out_f / c.bgc, bgs = c.batch / c.bgc;
  auto ib_of = [&](int64_t b, int64_t f) { return b + (f / per_bg) * bgs; };
  for (int64_t b = 0; b < c.batch / c.bgc; ++b)
    for (int64_t y = 0; y < out_sp[0]; ++y)
      for (int64_t x = 0; x < out_sp[1]; ++x)
        for (int64_t f = 0; f < c.out_f; ++f) {
          double ref = 0;
          float in_order = 0;  // XLA's evaluator: a float sum over the taps in row-major order
          int64_t g = f / per_fg, ib = b + (f / per_bg) * bgs;
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              int64_t pos[2] = {y * c.wd.stride + ky * c.wd.window_dilation - c.wd.pad_low,
                                x * c.wd.stride + kx * c.wd.window_dilation - c.wd.pad_low};
              bool inside = true;
              for (int s = 0; s < 2; ++s) {
                if (pos[s] < 0 || pos[s] % c.wd.base_dilation != 0) inside = false;
                pos[s] /= c.wd.base_dilation;
                if (pos[s] >= in_sp[s]) inside = false;
              }
              if (!inside) continue;
              int64_t ry = c.wd.reversal ? c.kh - 1 - ky : ky, rx = c.wd.reversal ? c.kw - 1 - kx : kx;
              for (int64_t fi = 0; fi < kin; ++fi) {
                double xv = in.Get(((ib * c.in_f + g * kin + fi) * c.h + pos[0]) * c.w + pos[1]);
                double wv = k.Get(((f * kin + fi) * c.kh + ry) * c.kw + rx);
                ref += xv * wv;
                in_order = in_order + static_cast<float>(xv) * static_cast<float>(wv);
              }
            }
          double got = out.Get(c.planes_out ? ((b * c.out_f + f) * out_sp[0] + y) * out_sp[1] + x
                                            : ((b * out_sp[0] + y) * out_sp[1] + x) * c.out_f + f);
          if (large_window) {
            // The kernel's order: input feature by input feature, kernel row by kernel row, term
            // k of a row's in-bounds run into lane k % 16; the lanes folded in halves at the end.
            float lanes[16] = {};
            for (int64_t fi = 0; fi < kin; ++fi)
              for (int64_t ky = 0; ky < c.kh; ++ky) {
                const int64_t py = y * c.wd.stride + ky * c.wd.window_dilation - c.wd.pad_low;
                if (py < 0 || py >= c.h) continue;
                const int64_t ry = c.wd.reversal ? c.kh - 1 - ky : ky;
                int64_t term = 0;
                for (int64_t kx = 0; kx < c.kw; ++kx) {
                  const int64_t px = x * c.wd.stride + kx * c.wd.window_dilation - c.wd.pad_low;
                  if (px < 0 || px >= c.w) continue;
                  const int64_t rx = c.wd.reversal ? c.kw - 1 - kx : kx;
                  const float xv = static_cast<float>(in.Get(((ib_of(b, f) * c.in_f + fi) * c.h + py) * c.w + px));
                  const float wv = static_cast<float>(k.Get(((f * kin + fi) * c.kh + ry) * c.kw + rx));
                  lanes[term % 16] = lanes[term % 16] + xv * wv;
                  ++term;
                }
              }
            for (int half = 8; half >= 1; half /= 2)
              for (int l = 0; l < half; ++l) lanes[l] = lanes[l] + lanes[l + half];
            CAPTURE(b);
            CAPTURE(y);
            CAPTURE(x);
            CAPTURE(f);
            REQUIRE(static_cast<float>(got) == lanes[0]);
          }
          if (std::isfinite(ref)) REQUIRE(std::fabs(got - ref) <= 1e-5 * (1 + std::fabs(ref)));
          // Depthwise and narrow grouped convolutions run directly, with the reference kernel's bits.
          if (depthwise || grouped) {
            CAPTURE(b);
            CAPTURE(y);
            CAPTURE(x);
            CAPTURE(f);
            if (std::isnan(in_order))
              REQUIRE(std::isnan(got));
            else
              REQUIRE(static_cast<float>(got) == in_order);
          }
        }
}

TEST_CASE("convolution kernel: im2col + GEMM against the reference formula") {
  WindowDim same;
  same.pad_low = same.pad_high = 1;
  CheckConv({2, 8, 12, 17, 19, 3, 3, 1, 1, same});
  CheckConv({3, 16, 20, 23, 29, 3, 3, 1, 1, same});  // several blocks of 480 positions
  WindowDim odd;
  odd.stride = 2, odd.pad_low = 2, odd.pad_high = 1, odd.base_dilation = 2, odd.window_dilation = 2;
  odd.reversal = true;
  CheckConv({2, 6, 9, 13, 11, 3, 2, 1, 1, odd});
  CheckConv({2, 12, 8, 15, 15, 3, 3, 4, 1, same});  // feature groups
  CheckConv({4, 5, 6, 15, 15, 3, 3, 1, 2, same});   // batch groups
  // Eight blocks or more: one job gathers a block's windows for every group at once.
  CheckConv({2, 8, 8, 48, 48, 3, 3, 4, 1, same});
  CheckConv({4, 3, 4, 48, 48, 3, 3, 1, 2, same});
  CheckConv({3, 8, 50, 9, 11, 9, 11, 1, 1, WindowDim{}});  // the window covers the input: a dot
  // Narrow groups into b01f are written by the GEMM straight into the output's columns: with
  // an odd window, across blocks, and with 32 (the widest written so) and 33 features a group.
  CheckConv({2, 12, 8, 15, 15, 3, 2, 4, 1, odd});
  CheckConv({2, 8, 64, 30, 20, 3, 3, 2, 1, same});
  CheckConv({2, 8, 66, 30, 20, 3, 3, 2, 1, same});
  // Narrow groups of 4, 8, 12, 16, 32, 48, 64 features summed directly: several vector widths, blocks
  // of positions and their remainders, edge columns, strides, dilation, reversal, a window
  // wider than the input, Inf and NaN in the input (and in the weights: im2col, then the
  // reference).
  CheckConv({2, 8, 16, 15, 15, 3, 3, 4, 1, same});
  CheckConv({2, 16, 32, 13, 31, 3, 3, 4, 1, same});
  CheckConv({1, 12, 48, 9, 29, 3, 3, 4, 1, same});
  CheckConv({2, 6, 32, 14, 40, 3, 3, 2, 1, same});
  CheckConv({1, 4, 24, 11, 11, 3, 3, 2, 1, same});
  CheckConv({1, 8, 96, 7, 26, 3, 3, 2, 1, same});
  CheckConv({1, 8, 128, 7, 27, 3, 3, 2, 1, same});
  WindowDim strided;
  strided.stride = 2, strided.pad_low = 2, strided.pad_high = 1, strided.window_dilation = 2, strided.reversal = true;
  CheckConv({2, 8, 16, 17, 23, 3, 2, 2, 1, strided});
  WindowDim wide;
  wide.pad_low = 4, wide.pad_high = 4;
  CheckConv({1, 4, 8, 3, 3, 5, 7, 2, 1, wide});
  ConvCase special{2, 8, 16, 15, 15, 3, 3, 4, 1, same, true};
  CheckConv(special);
  ConvCase planes{2, 8, 8, 48, 48, 3, 3, 4, 1, same};  // bf01: the transposed product and scatter
  planes.planes_out = true;
  CheckConv(planes);
}

TEST_CASE("convolution kernel: depthwise rows into bf01 planes stay inside each plane") {
  // 7x7 planes padded to 9 columns: a row of the padded width (rounded up to the vector) runs
  // past two output rows of 7, so the plane's last rows must not be written directly: the
  // output's end (the guard after it) and, with threads, the next plane stay untouched.
  WindowDim same;
  same.pad_low = same.pad_high = 1;
  for (int64_t w : {7, 5, 3, 14}) {
    CAPTURE(w);
    ConvCase c{3, 16, 16, w, w, 3, 3, 16, 1, same};
    c.planes_out = true;
    CheckConv(c);
  }
}

TEST_CASE("convolution kernel: 1x1 convolutions are GEMMs over the operands in place") {
  // Features first (bf01 -> bf01): one GEMM per batch element, against the reference formula.
  CheckConv({3, 24, 40, 9, 11, 1, 1, 1, 1, WindowDim{}, false, true});
  CheckConv({2, 5, 7, 13, 3, 1, 1, 1, 1, WindowDim{}, false, true});
  // Features last (b01f_01io->b01f, TensorFlow's and XLA CPU's layout): one GEMM.
  const int64_t batch = 3, h = 7, w = 9, in_f = 20, out_f = 12;
  TestBuf in(PrimitiveType::kF32, {batch, h, w, in_f}), k(PrimitiveType::kF32, {1, 1, in_f, out_f}),
      out(PrimitiveType::kF32, {batch, h, w, out_f});
  in.Fill(11);
  k.Fill(12);
  ConvDimLabels l;
  l.input_batch = 0, l.input_spatial.push_back(1), l.input_spatial.push_back(2), l.input_feature = 3;
  l.kernel_spatial.push_back(0), l.kernel_spatial.push_back(1), l.kernel_input_feature = 2, l.kernel_output_feature = 3;
  l.output_batch = 0, l.output_spatial.push_back(1), l.output_spatial.push_back(2), l.output_feature = 3;
  l.input_rank = l.kernel_rank = l.output_rank = 4;
  WindowDim one;
  one.size = 1;
  const BundleRecord rec = ConvRecordWith(l, one, one, 1, 1);
  const Status st = KernelConvolution(StepFor(rec), in.buf(), k.buf(), out.buf());
  REQUIRE_MESSAGE(st.ok(), st.message());
  for (int64_t p = 0; p < batch * h * w; ++p)
    for (int64_t o = 0; o < out_f; ++o) {
      double ref = 0;
      for (int64_t i = 0; i < in_f; ++i) ref += in.Get(p * in_f + i) * k.Get(i * out_f + o);
      REQUIRE(std::fabs(out.Get(p * out_f + o) - ref) <= 1e-5 * (1 + std::fabs(ref)));
    }
}

TEST_CASE("convolution kernel: narrow groups with a window far off the input give zeros") {
  // A bundle's window need not match its shapes: padding of 2^40 columns puts every tap of every
  // output column outside the input, so each output element is an empty sum. The grouped kernel
  // (b01f, 2 groups of 4 f32 features) sums no tap and writes nothing past the output.
  const int64_t batch = 2, h = 5, w = 6, in_f = 6, out_f = 8;
  TestBuf in(PrimitiveType::kF32, {batch, h, w, in_f}), k(PrimitiveType::kF32, {3, 3, in_f / 2, out_f}),
      out(PrimitiveType::kF32, {batch, h, w, out_f});
  in.Fill(13);
  k.Fill(14);
  for (int64_t i = 0; i < out.count(); ++i) out.Set(i, 7.0);  // every element must be written
  ConvDimLabels l;
  l.input_batch = 0, l.input_spatial.push_back(1), l.input_spatial.push_back(2), l.input_feature = 3;
  l.kernel_spatial.push_back(0), l.kernel_spatial.push_back(1), l.kernel_input_feature = 2, l.kernel_output_feature = 3;
  l.output_batch = 0, l.output_spatial.push_back(1), l.output_spatial.push_back(2), l.output_feature = 3;
  l.input_rank = l.kernel_rank = l.output_rank = 4;
  WindowDim wy, wx;
  wy.size = wx.size = 3;
  wy.pad_low = wy.pad_high = 1;
  wx.pad_low = wx.pad_high = int64_t{1} << 40;
  const BundleRecord rec = ConvRecordWith(l, wy, wx, 2, 1);
  const Status st = KernelConvolution(StepFor(rec), in.buf(), k.buf(), out.buf());
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(out.GuardIntact());
  for (int64_t i = 0; i < out.count(); ++i) REQUIRE(out.Get(i) == 0.0);
}

TEST_CASE("convolution kernel: im2col with a window far off the input gives zeros, no overflow") {
  // Rows padded by 2^50 low and -2^50 high (a bundle's window need not match its shapes): two
  // output rows, each window wholly in the padding. Its positions times the input's row stride
  // (2^14) leave 64 bits; im2col must not form those offsets (UBSan: signed overflow) and must
  // write an empty sum everywhere.
  const int64_t h = 4, w = 16384, in_f = 2, out_f = 4;
  TestBuf in(PrimitiveType::kF32, {1, in_f, h, w}), k(PrimitiveType::kF32, {out_f, in_f, 3, 3}),
      out(PrimitiveType::kF32, {1, 2, w, out_f});
  in.Fill(15);
  k.Fill(16);
  for (int64_t i = 0; i < out.count(); ++i) out.Set(i, 7.0);
  ConvDimLabels l;
  l.input_batch = 0, l.input_feature = 1, l.input_spatial.push_back(2), l.input_spatial.push_back(3);
  l.kernel_output_feature = 0, l.kernel_input_feature = 1, l.kernel_spatial.push_back(2), l.kernel_spatial.push_back(3);
  l.output_batch = 0, l.output_spatial.push_back(1), l.output_spatial.push_back(2), l.output_feature = 3;
  l.input_rank = l.kernel_rank = l.output_rank = 4;
  WindowDim wy, wx;
  wy.size = wx.size = 3;
  wy.pad_low = int64_t{1} << 50;
  wy.pad_high = -(int64_t{1} << 50);
  wx.pad_low = wx.pad_high = 1;
  const BundleRecord rec = ConvRecordWith(l, wy, wx, 1, 1);
  Result<ConvPlan> plan =
      PlanConvolution(DimsOf<ConvolutionDimensionNumbers>(StepFor(rec)), *in.buf().rec, *k.buf().rec, *out.buf().rec);
  REQUIRE(plan.ok());
  CHECK(plan->fits == 1 << static_cast<int>(ConvKernel::kViaGemm));  // im2col is the kernel run
  const Status st = KernelConvolution(StepFor(rec), in.buf(), k.buf(), out.buf());
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(out.GuardIntact());
  for (int64_t i = 0; i < out.count(); ++i) REQUIRE(out.Get(i) == 0.0);
}

TEST_CASE("convolution kernel: im2col with a window dilated past 64-bit offsets uses tap row 0 only") {
  // Rows dilated by 2^59: tap rows 1 and 2 are 2^59 and 2^60 rows down, far outside the input,
  // and their distances times the row stride (2^14) leave 64 bits. Found by tools/fuzz-bundle
  // (UBSan: signed overflow where im2col's layout formed those distances at load). No window is
  // interior; each output row is tap row 0's sum.
  const int64_t h = 4, w = 16384, in_f = 2, out_f = 4;
  TestBuf in(PrimitiveType::kF32, {1, in_f, h, w}), k(PrimitiveType::kF32, {out_f, in_f, 3, 3}),
      out(PrimitiveType::kF32, {1, 2, w, out_f});
  in.Fill(15);
  k.Fill(16);
  ConvDimLabels l;
  l.input_batch = 0, l.input_feature = 1, l.input_spatial.push_back(2), l.input_spatial.push_back(3);
  l.kernel_output_feature = 0, l.kernel_input_feature = 1, l.kernel_spatial.push_back(2), l.kernel_spatial.push_back(3);
  l.output_batch = 0, l.output_spatial.push_back(1), l.output_spatial.push_back(2), l.output_feature = 3;
  l.input_rank = l.kernel_rank = l.output_rank = 4;
  WindowDim wy, wx;
  wy.size = wx.size = 3;
  wy.window_dilation = int64_t{1} << 59;
  wx.pad_low = wx.pad_high = 1;
  const BundleRecord rec = ConvRecordWith(l, wy, wx, 1, 1);
  const Status st = KernelConvolution(StepFor(rec), in.buf(), k.buf(), out.buf());
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(out.GuardIntact());
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t x = 0; x < w; x += 4093)
      for (int64_t f = 0; f < out_f; ++f) {
        double want = 0;
        for (int64_t c = 0; c < in_f; ++c)
          for (int64_t kx = 0; kx < 3; ++kx) {
            const int64_t ix = x + kx - 1;
            if (ix >= 0 && ix < w) want += in.Get((c * h + r) * w + ix) * k.Get(((f * in_f + c) * 3 + 0) * 3 + kx);
          }
        CAPTURE(r);
        CAPTURE(x);
        CHECK(out.Get((r * w + x) * out_f + f) == doctest::Approx(want).epsilon(1e-5));
      }
}

TEST_CASE("convolution kernel: weight gradients (a window of 128+ taps) summed directly") {
  WindowDim same;
  same.pad_low = same.pad_high = 1;
  CheckConv({2, 1, 3, 34, 33, 32, 32, 1, 1, same});
  CheckConv({2, 1, 3, 12, 12, 12, 12, 1, 1, same});  // 144 taps, 3x3 positions (mobilenet's 28x28 kind)
  CheckConv({4, 1, 4, 12, 12, 12, 12, 1, 4, same});
  CheckConv({4, 1, 4, 33, 34, 32, 32, 1, 4, same});  // batch groups: a depthwise weight gradient
  WindowDim dilated;                                 // rhs_dilate=2x2, as the gradient of a stride-2 convolution
  dilated.pad_low = 1, dilated.window_dilation = 2, dilated.reversal = true;
  CheckConv({2, 1, 2, 70, 69, 32, 33, 1, 1, dilated});
  dilated.reversal = false;  // every other input column read in one register (AVX-512), with a masked tail
  CheckConv({2, 1, 2, 70, 69, 32, 33, 1, 1, dilated});
  CheckConv({4, 1, 4, 34, 35, 17, 17, 1, 4, dilated});  // rows of 17 and 16 terms: one lane past a block
}

TEST_CASE("convolution kernel: depthwise, directly, bit for bit the reference's order") {
  WindowDim same;
  same.pad_low = same.pad_high = 1;
  CheckConv({2, 8, 8, 17, 19, 3, 3, 8, 1, same});
  CheckConv({2, 6, 12, 23, 29, 3, 3, 6, 1, same});  // channel multiplier 2
  WindowDim strided;
  strided.stride = 2, strided.pad_low = 0, strided.pad_high = 1;
  CheckConv({3, 5, 5, 14, 15, 3, 3, 5, 1, strided});
  WindowDim gradient;  // an input gradient: the kernel reversed, the input dilated (lhs_dilate=2x2)
  gradient.pad_low = 1, gradient.pad_high = 2, gradient.base_dilation = 2, gradient.reversal = true;
  CheckConv({2, 4, 4, 9, 11, 3, 3, 4, 1, gradient});
  WindowDim odd;
  odd.stride = 2, odd.pad_low = 2, odd.pad_high = 1, odd.base_dilation = 2, odd.window_dilation = 2;
  odd.reversal = true;
  CheckConv({2, 3, 6, 13, 11, 3, 2, 3, 1, odd});
  // Rows wider than the widest vector block (64 f32 with AVX-512), a stride of 3 over an lhs
  // dilation of 2 (two residues of step 3), cropping (negative padding) and a window dilation.
  CheckConv({1, 4, 4, 5, 150, 3, 3, 4, 1, same});
  WindowDim residues;
  residues.stride = 3, residues.base_dilation = 2, residues.pad_low = 2, residues.pad_high = 3;
  CheckConv({2, 3, 3, 10, 37, 3, 3, 3, 1, residues});
  WindowDim cropped;
  cropped.pad_low = -1, cropped.pad_high = 2, cropped.window_dilation = 3;
  CheckConv({2, 4, 8, 12, 21, 3, 3, 4, 1, cropped});
  // Non-finite weights take the residue path for their channel; non-finite inputs either path.
  CheckConv({2, 8, 8, 17, 19, 3, 3, 8, 1, same, true});
  CheckConv({2, 4, 4, 9, 11, 3, 3, 4, 1, gradient, true});
  CheckConv({2, 6, 12, 23, 29, 3, 3, 6, 1, strided, true});
  // Contiguous output planes: whole rows copied (one residue), two residues interleaved (lhs
  // dilation 2), three (lhs dilation 3, the general interleave).
  CheckConv({2, 6, 12, 23, 29, 3, 3, 6, 1, same, false, true});
  // Without lhs dilation the rows are summed straight into the output plane, each spilling
  // into the next row's start, the last one through the sums: strides, wide rows, cropping.
  CheckConv({3, 5, 5, 14, 15, 3, 3, 5, 1, strided, false, true});
  CheckConv({1, 4, 4, 5, 150, 3, 3, 4, 1, same, false, true});
  CheckConv({2, 4, 8, 12, 21, 3, 3, 4, 1, cropped, false, true});
  CheckConv({2, 4, 4, 9, 11, 3, 3, 4, 1, gradient, false, true});
  CheckConv({2, 3, 6, 13, 11, 3, 2, 3, 1, odd, false, true});
  CheckConv({2, 3, 3, 10, 37, 3, 3, 3, 1, residues, false, true});
  WindowDim thirds;
  thirds.base_dilation = 3, thirds.pad_low = 2, thirds.pad_high = 2;
  CheckConv({2, 3, 3, 7, 10, 3, 3, 3, 1, thirds, false, true});
  CheckConv({2, 3, 3, 7, 10, 3, 3, 3, 1, thirds});
}

TEST_CASE("convolution kernel: a depthwise plan made at one ISA level runs at another") {
  // The padded-plane layout is planned at load for the active level's vector granule; a run at
  // a level with another granule lays its own out, to the same bits.
  WindowDim same;
  same.pad_low = same.pad_high = 1;
  ConvCase c{2, 6, 6, 13, 21, 3, 3, 6, 1, same, false, true};
  TestBuf in(PrimitiveType::kF32, {c.batch, c.in_f, c.h, c.w});
  TestBuf k(PrimitiveType::kF32, {c.out_f, 1, c.kh, c.kw});
  in.Fill(11);
  k.Fill(12);
  const BundleRecord rec = ConvRecord(c);
  const TestBuf out_shape(PrimitiveType::kF32, ConvOutDims(c));
  Restore restore;
  for (GemmIsa planned_at : {GemmIsa::kBaseline, GemmIsa::kAvx2, GemmIsa::kAvx512}) {
    if (!SetGemmIsa(planned_at)) continue;
    Result<ConvPlan> plan =
        PlanConvolution(DimsOf<ConvolutionDimensionNumbers>(StepFor(rec)), in.rec, k.rec, out_shape.rec);
    REQUIRE(plan.ok());
    REQUIRE(plan->depthwise != nullptr);
    for (GemmIsa run_at : {GemmIsa::kBaseline, GemmIsa::kAvx2, GemmIsa::kAvx512}) {
      if (!SetGemmIsa(run_at)) continue;
      TestBuf fresh(PrimitiveType::kF32, ConvOutDims(c)), planned(PrimitiveType::kF32, ConvOutDims(c));
      REQUIRE(KernelConvolution(StepFor(rec), in.buf(), k.buf(), fresh.buf()).ok());
      REQUIRE(RunConvolution(*plan, in.buf(), k.buf(), planned.buf()).ok());
      CHECK(planned.bytes == fresh.bytes);
      CHECK(planned.GuardIntact());
    }
  }
}

// A depthwise output of 32 MiB or more leaves the kernel through streaming stores, plane by
// plane; its elements are those of the same convolution written with features innermost.
void CheckStreamedDepthwise(const ConvCase& planes) {
  ConvCase rows = planes;
  rows.planes_out = false;
  TestBuf in(PrimitiveType::kF32, {planes.batch, planes.in_f, planes.h, planes.w});
  TestBuf k(PrimitiveType::kF32, {planes.out_f, 1, planes.kh, planes.kw});
  in.Fill(7);
  k.Fill(8);
  TestBuf streamed(PrimitiveType::kF32, ConvOutDims(planes)), strided(PrimitiveType::kF32, ConvOutDims(rows));
  REQUIRE(streamed.rec.size >= (uint64_t{32} << 20));
  const BundleRecord planes_rec = ConvRecord(planes), rows_rec = ConvRecord(rows);
  REQUIRE(KernelConvolution(StepFor(planes_rec), in.buf(), k.buf(), streamed.buf()).ok());
  REQUIRE(KernelConvolution(StepFor(rows_rec), in.buf(), k.buf(), strided.buf()).ok());
  const int64_t f_count = streamed.rec.dims[1], h = streamed.rec.dims[2], w = streamed.rec.dims[3];
  int64_t differ = 0;
  for (int64_t f = 0; f < f_count; ++f)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        float a, b;
        std::memcpy(&a, &streamed.bytes[4 * ((f * h + y) * w + x)], 4);
        std::memcpy(&b, &strided.bytes[4 * ((y * w + x) * f_count + f)], 4);
        differ += std::memcmp(&a, &b, 4) != 0;
      }
  CHECK(differ == 0);
  // The same bytes through every level's streaming copy (16-byte SSE stores in the baseline
  // build, 32 and 64 bytes in the AVX2 and AVX-512 ones).
  Restore restore;
  for (GemmIsa isa : {GemmIsa::kBaseline, GemmIsa::kAvx2, GemmIsa::kAvx512}) {
    if (!SetGemmIsa(isa)) continue;
    const std::string isa_name = GemmIsaName(isa);
    CAPTURE(isa_name);
    TestBuf again(PrimitiveType::kF32, streamed.rec.dims);
    REQUIRE(KernelConvolution(StepFor(planes_rec), in.buf(), k.buf(), again.buf()).ok());
    CHECK(again.bytes == streamed.bytes);
  }
}

TEST_CASE("convolution kernel: a depthwise output past the caches is streamed, same bytes") {
  WindowDim same;
  same.pad_low = same.pad_high = 1;
  CheckStreamedDepthwise({1, 2048, 2048, 64, 64, 3, 3, 2048, 1, same, false, true});
  // Rows streamed a few at a time: 61 rows (not a whole number of those few), 59 columns (each
  // row's sums spill into the next row, which is summed after them).
  CheckStreamedDepthwise({1, 2400, 2400, 61, 59, 3, 3, 2400, 1, same, false, true});
  WindowDim gradient;
  gradient.pad_low = 1, gradient.pad_high = 2, gradient.base_dilation = 2, gradient.reversal = true;
  CheckStreamedDepthwise({1, 512, 512, 64, 64, 3, 3, 512, 1, gradient, false, true});
}

}  // namespace
}  // namespace nhlo
