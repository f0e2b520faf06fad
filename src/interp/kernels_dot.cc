// SPDX-License-Identifier: Apache-2.0
// dot with any dimension numbers. Operands are converted to the compute type and permuted into
// [batch, free, contract] order (skipped when they already are), then float dots above a small
// size run through Eigen's GEMM (gemm.h: FMA, blocked, so the last bits differ from a plain
// k-order sum); integer and tiny dots keep the exact i-k-j loop, and so do complex ones (c64 and
// c128), whose elements XLA's evaluator sums as `result += lhs * rhs` in std::complex.
#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>

#include "interp/dense_operands.h"
#include "interp/element_traits.h"
#include "interp/gemm.h"
#include "interp/kernel_plans.h"
#include "interp/kernels.h"
#include "interp/scratch.h"

namespace nhlo {
namespace {

// Below this many multiply-adds a dot runs the plain loop (exact k-order sums, no packing);
// above it, Eigen's GEMM (gemm.h). Depends only on the shape, so results stay deterministic.
constexpr int64_t kGemmMinWork = 4096;

// c (batch x m x n) = a (batch x m x k) * b (batch x k n): each output row accumulates over k in
// increasing order with an i-k-j loop; integers wrap (two's complement), as XLA's do. Complex
// products are std::complex's (C99 Annex G: an infinite operand gives an infinite product, not
// NaN), as the evaluator's are.
template <typename C>
void PlainDot(int64_t batch, int64_t m, int64_t n, int64_t k, const C* a, const C* b, C* c) {
  for (int64_t bi = 0; bi < batch; ++bi) {
    const C* ab = a + bi * m * k;
    const C* bb = b + bi * k * n;
    for (int64_t i = 0; i < m; ++i) {
      C* row = c + (bi * m + i) * n;
      std::fill(row, row + n, C(0));
      for (int64_t kk = 0; kk < k; ++kk) {
        C x = ab[i * k + kk];
        const C* brow = bb + kk * n;
        if constexpr (std::is_floating_point_v<C> || IsComplexCompute<C>::value) {
          for (int64_t j = 0; j < n; ++j) row[j] += x * brow[j];
        } else {
          using U = std::make_unsigned_t<C>;
          for (int64_t j = 0; j < n; ++j) row[j] = C(U(row[j]) + U(x) * U(brow[j]));
        }
      }
    }
  }
}

bool IsIdentity(const std::vector<int64_t>& order) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// An operand of a complex dot as std::complex<R> in [batch, free, contract] order (`order`).
template <typename R>
Result<ScratchVector<std::complex<R>>> ComplexOperand(const Buf& buf, const std::vector<int64_t>& order) {
  ScratchVector<std::complex<R>> dense;
  NHLO_TRY(ComplexElements<R>(buf, dense));
  if (IsIdentity(order)) return dense;
  ScratchVector<std::complex<R>> permuted(dense.size());
  PermuteDims(dense.data(), Dims(buf), order, permuted.data());
  return permuted;
}

template <typename R>
Status RunComplexDot(const DotPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(ScratchVector<std::complex<R>> a, ComplexOperand<R>(lhs, plan.l_mk));
  NHLO_ASSIGN_OR_RETURN(ScratchVector<std::complex<R>> b, ComplexOperand<R>(rhs, plan.r_kn));
  const int64_t total = plan.batch * plan.m * plan.n;
  ScratchVector<std::complex<R>> c(static_cast<size_t>(total));
  PlainDot(plan.batch, plan.m, plan.n, plan.k, a.data(), b.data(), c.data());
  for (int64_t i = 0; i < total; ++i) StoreComplex<R>(out.data, i, c[i]);
  return OkStatus();
}

}  // namespace

const DotDimensionNumbers& DotDims(const Step& s) {
  if (const auto* d = std::get_if<DotDimensionNumbers>(s.bundle->dims.get())) return *d;
  return DimsOf<RaggedDotDimensionNumbers>(s).dot;
}

Result<DotPlan> PlanDot(const DotDimensionNumbers& dims, const BufferRecord& lhs, const BufferRecord& rhs,
                        const BufferRecord& out) {
  const DimIndexList lb = dims.lhs_batch, lc = dims.lhs_contracting, rb = dims.rhs_batch, rc = dims.rhs_contracting;
  auto bad = [] { return Status::Error("bundle 'dot' has invalid dimension numbers"); };
  if (lb.size() != rb.size() || lc.size() != rc.size()) return bad();
  auto split = [&](const BufferRecord& b, DimIndexList batch, DimIndexList contract, std::vector<int64_t>& order,
                   int64_t& free_count) -> bool {
    std::vector<bool> used(b.dims.size(), false);
    for (const auto* list : {&batch, &contract})
      for (int64_t d : *list) {
        if (d < 0 || d >= static_cast<int64_t>(b.dims.size()) || used[d]) return false;
        used[d] = true;
      }
    order.assign(batch.begin(), batch.end());
    free_count = 1;
    // Products are checked: an operand with a zero dimension holds no bytes whatever its other
    // dimensions multiply to, so a record's dimensions may overflow 64 bits together.
    for (size_t d = 0; d < b.dims.size(); ++d)
      if (!used[d]) {
        order.push_back(static_cast<int64_t>(d));
        if (MulOverflows(free_count, b.dims[d], &free_count)) return false;
      }
    return true;
  };
  DotPlan plan;
  std::vector<int64_t> lorder, rorder;
  if (!split(lhs, lb, lc, lorder, plan.m) || !split(rhs, rb, rc, rorder, plan.n)) return bad();
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs.dims[lb[i]] != rhs.dims[rb[i]] || MulOverflows(plan.batch, lhs.dims[lb[i]], &plan.batch)) return bad();
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs.dims[lc[i]] != rhs.dims[rc[i]] || MulOverflows(plan.k, lhs.dims[lc[i]], &plan.k)) return bad();
  }
  int64_t total = 0;
  if (MulOverflows(plan.batch, plan.m, &total) || MulOverflows(total, plan.n, &total) || total != out.ElementCount())
    return bad();
  int64_t mn = 0;  // m * n may pass 64 bits when the batch is empty
  if (MulOverflows(plan.m, plan.n, &mn) || MulOverflows(mn, plan.k, &plan.work)) plan.work = INT64_MAX;
  // lhs as [batch, m, k] or, transposed, [batch, k, m]; rhs as [batch, k, n] or [batch, n, k].
  auto concat = [](DimIndexList batch_dims, auto first_begin, auto first_end, auto second_begin, auto second_end) {
    std::vector<int64_t> order(batch_dims.begin(), batch_dims.end());
    order.insert(order.end(), first_begin, first_end);
    order.insert(order.end(), second_begin, second_end);
    return order;
  };
  auto lfree = lorder.begin() + static_cast<std::ptrdiff_t>(lb.size());
  auto rfree = rorder.begin() + static_cast<std::ptrdiff_t>(rb.size());
  plan.l_mk = concat(lb, lfree, lorder.end(), lc.begin(), lc.end());
  plan.l_km = concat(lb, lc.begin(), lc.end(), lfree, lorder.end());
  plan.r_kn = concat(rb, rc.begin(), rc.end(), rfree, rorder.end());
  plan.r_nk = concat(rb, rfree, rorder.end(), rc.begin(), rc.end());
  return plan;
}

Status KernelDot(const DotDimensionNumbers& dims, const Buf& lhs, const Buf& rhs, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(DotPlan plan, PlanDot(dims, *lhs.rec, *rhs.rec, *out.rec));
  return RunDot(plan, lhs, rhs, out);
}

Status RunDot(const DotPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out) {
  if (out.type() == PrimitiveType::kC64) return RunComplexDot<float>(plan, lhs, rhs, out);
  if (out.type() == PrimitiveType::kC128) return RunComplexDot<double>(plan, lhs, rhs, out);
  const int64_t batch = plan.batch, m = plan.m, n = plan.n, k = plan.k;
  // Accumulate in the result's compute domain, as the evaluator does. An operand of another
  // element type is first converted to the result type (the evaluator's rule), so f32 operands
  // of a bf16 dot are rounded to bf16 before multiplying.
  return DispatchType(out.type(), [&](auto out_traits) -> Status {
    using C = typename decltype(out_traits)::Compute;
    // Each operand in [batch, free, contract] order, in the compute type; an operand already
    // stored as [batch, contract, free] is used as it is by the GEMM (the plain loop wants the
    // first order). An f32 (f64) operand needing neither conversion nor permutation is read in
    // place.
    bool gemm = std::is_floating_point_v<C> && plan.work >= kGemmMinWork;
    ScratchVector<C> a_store, b_store;
    auto prepare = [&](const Buf& buf, const std::vector<int64_t>& order, const std::vector<int64_t>& order_t,
                       ScratchVector<C>& store, const C*& ptr, bool& transposed) -> Status {
      transposed = gemm && !IsIdentity(order) && IsIdentity(order_t);
      bool in_place =
          (IsIdentity(order) || transposed) && reinterpret_cast<uintptr_t>(buf.data) % alignof(C) == 0 &&
          ((std::is_same_v<C, float> && buf.type() == PrimitiveType::kF32 && out.type() == PrimitiveType::kF32) ||
           (std::is_same_v<C, double> && buf.type() == PrimitiveType::kF64));
      if (in_place) {
        ptr = reinterpret_cast<const C*>(buf.data);
        return OkStatus();
      }
      // Converted when it must be, then permuted: an f32 operand that only needs permuting is
      // read in place, not copied first.
      ScratchVector<C> dense;
      NHLO_ASSIGN_OR_RETURN(const C* elements, ComputeElements<C>(buf, out.type(), out_traits, dense));
      if (IsIdentity(order) || transposed) {
        store = std::move(dense);
      } else {
        store.resize(static_cast<size_t>(buf.count()));
        PermuteDims(elements, Dims(buf), order, store.data());
      }
      ptr = store.data();
      return OkStatus();
    };
    const C *a = nullptr, *b = nullptr;
    bool a_t = false, b_t = false;
    NHLO_TRY(prepare(lhs, plan.l_mk, plan.l_km, a_store, a, a_t));
    NHLO_TRY(prepare(rhs, plan.r_kn, plan.r_nk, b_store, b, b_t));
    int64_t total = batch * m * n;
    // The result, written in place when it is f32/f64 and aligned.
    ScratchVector<C> c_store;
    C* c = nullptr;
    bool direct = reinterpret_cast<uintptr_t>(out.data) % alignof(C) == 0 &&
                  ((std::is_same_v<C, float> && out.type() == PrimitiveType::kF32) ||
                   (std::is_same_v<C, double> && out.type() == PrimitiveType::kF64));
    if (direct) {
      c = reinterpret_cast<C*>(out.data);
    } else {
      c_store.resize(static_cast<size_t>(total));
      c = c_store.data();
    }
    if constexpr (std::is_same_v<C, float>) {
      if (gemm) GemmF32(batch, m, n, k, a, a_t, b, b_t, c);
    } else if constexpr (std::is_same_v<C, double>) {
      if (gemm) GemmF64(batch, m, n, k, a, a_t, b, b_t, c);
    }
    if (!gemm) PlainDot(batch, m, n, k, a, b, c);
    if (!direct) StoreComputeArray(c, total, out, out_traits);
    return OkStatus();
  });
}

}  // namespace nhlo
