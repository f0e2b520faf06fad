// SPDX-License-Identifier: Apache-2.0
// cholesky and triangular-solve. XLA's evaluator refuses both; XLA's interpreter backend expands
// them first (CholeskyExpander, TriangularSolveExpander). cholesky follows the expander's
// unblocked loop, its whole block for 1 < n <= 128: column j of L is (A - L L^T)[r, j] / l_jj
// for r >= j with l_jj = sqrt((A - L L^T)[j, j]), the dot summed over every k in increasing
// order and each HLO step rounded to the element type; a NaN l_jj makes the whole matrix NaN;
// the other triangle is zero; upper works on the transpose. A 1x1 block is the expander's
// special case: sqrt(a) itself, not a / sqrt(a). triangular-solve is substitution in
// increasing k (XLA's expander multiplies by inverted diagonal blocks instead, so its last bits
// can differ). bf16, f16 and the f8 types compute in f32: cholesky rounds each step,
// triangular-solve rounds its results once. c64/c128 cholesky follows the expander's complex
// form (L L^H, a real pivot); complex triangular-solve is not implemented.
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

// The matrix size of a batch of square matrices [..., n, n], or an error.
Result<int64_t> SquareSize(const BufferRecord& a, const char* op, bool allow_complex) {
  const std::vector<int64_t>& d = a.dims;
  if (d.size() < 2 || d[d.size() - 1] != d[d.size() - 2])
    return Status::Error(std::string(op) + " takes batches of square matrices [..., n, n]");
  if (!IsFloat(a.type) && !(allow_complex && IsComplex(a.type)))
    return Status::Error(std::string(op) + " of " + std::string(PrimitiveTypeName(a.type)) + " is not implemented (" +
                         (allow_complex ? "floating-point and complex" : "floating-point") + " element types only)");
  return d.back();
}

// The complex form of the expander's loop: the dot runs against the conjugate (L L^H), the
// pivot is sqrt of the real part with a zero imaginary part, and a NaN pivot fills the matrix
// with NaN + 0i (the expander's FullLike of a float NaN). Upper transposes without conjugating.
template <typename R>
void CholeskyComplex(const Buf& a, const Buf& out, int64_t n, int64_t batch, bool lower) {
  using C = std::complex<R>;
  std::vector<C> m(static_cast<size_t>(n * n)), l(static_cast<size_t>(n * n)), s(static_cast<size_t>(n));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * n * n;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c) m[r * n + c] = LoadComplex<R>(a.data, base + (lower ? r * n + c : c * n + r));
    std::fill(l.begin(), l.end(), C(0));
    bool error = false;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t r = j; r < n; ++r) {
        C dot = 0;
        for (int64_t k = 0; k < n; ++k) dot += l[r * n + k] * std::conj(l[j * n + k]);
        s[r] = m[r * n + j] - dot;
      }
      R pivot = std::sqrt(s[j].real());
      error |= std::isnan(pivot);
      for (int64_t r = j; r < n; ++r) l[r * n + j] = n == 1 ? C(pivot, 0) : s[r] / C(pivot, 0) + C(0);
    }
    const R nan = std::numeric_limits<R>::quiet_NaN();
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c)
        StoreComplex<R>(out.data, base + (lower ? r * n + c : c * n + r), error ? C(nan, 0) : l[r * n + c]);
  }
}

}  // namespace

Result<LinalgPlan> PlanCholesky(const Step& s, const BufferRecord& a, const BufferRecord& out) {
  LinalgPlan plan;
  NHLO_ASSIGN_OR_RETURN(plan.n, SquareSize(a, "cholesky", /*allow_complex=*/true));
  if (out.dims != a.dims || out.type != a.type) return Status::Error("cholesky result must have its operand's shape");
  const AttrRecord* lower_attr = s.Find(AttrId::kLower);
  plan.lower = !lower_attr || lower_attr->b();
  plan.matrices = plan.n == 0 ? 0 : a.ElementCount() / (plan.n * plan.n);
  return plan;
}

Status KernelCholesky(const Step& bundle, const Buf& a, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(LinalgPlan plan, PlanCholesky(bundle, *a.rec, *out.rec));
  return RunCholesky(plan, a, out);
}

Status RunCholesky(const LinalgPlan& plan, const Buf& a, const Buf& out) {
  const int64_t n = plan.n, batch = plan.matrices;
  const bool lower = plan.lower;
  if (a.type() == PrimitiveType::kC64) {
    CholeskyComplex<float>(a, out, n, batch, lower);
    return OkStatus();
  }
  if (a.type() == PrimitiveType::kC128) {
    CholeskyComplex<double>(a, out, n, batch, lower);
    return OkStatus();
  }
  return DispatchType(a.type(), [&](auto tr) -> Status {
    using C = typename decltype(tr)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("cholesky: not a float type");
    } else {
      // Rounds a computed value to the element type, as each HLO op of the expansion does.
      uint8_t scratch[8];
      auto round = [&](C v) {
        tr.Store(scratch, 0, v);
        return tr.Load(scratch, 0);
      };
      std::vector<C> m(static_cast<size_t>(n * n)), l(static_cast<size_t>(n * n)), s(static_cast<size_t>(n));
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t base = b * n * n;
        // Upper: the lower factor of the transpose, transposed back.
        for (int64_t r = 0; r < n; ++r)
          for (int64_t c = 0; c < n; ++c) m[r * n + c] = tr.Load(a.data, base + (lower ? r * n + c : c * n + r));
        std::fill(l.begin(), l.end(), C(0));
        bool error = false;
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t r = j; r < n; ++r) {
            C dot = 0;
            for (int64_t k = 0; k < n; ++k) dot += l[r * n + k] * l[j * n + k];
            s[r] = round(m[r * n + j] - round(dot));
          }
          C ljj = round(std::sqrt(s[j]));
          error |= std::isnan(ljj);
          for (int64_t r = j; r < n; ++r) l[r * n + j] = n == 1 ? ljj : round(round(s[r] / ljj) + C(0));
        }
        for (int64_t r = 0; r < n; ++r)
          for (int64_t c = 0; c < n; ++c)
            tr.Store(out.data, base + (lower ? r * n + c : c * n + r),
                     error ? std::numeric_limits<C>::quiet_NaN() : l[r * n + c]);
      }
      return OkStatus();
    }
  });
}

Result<LinalgPlan> PlanTriangularSolve(const Step& s, const BufferRecord& a, const BufferRecord& b,
                                       const BufferRecord& out) {
  LinalgPlan plan;
  NHLO_ASSIGN_OR_RETURN(plan.n, SquareSize(a, "triangular-solve", /*allow_complex=*/false));
  const AttrRecord* left_attr = s.Find(AttrId::kLeftSide);
  const AttrRecord* lower_attr = s.Find(AttrId::kLower);
  const AttrRecord* unit_attr = s.Find(AttrId::kUnitDiagonal);
  const AttrRecord* transpose_attr = s.Find(AttrId::kTransposeA);
  plan.left = left_attr && left_attr->b();
  plan.lower = lower_attr && lower_attr->b();
  plan.unit = unit_attr && unit_attr->b();
  plan.transposed = transpose_attr && static_cast<TransposeA>(transpose_attr->i()) != TransposeA::kNoTranspose;
  const std::vector<int64_t>& bd = b.dims;
  if (b.type != a.type || out.type != a.type || out.dims != bd || bd.size() != a.dims.size())
    return Status::Error("triangular-solve takes a and b of one type and rank and returns b's shape");
  plan.rows = bd[bd.size() - 2];
  plan.cols = bd.back();
  const int64_t k_size = plan.n, rows = plan.rows, cols = plan.cols;
  if ((plan.left ? rows : cols) != k_size)
    return Status::Error("triangular-solve: a is " + std::to_string(k_size) + "x" + std::to_string(k_size) +
                         " but b's " + (plan.left ? "rows" : "columns") + " number " +
                         std::to_string(plan.left ? rows : cols));
  for (size_t d = 0; d + 2 < bd.size(); ++d)
    if (bd[d] != a.dims[d]) return Status::Error("triangular-solve: a and b differ in their batch dimensions");
  plan.matrices = rows * cols == 0 ? 0 : b.ElementCount() / (rows * cols);
  return plan;
}

Status KernelTriangularSolve(const Step& bundle, const Buf& a, const Buf& b, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(LinalgPlan plan, PlanTriangularSolve(bundle, *a.rec, *b.rec, *out.rec));
  return RunTriangularSolve(plan, a, b, out);
}

Status RunTriangularSolve(const LinalgPlan& plan, const Buf& a, const Buf& b, const Buf& out) {
  const int64_t k_size = plan.n, rows = plan.rows, cols = plan.cols, matrices = plan.matrices;
  const bool left = plan.left, lower = plan.lower, unit = plan.unit, transposed = plan.transposed;
  // op(a) is lower triangular when a's used triangle is lower and not transposed, or upper and
  // transposed (ADJOINT of a real matrix is its transpose).
  bool lower_eff = lower != transposed;
  return DispatchType(a.type(), [&](auto tr) -> Status {
    using C = typename decltype(tr)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return Status::Error("triangular-solve: not a float type");
    } else {
      std::vector<C> x(static_cast<size_t>(rows * cols));
      for (int64_t mtx = 0; mtx < matrices; ++mtx) {
        const int64_t abase = mtx * k_size * k_size, bbase = mtx * rows * cols;
        auto op_a = [&](int64_t i, int64_t k) {  // op(a)[i][k] in its triangle
          return tr.Load(a.data, abase + (transposed ? k * k_size + i : i * k_size + k));
        };
        for (int64_t i = 0; i < rows * cols; ++i) x[i] = tr.Load(b.data, bbase + i);
        // Left: op(a) X = B, one column of X at a time; right: X op(a) = B, one row at a time.
        // Unknown t of a line depends on the ones before it in solve order (k < t for lower
        // left and upper right, k > t otherwise).
        bool forward = left ? lower_eff : !lower_eff;
        int64_t lines = left ? cols : rows;
        for (int64_t line = 0; line < lines; ++line) {
          auto at = [&](int64_t t) -> C& { return left ? x[t * cols + line] : x[line * cols + t]; };
          for (int64_t step = 0; step < k_size; ++step) {
            int64_t t = forward ? step : k_size - 1 - step;
            C sum = 0;
            for (int64_t k = 0; k < k_size; ++k) {
              bool before = forward ? k < t : k > t;
              if (before) sum += (left ? op_a(t, k) : op_a(k, t)) * at(k);
            }
            C v = at(t) - sum;
            if (!unit) v /= op_a(t, t);
            at(t) = v;
          }
        }
        for (int64_t i = 0; i < rows * cols; ++i) tr.Store(out.data, bbase + i, x[i]);
      }
      return OkStatus();
    }
  });
}

}  // namespace nhlo
