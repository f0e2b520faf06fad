// SPDX-License-Identifier: Apache-2.0
// dot with any dimension numbers. Operands are first gathered into [batch, free, contract]
// order, then each output row accumulates over the contracting index in increasing order (the
// evaluator's summation order, so f32 results match it bit for bit) with an i-k-j loop that
// streams rows of the right-hand side through the cache.
#include <cstring>

#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

const std::vector<int64_t>& ListOr(const Step& b, AttrId id, const std::vector<int64_t>& empty) {
  const AttrRecord* a = b.Find(id);
  return a && a->kind == AttrKind::IntList ? a->ints : empty;
}

// Gathers `buf` into a dense array of the compute type C, ordered by `order` (a permutation of
// its dims), converting each element with `load`.
template <typename C, typename Load>
std::vector<C> Gather(const Buf& buf, const std::vector<int64_t>& order, Load&& load) {
  const std::vector<int64_t>& dims = Dims(buf);
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t total = buf.count();
  std::vector<C> out(static_cast<size_t>(total));
  if (total == 0) return out;
  std::vector<int64_t> index(order.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t src = 0;
    for (size_t k = 0; k < order.size(); ++k) src += index[k] * strides[order[k]];
    out[linear] = load(src);
    for (size_t k = order.size(); k-- > 0;) {
      if (++index[k] < dims[order[k]]) break;
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace

Status KernelDot(const Step& bundle, const Buf& lhs, const Buf& rhs, const Buf& out) {
  static const std::vector<int64_t> kEmpty;
  const auto& lb = ListOr(bundle, AttrId::kLhsBatchDims, kEmpty);
  const auto& lc = ListOr(bundle, AttrId::kLhsContractingDims, kEmpty);
  const auto& rb = ListOr(bundle, AttrId::kRhsBatchDims, kEmpty);
  const auto& rc = ListOr(bundle, AttrId::kRhsContractingDims, kEmpty);
  auto bad = [] { return Status::Error("bundle 'dot' has invalid dimension numbers"); };
  if (lb.size() != rb.size() || lc.size() != rc.size()) return bad();
  auto split = [&](const Buf& b, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract,
                   std::vector<int64_t>& order, int64_t& free_count) -> bool {
    std::vector<bool> used(b.rank(), false);
    for (const auto* list : {&batch, &contract})
      for (int64_t d : *list) {
        if (d < 0 || d >= static_cast<int64_t>(b.rank()) || used[d]) return false;
        used[d] = true;
      }
    order.assign(batch.begin(), batch.end());
    free_count = 1;
    for (size_t d = 0; d < b.rank(); ++d)
      if (!used[d]) order.push_back(static_cast<int64_t>(d)), free_count *= Dims(b)[d];
    return true;
  };
  std::vector<int64_t> lorder, rorder;
  int64_t m, n;
  if (!split(lhs, lb, lc, lorder, m) || !split(rhs, rb, rc, rorder, n)) return bad();
  int64_t batch = 1, k = 1;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (Dims(lhs)[lb[i]] != Dims(rhs)[rb[i]]) return bad();
    batch *= Dims(lhs)[lb[i]];
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (Dims(lhs)[lc[i]] != Dims(rhs)[rc[i]]) return bad();
    k *= Dims(lhs)[lc[i]];
  }
  if (batch * m * n != out.count()) return bad();
  // lhs as [batch, m, k]; rhs as [batch, k, n].
  lorder.insert(lorder.end(), lc.begin(), lc.end());
  std::vector<int64_t> rorder_bkn(rb.begin(), rb.end());
  rorder_bkn.insert(rorder_bkn.end(), rc.begin(), rc.end());
  rorder_bkn.insert(rorder_bkn.end(), rorder.begin() + rb.size(), rorder.end());

  // Accumulate in the result's compute domain, as the evaluator does.
  return DispatchType(out.type(), [&](auto out_traits) -> Status {
    using C = typename decltype(out_traits)::Compute;
    // An operand of another element type is first converted to the result type (the
    // evaluator's rule), so f32 operands of a bf16 dot are rounded to bf16 before multiplying.
    auto gather = [&](const Buf& b, const std::vector<int64_t>& order, std::vector<C>& dst) -> Status {
      bool convert = b.type() != out.type();
      return DispatchType(b.type(), [&](auto in_traits) -> Status {
        int in_size = HostByteSize(b.type());
        dst = Gather<C>(b, order, [&](int64_t i) {
          if (!convert) return static_cast<C>(in_traits.Load(b.data, i));
          uint8_t tmp[16] = {};
          ConvertElement(b.type(), b.data + i * in_size, out.type(), tmp);
          return out_traits.Load(tmp, 0);
        });
        return OkStatus();
      });
    };
    std::vector<C> a, bmat;
    NHLO_TRY(gather(lhs, lorder, a));
    NHLO_TRY(gather(rhs, rorder_bkn, bmat));
    std::vector<C> row(static_cast<size_t>(n));
    for (int64_t bi = 0; bi < batch; ++bi) {
      const C* ab = a.data() + bi * m * k;
      const C* bb = bmat.data() + bi * k * n;
      for (int64_t i = 0; i < m; ++i) {
        std::fill(row.begin(), row.end(), C(0));
        for (int64_t kk = 0; kk < k; ++kk) {
          C x = ab[i * k + kk];
          const C* brow = bb + kk * n;
          if constexpr (std::is_floating_point_v<C>) {
            for (int64_t j = 0; j < n; ++j) row[j] += x * brow[j];
          } else {
            using U = std::make_unsigned_t<C>;
            for (int64_t j = 0; j < n; ++j) row[j] = C(U(row[j]) + U(x) * U(brow[j]));
          }
        }
        for (int64_t j = 0; j < n; ++j) out_traits.Store(out.data, (bi * m + i) * n + j, row[j]);
      }
    }
    return OkStatus();
  });
}

}  // namespace nhlo
