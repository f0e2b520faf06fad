// SPDX-License-Identifier: Apache-2.0
// The linear-algebra custom calls of JAX on CPU (jaxlib's LAPACK calls) and GPU (cuSOLVER,
// cuBLAS), legacy and FFI forms (types/solver_configs.h decodes which operands carry what):
// LU with partial pivoting, Cholesky, Householder QR and its Q, JAX's pivots-to-permutation, the
// triangular solve and the Hermitian eigendecomposition. Each follows LAPACK's unblocked routine
// (getf2, potf2, geqr2 with larfg, org2r / ung2r) in the element type, so results satisfy the
// routine's identities (P A = L U, A = L L^H, A = Q R) to the type's precision; the blocked
// libraries JAX calls can differ in the last bits. The eigendecomposition is Eigen's
// SelfAdjointEigenSolver (eigenvector signs are a library's choice: compare A V = V diag(w)), the
// singular value decomposition Eigen's BDCSVD (divide and conquer, as LAPACK's gesdd; singular
// vectors' signs and phases are the library's choice: compare A = U diag(s) V^H).
// Matrices are the last two dimensions, batched over the others, in the logical (row-major)
// order nhlo keeps every value in, whatever layout the call's operand_layout_constraints name.
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <typename T>
using Real = typename RealOf<T>::type;

template <typename T>
constexpr bool kComplex = !std::is_same_v<T, Real<T>>;

// The type the SVD and the general eigendecomposition compute in: double precision for f32 and
// c64 data, rounded once at the end (more accurate, and Eigen's SSE code for complex<float>
// loads a 4-byte-aligned scalar as a double, which the sanitizer build reports).
template <typename T>
struct WideOf {
  using type = T;
};
template <>
struct WideOf<float> {
  using type = double;
};
template <>
struct WideOf<std::complex<float>> {
  using type = std::complex<double>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

template <typename T>
T Conj(T v) {
  if constexpr (kComplex<T>)
    return std::conj(v);
  else
    return v;
}

template <typename T>
Real<T> RealPart(T v) {
  if constexpr (kComplex<T>)
    return v.real();
  else
    return v;
}

// LAPACK's |x| for pivot choice (icamax / idamax): |re| + |im| for complex.
template <typename T>
Real<T> Cabs1(T v) {
  if constexpr (kComplex<T>)
    return std::abs(v.real()) + std::abs(v.imag());
  else
    return std::abs(v);
}

template <typename T>
T Load(const Buf& b, int64_t i) {
  if constexpr (kComplex<T>)
    return LoadComplex<Real<T>>(b.data, i);
  else {
    T v;
    std::memcpy(&v, b.data + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    return v;
  }
}

template <typename T>
void Store(const Buf& b, int64_t i, T v) {
  if constexpr (kComplex<T>)
    StoreComplex<Real<T>>(b.data, i, v);
  else
    std::memcpy(b.data + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

void StoreS32(const Buf& b, int64_t i, int64_t v) {
  int32_t w = static_cast<int32_t>(v);
  std::memcpy(b.data + i * 4, &w, 4);
}

// One matrix of a batch, row-major, in the element type.
template <typename T>
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<T> a;
  T& at(int64_t r, int64_t c) { return a[static_cast<size_t>(r * cols + c)]; }
};

template <typename T>
Matrix<T> LoadMatrix(const Buf& b, int64_t batch, int64_t rows, int64_t cols) {
  Matrix<T> m{rows, cols, std::vector<T>(static_cast<size_t>(rows * cols))};
  for (int64_t i = 0; i < rows * cols; ++i) m.a[static_cast<size_t>(i)] = Load<T>(b, batch * rows * cols + i);
  return m;
}

template <typename T>
void StoreMatrix(const Buf& b, int64_t batch, const Matrix<T>& m) {
  for (int64_t i = 0; i < m.rows * m.cols; ++i) Store<T>(b, batch * m.rows * m.cols + i, m.a[static_cast<size_t>(i)]);
}

// getf2: returns info (the first zero pivot, 1-based, or 0); ipiv 1-based.
template <typename T>
int64_t Lu(Matrix<T>& m, std::vector<int64_t>& ipiv) {
  int64_t info = 0, k = std::min(m.rows, m.cols);
  ipiv.assign(static_cast<size_t>(k), 0);
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < m.rows; ++i)
      if (Cabs1(m.at(i, j)) > Cabs1(m.at(p, j))) p = i;
    ipiv[static_cast<size_t>(j)] = p + 1;
    if (m.at(p, j) != T(0)) {
      if (p != j)
        for (int64_t c = 0; c < m.cols; ++c) std::swap(m.at(p, c), m.at(j, c));
      T inverse = T(1) / m.at(j, j);
      for (int64_t i = j + 1; i < m.rows; ++i) m.at(i, j) *= inverse;
    } else if (info == 0) {
      info = j + 1;
    }
    for (int64_t i = j + 1; i < m.rows; ++i)
      for (int64_t c = j + 1; c < m.cols; ++c) m.at(i, c) -= m.at(i, j) * m.at(j, c);
  }
  return info;
}

// potf2 on the named triangle; the other is left as it is. Returns info.
template <typename T>
int64_t Cholesky(Matrix<T>& m, bool lower) {
  const int64_t n = m.rows;
  auto el = [&](int64_t r, int64_t c) -> T& { return lower ? m.at(r, c) : m.at(c, r); };  // as lower
  for (int64_t j = 0; j < n; ++j) {
    Real<T> d = RealPart(el(j, j));
    for (int64_t k = 0; k < j; ++k) d -= RealPart(el(j, k) * Conj(el(j, k)));
    if (!(d > 0)) {
      el(j, j) = T(d);
      return j + 1;
    }
    Real<T> root = std::sqrt(d);
    el(j, j) = T(root);
    for (int64_t i = j + 1; i < n; ++i) {
      T s = el(i, j);
      for (int64_t k = 0; k < j; ++k) s -= el(i, k) * Conj(el(j, k));
      el(i, j) = lower ? s / root : Conj(Conj(s) / root);
    }
  }
  return 0;
}

// larfg: makes the reflector for x = column `c` rows [r0, rows) in place; returns tau.
template <typename T>
T Reflector(Matrix<T>& m, int64_t r0, int64_t c) {
  T alpha = m.at(r0, c);
  Real<T> xnorm = 0;
  for (int64_t r = r0 + 1; r < m.rows; ++r) xnorm = std::hypot(xnorm, std::abs(m.at(r, c)));
  Real<T> alphr = RealPart(alpha), alphi = 0;
  if constexpr (kComplex<T>) alphi = alpha.imag();
  if (xnorm == 0 && alphi == 0) return T(0);
  Real<T> beta = -std::copysign(std::hypot(std::hypot(alphr, alphi), xnorm), alphr);
  T tau;
  if constexpr (kComplex<T>)
    tau = T((beta - alphr) / beta, -alphi / beta);
  else
    tau = (beta - alphr) / beta;
  T scale = T(1) / (alpha - T(beta));
  for (int64_t r = r0 + 1; r < m.rows; ++r) m.at(r, c) *= scale;
  m.at(r0, c) = T(beta);
  return tau;
}

// Applies I - t v v^H (v = column `vc` rows [r0, rows) with v(r0) = 1) from the left to columns
// [c0, cols).
template <typename T>
void ApplyReflector(Matrix<T>& m, int64_t r0, int64_t vc, T t, int64_t c0) {
  if (t == T(0)) return;
  auto v = [&](int64_t r) { return r == r0 ? T(1) : m.at(r, vc); };
  for (int64_t c = c0; c < m.cols; ++c) {
    T w = 0;
    for (int64_t r = r0; r < m.rows; ++r) w += Conj(v(r)) * m.at(r, c);
    for (int64_t r = r0; r < m.rows; ++r) m.at(r, c) -= t * v(r) * w;
  }
}

template <typename T>
void Qr(Matrix<T>& m, std::vector<T>& tau) {
  int64_t k = std::min(m.rows, m.cols);
  tau.assign(static_cast<size_t>(k), T(0));
  for (int64_t i = 0; i < k; ++i) {
    tau[static_cast<size_t>(i)] = Reflector(m, i, i);
    if (i + 1 < m.cols) {
      T saved = m.at(i, i);
      m.at(i, i) = T(1);
      ApplyReflector(m, i, i, Conj(tau[static_cast<size_t>(i)]), i + 1);  // H(i)^H, as geqr2
      m.at(i, i) = saved;
    }
  }
}

// org2r / ung2r: Q's first `cols` columns from k reflectors.
template <typename T>
void QrQ(Matrix<T>& m, const std::vector<T>& tau) {
  int64_t k = static_cast<int64_t>(tau.size());
  for (int64_t j = k; j < m.cols; ++j) {
    for (int64_t r = 0; r < m.rows; ++r) m.at(r, j) = T(0);
    if (j < m.rows) m.at(j, j) = T(1);
  }
  for (int64_t i = k - 1; i >= 0; --i) {
    T t = tau[static_cast<size_t>(i)];
    if (i + 1 < m.cols) {
      m.at(i, i) = T(1);
      ApplyReflector(m, i, i, t, i + 1);
    }
    for (int64_t r = i + 1; r < m.rows; ++r) m.at(r, i) *= -t;
    m.at(i, i) = T(1) - t;
    for (int64_t r = 0; r < i; ++r) m.at(r, i) = T(0);
  }
}

// op(A) X = alpha B (left) or X op(A) = alpha B; A's named triangle only, its diagonal 1 when
// unit. B is overwritten with X.
template <typename T>
void TriangularSolve(const Matrix<T>& a, Matrix<T>& b, bool left, bool lower, int transpose, bool unit, T alpha) {
  const int64_t k = a.rows;
  // M = op(A) as a dense triangular matrix; lower after a transpose becomes upper.
  Matrix<T> op{k, k, std::vector<T>(static_cast<size_t>(k * k), T(0))};
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < k; ++c) {
      bool in_triangle = lower ? c <= r : c >= r;
      if (!in_triangle) continue;
      T v = r == c && unit ? T(1) : a.a[static_cast<size_t>(r * k + c)];
      if (transpose == 0)
        op.at(r, c) = v;
      else
        op.at(c, r) = transpose == 2 ? Conj(v) : v;
    }
  const bool op_lower = transpose == 0 ? lower : !lower;
  for (T& v : b.a) v *= alpha;
  if (left) {  // M X = B, column by column
    for (int64_t c = 0; c < b.cols; ++c) {
      for (int64_t s = 0; s < k; ++s) {
        int64_t r = op_lower ? s : k - 1 - s;
        T v = b.at(r, c);
        for (int64_t j = 0; j < k; ++j)
          if (op_lower ? j < r : j > r) v -= op.at(r, j) * b.at(j, c);
        b.at(r, c) = v / op.at(r, r);
      }
    }
  } else {  // X M = B: row by row, x M = b
    for (int64_t r = 0; r < b.rows; ++r) {
      for (int64_t s = 0; s < k; ++s) {
        int64_t c = op_lower ? k - 1 - s : s;
        T v = b.at(r, c);
        for (int64_t j = 0; j < k; ++j)
          if (op_lower ? j > c : j < c) v -= b.at(r, j) * op.at(j, c);
        b.at(r, c) = v / op.at(c, c);
      }
    }
  }
}

template <typename T>
int64_t Eigh(Matrix<T>& m, bool lower, std::vector<Real<T>>& w) {
  const int64_t n = m.rows;
  using EMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  EMatrix full(n, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c) {
      bool named = lower ? c <= r : c >= r;
      T v = named ? m.at(r, c) : Conj(m.at(c, r));
      if (r == c) v = T(RealPart(v));
      full(r, c) = v;
    }
  Eigen::SelfAdjointEigenSolver<EMatrix> solver(full, Eigen::ComputeEigenvectors);
  w.assign(static_cast<size_t>(n), Real<T>(0));
  if (solver.info() != Eigen::Success) return 1;
  for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = solver.eigenvalues()(i);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c) m.at(r, c) = solver.eigenvectors()(r, c);
  return 0;
}

// The result indices of a general eigendecomposition for real or complex data.
struct EigLayout {
  size_t values = 0;          // w, or wr then wi
  bool split_values = false;  // real data's (wr, wi) in LAPACK's forms
  size_t left = 0, right = 0, info = 0;
  size_t count = 0;     // results in all
  bool packed = false;  // vectors of the data's real type in LAPACK's packing (cuSOLVER, real data)
};
EigLayout EigLayoutOf(const SolverConfig& c, bool complex) {
  EigLayout at;
  at.split_values = !complex && c.eig_form != EigForm::kCusolver;
  at.values = c.eig_form == EigForm::kCusolver ? 1 : c.eig_form == EigForm::kLapackLegacy ? (complex ? 2 : 3) : 0;
  at.left = at.values + (at.split_values ? 2 : 1);
  at.right = at.left + 1;
  at.info = at.right + 1;
  at.count = at.info + 1;
  at.packed = !complex && c.eig_form == EigForm::kCusolver;
  return at;
}

// The factors' order for a matrix of `rows` x `cols`: kVtUWhenWide resolved.
SvdFactors SvdFactorsFor(SvdFactors f, int64_t rows, int64_t cols) {
  if (f != SvdFactors::kVtUWhenWide) return f;
  return rows < cols ? SvdFactors::kVtU : SvdFactors::kUVt;
}

// The number of columns of U (n = rows) or V (n = cols) a factor result holds: n (full) or
// min(rows, cols) (reduced), read off its element count; V^H results are stored transposed, with
// the same count. 0 when the count fits neither (CheckSolver refuses it).
int64_t SvdFactorWidth(const BufferRecord& factor, int64_t batches, int64_t n) {
  const int64_t per = batches * n;
  if (per == 0) return 0;
  const int64_t count = factor.ElementCount();
  return count % per == 0 ? count / per : 0;
}

template <typename T>
bool IsFiniteValue(T v) {
  if constexpr (kComplex<T>)
    return std::isfinite(v.real()) && std::isfinite(v.imag());
  else
    return std::isfinite(v);
}

// A = U diag(s) V^H with s descending; `u` gets U's first u.cols columns and `v` V's first v.cols
// (both left untouched without `vectors`). Returns info: 0, or 1 with NaN results for a NaN or
// infinite input, which JAX's lowering turns into NaN results as for LAPACK's failures.
template <typename T>
int64_t Svd(const Matrix<T>& a, bool vectors, std::vector<Real<T>>& s, Matrix<T>& u, Matrix<T>& v) {
  using EMatrix = Eigen::Matrix<Wide<T>, Eigen::Dynamic, Eigen::Dynamic>;
  const int64_t k = std::min(a.rows, a.cols);
  s.assign(static_cast<size_t>(k), Real<T>(0));
  if (k == 0) {  // JAX's empty SVD: identity factors
    for (Matrix<T>* f : {&u, &v})
      for (int64_t r = 0; r < f->rows && vectors; ++r)
        for (int64_t c = 0; c < f->cols; ++c) f->at(r, c) = T(r == c ? 1 : 0);
    return 0;
  }
  // Eigen stops at a non-finite input and leaves its results unwritten: NaN results and info 1,
  // which JAX's lowering turns into NaN as for LAPACK's failure.
  auto fail = [&] {
    const Real<T> nan = std::numeric_limits<Real<T>>::quiet_NaN();
    s.assign(static_cast<size_t>(k), nan);
    for (Matrix<T>* f : {&u, &v})
      if (vectors) std::fill(f->a.begin(), f->a.end(), T(nan));
    return int64_t{1};
  };
  EMatrix m(a.rows, a.cols);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t c = 0; c < a.cols; ++c) {
      const T x = a.a[static_cast<size_t>(r * a.cols + c)];
      if (!IsFiniteValue(x)) return fail();
      m(r, c) = static_cast<Wide<T>>(x);
    }
  const bool full = u.cols > k || v.cols > k;
  unsigned options = !vectors ? 0u
                     : full   ? Eigen::ComputeFullU | Eigen::ComputeFullV
                              : Eigen::ComputeThinU | Eigen::ComputeThinV;
  Eigen::BDCSVD<EMatrix> svd(m, options);
  if (svd.info() != Eigen::Success) return fail();
  int64_t info = 0;
  for (int64_t i = 0; i < k; ++i) {
    s[static_cast<size_t>(i)] = static_cast<Real<T>>(svd.singularValues()(i));
    if (!std::isfinite(s[static_cast<size_t>(i)])) info = 1;
  }
  if (!vectors) return info;
  for (int64_t r = 0; r < u.rows; ++r)
    for (int64_t c = 0; c < u.cols; ++c) u.at(r, c) = static_cast<T>(svd.matrixU()(r, c));
  for (int64_t r = 0; r < v.rows; ++r)
    for (int64_t c = 0; c < v.cols; ++c) v.at(r, c) = static_cast<T>(svd.matrixV()(r, c));
  return info;
}

// LAPACK's gtsv on one system: A (sub-diagonal dl[1..m), diagonal d, super-diagonal du[0..m-1);
// JAX's dl[0] and du[m-1] are not read) times X = B, B m x nrhs row-major, solved in place by
// Gaussian elimination with partial pivoting (each step keeps the row of the larger |pivot|, by
// CABS1 for complex), as dgtsv / zgtsv. Returns info: 0, or the 1-based row of an exactly zero
// pivot (B is then left partly solved, as LAPACK leaves it).
template <typename T>
int64_t Gtsv(std::vector<T> dl, std::vector<T> d, std::vector<T> du, std::vector<T>& b, int64_t m, int64_t nrhs) {
  // LAPACK's DL(i) is A(i+1, i): JAX's dl shifted by one; its second super-diagonal fill-in goes
  // into dl as the elimination frees it.
  std::vector<T> sub(static_cast<size_t>(m), T(0)), fill(static_cast<size_t>(m), T(0));
  for (int64_t i = 0; i + 1 < m; ++i) sub[static_cast<size_t>(i)] = dl[static_cast<size_t>(i + 1)];
  auto row = [&](int64_t i) { return b.data() + i * nrhs; };
  for (int64_t i = 0; i + 1 < m; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (Cabs1(d[k]) >= Cabs1(sub[k])) {  // no interchange
      if (d[k] == T(0)) return i + 1;
      const T fact = sub[k] / d[k];
      d[k + 1] -= fact * du[k];
      for (int64_t j = 0; j < nrhs; ++j) row(i + 1)[j] -= fact * row(i)[j];
      fill[k] = T(0);
    } else {  // interchange rows i and i + 1
      const T fact = d[k] / sub[k];
      d[k] = sub[k];
      const T temp = d[k + 1];
      d[k + 1] = du[k] - fact * temp;
      if (i + 2 < m) {
        fill[k] = du[k + 1];
        du[k + 1] = -fact * fill[k];
      }
      du[k] = temp;
      for (int64_t j = 0; j < nrhs; ++j) {
        const T top = row(i)[j];
        row(i)[j] = row(i + 1)[j];
        row(i + 1)[j] = top - fact * row(i + 1)[j];
      }
    }
  }
  if (m > 0 && d[static_cast<size_t>(m - 1)] == T(0)) return m;
  for (int64_t j = 0; j < nrhs; ++j) {  // back substitution
    for (int64_t i = m - 1; i >= 0; --i) {
      const size_t k = static_cast<size_t>(i);
      T v = row(i)[j];
      if (i + 1 < m) v -= du[k] * row(i + 1)[j];
      if (i + 2 < m) v -= fill[k] * row(i + 2)[j];
      row(i)[j] = v / d[k];
    }
  }
  return 0;
}

// The tridiagonal solve calls: (dl, d, du, b[..., m, nrhs]) -> LAPACK's (dl, d, du, x, info), the
// diagonals returned as given (LAPACK leaves its factors there; JAX reads only x and info), or
// cuSPARSE's x (then a workspace of zeros).
template <typename T>
void RunGtsv(const std::vector<Buf>& in, const std::vector<Buf>& out) {
  const std::vector<int64_t>& bd = Dims(in[3]);
  const int64_t m = bd[bd.size() - 2], nrhs = bd.back();
  const int64_t batches = m * nrhs == 0 ? 0 : in[3].count() / (m * nrhs);
  const bool lapack = out.size() == 5;
  const Buf& x_out = out[lapack ? 3 : 0];
  for (const Buf& o : out)
    if (o.rec->size > 0) std::memset(o.data, 0, static_cast<size_t>(o.rec->size));
  std::vector<T> dl(static_cast<size_t>(m)), d(static_cast<size_t>(m)), du(static_cast<size_t>(m));
  std::vector<T> b(static_cast<size_t>(m * nrhs));
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t i = 0; i < m; ++i) {
      dl[static_cast<size_t>(i)] = Load<T>(in[0], batch * m + i);
      d[static_cast<size_t>(i)] = Load<T>(in[1], batch * m + i);
      du[static_cast<size_t>(i)] = Load<T>(in[2], batch * m + i);
      if (lapack)
        for (int k = 0; k < 3; ++k)
          Store<T>(out[static_cast<size_t>(k)], batch * m + i, Load<T>(in[static_cast<size_t>(k)], batch * m + i));
    }
    for (int64_t i = 0; i < m * nrhs; ++i) b[static_cast<size_t>(i)] = Load<T>(in[3], batch * m * nrhs + i);
    const int64_t info = Gtsv(dl, d, du, b, m, nrhs);
    for (int64_t i = 0; i < m * nrhs; ++i) Store<T>(x_out, batch * m * nrhs + i, b[static_cast<size_t>(i)]);
    if (lapack) StoreS32(out[4], batch, info);
  }
}

// LAPACK's scaling of an eigenvector: unit 2-norm, then (for a complex vector) its largest
// component made real and positive (zgeev; dgeev for a complex pair), the first of equal ones.
template <typename C>
void NormalizeEigenvector(Eigen::Matrix<C, Eigen::Dynamic, 1>& v, bool make_real) {
  const auto norm = v.norm();
  if (norm > 0) v /= norm;
  if (!make_real) {  // a real eigenvalue of real data: a real vector, its imaginary parts +0 as LAPACK's
    for (Eigen::Index i = 0; i < v.size(); ++i) v(i) = C(v(i).real(), 0);
    return;
  }
  if (v.size() == 0) return;
  Eigen::Index k = 0;
  for (Eigen::Index i = 1; i < v.size(); ++i)
    if (std::norm(v(i)) > std::norm(v(k))) k = i;
  const auto size = std::abs(v(k));
  if (size == 0) return;
  v *= std::conj(v(k)) / size;
  v(k) = C(std::abs(v(k)), 0);
}

// A = V diag(w) V^-1 by Eigen's EigenSolver (real data: w in the real Schur form's order, a complex
// pair positive imaginary part first, as LAPACK's) or ComplexEigenSolver (w by ascending real
// part); right eigenvectors
// the columns of V, left ones conj(rows of V^-1), each scaled as LAPACK's. Returns info: 0, 1 if
// the QR iteration did not converge, -4 for a non-finite input (jaxlib's kernel checks first).
template <typename T>
int64_t Eig(const Matrix<T>& a, bool left, bool right, std::vector<std::complex<Real<T>>>& w,
            Matrix<std::complex<Real<T>>>& vl, Matrix<std::complex<Real<T>>>& vr) {
  using C = std::complex<Real<T>>;
  using W = Wide<T>;
  using WC = std::complex<Real<W>>;
  using EMatrix = Eigen::Matrix<W, Eigen::Dynamic, Eigen::Dynamic>;
  using CMatrix = Eigen::Matrix<WC, Eigen::Dynamic, Eigen::Dynamic>;
  const int64_t n = a.rows;
  EMatrix m(n, n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const T v = a.a[static_cast<size_t>(r * n + c)];
      if (!IsFiniteValue(v)) return -4;
      m(r, c) = static_cast<W>(v);
    }
  CMatrix vectors;
  Eigen::Matrix<WC, Eigen::Dynamic, 1> values;
  const bool want = left || right;
  if constexpr (kComplex<T>) {
    Eigen::ComplexEigenSolver<EMatrix> solver(m, want);
    if (solver.info() != Eigen::Success) return 1;
    values = solver.eigenvalues();
    if (want) vectors = solver.eigenvectors();
  } else {
    Eigen::EigenSolver<EMatrix> solver(m, want);
    if (solver.info() != Eigen::Success) return 1;
    values = solver.eigenvalues();
    if (want) vectors = solver.eigenvectors();
  }
  w.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = C(values(i));
  auto store = [&](Matrix<C>& out, const CMatrix& cols) {
    out = Matrix<C>{n, n, std::vector<C>(static_cast<size_t>(n * n))};
    for (int64_t j = 0; j < n; ++j) {
      // Real data: a pair's second vector is the first's conjugate, exactly, as LAPACK unpacks it.
      if (!kComplex<T> && j > 0 && values(j).imag() < 0 && values(j) == std::conj(values(j - 1))) {
        for (int64_t r = 0; r < n; ++r) out.at(r, j) = std::conj(out.at(r, j - 1));
        continue;
      }
      Eigen::Matrix<WC, Eigen::Dynamic, 1> v = cols.col(j);
      NormalizeEigenvector(v, kComplex<T> || values(j).imag() != 0);
      for (int64_t r = 0; r < n; ++r) out.at(r, j) = C(v(r));
    }
  };
  if (right) store(vr, vectors);
  if (left) store(vl, vectors.inverse().adjoint());
  return 0;
}

int64_t Flag(const SolverFlag& f, const std::vector<Buf>& in) {
  if (f.operand < 0) return f.value;
  return LoadAsInt(in[static_cast<size_t>(f.operand)].type(), in[static_cast<size_t>(f.operand)].data);
}

template <typename T>
Status Run(const SolverConfig& c, const std::vector<Buf>& in, const std::vector<Buf>& out) {
  const Buf& data = in[static_cast<size_t>(c.first_data)];
  const std::vector<int64_t>& dims = Dims(data);
  const size_t rank = dims.size();
  const int64_t rows = dims[rank - 2], cols = dims[rank - 1];
  const int64_t batches = rows * cols == 0 ? 0 : data.count() / (rows * cols);
  const int64_t k = std::min(rows, cols);
  size_t written = 0;  // results the kernel writes; the rest (workspaces) are zeros
  switch (c.op) {
    case SolverOp::kLu: {
      std::vector<int64_t> ipiv;
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> m = LoadMatrix<T>(data, b, rows, cols);
        int64_t info = Lu(m, ipiv);
        StoreMatrix(out[0], b, m);
        for (int64_t i = 0; i < k; ++i) StoreS32(out[1], b * k + i, ipiv[static_cast<size_t>(i)]);
        StoreS32(out[2], b, info);
      }
      written = 3;
      break;
    }
    case SolverOp::kCholesky: {
      bool lower = Flag(c.lower, in) != 0;
      const size_t info = c.info_result < 0 ? 1 : static_cast<size_t>(c.info_result);
      for (size_t i = 1; i < info; ++i)  // XLA GPU's workspace before the info: zeros
        if (out[i].rec->size > 0) std::memset(out[i].data, 0, static_cast<size_t>(out[i].rec->size));
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> m = LoadMatrix<T>(data, b, rows, cols);
        StoreS32(out[info], b, Cholesky(m, lower));
        StoreMatrix(out[0], b, m);
      }
      written = info + 1;
      break;
    }
    case SolverOp::kSvd: {
      // Results (a, s, first, second, info): `first` is U and `second` V^H, or V (gesvdj), or the
      // two swapped (gesvd of a wide matrix run as its transpose). a is left as given.
      const bool vectors = Flag(c.compute_uv, in) != 0;
      const SvdFactors factors = SvdFactorsFor(c.svd_factors, rows, cols);
      const Buf& u_out = out[factors == SvdFactors::kVtU ? 3 : 2];
      const Buf& v_out = out[factors == SvdFactors::kVtU ? 2 : 3];
      // CheckSolver fixed the factors' widths: U is rows x u_cols, V cols x v_cols.
      const int64_t u_cols = SvdFactorWidth(*u_out.rec, batches, rows);
      const int64_t v_cols = SvdFactorWidth(*v_out.rec, batches, cols);
      // Zeros first: factors not computed, and every result of an empty batch, are zeros.
      for (const Buf& o : out)
        if (o.rec->size > 0) std::memset(o.data, 0, static_cast<size_t>(o.rec->size));
      std::vector<Real<T>> s;
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> m = LoadMatrix<T>(data, b, rows, cols);
        StoreMatrix(out[0], b, m);
        Matrix<T> u{rows, u_cols, std::vector<T>(static_cast<size_t>(vectors ? rows * u_cols : 0))};
        Matrix<T> v{cols, v_cols, std::vector<T>(static_cast<size_t>(vectors ? cols * v_cols : 0))};
        StoreS32(out[4], b, Svd(m, vectors, s, u, v));
        for (int64_t i = 0; i < k; ++i) Store<Real<T>>(out[1], b * k + i, s[static_cast<size_t>(i)]);
        if (!vectors) continue;
        StoreMatrix(u_out, b, u);
        if (factors == SvdFactors::kUV) {
          StoreMatrix(v_out, b, v);
          continue;
        }
        Matrix<T> vh{v_cols, cols, std::vector<T>(static_cast<size_t>(v_cols * cols))};  // V^H
        for (int64_t r = 0; r < v_cols; ++r)
          for (int64_t col = 0; col < cols; ++col) vh.at(r, col) = Conj(v.at(col, r));
        StoreMatrix(v_out, b, vh);
      }
      written = out.size();  // all zeroed above, the legacy forms' workspaces included
      break;
    }
    case SolverOp::kQr: {
      std::vector<T> tau;
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> m = LoadMatrix<T>(data, b, rows, cols);
        Qr(m, tau);
        StoreMatrix(out[0], b, m);
        for (int64_t i = 0; i < k; ++i) Store<T>(out[1], b * k + i, tau[static_cast<size_t>(i)]);
      }
      written = 2;  // legacy forms' info and workspaces follow: zeros (info 0 is success)
      break;
    }
    case SolverOp::kQrQ: {
      const Buf& tau_buf = in[static_cast<size_t>(c.first_data) + 1];
      const int64_t reflectors = Dims(tau_buf).empty() ? 0 : Dims(tau_buf).back();
      std::vector<T> tau(static_cast<size_t>(reflectors));
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> m = LoadMatrix<T>(data, b, rows, cols);
        for (int64_t i = 0; i < reflectors; ++i) tau[static_cast<size_t>(i)] = Load<T>(tau_buf, b * reflectors + i);
        QrQ(m, tau);
        StoreMatrix(out[0], b, m);
      }
      written = 1;  // legacy forms' info and workspace follow: zeros
      break;
    }
    case SolverOp::kEigh: {
      bool lower = Flag(c.lower, in) != 0;
      std::vector<Real<T>> w;
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> m = LoadMatrix<T>(data, b, rows, cols);
        StoreS32(out[2], b, Eigh(m, lower, w));
        StoreMatrix(out[0], b, m);
        for (int64_t i = 0; i < rows; ++i) Store<Real<T>>(out[1], b * rows + i, w[static_cast<size_t>(i)]);
      }
      written = 3;
      break;
    }
    case SolverOp::kTriangularSolve: {
      const Buf& rhs = in[static_cast<size_t>(c.first_data) + 1];
      const std::vector<int64_t>& bd = Dims(rhs);
      const bool left = Flag(c.left_side, in) != 0;
      const int64_t brows = bd[rank - 2], bcols = bd[rank - 1];
      // The side is a value when an operand gives it (legacy blas_?trsm); CheckSolver checked
      // it when the config fixes it.
      if ((left ? brows : bcols) != rows)
        return Status::Error("trsm's a must be square, match b's side and have b's batch");
      T alpha = T(1);
      if (c.alpha_operand >= 0) alpha = Load<T>(in[static_cast<size_t>(c.alpha_operand)], 0);
      const bool lower = Flag(c.lower, in) != 0, unit = Flag(c.unit_diagonal, in) != 0;
      const int transpose = static_cast<int>(Flag(c.transpose, in));
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> a = LoadMatrix<T>(data, b, rows, cols);
        Matrix<T> x = LoadMatrix<T>(rhs, b, brows, bcols);
        TriangularSolve(a, x, left, lower, transpose, unit, alpha);
        StoreMatrix(out[0], b, x);
      }
      written = 1;
      break;
    }
    case SolverOp::kEig: {
      using C = std::complex<Real<T>>;
      // A job is an operand's LAPACK letter ('V' computes) in the legacy form, else 1 or 0.
      auto job = [&](const SolverFlag& f) {
        const int64_t v = Flag(f, in);
        return v != 0 && v != 'N';
      };
      const bool left = job(c.compute_left), right = job(c.compute_right);
      const EigLayout at = EigLayoutOf(c, kComplex<T>);
      std::vector<C> w;
      Matrix<C> vl, vr;
      for (const Buf& o : out)
        if (o.rec->size > 0) std::memset(o.data, 0, static_cast<size_t>(o.rec->size));
      for (int64_t b = 0; b < batches; ++b) {
        Matrix<T> m = LoadMatrix<T>(data, b, rows, cols);
        if (c.eig_form == EigForm::kCusolver) StoreMatrix(out[0], b, m);
        const int64_t info = Eig(m, left, right, w, vl, vr);
        StoreS32(out[at.info], b, info);
        if (info != 0) continue;
        for (int64_t i = 0; i < rows; ++i) {
          const C v = w[static_cast<size_t>(i)];
          if (at.split_values) {
            Store<Real<T>>(out[at.values], b * rows + i, v.real());
            Store<Real<T>>(out[at.values + 1], b * rows + i, v.imag());
          } else {
            Store<C>(out[at.values], b * rows + i, v);
          }
        }
        for (const auto& [use, vectors, index] : {std::tuple{left, &vl, at.left}, std::tuple{right, &vr, at.right}}) {
          if (!use) continue;
          const Buf& o = out[index];
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < rows; ++j) {
              const int64_t i = b * rows * rows + r * rows + j;
              if (!at.packed) {
                Store<C>(o, i, vectors->at(r, j));
                continue;
              }
              // LAPACK's real packing: a real eigenvalue's vector as is; a pair's first column the
              // real part, its second the imaginary part of the first vector.
              const bool second = j > 0 && w[static_cast<size_t>(j)].imag() < 0 &&
                                  w[static_cast<size_t>(j - 1)] == std::conj(w[static_cast<size_t>(j)]);
              const C z = vectors->at(r, second ? j - 1 : j);
              Store<Real<T>>(o, i, second ? z.imag() : z.real());
            }
        }
      }
      written = out.size();
      break;
    }
    case SolverOp::kPivotsToPermutation:  // integer operands: Run is not used (KernelSolver)
    case SolverOp::kGtsv: break;          // vectors, not matrices: RunGtsv
  }
  for (size_t i = written; i < out.size(); ++i)
    if (out[i].rec->size > 0) std::memset(out[i].data, 0, static_cast<size_t>(out[i].rec->size));
  return OkStatus();
}

// (dl, d, du: t[..., m]; b: t[..., m, nrhs]) -> (dl, d, du, x, s32 info[...]) or x [, workspace].
Status CheckGtsv(const std::vector<const BufferRecord*>& in, const std::vector<const BufferRecord*>& out) {
  const std::string what =
      "the tridiagonal solve takes dl, d, du of [..., m] and b of [..., m, nrhs], all f32, f64, c64 or c128";
  if (in.size() != 4) return Status::Error(what);
  const BufferRecord& b = *in[3];
  const PrimitiveType t = b.type;
  if (b.dims.size() < 2 ||
      (t != PrimitiveType::kF32 && t != PrimitiveType::kF64 && t != PrimitiveType::kC64 && t != PrimitiveType::kC128))
    return Status::Error(what);
  std::vector<int64_t> diagonal(b.dims.begin(), b.dims.end() - 1);
  for (size_t i = 0; i < 3; ++i)
    if (in[i]->type != t || in[i]->dims != diagonal) return Status::Error(what + ", of one type and batch");
  std::vector<int64_t> batch(diagonal.begin(), diagonal.end() - 1);
  auto is = [](const BufferRecord& r, PrimitiveType type, const std::vector<int64_t>& dims) {
    return r.type == type && r.dims == dims;
  };
  if (out.size() == 5) {
    bool ok = is(*out[3], t, b.dims) && is(*out[4], PrimitiveType::kS32, batch);
    for (size_t i = 0; i < 3; ++i) ok = ok && is(*out[i], t, diagonal);
    if (!ok) return Status::Error("the tridiagonal solve returns (dl, d, du, x of b's shape, s32 info per system)");
    return OkStatus();
  }
  if ((out.size() != 1 && out.size() != 2) || !is(*out[0], t, b.dims))
    return Status::Error(
        "the tridiagonal solve returns x of b's shape (then a workspace), or LAPACK's (dl, d, du, x, "
        "info)");
  return OkStatus();
}

Status CheckPivotsToPermutation(const BufferRecord& pivots, const BufferRecord& out) {
  const std::vector<int64_t>& pd = pivots.dims;
  const std::vector<int64_t>& od = out.dims;
  if (pd.empty() || od.size() != pd.size() || pivots.type != PrimitiveType::kS32 || out.type != PrimitiveType::kS32)
    return Status::Error("lu_pivots_to_permutation takes s32[..., k] and gives s32[..., n] of the same batch");
  for (size_t d = 0; d + 1 < pd.size(); ++d)
    if (pd[d] != od[d]) return Status::Error("lu_pivots_to_permutation keeps the batch dimensions");
  return OkStatus();
}

void PivotsToPermutation(const Buf& pivots, const Buf& out) {
  const std::vector<int64_t>& pd = Dims(pivots);
  const std::vector<int64_t>& od = Dims(out);
  const int64_t k = pd.back(), n = od.back();
  const int64_t batches = n == 0 ? 0 : out.count() / n;
  std::vector<int32_t> perm(static_cast<size_t>(n));
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = static_cast<int32_t>(i);
    for (int64_t i = 0; i < k && i < n; ++i) {
      int32_t p;
      std::memcpy(&p, pivots.data + (b * k + i) * 4, 4);
      if (p >= 0 && p < n) std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(p)]);
    }
    std::memcpy(out.data + b * n * 4, perm.data(), static_cast<size_t>(n) * 4);
  }
}

}  // namespace

Status CheckSolver(const SolverConfig& c, const std::vector<const BufferRecord*>& in,
                   const std::vector<const BufferRecord*>& out) {
  if (out.empty() || static_cast<size_t>(c.first_data) >= in.size())
    return Status::Error("the solver custom call has too few operands or results");
  // A flag or alpha read from an operand at the run needs an element to read.
  for (const SolverFlag* flag :
       {&c.lower, &c.left_side, &c.transpose, &c.unit_diagonal, &c.compute_uv, &c.compute_left, &c.compute_right})
    if (flag->operand >= 0 &&
        (static_cast<size_t>(flag->operand) >= in.size() || !IsInteger(in[static_cast<size_t>(flag->operand)]->type) ||
         in[static_cast<size_t>(flag->operand)]->ElementCount() < 1))
      return Status::Error("the solver custom call's flag operand must hold an integer");
  if (c.op == SolverOp::kPivotsToPermutation) return CheckPivotsToPermutation(*in[0], *out[0]);
  if (c.op == SolverOp::kGtsv) return CheckGtsv(in, out);
  const BufferRecord& data = *in[static_cast<size_t>(c.first_data)];
  const PrimitiveType t = data.type, s32 = PrimitiveType::kS32;
  if (data.dims.size() < 2) return Status::Error("the solver custom call's matrix operand needs rank 2 or more");
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64 && t != PrimitiveType::kC64 && t != PrimitiveType::kC128)
    return Status::Error("the solver custom call's matrix must be f32, f64, c64 or c128, not " +
                         std::string(PrimitiveTypeName(t)));
  const std::vector<int64_t>& dims = data.dims;
  const size_t rank = dims.size();
  const int64_t rows = dims[rank - 2], cols = dims[rank - 1];
  const int64_t count = data.ElementCount();
  const int64_t batches = rows * cols == 0 ? 0 : count / (rows * cols);
  const int64_t k = std::min(rows, cols);
  const PrimitiveType real_type = t == PrimitiveType::kC64    ? PrimitiveType::kF32
                                  : t == PrimitiveType::kC128 ? PrimitiveType::kF64
                                                              : t;
  auto check = [&](size_t i, PrimitiveType type, int64_t want, const char* what) -> Status {
    if (i >= out.size() || out[i]->type != type || out[i]->ElementCount() != want)
      return Status::Error(std::string("the custom call's result ") + std::to_string(i) + " is not its " + what);
    return OkStatus();
  };
  switch (c.op) {
    case SolverOp::kLu:
      NHLO_TRY(check(0, t, count, "factor"));
      NHLO_TRY(check(1, s32, batches * k, "s32 pivots"));
      return check(2, s32, batches, "s32 info");
    case SolverOp::kCholesky:
      if (rows != cols) return Status::Error("potrf needs square matrices");
      NHLO_TRY(check(0, t, count, "factor"));
      return check(c.info_result < 0 ? 1 : static_cast<size_t>(c.info_result), s32, batches, "s32 info");
    case SolverOp::kQr: NHLO_TRY(check(0, t, count, "factor")); return check(1, t, batches * k, "tau");
    case SolverOp::kQrQ: {
      if (static_cast<size_t>(c.first_data) + 1 >= in.size())
        return Status::Error("the solver custom call has too few operands or results");
      const BufferRecord& tau = *in[static_cast<size_t>(c.first_data) + 1];
      const int64_t reflectors = tau.dims.empty() ? 0 : tau.dims.back();
      if (tau.type != t || reflectors > cols || cols > rows || tau.ElementCount() != batches * reflectors)
        return Status::Error("orgqr needs rows >= columns >= reflectors, and tau of the matrix's type per batch");
      return check(0, t, count, "Q");
    }
    case SolverOp::kSvd: {
      if (out.size() < 5) return Status::Error("the SVD custom call returns (a, s, u, vt, info)");
      NHLO_TRY(check(0, t, count, "matrix"));
      NHLO_TRY(check(1, real_type, batches * k, "singular values"));
      NHLO_TRY(check(4, s32, batches, "s32 info"));
      const SvdFactors factors = SvdFactorsFor(c.svd_factors, rows, cols);
      const BufferRecord& u = *out[factors == SvdFactors::kVtU ? 3 : 2];
      const BufferRecord& v = *out[factors == SvdFactors::kVtU ? 2 : 3];
      if (u.type != t || v.type != t)
        return Status::Error("the SVD custom call's factors must be of the matrix's type");
      if (c.compute_uv.operand < 0 && c.compute_uv.value == 0) return OkStatus();  // left zeros, any shape
      const int64_t u_cols = SvdFactorWidth(u, batches, rows), v_cols = SvdFactorWidth(v, batches, cols);
      // U is rows x u_cols; V^H is v_cols x cols, or V (gesvdj) cols x v_cols.
      const bool v_plain = factors == SvdFactors::kUV;
      const bool dims_fit = u.dims.size() == rank && v.dims.size() == rank && u.dims[rank - 2] == rows &&
                            u.dims[rank - 1] == u_cols && v.dims[rank - 2] == (v_plain ? cols : v_cols) &&
                            v.dims[rank - 1] == (v_plain ? v_cols : cols);
      if (batches > 0 && (!dims_fit || (u_cols != rows && u_cols != k && u_cols != 0) ||
                          (v_cols != cols && v_cols != k && v_cols != 0))) {
        auto dims = [](int64_t r, int64_t c) { return "[..., " + std::to_string(r) + ", " + std::to_string(c) + "]"; };
        auto either = [](const std::string& a, const std::string& b) { return a == b ? a : a + " or " + b; };
        const std::string u_want = either(dims(rows, rows), dims(rows, k));
        const std::string v_want =
            v_plain ? either(dims(cols, cols), dims(cols, k)) : either(dims(cols, cols), dims(k, cols));
        return Status::Error("the SVD custom call's u (result " + std::to_string(factors == SvdFactors::kVtU ? 3 : 2) +
                             ") must be " + u_want + " and its " + (v_plain ? "v" : "vt") + " (result " +
                             std::to_string(factors == SvdFactors::kVtU ? 2 : 3) + ") " + v_want);
      }
      return OkStatus();
    }
    case SolverOp::kEig: {
      if (rows != cols) return Status::Error("geev needs square matrices");
      const bool complex = t == PrimitiveType::kC64 || t == PrimitiveType::kC128;
      const EigLayout at = EigLayoutOf(c, complex);
      const PrimitiveType ct = t == PrimitiveType::kF32   ? PrimitiveType::kC64
                               : t == PrimitiveType::kF64 ? PrimitiveType::kC128
                                                          : t;
      if (out.size() != at.count)
        return Status::Error("the eig custom call returns " + std::to_string(at.count) + " results here, not " +
                             std::to_string(out.size()));
      if (c.eig_form == EigForm::kCusolver) NHLO_TRY(check(0, t, count, "matrix"));
      if (at.split_values) {
        NHLO_TRY(check(at.values, t, batches * rows, "real parts of the eigenvalues"));
        NHLO_TRY(check(at.values + 1, t, batches * rows, "imaginary parts of the eigenvalues"));
      } else {
        NHLO_TRY(check(at.values, ct, batches * rows, "complex eigenvalues"));
      }
      const PrimitiveType vt = at.packed ? t : ct;
      NHLO_TRY(check(at.left, vt, count, "left eigenvectors"));
      NHLO_TRY(check(at.right, vt, count, "right eigenvectors"));
      return check(at.info, s32, batches, "s32 info");
    }
    case SolverOp::kEigh:
      if (rows != cols) return Status::Error("syevd needs square matrices");
      NHLO_TRY(check(0, t, count, "eigenvectors"));
      NHLO_TRY(check(1, real_type, batches * rows, "eigenvalues"));
      return check(2, s32, batches, "s32 info");
    case SolverOp::kTriangularSolve: {
      if (static_cast<size_t>(c.first_data) + 1 >= in.size())
        return Status::Error("the solver custom call has too few operands or results");
      const BufferRecord& rhs = *in[static_cast<size_t>(c.first_data) + 1];
      const std::vector<int64_t>& bd = rhs.dims;
      if (rhs.type != t || bd.size() != rank) return Status::Error("trsm needs a and b of one type and rank");
      const int64_t brows = bd[rank - 2], bcols = bd[rank - 1];
      const int64_t b_batches = brows * bcols == 0 ? 0 : rhs.ElementCount() / (brows * bcols);
      const bool side_known = c.left_side.operand < 0;
      const bool left = c.left_side.value != 0;
      if (rows != cols || (side_known && (left ? brows : bcols) != rows) || b_batches != batches)
        return Status::Error("trsm's a must be square, match b's side and have b's batch");
      NHLO_TRY(check(0, t, rhs.ElementCount(), "solution"));
      if (c.alpha_operand >= 0) {
        if (static_cast<size_t>(c.alpha_operand) >= in.size() || in[static_cast<size_t>(c.alpha_operand)]->type != t ||
            in[static_cast<size_t>(c.alpha_operand)]->ElementCount() != 1)
          return Status::Error("trsm's alpha must be a scalar of the matrices' type");
      }
      return OkStatus();
    }
    case SolverOp::kPivotsToPermutation:
    case SolverOp::kGtsv: break;  // checked above
  }
  return OkStatus();
}

Status RunSolver(const SolverConfig& c, const std::vector<Buf>& in, const std::vector<Buf>& out) {
  if (c.op == SolverOp::kPivotsToPermutation) {
    PivotsToPermutation(in[0], out[0]);
    return OkStatus();
  }
  if (c.op == SolverOp::kGtsv) {  // CheckSolver: f32, f64, c64 or c128
    const PrimitiveType t = in[0].type();
    if (t == PrimitiveType::kF32) RunGtsv<float>(in, out);
    if (t == PrimitiveType::kF64) RunGtsv<double>(in, out);
    if (t == PrimitiveType::kC64) RunGtsv<std::complex<float>>(in, out);
    if (t == PrimitiveType::kC128) RunGtsv<std::complex<double>>(in, out);
    return OkStatus();
  }
  const Buf& data = in[static_cast<size_t>(c.first_data)];
  if (data.type() == PrimitiveType::kF32) return Run<float>(c, in, out);
  if (data.type() == PrimitiveType::kF64) return Run<double>(c, in, out);
  if (data.type() == PrimitiveType::kC64) return Run<std::complex<float>>(c, in, out);
  return Run<std::complex<double>>(c, in, out);  // CheckSolver: c128
}

Status KernelSolver(const SolverConfig& c, const std::vector<Buf>& in, const std::vector<Buf>& out) {
  NHLO_TRY(CheckSolver(c, RecordsOf(in), RecordsOf(out)));
  return RunSolver(c, in, out);
}

}  // namespace nhlo
