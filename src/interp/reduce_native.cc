// SPDX-License-Identifier: Apache-2.0
// reduce with a recognised reducer (one binary op of its parameters), run natively. The
// dimensions are merged into alternating kept and reduced groups; each result element folds its
// elements in the row-major order of the reduced dimensions, as the reducer call would, and each
// step computes what the reducer computes (low-precision floats rounded back after every step).
// Float add is XLA's evaluator fast path instead (HloEvaluator::HandleReduce with IsScalarAdd):
// the elements are summed in double, in chunks of 512 that each start from +0, each chunk's sum
// added to the init value (in double), and the total rounded once to the reducer's type. Integer
// and pred ops fold in 16 lanes (exact in any order); float max, min and multiply stay
// sequential (NaN, -0 and rounding depend on the order). When the innermost group is kept, a
// block of result columns is folded row by row, so the loads are contiguous and the fold
// vectorises across columns in the same sequential order.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "interp/element_traits.h"
#include "interp/native_callees.h"
#include "support/parallel.h"

namespace nhlo {
namespace {

// bf16 without the general decoder (the branch-free codecs of float_cast.h).
struct Bf16Traits {
  using Compute = float;
  static constexpr bool kIsFloat = true;
  static float Decode(uint16_t code) { return Bf16ToF32(code); }
  static uint16_t Encode(float v) { return F32ToBf16(v); }
  float Load(const uint8_t* p, int64_t i) const {
    uint16_t code;
    std::memcpy(&code, p + i * 2, 2);
    return Decode(code);
  }
  void Store(uint8_t* p, int64_t i, float v) const {
    uint16_t code = Encode(v);
    std::memcpy(p + i * 2, &code, 2);
  }
};

template <typename Tr>
constexpr bool kLowFloat = std::is_same_v<Tr, LowFloatTraits> || std::is_same_v<Tr, Bf16Traits>;

// op(a, b) in the compute domain, as the elementwise kernels compute it.
template <ScalarOp kOp, typename C>
inline C Apply(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if constexpr (kOp == ScalarOp::kAdd) return a + b;
    if constexpr (kOp == ScalarOp::kMultiply) return a * b;
    if constexpr (kOp == ScalarOp::kMaximum) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a >= b ? a : b;
    }
    if constexpr (kOp == ScalarOp::kMinimum) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a <= b ? a : b;
    }
    return a;  // bitwise ops are not recognised on floats
  } else {
    using U = std::make_unsigned_t<C>;
    if constexpr (kOp == ScalarOp::kAdd) return C(U(a) + U(b));
    if constexpr (kOp == ScalarOp::kMultiply) return C(U(a) * U(b));
    if constexpr (kOp == ScalarOp::kMaximum) return a >= b ? a : b;
    if constexpr (kOp == ScalarOp::kMinimum) return a <= b ? a : b;
    if constexpr (kOp == ScalarOp::kAnd) return a & b;
    if constexpr (kOp == ScalarOp::kOr) return a | b;
    if constexpr (kOp == ScalarOp::kXor) return a ^ b;
    return a;
  }
}

// The value op folds over without changing it (-0 for float add: -0 + x is x for every x).
template <ScalarOp kOp, typename C>
constexpr C Identity() {
  if constexpr (kOp == ScalarOp::kAdd) return std::is_floating_point_v<C> ? C(-0.0) : C(0);
  if constexpr (kOp == ScalarOp::kMultiply) return C(1);
  if constexpr (kOp == ScalarOp::kMaximum) return std::numeric_limits<C>::lowest();
  if constexpr (kOp == ScalarOp::kMinimum) return std::numeric_limits<C>::max();
  if constexpr (kOp == ScalarOp::kAnd) return C(~std::make_unsigned_t<C>(0));
  return C(0);
}

// Whether a run may fold in lanes: integer ops are exact in any order; float ops are not.
template <ScalarOp, typename Tr>
constexpr bool Reorderable() {
  return !std::is_floating_point_v<typename Tr::Compute>;
}

// One reducer step: op(acc, x) (op(x, acc) when swapped), rounded to the element type.
template <ScalarOp kOp, bool kSwapped, typename Tr>
inline typename Tr::Compute Step1(const Tr& t, typename Tr::Compute acc, typename Tr::Compute x) {
  typename Tr::Compute r = kSwapped ? Apply<kOp>(x, acc) : Apply<kOp>(acc, x);
  if constexpr (std::is_same_v<Tr, Bf16Traits>)
    return Bf16Traits::Decode(Bf16Traits::Encode(r));
  else if constexpr (kLowFloat<Tr>)
    return DecodeToF32(t.type, EncodeFromF32(t.type, r));
  else
    return r;
}

// Runs shorter than this fold in order (lanes would cost more than they save).
constexpr int64_t kLanesFrom = 64;

// Folds n contiguous elements from `start` in 16 lanes, then the lanes pairwise.
template <ScalarOp kOp, typename Tr>
typename Tr::Compute FoldRun(const Tr& t, const uint8_t* data, int64_t start, int64_t n) {
  using C = typename Tr::Compute;
  constexpr int kLanes = 16;
  C lane[kLanes];
  for (C& l : lane) l = Identity<kOp, C>();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] = Apply<kOp>(lane[j], t.Load(data, start + i + j));
  for (int j = 0; i < n; ++i, ++j) lane[j] = Apply<kOp>(lane[j], t.Load(data, start + i));
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = Apply<kOp>(lane[j], lane[j + w]);
  return lane[0];
}

using Group = StridedGroup;  // stride: elements of the input

// Walks the row-major index space of `groups`, calling f(offset) with the input offset.
template <typename F>
void ForEachOffset(const std::vector<Group>& groups, std::vector<int64_t>& index, F&& f) {
  index.assign(groups.size(), 0);
  int64_t offset = 0;
  for (;;) {
    f(offset);
    size_t k = groups.size();
    for (; k-- > 0;) {
      offset += groups[k].stride;
      if (++index[k] < groups[k].size) break;
      offset -= groups[k].stride * groups[k].size;
      index[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

// The input offset of result position `linear` (row-major over the kept groups).
int64_t KeptOffset(const std::vector<Group>& kept, int64_t linear) {
  int64_t offset = 0;
  for (size_t k = kept.size(); k-- > 0;) {
    offset += (linear % kept[k].size) * kept[k].stride;
    linear /= kept[k].size;
  }
  return offset;
}

int64_t Product(const std::vector<Group>& groups) {
  int64_t n = 1;
  for (const Group& g : groups) n *= g.size;
  return n;
}

// Size-1 dimensions dropped; neighbours of one kind merged (they are contiguous together).
// Returns whether the innermost group is kept (or there is none).
bool MergeGroups(const std::vector<int64_t>& shape, const std::vector<bool>& is_reduced, std::vector<Group>& kept,
                 std::vector<Group>& reduced) {
  std::vector<int64_t> strides = RowMajorStrides(shape);
  bool last_reduced = false, any = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    std::vector<Group>& into = is_reduced[d] ? reduced : kept;
    if (any && last_reduced == is_reduced[d]) {
      into.back().size *= shape[d];
      into.back().stride = strides[d];
    } else {
      into.push_back({shape[d], strides[d]});
    }
    any = true;
    last_reduced = is_reduced[d];
  }
  bool inner_kept = !any || !last_reduced;
  if (kept.empty() && inner_kept) kept.push_back({1, 1});  // one result of one element
  return inner_kept;
}

template <ScalarOp kOp, bool kSwapped, typename Tr>
void ReduceTyped(const Tr& t, const Buf& in, const Buf& init, const Buf& out, const std::vector<Group>& kept,
                 const std::vector<Group>& reduced, bool inner_kept) {
  using C = typename Tr::Compute;
  const C init_value = t.Load(init.data, 0);
  int64_t reduced_count = Product(reduced);
  if (inner_kept) {
    // Columns: the innermost kept group is contiguous in the input and the result.
    constexpr int64_t kBlock = 8192;
    std::vector<Group> outer(kept.begin(), kept.end() - 1);
    int64_t cols = kept.back().size, blocks = (cols + kBlock - 1) / kBlock;
    int64_t units = Product(outer) * blocks;
    ParallelFor(units, ChunkFor(reduced_count * std::min(cols, kBlock)), [&](int64_t begin, int64_t end) {
      std::vector<C> acc(static_cast<size_t>(std::min(cols, kBlock)));
      std::vector<int64_t> index;
      for (int64_t u = begin; u < end; ++u) {
        int64_t o = u / blocks, c0 = (u % blocks) * kBlock, w = std::min(kBlock, cols - c0);
        int64_t base = KeptOffset(outer, o) + c0;
        C* a = acc.data();
        for (int64_t c = 0; c < w; ++c) a[c] = init_value;
        // Four rows at a time, each column still folding them in order: the accumulators are
        // loaded and stored once per four rows.
        int64_t rows[4];
        int pending = 0;
        ForEachOffset(reduced, index, [&](int64_t r) {
          rows[pending++] = base + r;
          if (pending < 4) return;
          pending = 0;
          for (int64_t c = 0; c < w; ++c) {
            C v = Step1<kOp, kSwapped>(t, a[c], t.Load(in.data, rows[0] + c));
            v = Step1<kOp, kSwapped>(t, v, t.Load(in.data, rows[1] + c));
            v = Step1<kOp, kSwapped>(t, v, t.Load(in.data, rows[2] + c));
            a[c] = Step1<kOp, kSwapped>(t, v, t.Load(in.data, rows[3] + c));
          }
        });
        for (int k = 0; k < pending; ++k)
          for (int64_t c = 0; c < w; ++c) a[c] = Step1<kOp, kSwapped>(t, a[c], t.Load(in.data, rows[k] + c));
        for (int64_t c = 0; c < w; ++c) t.Store(out.data, o * cols + c0 + c, a[c]);
      }
    });
    return;
  }
  // Rows: the innermost reduced group is a contiguous run of each result element's inputs.
  std::vector<Group> outer_reduced(reduced.begin(), reduced.end() - 1);
  int64_t run = reduced.back().size;
  ParallelFor(Product(kept), ChunkFor(reduced_count), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index;
    for (int64_t k = begin; k < end; ++k) {
      int64_t base = KeptOffset(kept, k);
      C acc = init_value;
      ForEachOffset(outer_reduced, index, [&](int64_t r) {
        if constexpr (Reorderable<kOp, Tr>()) {
          if (run >= kLanesFrom) {
            acc = Step1<kOp, kSwapped>(t, acc, FoldRun<kOp>(t, in.data, base + r, run));
            return;
          }
        }
        for (int64_t i = 0; i < run; ++i) acc = Step1<kOp, kSwapped>(t, acc, t.Load(in.data, base + r + i));
      });
      t.Store(out.data, k, acc);
    }
  });
}

// XLA's evaluator sums a float add reduce in chunks of this many elements (kChunkSize in
// GenerateReduceOutputElement), each chunk from +0 in double.
constexpr int64_t kDoubleChunk = 512;

// `v` (a double sum) stored as an element of float type `type` the way XLA's evaluator stores it
// (static_cast<NativeT>(double)): f64 as it is, f32 rounded once, bf16 and f16 through float
// (Eigen's constructors round to float first: two roundings), the f8 and narrower types directly
// from double (ml_dtypes converts from the double).
void StoreDoubleSum(PrimitiveType type, uint8_t* p, int64_t i, double v) {
  if (type == PrimitiveType::kF64) {
    std::memcpy(p + i * 8, &v, 8);
  } else if (type == PrimitiveType::kF32) {
    float f = static_cast<float>(v);
    std::memcpy(p + i * 4, &f, 4);
  } else if (type == PrimitiveType::kBF16 || type == PrimitiveType::kF16) {
    StoreBits(type, p + i * 2, EncodeFromF32(type, static_cast<float>(v)));
  } else {
    int size = HostByteSize(type);
    StoreBits(type, p + i * size, EncodeFromF64(type, v));
  }
}

// One result's running sums: the total so far (from the init value) and the open chunk.
struct DoubleSum {
  double total = 0, chunk = 0;
  int64_t in_chunk = 0;
  void Add(double x) {
    chunk += x;
    if (++in_chunk == kDoubleChunk) Close();
  }
  void Close() {
    total += chunk;
    chunk = 0;
    in_chunk = 0;
  }
  double Finish() {
    if (in_chunk > 0) Close();
    return total;
  }
};

// The add reduce of XLA's evaluator fast path (see the file comment), in the row-major order of
// the reduced groups; the result is stored as `init`'s type, the reducer's.
template <typename Tr>
void ReduceAddInDouble(const Tr& t, const Buf& in, const Buf& init, const Buf& out, const std::vector<Group>& kept,
                       const std::vector<Group>& reduced, bool inner_kept) {
  const double init_value = t.Load(init.data, 0);
  const PrimitiveType type = init.type();
  int64_t reduced_count = Product(reduced);
  if (inner_kept) {
    // Columns: each column's sum runs in its own lanes, in the shared element order, so the chunk
    // boundaries fall at the same element for every column.
    constexpr int64_t kBlock = 4096;
    std::vector<Group> outer(kept.begin(), kept.end() - 1);
    int64_t cols = kept.back().size, blocks = (cols + kBlock - 1) / kBlock;
    ParallelFor(Product(outer) * blocks, ChunkFor(reduced_count * std::min(cols, kBlock)),
                [&](int64_t begin, int64_t end) {
                  std::vector<double> total(static_cast<size_t>(std::min(cols, kBlock)));
                  std::vector<double> chunk(total.size());
                  std::vector<int64_t> index;
                  for (int64_t u = begin; u < end; ++u) {
                    int64_t o = u / blocks, c0 = (u % blocks) * kBlock, w = std::min(kBlock, cols - c0);
                    int64_t base = KeptOffset(outer, o) + c0;
                    double* tot = total.data();
                    double* ch = chunk.data();
                    for (int64_t c = 0; c < w; ++c) tot[c] = init_value, ch[c] = 0;
                    // Four rows at a time, each column still adding them in order: the chunk
                    // sums are loaded and stored once per four rows. kDoubleChunk is a multiple
                    // of four, so a chunk always closes after a whole group.
                    int64_t in_chunk = 0, rows[4];
                    int pending = 0;
                    auto close_chunk = [&] {
                      if (in_chunk < kDoubleChunk) return;
                      in_chunk = 0;
                      for (int64_t c = 0; c < w; ++c) tot[c] += ch[c], ch[c] = 0;
                    };
                    ForEachOffset(reduced, index, [&](int64_t r) {
                      rows[pending++] = base + r;
                      if (pending < 4) return;
                      pending = 0;
                      for (int64_t c = 0; c < w; ++c) {
                        double v = ch[c] + static_cast<double>(t.Load(in.data, rows[0] + c));
                        v += static_cast<double>(t.Load(in.data, rows[1] + c));
                        v += static_cast<double>(t.Load(in.data, rows[2] + c));
                        ch[c] = v + static_cast<double>(t.Load(in.data, rows[3] + c));
                      }
                      in_chunk += 4;
                      close_chunk();
                    });
                    for (int k = 0; k < pending; ++k) {
                      for (int64_t c = 0; c < w; ++c) ch[c] += static_cast<double>(t.Load(in.data, rows[k] + c));
                      ++in_chunk;
                      close_chunk();
                    }
                    if (in_chunk > 0)
                      for (int64_t c = 0; c < w; ++c) tot[c] += ch[c];
                    for (int64_t c = 0; c < w; ++c) StoreDoubleSum(type, out.data, o * cols + c0 + c, tot[c]);
                  }
                });
    return;
  }
  std::vector<Group> outer_reduced(reduced.begin(), reduced.end() - 1);
  int64_t run = reduced.back().size;
  // Eight results at a time: each is still one chain of adds in its own order (the same bits,
  // whatever the grouping or thread count), but eight chains overlap their latency.
  constexpr int64_t kTogether = 8;
  ParallelFor(Product(kept), ChunkFor(reduced_count), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index;
    int64_t k = begin;
    for (; k + kTogether <= end; k += kTogether) {
      int64_t base[kTogether];
      double total[kTogether], chunk[kTogether] = {};
      for (int64_t j = 0; j < kTogether; ++j) base[j] = KeptOffset(kept, k + j), total[j] = init_value;
      int64_t in_chunk = 0;
      ForEachOffset(outer_reduced, index, [&](int64_t r) {
        for (int64_t i = 0; i < run; ++i) {
          for (int64_t j = 0; j < kTogether; ++j) chunk[j] += static_cast<double>(t.Load(in.data, base[j] + r + i));
          if (++in_chunk < kDoubleChunk) continue;
          in_chunk = 0;
          for (int64_t j = 0; j < kTogether; ++j) total[j] += chunk[j], chunk[j] = 0;
        }
      });
      for (int64_t j = 0; j < kTogether; ++j) {
        if (in_chunk > 0) total[j] += chunk[j];
        StoreDoubleSum(type, out.data, k + j, total[j]);
      }
    }
    for (; k < end; ++k) {
      int64_t base = KeptOffset(kept, k);
      DoubleSum sum;
      sum.total = init_value;
      ForEachOffset(outer_reduced, index, [&](int64_t r) {
        for (int64_t i = 0; i < run; ++i) sum.Add(static_cast<double>(t.Load(in.data, base + r + i)));
      });
      StoreDoubleSum(type, out.data, k, sum.Finish());
    }
  });
}

template <typename Tr>
Status ReduceDispatch(const Tr& t, const CalleePattern& pattern, const Buf& in, const Buf& init, const Buf& out,
                      const std::vector<Group>& kept, const std::vector<Group>& reduced, bool inner_kept) {
  ScalarOp op = pattern.op;
  if constexpr (std::is_same_v<Tr, PredTraits>) {  // the elementwise kernels' pred ops
    if (op == ScalarOp::kAdd) op = ScalarOp::kOr;
    if (op == ScalarOp::kMultiply) op = ScalarOp::kAnd;
  }
  auto run = [&](auto op_tag) {
    constexpr ScalarOp kOp = decltype(op_tag)::value;
    if constexpr (std::is_floating_point_v<typename Tr::Compute>) {
      if (pattern.swapped) return ReduceTyped<kOp, true>(t, in, init, out, kept, reduced, inner_kept);
    }
    ReduceTyped<kOp, false>(t, in, init, out, kept, reduced, inner_kept);
  };
  constexpr bool kFloat = std::is_floating_point_v<typename Tr::Compute>;
  switch (op) {
    case ScalarOp::kAdd:
      if constexpr (kFloat)
        ReduceAddInDouble(t, in, init, out, kept, reduced, inner_kept);
      else
        run(std::integral_constant<ScalarOp, ScalarOp::kAdd>{});
      return OkStatus();
    case ScalarOp::kMultiply: run(std::integral_constant<ScalarOp, ScalarOp::kMultiply>{}); return OkStatus();
    case ScalarOp::kMaximum: run(std::integral_constant<ScalarOp, ScalarOp::kMaximum>{}); return OkStatus();
    case ScalarOp::kMinimum: run(std::integral_constant<ScalarOp, ScalarOp::kMinimum>{}); return OkStatus();
    case ScalarOp::kAnd:
      if constexpr (!kFloat) run(std::integral_constant<ScalarOp, ScalarOp::kAnd>{});
      return kFloat ? Status::Error("and of floats") : OkStatus();
    case ScalarOp::kOr:
      if constexpr (!kFloat) run(std::integral_constant<ScalarOp, ScalarOp::kOr>{});
      return kFloat ? Status::Error("or of floats") : OkStatus();
    case ScalarOp::kXor:
      if constexpr (!kFloat) run(std::integral_constant<ScalarOp, ScalarOp::kXor>{});
      return kFloat ? Status::Error("xor of floats") : OkStatus();
    case ScalarOp::kNone: break;
  }
  return Status::Error("reduce has no recognised reducer");
}

// Each result element folds its window's elements in window order, one Step1 at a time: the
// bits of ApplyScalarOp per element, without its per-element dispatch.
template <ScalarOp kOp, bool kSwapped, typename Tr>
void ReduceWindowTyped(const Tr& t, const WindowReach& reach, const Buf& in, const Buf& init, const Buf& out) {
  using C = typename Tr::Compute;
  const C init_value = t.Load(init.data, 0);
  const std::vector<int64_t>& positions = reach.positions;
  int64_t count = 1, per_window = 1;
  for (size_t d = 0; d < positions.size(); ++d) {
    count *= positions[d];
    const int64_t reached = static_cast<int64_t>(reach.offsets[d].size());
    per_window *= positions[d] > 0 ? std::max<int64_t>(reached / positions[d], 1) : 1;
  }
  ParallelFor(count, ChunkFor(per_window), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> o(positions.size()), at;
    for (int64_t rest = begin, d = static_cast<int64_t>(positions.size()) - 1; d >= 0; --d) {
      o[d] = rest % positions[d];
      rest /= positions[d];
    }
    for (int64_t k = begin; k < end; ++k) {
      C acc = init_value;
      ForEachInWindow(reach, o.data(), at,
                      [&](int64_t src) { acc = Step1<kOp, kSwapped>(t, acc, t.Load(in.data, src)); });
      t.Store(out.data, k, acc);
      for (size_t d = positions.size(); d-- > 0;) {
        if (++o[d] < positions[d]) break;
        o[d] = 0;
      }
    }
  });
}

template <typename Tr>
void ReduceWindowDispatch(const Tr& t, const CalleePattern& pattern, const WindowReach& reach, const Buf& in,
                          const Buf& init, const Buf& out, bool& handled) {
  ScalarOp op = pattern.op;
  if constexpr (std::is_same_v<Tr, PredTraits>) {  // as ApplyScalarOp
    if (op == ScalarOp::kAdd) op = ScalarOp::kOr;
    if (op == ScalarOp::kMultiply) op = ScalarOp::kAnd;
  }
  constexpr bool kFloat = std::is_floating_point_v<typename Tr::Compute>;
  handled = true;
  auto run = [&](auto op_tag) {
    constexpr ScalarOp kOp = decltype(op_tag)::value;
    if constexpr (kFloat) {
      if (pattern.swapped) return ReduceWindowTyped<kOp, true>(t, reach, in, init, out);
    }
    ReduceWindowTyped<kOp, false>(t, reach, in, init, out);
  };
  switch (op) {
    case ScalarOp::kAdd: return run(std::integral_constant<ScalarOp, ScalarOp::kAdd>{});
    case ScalarOp::kMultiply: return run(std::integral_constant<ScalarOp, ScalarOp::kMultiply>{});
    case ScalarOp::kMaximum: return run(std::integral_constant<ScalarOp, ScalarOp::kMaximum>{});
    case ScalarOp::kMinimum: return run(std::integral_constant<ScalarOp, ScalarOp::kMinimum>{});
    case ScalarOp::kAnd:
      if constexpr (!kFloat) return run(std::integral_constant<ScalarOp, ScalarOp::kAnd>{});
      break;
    case ScalarOp::kOr:
      if constexpr (!kFloat) return run(std::integral_constant<ScalarOp, ScalarOp::kOr>{});
      break;
    case ScalarOp::kXor:
      if constexpr (!kFloat) return run(std::integral_constant<ScalarOp, ScalarOp::kXor>{});
      break;
    case ScalarOp::kNone: break;
  }
  handled = false;  // no native form (ApplyScalarOp has none either): the computation runs
}

}  // namespace

Status ReduceWindowNative(const CalleePattern& pattern, const WindowReach& reach, const Buf& in, const Buf& init,
                          const Buf& out, bool& handled) {
  handled = false;
  if (!NativeScalarType(in.type()) || in.type() != out.type() || init.type() != out.type()) return OkStatus();
  if (in.type() == PrimitiveType::kBF16) {
    ReduceWindowDispatch(Bf16Traits{}, pattern, reach, in, init, out, handled);
    return OkStatus();
  }
  return DispatchType(in.type(), [&](auto t) {
    ReduceWindowDispatch(t, pattern, reach, in, init, out, handled);
    return OkStatus();
  });
}

bool NativeScalarType(PrimitiveType t) {
  if (IsComplex(t)) return false;
  return DispatchType(t, [](auto) { return OkStatus(); }).ok();
}

Result<ReducePlan> PlanReduce(const std::vector<const BufferRecord*>& in, const std::vector<const BufferRecord*>& init,
                              const std::vector<const BufferRecord*>& out, DimIndexList reduce_dims) {
  const size_t n = in.size();
  if (n == 0 || init.size() != n || out.size() != n)
    return Status::Error("reduce operands, init values, result and reducer do not match");
  const std::vector<int64_t>& dims = in[0]->dims;
  std::vector<bool> reduced(dims.size(), false);
  for (int64_t d : reduce_dims) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || reduced[d])
      return Status::Error("reduce dimension is out of range");
    reduced[d] = true;
  }
  std::vector<int64_t> kept_dims;
  for (size_t d = 0; d < dims.size(); ++d)
    if (!reduced[d]) kept_dims.push_back(dims[d]);
  for (size_t i = 0; i < n; ++i)
    if (in[i]->dims != dims || init[i]->ElementCount() != 1 || out[i]->dims != kept_dims ||
        (init[i]->type != out[i]->type && !(n == 1 && IsFloat(init[i]->type) && IsFloat(out[i]->type))))
      return Status::Error("reduce operands, init values, result and reducer do not match");
  ReducePlan plan;
  plan.inner_kept = MergeGroups(dims, reduced, plan.kept, plan.reduced);
  if (n == 1 && init[0]->type != out[0]->type) {
    plan.accumulate = init[0]->type;
    BufferRecord accumulated = *out[0];
    accumulated.type = plan.accumulate;
    NHLO_ASSIGN_OR_RETURN(plan.convert, ConvertStepSpan(accumulated, *out[0]));
  }
  return plan;
}

Status KernelReduceNative(const CalleePattern& pattern, const Buf& in, const Buf& init, const Buf& out,
                          const ReducePlan& plan) {
  int size = HostByteSize(out.type());
  if (out.count() == 0) return OkStatus();
  if (in.count() == 0) {  // nothing to fold: every result is the init value, as its bytes
    for (int64_t i = 0; i < out.count(); ++i) std::memcpy(out.data + i * size, init.data, size);
    return OkStatus();
  }
  const std::vector<Group>&kept = plan.kept, &reduced = plan.reduced;
  const bool inner_kept = plan.inner_kept;
  if (in.type() == PrimitiveType::kBF16)
    return ReduceDispatch(Bf16Traits{}, pattern, in, init, out, kept, reduced, inner_kept);
  return DispatchType(in.type(),
                      [&](auto t) { return ReduceDispatch(t, pattern, in, init, out, kept, reduced, inner_kept); });
}

Status KernelArgReduceNative(const CalleePattern& pattern, const Buf& values, const Buf& indices, const Buf& init_value,
                             const Buf& init_index, const Buf& out_value, const Buf& out_index,
                             const ReducePlan& plan) {
  int vsize = HostByteSize(values.type()), isize = HostByteSize(indices.type());
  if (out_value.count() == 0) return OkStatus();
  if (values.count() == 0) {  // nothing to fold: every result is the init values, as their bytes
    for (int64_t k = 0; k < out_value.count(); ++k) {
      std::memcpy(out_value.data + k * vsize, init_value.data, vsize);
      std::memcpy(out_index.data + k * isize, init_index.data, isize);
    }
    return OkStatus();
  }
  // No kept group (every dimension reduced, the innermost of size > 1): one result at offset 0.
  const std::vector<Group>&kept = plan.kept, &reduced = plan.reduced;
  PrimitiveType it = indices.type();
  bool greater = pattern.direction == static_cast<uint8_t>(ComparisonDirection::kGt);
  // An index as a value whose order is the index type's (signed or unsigned).
  auto index_at = [it](const uint8_t* p) -> __int128 {
    if (it == PrimitiveType::kS32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    return IsSignedInt(it) ? __int128{LoadAsInt(it, p)} : __int128{LoadAsUint(it, p)};
  };
  return DispatchType(values.type(), [&](auto t) {
    using C = typename decltype(t)::Compute;
    ParallelFor(Product(kept), ChunkFor(Product(reduced)), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> index;
      for (int64_t k = begin; k < end; ++k) {
        int64_t base = KeptOffset(kept, k);
        const uint8_t* va = init_value.data;  // the accumulator's bytes, selected as they are
        const uint8_t* ia = init_index.data;
        C a = t.Load(va, 0);
        __int128 ai = index_at(ia);
        ForEachOffset(reduced, index, [&](int64_t r) {
          int64_t at = base + r;
          C b = t.Load(values.data, at);
          const uint8_t* ib = indices.data + at * isize;
          __int128 bi = index_at(ib);
          bool keep = (greater ? a > b : a < b) || a != a;  // a != a: a NaN accumulator stays
          bool keep_index = keep || (a == b && ai < bi);
          if (!keep) {
            va = values.data + at * vsize;
            a = b;
          }
          if (!keep_index) {
            ia = ib;
            ai = bi;
          }
        });
        std::memcpy(out_value.data + k * vsize, va, vsize);
        std::memcpy(out_index.data + k * isize, ia, isize);
      }
    });
    return OkStatus();
  });
}

namespace {

// One element: acc = op(acc, x) (op(x, acc) when swapped), ApplyScalarOp's bits for a traits
// type without state.
template <typename Tr, ScalarOp kOp, bool kSwapped>
void ApplyOne(uint8_t* acc, const uint8_t* x) {
  const Tr t{};
  t.Store(acc, 0, Step1<kOp, kSwapped>(t, t.Load(acc, 0), t.Load(x, 0)));
}

template <typename Tr>
ScalarApplyFn PickApply(ScalarOp op, bool swapped) {
  constexpr bool kFloat = std::is_floating_point_v<typename Tr::Compute>;
  const bool flip = kFloat && swapped;  // integer ops commute bit for bit
  switch (op) {
    case ScalarOp::kAdd: return flip ? &ApplyOne<Tr, ScalarOp::kAdd, true> : &ApplyOne<Tr, ScalarOp::kAdd, false>;
    case ScalarOp::kMultiply:
      return flip ? &ApplyOne<Tr, ScalarOp::kMultiply, true> : &ApplyOne<Tr, ScalarOp::kMultiply, false>;
    case ScalarOp::kMaximum:
      return flip ? &ApplyOne<Tr, ScalarOp::kMaximum, true> : &ApplyOne<Tr, ScalarOp::kMaximum, false>;
    case ScalarOp::kMinimum:
      return flip ? &ApplyOne<Tr, ScalarOp::kMinimum, true> : &ApplyOne<Tr, ScalarOp::kMinimum, false>;
    case ScalarOp::kAnd:
      if constexpr (!kFloat) return &ApplyOne<Tr, ScalarOp::kAnd, false>;
      return nullptr;
    case ScalarOp::kOr:
      if constexpr (!kFloat) return &ApplyOne<Tr, ScalarOp::kOr, false>;
      return nullptr;
    case ScalarOp::kXor:
      if constexpr (!kFloat) return &ApplyOne<Tr, ScalarOp::kXor, false>;
      return nullptr;
    case ScalarOp::kNone: return nullptr;
  }
  return nullptr;
}

}  // namespace

ScalarApplyFn ScalarApplyFor(const CalleePattern& pattern, PrimitiveType t) {
  const ScalarOp op = pattern.op;
  const bool swapped = pattern.swapped;
  if (t == PrimitiveType::kF32) return PickApply<NativeTraits<float, float>>(op, swapped);
  if (t == PrimitiveType::kF64) return PickApply<NativeTraits<double, double>>(op, swapped);
  if (t == PrimitiveType::kBF16) return PickApply<Bf16Traits>(op, swapped);
  if (t == PrimitiveType::kS32) return PickApply<NativeTraits<int32_t, int64_t>>(op, swapped);
  if (t == PrimitiveType::kS64) return PickApply<NativeTraits<int64_t, int64_t>>(op, swapped);
  if (t == PrimitiveType::kU32) return PickApply<NativeTraits<uint32_t, uint64_t>>(op, swapped);
  if (t == PrimitiveType::kU64) return PickApply<NativeTraits<uint64_t, uint64_t>>(op, swapped);
  return nullptr;  // the other types keep ApplyScalarOp
}

bool ApplyScalarOp(const CalleePattern& pattern, PrimitiveType type, uint8_t* acc, const uint8_t* x) {
  bool done = false;
  Status s = DispatchType(type, [&](auto t) {
    using Tr = decltype(t);
    using C = typename Tr::Compute;
    C a = t.Load(acc, 0), b = t.Load(x, 0);
    if (pattern.swapped) std::swap(a, b);
    ScalarOp op = pattern.op;
    if constexpr (std::is_same_v<Tr, PredTraits>) {
      if (op == ScalarOp::kAdd) op = ScalarOp::kOr;
      if (op == ScalarOp::kMultiply) op = ScalarOp::kAnd;
    }
    C r{};
    done = true;
    switch (op) {
      case ScalarOp::kAdd: r = Apply<ScalarOp::kAdd>(a, b); break;
      case ScalarOp::kMultiply: r = Apply<ScalarOp::kMultiply>(a, b); break;
      case ScalarOp::kMaximum: r = Apply<ScalarOp::kMaximum>(a, b); break;
      case ScalarOp::kMinimum: r = Apply<ScalarOp::kMinimum>(a, b); break;
      case ScalarOp::kAnd:
        r = Apply<ScalarOp::kAnd>(a, b);
        done = !std::is_floating_point_v<C>;
        break;
      case ScalarOp::kOr:
        r = Apply<ScalarOp::kOr>(a, b);
        done = !std::is_floating_point_v<C>;
        break;
      case ScalarOp::kXor:
        r = Apply<ScalarOp::kXor>(a, b);
        done = !std::is_floating_point_v<C>;
        break;
      case ScalarOp::kNone: done = false; break;
    }
    if (done) t.Store(acc, 0, r);
    return OkStatus();
  });
  return s.ok() && done;
}

bool CompareScalar(const CalleePattern& pattern, PrimitiveType type, const uint8_t* a, const uint8_t* b) {
  auto cmp = [&](auto x, auto y) {
    switch (static_cast<ComparisonDirection>(pattern.direction)) {
      case ComparisonDirection::kEq: return x == y;
      case ComparisonDirection::kNe: return x != y;
      case ComparisonDirection::kGe: return x >= y;
      case ComparisonDirection::kGt: return x > y;
      case ComparisonDirection::kLe: return x <= y;
      case ComparisonDirection::kLt: return x < y;
    }
    return false;
  };
  if (pattern.total_order && IsFloat(type)) {  // as KernelCompare: sign-magnitude image of the bits
    uint64_t sign = uint64_t(1) << (BitWidth(type) - 1);
    auto key = [&](const uint8_t* p) {
      uint64_t bits = LoadBits(type, p);
      int64_t mag = static_cast<int64_t>(bits & (sign - 1));
      return (bits & sign) ? -mag - 1 : mag;
    };
    return cmp(key(a), key(b));
  }
  bool result = false;
  (void)DispatchType(type, [&](auto t) {
    result = cmp(t.Load(a, 0), t.Load(b, 0));
    return OkStatus();
  });
  return result;
}

}  // namespace nhlo
