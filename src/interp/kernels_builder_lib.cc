// SPDX-License-Identifier: Apache-2.0
// XLA builder-library calls computed natively when the custom call names no computation (the
// expansion XLA's builder would emit): Einsum, GetMatrixDiagonalViaGather, ScramblePhiloxKey
// and TridiagonalSolver. Each follows the steps of its function in xla/hlo/builder/lib
// (matrix.cc, prng.cc, tridiagonal.cc), as the expansions in the corpus's builder tests show
// them, so that the values are the expansion's, rounding for rounding.
#include <algorithm>
#include <complex>
#include <cstring>

#include "interp/element_traits.h"
#include "interp/kernels.h"
#include "support/checked_math.h"

namespace nhlo {
namespace {

int Position(const std::vector<int>& labels, int label) {
  auto it = std::find(labels.begin(), labels.end(), label);
  return it == labels.end() ? -1 : static_cast<int>(it - labels.begin());
}

template <typename C>
C AddZero(C v) {
  if constexpr (std::is_integral_v<C>)
    return v;
  else
    return v + C(0);  // a masked reduce from 0: -0 becomes +0, as the expansion gives
}

template <typename C>
C MulAdd(C acc, C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return C(U(acc) + U(a) * U(b));
  } else {
    return acc + a * b;
  }
}

// An einsum operand seen through its labels, each label once: the element at index i is at
// offset sum(i[d] * strides[d]). A repeated label is its diagonal, which is only a stride (the
// sum of the repeated dimensions' strides), so no operand is copied; XLA selects the diagonal
// under an iota mask and sums the dimension away from 0, which turns -0 into +0 (add_zero).
struct EinsumLayout {
  std::vector<int> labels;
  std::vector<int64_t> dims, strides;
  bool add_zero = false;

  int64_t StrideOf(int label) const {
    int at = Position(labels, label);
    return at < 0 ? 0 : strides[static_cast<size_t>(at)];
  }
};

EinsumLayout DiagonalLayout(const std::vector<int>& labels, const std::vector<int64_t>& dims) {
  EinsumLayout u;
  const std::vector<int64_t> ts = RowMajorStrides(dims);
  for (size_t d = 0; d < labels.size() && d < dims.size(); ++d) {
    int at = Position(u.labels, labels[d]);
    if (at < 0) {
      u.labels.push_back(labels[d]);
      u.dims.push_back(dims[d]);
      u.strides.push_back(ts[d]);
    } else {
      u.strides[static_cast<size_t>(at)] += ts[d];
      u.add_zero = true;
    }
  }
  return u;
}

// The dimensions whose labels `keep` rejects are summed away inside the operand: a reduce from 0
// over them in row-major order, into row-major partial sums in the operand's own element type
// (exact: einsum takes f32, f64 and integers, and integer sums wrap to the result's width in
// the end anyway), so they take at most the operand's bytes. Plans `side` and gives the layout
// of the sums; nothing when no label is summed.
template <typename Keep>
void PlanSumOut(EinsumLayout& t, EinsumPlan::Side& side, Keep keep) {
  EinsumLayout u;
  std::vector<int64_t> kept_strides, summed_dims, summed_strides;
  for (size_t d = 0; d < t.labels.size(); ++d) {
    if (keep(t.labels[d])) {
      u.labels.push_back(t.labels[d]);
      u.dims.push_back(t.dims[d]);
      kept_strides.push_back(t.strides[d]);
    } else {
      summed_dims.push_back(t.dims[d]);
      summed_strides.push_back(t.strides[d]);
    }
  }
  if (summed_dims.empty()) return;
  u.strides = RowMajorStrides(u.dims);
  side.sums = true;
  side.kept_count = CheckedElementCount(u.dims);
  side.summed_count = CheckedElementCount(summed_dims);
  side.kept_dims = u.dims;
  side.kept_strides = std::move(kept_strides);
  side.summed_dims = std::move(summed_dims);
  side.summed_strides = std::move(summed_strides);
  t = std::move(u);
}

// Advances a row-major index over `dims` and its offsets along two stride sets; false after the
// last index.
inline bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims, const std::vector<int64_t>& sa,
                      const std::vector<int64_t>& sb, int64_t& a, int64_t& b) {
  for (size_t k = dims.size(); k-- > 0;) {
    a += sa[k], b += sb[k];
    if (++index[k] < dims[k]) return true;
    a -= sa[k] * dims[k], b -= sb[k] * dims[k];
    index[k] = 0;
  }
  return false;
}

// One operand as the main loop reads it: its elements or its partial sums.
struct EinsumData {
  const uint8_t* data;
  bool add_zero;
  std::vector<uint8_t> sums;
};

template <typename Traits>
typename Traits::Compute At(const Traits& traits, const EinsumData& t, int64_t offset) {
  typename Traits::Compute v = traits.Load(t.data, offset);
  return t.add_zero ? AddZero(v) : v;
}

template <typename Traits>
EinsumData SumOut(const Traits& traits, int element_bytes, const EinsumPlan::Side& side, const uint8_t* data) {
  using C = typename Traits::Compute;
  EinsumData t{data, side.add_zero, {}};
  if (!side.sums) return t;
  EinsumData u{nullptr, false, {}};
  u.sums.resize(static_cast<size_t>(side.kept_count) * static_cast<size_t>(element_bytes));
  std::vector<int64_t> kept_index(side.kept_dims.size(), 0), summed_index(side.summed_dims.size(), 0);
  const std::vector<int64_t> none_kept(side.kept_strides.size(), 0), none_summed(side.summed_strides.size(), 0);
  int64_t base = 0, unused = 0;
  for (int64_t i = 0; i < side.kept_count; ++i) {
    C acc = C(0);
    int64_t at = base;
    for (int64_t j = 0; j < side.summed_count; ++j) {
      acc = MulAdd(acc, At(traits, t, at), C(1));  // integers wrap, as XLA's add does
      NextIndex(summed_index, side.summed_dims, side.summed_strides, none_summed, at, unused);
    }
    traits.Store(u.sums.data(), i, acc);
    NextIndex(kept_index, side.kept_dims, side.kept_strides, none_kept, base, unused);
  }
  u.data = u.sums.data();
  return u;
}

// XLA's Einsum (matrix.cc): diagonals of x, then of y; every label unique: sums inside one
// operand, one dot (batch labels in x order, contracting in x order, result [batch, x free,
// y free]), a transpose into the result's order; a repeated result label embeds the value on
// that diagonal with zeros elsewhere. The dot's elements are computed straight into the
// result's order (each in its own accumulator, so the order of the result loop is free).
template <typename Traits>
void RunEinsumTyped(const Traits& traits, const EinsumPlan& plan, const Buf& xb, const Buf& yb, const Buf& out) {
  using C = typename Traits::Compute;
  const int element_bytes = HostByteSize(out.type());
  const EinsumData x = SumOut(traits, element_bytes, plan.x, xb.data);
  const EinsumData y = SumOut(traits, element_bytes, plan.y, yb.data);
  std::vector<int64_t> index(plan.dims.size(), 0), k(plan.cdims.size(), 0);
  int64_t xa = 0, ya = 0;
  for (int64_t i = 0; i < plan.count; ++i) {
    bool on_diagonal = true;
    for (size_t d = 0; d < plan.dims.size(); ++d) on_diagonal = on_diagonal && index[d] == index[plan.first[d]];
    C acc = C(0);
    if (on_diagonal) {
      int64_t xk = xa, yk = ya;
      for (int64_t j = 0; j < plan.contract_count; ++j) {
        acc = MulAdd(acc, At(traits, x, xk), At(traits, y, yk));
        NextIndex(k, plan.cdims, plan.cx, plan.cy, xk, yk);
      }
    }
    traits.Store(out.data, i, acc);
    NextIndex(index, plan.dims, plan.ox, plan.oy, xa, ya);
  }
}

// Philox4x32-10 on the state {lo, 0, hi, 0} with XLA's fixed key (prng.cc ScramblePhiloxKey);
// the new key is the first two words.
uint64_t ScramblePhiloxKey(uint64_t key) {
  uint32_t x0 = static_cast<uint32_t>(key), x1 = 0, x2 = static_cast<uint32_t>(key >> 32), x3 = 0;
  uint32_t k0 = 0x3ec8f720u, k1 = 0x02461e29u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(x0) * 0xD2511F53u;
    uint64_t p1 = static_cast<uint64_t>(x2) * 0xCD9E8D57u;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ x1 ^ k0;
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ x3 ^ k1;
    uint32_t n3 = static_cast<uint32_t>(p0);
    x0 = n0, x1 = n1, x2 = n2, x3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return static_cast<uint64_t>(x0) | static_cast<uint64_t>(x1) << 32;
}

// The Thomas algorithm as tridiagonal.cc's loops run it, every operation rounded on its own:
// l[0] and u[m-1] are never read; no pivoting (a zero pivot gives inf or NaN).
// b holds `systems` right-hand sides of m equations each; element (r, i) at b[r*rs + i*is].
template <typename T>
void Thomas(const T* l, const T* d, const T* u, T* b, int64_t m, int64_t systems, int64_t rs, int64_t is) {
  std::vector<T> dd(static_cast<size_t>(m));
  if (m == 0) return;
  dd[0] = d[0];
  for (int64_t i = 1; i < m; ++i) {
    T w = l[i] / dd[i - 1];
    dd[i] = d[i] - w * u[i - 1];
    for (int64_t r = 0; r < systems; ++r) b[r * rs + i * is] = b[r * rs + i * is] - w * b[r * rs + (i - 1) * is];
  }
  for (int64_t r = 0; r < systems; ++r) b[r * rs + (m - 1) * is] = b[r * rs + (m - 1) * is] / dd[m - 1];
  for (int64_t i = m - 2; i >= 0; --i)
    for (int64_t r = 0; r < systems; ++r)
      b[r * rs + i * is] = (b[r * rs + i * is] - u[i] * b[r * rs + (i + 1) * is]) / dd[i];
}

template <typename T>
void SolveTridiagonal(const std::vector<Buf>& in, const Buf& out) {
  const bool packed = in.size() == 2;  // (diagonals [...,3,M], rhs [...,M,K])
  const auto& rd = Dims(in.back());
  const size_t rank = rd.size();
  const int64_t m = packed ? rd[rank - 2] : rd[rank - 1];
  const int64_t systems = packed ? rd[rank - 1] : rd[rank - 2];
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < rank; ++d) batches *= rd[d];
  T* x = reinterpret_cast<T*>(out.data);
  if (out.count() == 0) return;  // no systems, or systems of no equations
  std::memmove(out.data, in.back().data, static_cast<size_t>(out.count()) * sizeof(T));
  auto diag = [&](size_t operand, int64_t batch, int row) {
    const T* base = reinterpret_cast<const T*>(in[operand].data);
    return packed ? base + (batch * 3 + row) * m : base + batch * m;
  };
  for (int64_t bi = 0; bi < batches; ++bi) {
    const T* u = packed ? diag(0, bi, 0) : diag(2, bi, 0);
    const T* d = packed ? diag(0, bi, 1) : diag(1, bi, 0);
    const T* l = packed ? diag(0, bi, 2) : diag(0, bi, 0);
    T* b = x + bi * m * systems;
    if (packed)
      Thomas(l, d, u, b, m, systems, 1, systems);  // rhs [M, K]: system r is column r
    else
      Thomas(l, d, u, b, m, systems, m, 1);  // rhs [K, M]: system r is row r
  }
}

}  // namespace

Result<EinsumPlan> PlanEinsum(const EinsumConfig& config, const BufferRecord& xr, const BufferRecord& yr,
                              const BufferRecord& out) {
  if (xr.type != out.type || yr.type != out.type)
    return Status::Error("Einsum operands and result must have one element type");
  EinsumPlan plan;
  if (xr.ElementCount() == 0 || yr.ElementCount() == 0) {  // every sum is empty: zeros (or no elements at all)
    plan.zeros = true;
    return plan;
  }
  NHLO_TRY(DispatchType(out.type, [](auto) { return OkStatus(); }));
  EinsumLayout x = DiagonalLayout(config.x, xr.dims), y = DiagonalLayout(config.y, yr.dims);
  plan.x.add_zero = x.add_zero;
  plan.y.add_zero = y.add_zero;
  const std::vector<int>& out_labels = config.out;
  auto in_out = [&](int l) { return Position(out_labels, l) >= 0; };
  PlanSumOut(x, plan.x, [&](int l) { return in_out(l) || Position(y.labels, l) >= 0; });
  PlanSumOut(y, plan.y, [&](int l) { return in_out(l) || Position(x.labels, l) >= 0; });
  // contracting labels (in x order): extents and strides
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (in_out(x.labels[d]) || Position(y.labels, x.labels[d]) < 0) continue;
    plan.cdims.push_back(x.dims[d]);
    plan.cx.push_back(x.strides[d]);
    plan.cy.push_back(y.StrideOf(x.labels[d]));
  }
  // The result: a label of neither operand is a dimension of 1; a repeated one holds the value
  // on its diagonal. Strides into x and y per result dimension, its first occurrence only.
  for (size_t d = 0; d < out_labels.size(); ++d) {
    const int l = out_labels[d];
    int at_x = Position(x.labels, l), at_y = Position(y.labels, l);
    plan.dims.push_back(at_x >= 0   ? x.dims[static_cast<size_t>(at_x)]
                        : at_y >= 0 ? y.dims[static_cast<size_t>(at_y)]
                                    : 1);
    plan.first.push_back(static_cast<size_t>(Position(out_labels, l)));
    const bool repeat = plan.first.back() != d;
    plan.ox.push_back(repeat ? 0 : x.StrideOf(l));
    plan.oy.push_back(repeat ? 0 : y.StrideOf(l));
  }
  plan.count = CheckedElementCount(plan.dims);
  if (plan.count != out.ElementCount()) return Status::Error("einsum result does not fit its buffer");
  plan.contract_count = CheckedElementCount(plan.cdims);
  return plan;
}

void RunEinsum(const EinsumPlan& plan, const Buf& x, const Buf& y, const Buf& out) {
  if (plan.zeros) {
    if (out.rec->size) std::memset(out.data, 0, out.rec->size);
    return;
  }
  (void)DispatchType(out.type(), [&](auto traits) -> Status {  // PlanEinsum checked the type
    RunEinsumTyped(traits, plan, x, y, out);
    return OkStatus();
  });
}

Status KernelEinsum(const EinsumConfig& config, const Buf& x, const Buf& y, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(EinsumPlan plan, PlanEinsum(config, *x.rec, *y.rec, *out.rec));
  RunEinsum(plan, x, y, out);
  return OkStatus();
}

uint64_t EinsumScratchBytes(const EinsumConfig& config, const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                            PrimitiveType type) {
  // The labels each operand keeps, as Einsum's SumOut calls decide them: x first, then y
  // against what x kept.
  struct Unique {
    std::vector<int> labels;
    std::vector<int64_t> dims;
  };
  auto unique = [](const std::vector<int>& labels, const std::vector<int64_t>& dims) {
    Unique u;
    for (size_t d = 0; d < labels.size() && d < dims.size(); ++d)
      if (Position(u.labels, labels[d]) < 0) u.labels.push_back(labels[d]), u.dims.push_back(dims[d]);
    return u;
  };
  Unique ux = unique(config.x, x), uy = unique(config.y, y);
  if (CheckedElementCount(x) == 0 || CheckedElementCount(y) == 0) return 0;  // the kernel only writes zeros
  uint64_t total = 0;
  auto sum_out = [&](Unique& t, const Unique& other) {
    Unique kept;
    for (size_t d = 0; d < t.labels.size(); ++d)
      if (Position(config.out, t.labels[d]) >= 0 || Position(other.labels, t.labels[d]) >= 0)
        kept.labels.push_back(t.labels[d]), kept.dims.push_back(t.dims[d]);
    if (kept.labels.size() == t.labels.size()) return;
    uint64_t bytes = static_cast<uint64_t>(HostByteSize(type));
    for (int64_t d : kept.dims)
      if (d < 0 || MulOverflows(bytes, static_cast<uint64_t>(d), &bytes)) bytes = UINT64_MAX;
    total = SaturatingAdd(total, bytes);
    t = std::move(kept);
  };
  sum_out(ux, uy);
  sum_out(uy, ux);
  return total;
}

Status CheckMatrixDiagonal(const BufferRecord& x, const BufferRecord& out) {
  const auto& dims = x.dims;
  if (dims.size() < 2 || x.type != out.type)
    return Status::Error("GetMatrixDiagonalViaGather needs a matrix of its result's element type");
  if (x.ElementCount() == 0) return OkStatus();  // no diagonal elements to move
  int64_t m = dims[dims.size() - 2], n = dims.back(), len = std::min(m, n);
  int64_t batches = x.ElementCount() / (m * n);  // m * n divides the nonzero count
  if (batches * len != out.ElementCount())
    return Status::Error("GetMatrixDiagonalViaGather result does not fit its buffer");
  return OkStatus();
}

void RunMatrixDiagonal(const Buf& x, const Buf& out) {
  if (x.count() == 0) return;
  const auto& dims = Dims(x);
  const int64_t m = dims[dims.size() - 2], n = dims.back(), len = std::min(m, n), batches = x.count() / (m * n);
  const int size = HostByteSize(x.type());
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < len; ++i)
      std::memcpy(out.data + (b * len + i) * size, x.data + ((b * m + i) * n + i) * size, static_cast<size_t>(size));
}

Status KernelMatrixDiagonal(const Buf& x, const Buf& out) {
  NHLO_TRY(CheckMatrixDiagonal(*x.rec, *out.rec));
  RunMatrixDiagonal(x, out);
  return OkStatus();
}

Status CheckScramblePhiloxKey(const BufferRecord& keys, const BufferRecord& out) {
  if (keys.type != PrimitiveType::kU64 || out.type != PrimitiveType::kU64 || keys.ElementCount() != out.ElementCount())
    return Status::Error("ScramblePhiloxKey takes and gives u64 keys");
  return OkStatus();
}

void RunScramblePhiloxKey(const Buf& keys, const Buf& out) {
  for (int64_t i = 0; i < keys.count(); ++i) {
    uint64_t k;
    std::memcpy(&k, keys.data + 8 * i, 8);
    k = ScramblePhiloxKey(k);
    std::memcpy(out.data + 8 * i, &k, 8);
  }
}

Status KernelScramblePhiloxKey(const Buf& keys, const Buf& out) {
  NHLO_TRY(CheckScramblePhiloxKey(*keys.rec, *out.rec));
  RunScramblePhiloxKey(keys, out);
  return OkStatus();
}

Status CheckTridiagonalSolve(const std::vector<const BufferRecord*>& in, const BufferRecord& out) {
  if ((in.size() != 2 && in.size() != 4) || in.back()->ElementCount() != out.ElementCount() ||
      in.back()->dims.size() < 2 || in.back()->type != out.type)
    return Status::Error("TridiagonalSolver takes (diagonals, rhs) or (lower, main, upper, rhs)");
  const auto& rd = in.back()->dims;
  const size_t rank = rd.size();
  const int64_t m = in.size() == 2 ? rd[rank - 2] : rd[rank - 1];
  const int64_t rows = in.size() == 2 ? 3 : 1;
  for (size_t i = 0; i + 1 < in.size(); ++i)
    if (in[i]->type != out.type || in[i]->dims.size() != rank || in[i]->dims[rank - 1] != m ||
        in[i]->dims[rank - 2] != rows || !std::equal(rd.begin(), rd.end() - 2, in[i]->dims.begin()))
      return Status::Error("TridiagonalSolver diagonals do not fit the right-hand side");
  if (out.type != PrimitiveType::kF32 && out.type != PrimitiveType::kF64)
    return Status::Error("TridiagonalSolver solves f32 or f64 systems");
  return OkStatus();
}

void RunTridiagonalSolve(const std::vector<Buf>& in, const Buf& out) {
  if (out.type() == PrimitiveType::kF32)
    SolveTridiagonal<float>(in, out);
  else
    SolveTridiagonal<double>(in, out);
}

Status KernelTridiagonalSolve(const std::vector<Buf>& in, const Buf& out) {
  NHLO_TRY(CheckTridiagonalSolve(RecordsOf(in), *out.rec));
  RunTridiagonalSolve(in, out);
  return OkStatus();
}

}  // namespace nhlo
