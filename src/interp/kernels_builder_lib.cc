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

namespace nhlo {
namespace {

// A value with one label per dimension, row-major, in the compute type.
template <typename C>
struct Labeled {
  std::vector<int> labels;
  std::vector<int64_t> dims;
  std::vector<C> v;
};

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

// A repeated label takes the diagonal: XLA selects it under an iota mask and sums the
// dimension away from 0, which leaves the diagonal element plus zeros.
template <typename C>
Labeled<C> Diagonal(const Labeled<C>& t) {
  Labeled<C> u;
  std::vector<int> from;  // for each input dimension, its dimension in u
  for (size_t d = 0; d < t.labels.size(); ++d) {
    int at = Position(u.labels, t.labels[d]);
    if (at < 0) {
      at = static_cast<int>(u.labels.size());
      u.labels.push_back(t.labels[d]);
      u.dims.push_back(t.dims[d]);
    }
    from.push_back(at);
  }
  if (u.labels.size() == t.labels.size()) return t;
  std::vector<int64_t> ts = RowMajorStrides(t.dims);
  ForEachIndex(u.dims, [&](int64_t, const std::vector<int64_t>& i) {
    int64_t src = 0;
    for (size_t d = 0; d < from.size(); ++d) src += i[from[d]] * ts[d];
    u.v.push_back(AddZero(t.v[src]));
  });
  return u;
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


// Sums away the dimensions whose labels `keep` rejects: a reduce from 0 in row-major order.
template <typename C, typename Keep>
Labeled<C> SumOut(const Labeled<C>& t, Keep keep) {
  Labeled<C> u;
  std::vector<size_t> kept, summed;
  std::vector<int64_t> summed_dims;
  for (size_t d = 0; d < t.labels.size(); ++d) {
    if (keep(t.labels[d])) {
      kept.push_back(d);
      u.labels.push_back(t.labels[d]);
      u.dims.push_back(t.dims[d]);
    } else {
      summed.push_back(d);
      summed_dims.push_back(t.dims[d]);
    }
  }
  if (summed.empty()) return t;
  std::vector<int64_t> ts = RowMajorStrides(t.dims);
  ForEachIndex(u.dims, [&](int64_t, const std::vector<int64_t>& i) {
    int64_t base = 0;
    for (size_t k = 0; k < kept.size(); ++k) base += i[k] * ts[kept[k]];
    C acc = C(0);
    ForEachIndex(summed_dims, [&](int64_t, const std::vector<int64_t>& j) {
      int64_t at = base;
      for (size_t k = 0; k < summed.size(); ++k) at += j[k] * ts[summed[k]];
      acc = MulAdd(acc, t.v[at], C(1));  // integers wrap, as XLA's add does
    });
    u.v.push_back(acc);
  });
  return u;
}

// XLA's Einsum (matrix.cc): diagonals of x, then of y; every label unique: sums inside one
// operand, one dot (batch labels in x order, contracting in x order, result [batch, x free,
// y free]), a transpose into the result's order; a repeated result label embeds the value on
// that diagonal with zeros elsewhere.
template <typename C>
Labeled<C> Einsum(const Labeled<C>& x0, const Labeled<C>& y0, const std::vector<int>& out_labels) {
  Labeled<C> x = Diagonal(x0), y = Diagonal(y0);
  std::vector<int> out_unique;
  for (int l : out_labels)
    if (Position(out_unique, l) < 0) out_unique.push_back(l);
  auto in_out = [&](int l) { return Position(out_unique, l) >= 0; };
  x = SumOut(x, [&](int l) { return in_out(l) || Position(y.labels, l) >= 0; });
  y = SumOut(y, [&](int l) { return in_out(l) || Position(x.labels, l) >= 0; });
  std::vector<int> batch, contract, xfree, yfree;
  for (int l : x.labels) {
    if (Position(y.labels, l) >= 0)
      (in_out(l) ? batch : contract).push_back(l);
    else
      xfree.push_back(l);
  }
  for (int l : y.labels)
    if (Position(x.labels, l) < 0) yfree.push_back(l);
  Labeled<C> dot;
  auto extent = [&](int l) {
    int at = Position(x.labels, l);
    return at >= 0 ? x.dims[at] : y.dims[Position(y.labels, l)];
  };
  for (const auto* group : {&batch, &xfree, &yfree})
    for (int l : *group) dot.labels.push_back(l), dot.dims.push_back(extent(l));
  std::vector<int64_t> cdims;
  for (int l : contract) cdims.push_back(extent(l));
  std::vector<int64_t> xs = RowMajorStrides(x.dims), ys = RowMajorStrides(y.dims);
  ForEachIndex(dot.dims, [&](int64_t, const std::vector<int64_t>& i) {
    int64_t xa = 0, ya = 0;
    for (size_t d = 0; d < dot.labels.size(); ++d) {
      int px = Position(x.labels, dot.labels[d]), py = Position(y.labels, dot.labels[d]);
      if (px >= 0) xa += i[d] * xs[px];
      if (py >= 0) ya += i[d] * ys[py];
    }
    C acc = C(0);
    ForEachIndex(cdims, [&](int64_t, const std::vector<int64_t>& k) {
      int64_t xk = xa, yk = ya;
      for (size_t c = 0; c < contract.size(); ++c) {
        xk += k[c] * xs[Position(x.labels, contract[c])];
        yk += k[c] * ys[Position(y.labels, contract[c])];
      }
      acc = MulAdd(acc, x.v[xk], y.v[yk]);
    });
    dot.v.push_back(acc);
  });
  // Into the result's order: its labels (a label of neither operand is a dimension of 1), the
  // repeated ones on their diagonal.
  Labeled<C> out;
  out.labels = out_labels;
  for (int l : out_labels) {
    int at = Position(dot.labels, l);
    out.dims.push_back(at >= 0 ? dot.dims[at] : 1);
  }
  std::vector<int64_t> ds = RowMajorStrides(dot.dims);
  ForEachIndex(out.dims, [&](int64_t, const std::vector<int64_t>& i) {
    int64_t src = 0;
    bool on_diagonal = true;
    for (size_t d = 0; d < out_labels.size(); ++d) {
      int first = Position(out_labels, out_labels[d]);
      if (i[d] != i[first]) on_diagonal = false;
      int at = Position(dot.labels, out_labels[d]);
      if (at >= 0 && first == static_cast<int>(d)) src += i[d] * ds[at];
    }
    out.v.push_back(on_diagonal ? dot.v[src] : C(0));
  });
  return out;
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

Status KernelEinsum(const EinsumConfig& config, const Buf& x, const Buf& y, const Buf& out) {
  if (x.type() != out.type() || y.type() != out.type())
    return Status::Error("Einsum operands and result must have one element type");
  if (x.count() == 0 || y.count() == 0) {  // every sum is empty: zeros (or no elements at all)
    if (out.rec->size) std::memset(out.data, 0, out.rec->size);
    return OkStatus();
  }
  return DispatchType(out.type(), [&](auto traits) -> Status {
    using C = typename decltype(traits)::Compute;
    Labeled<C> a, b;
    a.labels = config.x, a.dims = Dims(x);
    b.labels = config.y, b.dims = Dims(y);
    for (int64_t i = 0; i < x.count(); ++i) a.v.push_back(traits.Load(x.data, i));
    for (int64_t i = 0; i < y.count(); ++i) b.v.push_back(traits.Load(y.data, i));
    Labeled<C> r = Einsum(a, b, config.out);
    if (static_cast<int64_t>(r.v.size()) != out.count()) return Status::Error("einsum result does not fit its buffer");
    for (int64_t i = 0; i < out.count(); ++i) traits.Store(out.data, i, r.v[i]);
    return OkStatus();
  });
}

Status KernelMatrixDiagonal(const Buf& x, const Buf& out) {
  const auto& dims = Dims(x);
  if (dims.size() < 2 || x.type() != out.type())
    return Status::Error("GetMatrixDiagonalViaGather needs a matrix of its result's element type");
  if (x.count() == 0) return OkStatus();  // no diagonal elements to move
  int64_t m = dims[dims.size() - 2], n = dims.back(), len = std::min(m, n);
  int64_t batches = m * n == 0 ? 0 : x.count() / (m * n);
  if (batches * len != out.count()) return Status::Error("GetMatrixDiagonalViaGather result does not fit its buffer");
  int size = HostByteSize(x.type());
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < len; ++i)
      std::memcpy(out.data + (b * len + i) * size, x.data + ((b * m + i) * n + i) * size, static_cast<size_t>(size));
  return OkStatus();
}

Status KernelScramblePhiloxKey(const Buf& keys, const Buf& out) {
  if (keys.type() != PrimitiveType::kU64 || out.type() != PrimitiveType::kU64 || keys.count() != out.count())
    return Status::Error("ScramblePhiloxKey takes and gives u64 keys");
  for (int64_t i = 0; i < keys.count(); ++i) {
    uint64_t k;
    std::memcpy(&k, keys.data + 8 * i, 8);
    k = ScramblePhiloxKey(k);
    std::memcpy(out.data + 8 * i, &k, 8);
  }
  return OkStatus();
}

Status KernelTridiagonalSolve(const std::vector<Buf>& in, const Buf& out) {
  if ((in.size() != 2 && in.size() != 4) || in.back().count() != out.count() || in.back().rank() < 2 ||
      in.back().type() != out.type())
    return Status::Error("TridiagonalSolver takes (diagonals, rhs) or (lower, main, upper, rhs)");
  const auto& rd = Dims(in.back());
  const size_t rank = rd.size();
  const int64_t m = in.size() == 2 ? rd[rank - 2] : rd[rank - 1];
  const int64_t rows = in.size() == 2 ? 3 : 1;
  for (size_t i = 0; i + 1 < in.size(); ++i)
    if (in[i].type() != out.type() || in[i].rank() != rank || Dims(in[i])[rank - 1] != m ||
        Dims(in[i])[rank - 2] != rows || !std::equal(rd.begin(), rd.end() - 2, Dims(in[i]).begin()))
      return Status::Error("TridiagonalSolver diagonals do not fit the right-hand side");
  if (out.type() == PrimitiveType::kF32)
    SolveTridiagonal<float>(in, out);
  else if (out.type() == PrimitiveType::kF64)
    SolveTridiagonal<double>(in, out);
  else
    return Status::Error("TridiagonalSolver solves f32 or f64 systems");
  return OkStatus();
}

}  // namespace nhlo
