// SPDX-License-Identifier: Apache-2.0
// ragged-dot(lhs, rhs, group_sizes): a dot whose lhs ragged dimension is cut into consecutive
// groups (sizes from group_sizes, in order; rows past the last group belong to none). XLA's
// three modes, by the kind of the ragged dimension (docs/interpreter.md "ragged-dot"):
//   non-contracting (m): [b,m,k] x [g,b,k,n] -> [b,m,n]; row i of group j uses rhs group j;
//                        a row in no group gives zeros;
//   contracting (k):     [b,m,k] x [b,k,n]   -> [g,b,m,n]; result j sums only group j's k;
//   batch:               a plain dot whose batch rows in no group are zeros (XLA's evaluator).
// group_sizes is [b..., x..., g] (x: the lhs dimensions of the ragged kind before the ragged
// one, in dimension order; mode batch has no b...), or [g] for every row. A row belongs to group
// j when start_j <= i < start_j + size_j with start_j the sum of the sizes before j, summed in
// the sizes' type as XLA's RaggedDotRewriter does (it wraps): its mask, which also fixes what
// negative sizes mean. Unlike that rewrite (a
// select, then a dot over the widened operand), rows outside a group are never multiplied, so
// an inf in another group's rhs does not turn them into NaN [inferred: the JAX definition].
// Each result element sums its products in increasing k order in the result's compute type.
#include <algorithm>
#include <cstring>
#include <limits>

#include "interp/dense_operands.h"
#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

std::string Str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// Everything about the operands' shapes that the kernel relies on, checked.
Result<RaggedDotPlan> CheckRaggedDot(const Step& s, const BufferRecord& lhs, const BufferRecord& rhs,
                                     const BufferRecord& sizes, const BufferRecord& out) {
  RaggedDotPlan p;
  const RaggedDotDimensionNumbers& dims = DimsOf<RaggedDotDimensionNumbers>(s);
  p.lb.assign(dims.dot.lhs_batch.begin(), dims.dot.lhs_batch.end());
  p.lc.assign(dims.dot.lhs_contracting.begin(), dims.dot.lhs_contracting.end());
  p.rb.assign(dims.dot.rhs_batch.begin(), dims.dot.rhs_batch.end());
  p.rc.assign(dims.dot.rhs_contracting.begin(), dims.dot.rhs_contracting.end());
  const DimIndexList ragged = dims.lhs_ragged, group = dims.rhs_group;
  auto bad = [](const std::string& why) { return Status::Error("bundle 'ragged-dot': " + why); };
  const auto& L = lhs.dims;
  const auto& R = rhs.dims;
  const int64_t lrank = static_cast<int64_t>(L.size()), rrank = static_cast<int64_t>(R.size());
  if (p.lb.size() != p.rb.size() || p.lc.size() != p.rc.size()) return bad("invalid dimension numbers");
  if (ragged.size() != 1 || ragged[0] < 0 || ragged[0] >= lrank) return bad("needs one lhs ragged dimension");
  p.ragged = ragged[0];
  p.mode = Contains(p.lc, p.ragged)   ? RaggedMode::kContracting
           : Contains(p.lb, p.ragged) ? RaggedMode::kBatch
                                      : RaggedMode::kNonContracting;
  if (p.mode == RaggedMode::kNonContracting) {
    if (group.size() != 1 || group[0] < 0 || group[0] >= rrank)
      return bad("a ragged non-contracting dimension needs one rhs group dimension");
    p.rhs_group = group[0];
  } else if (!group.empty()) {
    return bad("rhs group dimensions are only allowed when the ragged dimension is non-contracting");
  }
  std::vector<bool> lused(L.size(), false), rused(R.size(), false);
  auto mark = [](std::vector<bool>& used, int64_t d) -> bool {
    if (d < 0 || d >= static_cast<int64_t>(used.size()) || used[d]) return false;
    used[d] = true;
    return true;
  };
  for (size_t i = 0; i < p.lb.size(); ++i) {
    if (!mark(lused, p.lb[i]) || !mark(rused, p.rb[i]) || L[p.lb[i]] != R[p.rb[i]])
      return bad("invalid batch dimensions");
    if (__builtin_mul_overflow(p.batch, L[p.lb[i]], &p.batch)) return bad("dimensions too large");
  }
  for (size_t i = 0; i < p.lc.size(); ++i) {
    if (!mark(lused, p.lc[i]) || !mark(rused, p.rc[i]) || L[p.lc[i]] != R[p.rc[i]])
      return bad("invalid contracting dimensions");
    if (__builtin_mul_overflow(p.k, L[p.lc[i]], &p.k)) return bad("dimensions too large");
  }
  if (p.rhs_group >= 0 && !mark(rused, p.rhs_group))
    return bad("the rhs group dimension is also a batch or contracting one");
  for (int64_t d = 0; d < lrank; ++d) {
    if (lused[d]) continue;
    p.lfree.push_back(d);
    if (__builtin_mul_overflow(p.m, L[d], &p.m)) return bad("dimensions too large");
  }
  for (int64_t d = 0; d < rrank; ++d) {
    if (rused[d]) continue;
    p.rfree.push_back(d);
    if (__builtin_mul_overflow(p.n, R[d], &p.n)) return bad("dimensions too large");
  }
  const std::vector<int64_t>& kind = p.mode == RaggedMode::kContracting ? p.lc
                                     : p.mode == RaggedMode::kBatch     ? p.lb
                                                                        : p.lfree;
  for (int64_t d = 0; d < p.ragged; ++d)
    if (Contains(kind, d)) p.x_dims.push_back(d);
  // group_sizes: [b..., x..., g] or [g].
  if (!IsInteger(sizes.type) || sizes.dims.empty()) return bad("group sizes must be an integer array");
  p.groups = sizes.dims.back();
  std::vector<int64_t> want;
  if (p.mode != RaggedMode::kBatch)
    for (int64_t d : p.lb) want.push_back(L[d]);
  for (int64_t d : p.x_dims) want.push_back(L[d]);
  want.push_back(p.groups);
  p.broadcast_sizes = sizes.dims.size() == 1;
  if (!p.broadcast_sizes && sizes.dims != want)
    return bad("group sizes " + Str(sizes.dims) + " do not have the shape " + Str(want) + " or [" +
               std::to_string(p.groups) + "]");
  if (p.rhs_group >= 0 && R[p.rhs_group] != p.groups)
    return bad("the rhs group dimension has " + std::to_string(R[p.rhs_group]) + " groups, group sizes " +
               std::to_string(p.groups));
  int64_t expect = 0;
  if (__builtin_mul_overflow(p.batch, p.m, &expect) || __builtin_mul_overflow(expect, p.n, &expect) ||
      __builtin_mul_overflow(expect, p.mode == RaggedMode::kContracting ? p.groups : 1, &expect) ||
      CheckedElementCount(out.dims) != expect)
    return bad("the result does not have the dot's element count");
  return p;
}

// For a group-sizes row, whether position `i` of the ragged dimension falls in group `j`. The
// starts and ends are XLA's cumulative sum of the sizes, in the sizes' own type (it wraps), read
// as that type's values.
struct GroupRows {
  std::vector<__int128> start, end;  // per (row, group), flattened
  int64_t groups;
  bool Holds(int64_t row, int64_t j, int64_t i) const {
    size_t at = static_cast<size_t>(row * groups + j);
    return start[at] <= i && i < end[at];
  }
};

GroupRows ReadGroups(const Buf& sizes, int64_t groups) {
  GroupRows g;
  g.groups = groups;
  int64_t count = sizes.count();
  g.start.resize(static_cast<size_t>(count));
  g.end.resize(static_cast<size_t>(count));
  const PrimitiveType t = sizes.type();
  const int size = HostByteSize(t), bits = BitWidth(t);
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  auto value = [&](uint64_t raw) -> __int128 {  // `bits` bits of raw as t's value
    raw &= mask;
    if (!IsSignedInt(t)) return raw;
    if (bits < 64 && (raw >> (bits - 1)) & 1) raw |= ~mask;
    return static_cast<int64_t>(raw);
  };
  for (int64_t row = 0; groups > 0 && row < count / groups; ++row) {
    uint64_t sum = 0;
    for (int64_t j = 0; j < groups; ++j) {
      int64_t at = row * groups + j;
      uint64_t v = IsSignedInt(t) ? static_cast<uint64_t>(LoadAsInt(t, sizes.data + at * size))
                                  : LoadAsUint(t, sizes.data + at * size);
      g.start[at] = value(sum);
      sum += v;
      g.end[at] = value(sum);
    }
  }
  return g;
}

template <typename C>
void MulAddRow(C x, const C* brow, C* row, int64_t n) {
  if constexpr (std::is_floating_point_v<C>) {
    for (int64_t j = 0; j < n; ++j) row[j] += x * brow[j];
  } else {
    using U = std::make_unsigned_t<C>;
    for (int64_t j = 0; j < n; ++j) row[j] = C(U(row[j]) + U(x) * U(brow[j]));
  }
}

}  // namespace

Status CheckRaggedDotShapes(const Step& step, const BufferRecord& lhs, const BufferRecord& rhs,
                            const BufferRecord& sizes, const BufferRecord& out) {
  return CheckRaggedDot(step, lhs, rhs, sizes, out).status();
}

Result<RaggedDotPlan> PlanRaggedDot(const Step& s, const BufferRecord& lhs, const BufferRecord& rhs,
                                    const BufferRecord& sizes, const BufferRecord& out, int64_t max_rows) {
  NHLO_ASSIGN_OR_RETURN(RaggedDotPlan p, CheckRaggedDot(s, lhs, rhs, sizes, out));
  const auto& L = lhs.dims;
  p.empty = out.ElementCount() == 0;
  if (p.mode == RaggedMode::kBatch) {
    NHLO_ASSIGN_OR_RETURN(p.dot, PlanDot(DimsOf<RaggedDotDimensionNumbers>(s).dot, lhs, rhs, out));
    for (size_t i = 0; i < p.lb.size(); ++i) {
      p.batch_sizes.push_back(L[p.lb[i]]);
      if (p.lb[i] == p.ragged) p.ragged_pos = i;
    }
    for (int64_t d : p.x_dims) {
      p.x_pos.push_back(static_cast<int64_t>(std::find(p.lb.begin(), p.lb.end(), d) - p.lb.begin()));
      p.x_sizes.push_back(L[d]);
    }
    // Only a result with elements is zeroed by blocks: then batch * m * n is its count, so this fits
    // (an empty one may have m * n past 64 bits).
    if (!p.empty) p.block = p.m * p.n * HostByteSize(out.type);
    return p;
  }
  p.zeros = lhs.ElementCount() == 0 || rhs.ElementCount() == 0;  // every sum is empty
  if (p.empty || p.zeros) return p;
  // lhs as [batch, m, k] (free dims ascending, contracting in lc order); rhs as
  // [batch, group, k, n] (group of extent 1 in contracting mode).
  p.lorder = p.lb;
  p.lorder.insert(p.lorder.end(), p.lfree.begin(), p.lfree.end());
  p.lorder.insert(p.lorder.end(), p.lc.begin(), p.lc.end());
  p.rorder = p.rb;
  if (p.rhs_group >= 0) p.rorder.push_back(p.rhs_group);
  p.rorder.insert(p.rorder.end(), p.rc.begin(), p.rc.end());
  p.rorder.insert(p.rorder.end(), p.rfree.begin(), p.rfree.end());
  // Where the ragged dimension and the x dimensions sit in the m (or k) coordinates.
  const std::vector<int64_t>& axis_dims = p.mode == RaggedMode::kContracting ? p.lc : p.lfree;
  std::vector<int64_t> axis_sizes, x_pos, x_sizes;
  size_t ragged_pos = 0;
  for (size_t i = 0; i < axis_dims.size(); ++i) {
    axis_sizes.push_back(L[axis_dims[i]]);
    if (axis_dims[i] == p.ragged) ragged_pos = i;
  }
  for (int64_t d : p.x_dims) {
    x_pos.push_back(std::find(axis_dims.begin(), axis_dims.end(), d) - axis_dims.begin());
    x_sizes.push_back(L[d]);
  }
  p.x_count = CheckedElementCount(x_sizes);
  // For each m (or k) coordinate: its place on the ragged dimension and its x row. The lhs has
  // elements, so m (or k) is at most its count; but the load plans every static step, run or
  // not, from records whose buffers may not exist yet, so past `max_rows` coordinates (16 bytes
  // each) the run lays them out instead, on buffers that do.
  const int64_t axis_count = p.mode == RaggedMode::kContracting ? p.k : p.m;
  if (axis_count > max_rows) return Status::Error("ragged-dot rows are laid out at the run");
  p.place.resize(static_cast<size_t>(axis_count));
  p.xrow.resize(static_cast<size_t>(axis_count));
  ForEachIndex(axis_sizes, [&](int64_t i, const std::vector<int64_t>& coord) {
    p.place[i] = coord[ragged_pos];
    int64_t x = 0;
    for (size_t t = 0; t < x_pos.size(); ++t) x = x * x_sizes[t] + coord[x_pos[t]];
    p.xrow[i] = x;
  });
  return p;
}

Status KernelRaggedDot(const Step& s, const Buf& lhs, const Buf& rhs, const Buf& sizes, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(
      RaggedDotPlan p, PlanRaggedDot(s, *lhs.rec, *rhs.rec, *sizes.rec, *out.rec, std::numeric_limits<int64_t>::max()));
  return RunRaggedDot(p, lhs, rhs, sizes, out);
}

Status RunRaggedDot(const RaggedDotPlan& p, const Buf& lhs, const Buf& rhs, const Buf& sizes, const Buf& out) {
  if (p.mode == RaggedMode::kBatch) {
    // A plain dot, then the batch rows no group holds are zeros (XLA's evaluator: a batch index
    // outside every group contributes nothing).
    NHLO_TRY(RunDot(p.dot, lhs, rhs, out));
    if (p.empty) return OkStatus();
    GroupRows rows = ReadGroups(sizes, p.groups);
    ForEachIndex(p.batch_sizes, [&](int64_t bi, const std::vector<int64_t>& coord) {
      int64_t x = 0;
      for (size_t t = 0; t < p.x_pos.size(); ++t) x = x * p.x_sizes[t] + coord[static_cast<size_t>(p.x_pos[t])];
      int64_t row = p.broadcast_sizes ? 0 : x;
      for (int64_t j = 0; j < p.groups; ++j)
        if (rows.Holds(row, j, coord[p.ragged_pos])) return;
      std::memset(out.data + bi * p.block, 0, static_cast<size_t>(p.block));
    });
    return OkStatus();
  }
  if (p.empty) return OkStatus();
  if (p.zeros) {
    std::memset(out.data, 0, out.rec->size);
    return OkStatus();
  }
  GroupRows rows = ReadGroups(sizes, p.groups);
  const auto& L = Dims(lhs);
  const auto& R = Dims(rhs);
  const std::vector<int64_t>& lorder = p.lorder;
  const std::vector<int64_t>& rorder = p.rorder;
  const std::vector<int64_t>& place = p.place;
  const std::vector<int64_t>& xrow = p.xrow;
  const int64_t rgroups = p.rhs_group >= 0 ? p.groups : 1;
  const int64_t x_count = p.x_count;
  auto row_of = [&](int64_t bi, int64_t x) { return p.broadcast_sizes ? 0 : bi * x_count + x; };
  return DispatchType(out.type(), [&](auto out_traits) -> Status {
    using C = typename decltype(out_traits)::Compute;
    std::vector<C> ldense, rdense, a, b;
    NHLO_TRY(ToComputeArray<C>(lhs, out.type(), out_traits, ldense));
    NHLO_TRY(ToComputeArray<C>(rhs, out.type(), out_traits, rdense));
    a.resize(ldense.size());
    b.resize(rdense.size());
    if (!a.empty()) PermuteDims(ldense.data(), L, lorder, a.data());
    if (!b.empty()) PermuteDims(rdense.data(), R, rorder, b.data());
    int64_t total = out.count();
    std::vector<C> c(static_cast<size_t>(total), C(0));
    const int64_t m = p.m, n = p.n, k = p.k;
    if (p.mode == RaggedMode::kNonContracting) {
      for (int64_t bi = 0; bi < p.batch; ++bi)
        for (int64_t mi = 0; mi < m; ++mi) {
          C* row = c.data() + (bi * m + mi) * n;
          const C* arow = a.data() + (bi * m + mi) * k;
          for (int64_t j = 0; j < p.groups; ++j) {
            if (!rows.Holds(row_of(bi, xrow[mi]), j, place[mi])) continue;
            const C* bg = b.data() + (bi * rgroups + j) * k * n;
            for (int64_t kk = 0; kk < k; ++kk) MulAddRow(arow[kk], bg + kk * n, row, n);
          }
        }
    } else {
      for (int64_t j = 0; j < p.groups; ++j)
        for (int64_t bi = 0; bi < p.batch; ++bi)
          for (int64_t mi = 0; mi < m; ++mi) {
            C* row = c.data() + ((j * p.batch + bi) * m + mi) * n;
            const C* arow = a.data() + (bi * m + mi) * k;
            const C* bb = b.data() + bi * k * n;
            for (int64_t kk = 0; kk < k; ++kk)
              if (rows.Holds(row_of(bi, xrow[kk]), j, place[kk])) MulAddRow(arow[kk], bb + kk * n, row, n);
          }
    }
    StoreComputeArray(c.data(), total, out, out_traits);
    return OkStatus();
  });
}

}  // namespace nhlo
