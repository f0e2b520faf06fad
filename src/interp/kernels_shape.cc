// SPDX-License-Identifier: Apache-2.0
// Data-movement kernels: broadcast, reshape, transpose, slice, pad, reverse, concatenate, iota and
// the dynamic slices. The copies of a static step are planned at load (PlanCopy, one strided walk);
// they move bytes, so one implementation serves every element type.
#include <algorithm>
#include <cstring>

#include "interp/element_traits.h"
#include "interp/kernels.h"
#include "interp/scratch.h"
#include "support/parallel.h"
#include "types/hlo_attrs.h"

namespace nhlo {

namespace {

template <typename U>
void StridedCopy(const uint8_t* src, uint8_t* dst, int64_t n, int64_t ss, int64_t ds) {
  const U* s = reinterpret_cast<const U*>(src);
  U* d = reinterpret_cast<U*>(dst);
  if (ds == 1 && ss == 0) {
    std::fill(d, d + n, s[0]);
  } else if (ds == 1 && ss == -1) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[-i];
  } else if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i * ss];
  } else {
    for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
  }
}

// Copies one run of n elements of `size` bytes with element strides ss (source) and ds (destination).
void CopyRun(const uint8_t* src, uint8_t* dst, int64_t n, int64_t ss, int64_t ds, int size) {
  if (ss == 1 && ds == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * size);
    return;
  }
  switch (size) {
    case 1: StridedCopy<uint8_t>(src, dst, n, ss, ds); return;
    case 2: StridedCopy<uint16_t>(src, dst, n, ss, ds); return;
    case 4: StridedCopy<uint32_t>(src, dst, n, ss, ds); return;
    case 8: StridedCopy<uint64_t>(src, dst, n, ss, ds); return;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds * size, src + i * ss * size, size);
  }
}

// Fills n elements with the element at `value`.
void Fill(uint8_t* dst, const uint8_t* value, int64_t n, int size) {
  if (n <= 0) return;
  CopyRun(value, dst, n, 0, 1, size);
}

// 2-D tile of a transpose: dst[r * dr + c] = src[r + c * sc] for r < rows, c < cols.
template <typename U>
void TransposeTile(const uint8_t* src, uint8_t* dst, int64_t rows, int64_t cols, int64_t sc, int64_t dr) {
  const U* s = reinterpret_cast<const U*>(src);
  U* d = reinterpret_cast<U*>(dst);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) d[r * dr + c] = s[r + c * sc];
}

constexpr int64_t kTile = 32;
constexpr int64_t kCopyChunk = 1 << 16;  // elements per parallel chunk of a copy

// The plan of a walk from src + src_base to dst + dst_base (bases in elements): simplified, and
// when the innermost destination run is strided in the source but another dimension is
// contiguous there, that dimension is tiled against the last so both sides stay in cache (a
// transpose): tile_outer walks the other dimensions and the bands of tile rows.
CopyPlan PlanWalk(Walk w, int64_t src_base, int64_t dst_base, int size) {
  CopyPlan plan;
  w.Simplify();
  plan.src_base = src_base;
  plan.dst_base = dst_base;
  plan.element_bytes = size;
  plan.copies = w.Count() > 0;
  const size_t last = w.dims.size() - 1;
  const int64_t ss = w.src[last], ds = w.dst[last];
  size_t k = last;  // a dimension contiguous in the source, for tiling
  for (size_t d = 0; d < last; ++d)
    if (w.src[d] == 1) k = d;
  if (plan.copies && ds == 1 && ss != 1 && ss != 0 && k != last && size <= 8 && (size & (size - 1)) == 0) {
    plan.tile_dim = static_cast<int64_t>(k);
    for (size_t d = 0; d < last; ++d)
      if (d != k) plan.tile_outer.Add(w.dims[d], w.src[d], w.dst[d]);
    const int64_t bands = (w.dims[k] + kTile - 1) / kTile;
    plan.tile_outer.Add(bands, kTile * w.src[k], kTile * w.dst[k]);
  }
  plan.walk = std::move(w);
  return plan;
}

// Runs a walk's plan from src to dst (the bases are the plan's).
void RunPlannedWalk(const CopyPlan& plan, const uint8_t* src, uint8_t* dst) {
  if (!plan.copies) return;
  const Walk& w = plan.walk;
  const int size = plan.element_bytes;
  src += plan.src_base * size;
  dst += plan.dst_base * size;
  const size_t last = w.dims.size() - 1;
  const int64_t n = w.dims[last], ss = w.src[last], ds = w.dst[last];
  if (plan.tile_dim < 0) {
    int64_t rows = w.Count() / n;
    int64_t chunk = std::max<int64_t>(1, kCopyChunk / n);
    ParallelFor(rows, chunk, [&](int64_t begin, int64_t end) {
      ForEachRow(w.dims, w.src, w.dst, 1, begin, end,
                 [&](int64_t so, int64_t d_o) { CopyRun(src + so * size, dst + d_o * size, n, ss, ds, size); });
    });
    return;
  }
  const Walk& outer = plan.tile_outer;
  const size_t k = static_cast<size_t>(plan.tile_dim);
  const int64_t rows = w.dims[k], dr = w.dst[k];
  const int64_t bands = outer.dims.back();
  int64_t chunk = std::max<int64_t>(1, kCopyChunk / (kTile * n));
  ParallelFor(outer.Count(), chunk, [&](int64_t begin, int64_t end) {
    int64_t band = begin % bands;
    ForEachRow(outer.dims, outer.src, outer.dst, 0, begin, end, [&](int64_t so, int64_t d_o) {
      int64_t r_count = std::min(kTile, rows - band * kTile);
      band = band + 1 == bands ? 0 : band + 1;
      for (int64_t c = 0; c < n; c += kTile) {
        int64_t c_count = std::min(kTile, n - c);
        const uint8_t* s = src + (so + c * ss) * size;
        uint8_t* d = dst + (d_o + c) * size;
        switch (size) {
          case 1: TransposeTile<uint8_t>(s, d, r_count, c_count, ss, dr); break;
          case 2: TransposeTile<uint16_t>(s, d, r_count, c_count, ss, dr); break;
          case 4: TransposeTile<uint32_t>(s, d, r_count, c_count, ss, dr); break;
          default: TransposeTile<uint64_t>(s, d, r_count, c_count, ss, dr); break;
        }
      }
    });
  });
}

}  // namespace

// Whether the host layout of t is exactly XLA's bytes (no sub-byte type widened to a byte) and
// every byte pattern is a valid element (not pred, whose bytes must be 0 or 1).
static bool HostBytesAreXlaBytes(PrimitiveType t) {
  return t != PrimitiveType::kPred && HostByteSize(t) * 8 == BitWidth(t);
}

Result<ReshapePlan> PlanReshape(const BufferRecord& in, const BufferRecord& out) {
  const int64_t bytes = out.ElementCount() * HostByteSize(out.type);
  const bool same_elements = in.type == out.type && in.ElementCount() == out.ElementCount();
  const bool same_bytes = HostBytesAreXlaBytes(in.type) && HostBytesAreXlaBytes(out.type) &&
                          in.ElementCount() * HostByteSize(in.type) == bytes;
  if (!same_elements && !same_bytes)
    return Status::Error("bundle 'reshape' changes the element count or the byte size");
  return ReshapePlan{bytes};
}

void RunReshape(const ReshapePlan& plan, const Buf& in, const Buf& out) {
  // Equal when buffer assignment shared the operand's bytes with the result.
  if (out.data != in.data) std::memmove(out.data, in.data, static_cast<size_t>(plan.bytes));
}

// reshape, and bitcast lowered to it: the same elements in a new shape. A bitcast may also
// reinterpret the bytes as another element type of the same total size (`s16[4,5]
// bitcast(f16[20])`), which on the little-endian host is the same byte copy.
Status KernelReshape(const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(ReshapePlan plan, PlanReshape(*in.rec, *out.rec));
  RunReshape(plan, in, out);
  return OkStatus();
}

namespace {

// Whether `order` is a permutation of 0..rank-1.
bool IsPermutation(const std::vector<int64_t>& order, size_t rank) {
  std::vector<bool> seen(rank, false);
  if (order.size() != rank) return false;
  for (int64_t d : order) {
    if (d < 0 || static_cast<size_t>(d) >= rank || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

}  // namespace

// bitcast between layouts, as XLA's evaluator runs it (HandleBitcast: the operand's bytes in its
// physical order, read back in the result's): the operand is laid out major to minor, the bytes
// are taken as the result's physical buffer, and that is laid back out row-major.
Result<BitcastPlan> PlanBitcast(const Step& step, const BufferRecord& in, const BufferRecord& out) {
  const auto* layouts = IntList(step, AttrId::kBitcastLayouts);
  if (!layouts) return Status::Error("bundle 'bitcast' has no layouts");
  const size_t in_rank = in.dims.size(), out_rank = out.dims.size();
  if (layouts->size() != in_rank + out_rank) return Status::Error("bundle 'bitcast' has malformed layouts");
  std::vector<int64_t> in_order(layouts->begin(), layouts->begin() + static_cast<std::ptrdiff_t>(in_rank));
  std::vector<int64_t> out_order(layouts->begin() + static_cast<std::ptrdiff_t>(in_rank), layouts->end());
  if (!IsPermutation(in_order, in_rank) || !IsPermutation(out_order, out_rank))
    return Status::Error("bundle 'bitcast' has a layout that is not a permutation");
  const int in_size = HostByteSize(in.type), out_size = HostByteSize(out.type);
  const int64_t bytes = out.ElementCount() * out_size;
  const bool same_bytes =
      HostBytesAreXlaBytes(in.type) && HostBytesAreXlaBytes(out.type) && in.ElementCount() * in_size == bytes;
  if (!(in.type == out.type && in.ElementCount() == out.ElementCount()) && !same_bytes)
    return Status::Error("bundle 'bitcast' changes the element count or the byte size");
  // Major to minor: the permutation that lays a value out in physical order.
  const std::vector<int64_t> in_major(in_order.rbegin(), in_order.rend());
  const std::vector<int64_t> out_major(out_order.rbegin(), out_order.rend());
  BitcastPlan plan;
  plan.bytes = bytes;
  // Operand -> physical: dimension i of the physical buffer is operand dimension in_major[i].
  {
    const std::vector<int64_t> strides = RowMajorStrides(in.dims);
    std::vector<int64_t> physical_dims(in_rank);
    for (size_t i = 0; i < in_rank; ++i) physical_dims[i] = in.dims[static_cast<size_t>(in_major[i])];
    const std::vector<int64_t> physical_strides = RowMajorStrides(physical_dims);
    Walk w;
    for (size_t i = 0; i < in_rank; ++i)
      w.Add(physical_dims[i], strides[static_cast<size_t>(in_major[i])], physical_strides[i]);
    plan.to_physical = PlanWalk(std::move(w), 0, 0, in_size);
  }
  // Physical -> result: the physical buffer has the result's dimensions in out_major order.
  {
    std::vector<int64_t> physical_dims(out_rank);
    for (size_t i = 0; i < out_rank; ++i) physical_dims[i] = out.dims[static_cast<size_t>(out_major[i])];
    const std::vector<int64_t> physical_strides = RowMajorStrides(physical_dims),
                               out_strides = RowMajorStrides(out.dims);
    Walk w;  // walks the result row-major, reading each element where the physical buffer holds it
    std::vector<int64_t> position(out_rank);
    for (size_t i = 0; i < out_rank; ++i) position[static_cast<size_t>(out_major[i])] = static_cast<int64_t>(i);
    for (size_t d = 0; d < out_rank; ++d)
      w.Add(out.dims[d], physical_strides[static_cast<size_t>(position[d])], out_strides[d]);
    plan.from_physical = PlanWalk(std::move(w), 0, 0, out_size);
  }
  return plan;
}

namespace {

// Whether a walk's plan copies its elements in order, source and destination contiguous.
bool PlainCopy(const CopyPlan& plan) {
  const Walk& w = plan.walk;
  return !plan.copies ||
         (w.dims.size() == 1 && w.src[0] == 1 && w.dst[0] == 1 && plan.src_base == 0 && plan.dst_base == 0);
}

}  // namespace

void RunBitcast(const BitcastPlan& plan, const Buf& in, const Buf& out) {
  if (plan.bytes == 0) return;
  if (PlainCopy(plan.to_physical)) return RunPlannedWalk(plan.from_physical, in.data, out.data);
  if (PlainCopy(plan.from_physical)) return RunPlannedWalk(plan.to_physical, in.data, out.data);
  ScratchVector<uint8_t> physical(static_cast<size_t>(plan.bytes));
  RunPlannedWalk(plan.to_physical, in.data, physical.data());
  RunPlannedWalk(plan.from_physical, physical.data(), out.data);
}

// bitcast between layouts, as XLA's evaluator runs it (HandleBitcast: the operand's bytes in its
// physical order, read back in the result's); without layouts, a reshape.
Status KernelBitcast(const Step& bundle, const Buf& in, const Buf& out) {
  if (!IntList(bundle, AttrId::kBitcastLayouts)) return KernelReshape(in, out);
  NHLO_ASSIGN_OR_RETURN(BitcastPlan plan, PlanBitcast(bundle, *in.rec, *out.rec));
  RunBitcast(plan, in, out);
  return OkStatus();
}

Result<IotaPlan> PlanIota(const Step& step, const BufferRecord& out) {
  const AttrRecord* dim = step.Find(AttrId::kIotaDimension);
  if (!dim || dim->i() < 0 || dim->i() >= static_cast<int64_t>(out.dims.size()))
    return Status::Error("bundle 'iota' has an invalid iota_dimension");
  IotaPlan plan;
  plan.n = out.dims[dim->i()];
  for (int64_t d = 0; d < dim->i(); ++d) plan.outer *= out.dims[d];
  for (size_t d = dim->i() + 1; d < out.dims.size(); ++d) plan.inner *= out.dims[d];
  plan.type = out.type;
  plan.element_bytes = HostByteSize(out.type);
  return plan;
}

// The value depends only on the index along the iota dimension: the first slab [n, inner] is
// written (each value once, filling its run of the inner dimensions), then copied to the others.
void RunIota(const IotaPlan& plan, const Buf& out) {
  if (plan.outer * plan.n * plan.inner <= 0) return;
  const int size = plan.element_bytes;
  uint8_t value[16] = {};
  for (int64_t i = 0; i < plan.n; ++i) {
    uint8_t* at = plan.inner == 1 ? out.data + i * size : value;
    if (IsFloat(plan.type))
      StoreFromDouble(plan.type, at, static_cast<double>(i));
    else
      StoreFromInt(plan.type, at, i);
    if (plan.inner != 1) Fill(out.data + i * plan.inner * size, value, plan.inner, size);
  }
  const size_t slab = static_cast<size_t>(plan.n * plan.inner) * size;
  for (int64_t o = 1; o < plan.outer; ++o) std::memcpy(out.data + o * slab, out.data, slab);
}

Status KernelIota(const Step& bundle, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(IotaPlan plan, PlanIota(bundle, *out.rec));
  RunIota(plan, out);
  return OkStatus();
}

Result<ConcatPlan> PlanConcatenate(const Step& step, const std::vector<const BufferRecord*>& ins,
                                   const BufferRecord& out) {
  const auto* dims = IntList(step, AttrId::kDimensions);
  if (!dims || dims->size() != 1 || ins.empty()) return Status::Error("bundle 'concatenate' needs one dimension");
  const int64_t axis = (*dims)[0];
  const size_t rank = out.dims.size();
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    return Status::Error("bundle 'concatenate' dimension is out of range");
  int64_t total = 0;
  for (const BufferRecord* b : ins) {
    if (b->type != out.type || b->dims.size() != rank)
      return Status::Error("bundle 'concatenate' operands do not match");
    for (size_t d = 0; d < rank; ++d)
      if (static_cast<int64_t>(d) != axis && b->dims[d] != out.dims[d])
        return Status::Error("bundle 'concatenate' operands do not match");
    total += b->dims[axis];
  }
  if (total != out.dims[axis]) return Status::Error("bundle 'concatenate' result size does not match its operands");
  // Each operand as rows of `inner` elements: outer index, then its part of the axis.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out.dims[d];
  for (size_t d = axis + 1; d < rank; ++d) inner *= out.dims[d];
  ConcatPlan plan;
  int64_t offset = 0;
  for (const BufferRecord* b : ins) {
    const int64_t run = b->dims[axis] * inner;
    Walk w;
    w.Add(outer, run, out.dims[axis] * inner);
    w.Add(run, 1, 1);
    plan.parts.push_back(PlanWalk(std::move(w), 0, offset * inner, HostByteSize(out.type)));
    offset += b->dims[axis];
  }
  return plan;
}

void RunConcatenate(const ConcatPlan& plan, const Buf* ins, const Buf& out) {
  for (size_t i = 0; i < plan.parts.size(); ++i) RunPlannedWalk(plan.parts[i], ins[i].data, out.data);
}

Status KernelConcatenate(const Step& bundle, const std::vector<Buf>& ins, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(ConcatPlan plan, PlanConcatenate(bundle, RecordsOf(ins), *out.rec));
  RunConcatenate(plan, ins.data(), out);
  return OkStatus();
}

void Walk::Simplify() {
  Walk w;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!w.dims.empty() && w.src.back() == src[d] * dims[d] && w.dst.back() == dst[d] * dims[d]) {
      w.dims.back() *= dims[d];
      w.src.back() = src[d];
      w.dst.back() = dst[d];
    } else {
      w.Add(dims[d], src[d], dst[d]);
    }
  }
  if (w.dims.empty()) w.Add(1, 1, 1);
  *this = std::move(w);
}

namespace {

Result<CopyPlan> PlanBroadcast(const Step& bundle, const BufferRecord& in, const BufferRecord& out) {
  if (in.type != out.type) return Status::Error("bundle 'broadcast' changes the element type");
  std::vector<int64_t> map;
  if (const auto* dims = IntList(bundle, AttrId::kDimensions)) map = *dims;
  if (map.size() != in.dims.size())
    return Status::Error("bundle 'broadcast' has a dimensions list of the wrong length");
  for (size_t i = 0; i < map.size(); ++i)
    if (map[i] < 0 || map[i] >= static_cast<int64_t>(out.dims.size()) ||
        (in.dims[i] != 1 && in.dims[i] != out.dims[map[i]]))
      return Status::Error("bundle 'broadcast' maps a dimension out of range");
  // Each result dimension reads the operand dimension mapped to it (stride 0 when none is, or
  // when that one has size 1; a one-element operand is a fill).
  std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
  std::vector<int64_t> src_strides(out.dims.size(), 0), out_strides = RowMajorStrides(out.dims);
  for (size_t i = 0; i < map.size(); ++i)
    if (in.dims[i] != 1) src_strides[map[i]] += in_strides[i];
  Walk w;
  for (size_t d = 0; d < out.dims.size(); ++d) w.Add(out.dims[d], src_strides[d], out_strides[d]);
  return PlanWalk(std::move(w), 0, 0, HostByteSize(out.type));
}

Result<CopyPlan> PlanTranspose(const Step& bundle, const BufferRecord& in, const BufferRecord& out) {
  const auto* perm = IntList(bundle, AttrId::kDimensions);
  const size_t rank = in.dims.size();
  if (!perm || perm->size() != rank || rank != out.dims.size() || in.type != out.type)
    return Status::Error("bundle 'transpose' has an invalid permutation");
  if (!IsPermutation(*perm, rank)) return Status::Error("bundle 'transpose' has an invalid permutation");
  for (size_t i = 0; i < rank; ++i)
    if (out.dims[i] != in.dims[static_cast<size_t>((*perm)[i])])
      return Status::Error("bundle 'transpose' has an invalid permutation");
  std::vector<int64_t> strides = RowMajorStrides(in.dims), out_strides = RowMajorStrides(out.dims);
  Walk w;
  for (size_t i = 0; i < rank; ++i) w.Add(out.dims[i], strides[static_cast<size_t>((*perm)[i])], out_strides[i]);
  return PlanWalk(std::move(w), 0, 0, HostByteSize(out.type));
}

Result<CopyPlan> PlanSlice(const Step& bundle, const BufferRecord& in, const BufferRecord& out) {
  const AttrRecord* a = bundle.Find(AttrId::kSlice);
  if (!a) return Status::Error("bundle 'slice' has no slice attribute");
  const std::vector<SliceDim>& ranges = a->slices();
  if (ranges.size() != in.dims.size() || in.type != out.type || out.dims.size() != in.dims.size())
    return Status::Error("bundle 'slice' does not match its operand");
  for (size_t d = 0; d < ranges.size(); ++d) {
    const SliceDim& r = ranges[d];
    if (r.start < 0 || r.limit > in.dims[d] || r.start > r.limit || r.stride <= 0 ||
        (r.limit == r.start ? 0 : 1 + (r.limit - r.start - 1) / r.stride) != out.dims[d])
      return Status::Error("bundle 'slice' has a range that does not fit its operand");
  }
  std::vector<int64_t> in_strides = RowMajorStrides(in.dims), out_strides = RowMajorStrides(out.dims);
  Walk w;
  int64_t base = 0;
  for (size_t d = 0; d < out.dims.size(); ++d) {
    base += ranges[d].start * in_strides[d];
    // A dimension of one element never steps, so its stride (possibly huge) is not used.
    w.Add(out.dims[d], out.dims[d] == 1 ? 0 : ranges[d].stride * in_strides[d], out_strides[d]);
  }
  return PlanWalk(std::move(w), base, 0, HostByteSize(out.type));
}

Result<CopyPlan> PlanPad(const Step& bundle, const BufferRecord& in, const BufferRecord& value,
                         const BufferRecord& out) {
  const AttrRecord* a = bundle.Find(AttrId::kPadding);
  if (!a) return Status::Error("bundle 'pad' has no padding attribute");
  const std::vector<PaddingDim>& pads = a->padding();
  const size_t rank = in.dims.size();
  if (pads.size() != rank || out.dims.size() != rank || in.type != out.type || value.ElementCount() != 1 ||
      (value.type != out.type && !(IsFloat(value.type) && IsFloat(out.type))))
    return Status::Error("bundle 'pad' does not match its operands");
  for (size_t d = 0; d < pads.size(); ++d) {
    int64_t n = in.dims[d];
    // In 128 bits: edges near +-2^63 that cancel out are valid and must not overflow on the way.
    __int128 want = __int128{pads[d].low} + pads[d].high + n + (n > 0 ? __int128{n - 1} * pads[d].interior : 0);
    if (pads[d].interior < 0 || want != out.dims[d])
      return Status::Error("bundle 'pad' result shape does not match its padding");
  }
  // Each dimension keeps the operand indices [first, limit) whose position low + i * (interior
  // + 1) falls inside the result (negative padding cuts elements away); they are copied as a walk.
  std::vector<int64_t> in_strides = RowMajorStrides(in.dims), out_strides = RowMajorStrides(out.dims);
  Walk w;
  int64_t src_base = 0, dst_base = 0;
  bool survives = true;
  for (size_t d = 0; d < rank && survives; ++d) {
    __int128 step = __int128{pads[d].interior} + 1, low = pads[d].low, size_out = out.dims[d];
    __int128 first = low >= 0 ? 0 : (-low + step - 1) / step;
    __int128 limit = size_out - 1 - low < 0 ? 0 : (size_out - 1 - low) / step + 1;
    limit = std::min<__int128>(limit, in.dims[d]);
    survives = first < limit;  // else nothing of the operand is in the result
    if (!survives) break;
    int64_t count = static_cast<int64_t>(limit - first);
    src_base += static_cast<int64_t>(first) * in_strides[d];
    dst_base += static_cast<int64_t>(low + first * step) * out_strides[d];
    w.Add(count, in_strides[d], count == 1 ? 0 : static_cast<int64_t>(step * out_strides[d]));
  }
  CopyPlan plan;
  if (survives) plan = PlanWalk(std::move(w), src_base, dst_base, HostByteSize(out.type));
  plan.copies = survives && plan.copies;
  plan.element_bytes = HostByteSize(out.type);
  plan.fill_first = true;
  return plan;
}

Result<CopyPlan> PlanReverse(const Step& bundle, const BufferRecord& in, const BufferRecord& out) {
  const auto* dims = IntList(bundle, AttrId::kDimensions);
  if (!dims || in.type != out.type || in.dims != out.dims)
    return Status::Error("bundle 'reverse' does not match its operand");
  const size_t rank = in.dims.size();
  std::vector<bool> flip(rank, false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= static_cast<int64_t>(rank)) return Status::Error("bundle 'reverse' dimension is out of range");
    flip[d] = true;
  }
  std::vector<int64_t> strides = RowMajorStrides(in.dims);
  Walk w;
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (flip[d] && in.dims[d] > 0) base += (in.dims[d] - 1) * strides[d];
    w.Add(in.dims[d], flip[d] ? -strides[d] : strides[d], strides[d]);
  }
  return PlanWalk(std::move(w), base, 0, HostByteSize(out.type));
}

}  // namespace

Result<CopyPlan> PlanCopy(const Step& step, const BufferRecord& in, const BufferRecord* pad_value,
                          const BufferRecord& out) {
  if (step.family == OpFamily::kBroadcast) return PlanBroadcast(step, in, out);
  if (step.family == OpFamily::kTranspose) return PlanTranspose(step, in, out);
  if (step.family == OpFamily::kSlice) return PlanSlice(step, in, out);
  if (step.family == OpFamily::kReverse) return PlanReverse(step, in, out);
  if (step.family == OpFamily::kPad && pad_value) return PlanPad(step, in, *pad_value, out);
  return Status::Error("bundle '" + std::string(OpcodeName(step.bundle->opcode)) + "' is not a copy");
}

Status RunCopy(const CopyPlan& plan, const Buf& in, const Buf* pad_value, const Buf& out) {
  if (plan.fill_first) {
    if (!pad_value) return Status::Error("bundle 'pad' has no padding value");
    uint8_t converted[16] = {};  // a float pad value of another precision, in the result's type
    const uint8_t* fill = pad_value->data;
    if (pad_value->type() != out.type()) {
      ConvertElement(pad_value->type(), pad_value->data, out.type(), converted);
      fill = converted;
    }
    Fill(out.data, fill, out.count(), plan.element_bytes);
  }
  RunPlannedWalk(plan, in.data, out.data);
  return OkStatus();
}

Status KernelBroadcast(const Step& bundle, const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(CopyPlan plan, PlanBroadcast(bundle, *in.rec, *out.rec));
  return RunCopy(plan, in, nullptr, out);
}

Status KernelTranspose(const Step& bundle, const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(CopyPlan plan, PlanTranspose(bundle, *in.rec, *out.rec));
  return RunCopy(plan, in, nullptr, out);
}

Status KernelSlice(const Step& bundle, const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(CopyPlan plan, PlanSlice(bundle, *in.rec, *out.rec));
  return RunCopy(plan, in, nullptr, out);
}

Status KernelPad(const Step& bundle, const Buf& in, const Buf& value, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(CopyPlan plan, PlanPad(bundle, *in.rec, *value.rec, *out.rec));
  return RunCopy(plan, in, &value, out);
}

Status KernelReverse(const Step& bundle, const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(CopyPlan plan, PlanReverse(bundle, *in.rec, *out.rec));
  return RunCopy(plan, in, nullptr, out);
}

Result<DynamicSlicePlan> PlanDynamicSlice(bool update, const std::vector<const BufferRecord*>& ops,
                                          const BufferRecord& out) {
  DynamicSlicePlan plan;
  plan.update = update;
  plan.first_index = update ? 2 : 1;
  if (ops.size() < plan.first_index + 1)
    return Status::Error(update ? "dynamic-update-slice needs an operand, an update and start indices"
                                : "dynamic-slice needs an operand and start indices");
  const BufferRecord& in = *ops[0];
  const size_t rank = in.dims.size();
  if (update) {
    const BufferRecord& upd = *ops[1];
    if (in.type != out.type || upd.type != out.type || in.dims != out.dims || upd.dims.size() != rank)
      return Status::Error("bundle 'dynamic-update-slice' does not match its operands");
  } else if (in.type != out.type || rank != out.dims.size()) {
    return Status::Error("bundle 'dynamic-slice' does not match its operand");
  }
  // Start indices: one scalar operand per dimension (or one vector), clamped at the run so the
  // slice stays inside the operand, as XLA does.
  size_t starts = 0;
  plan.vector_starts = ops.size() == plan.first_index + 1 && ops[plan.first_index]->dims.size() == 1;
  if (plan.vector_starts) {
    starts = static_cast<size_t>(ops[plan.first_index]->ElementCount());
  } else {
    for (size_t i = plan.first_index; i < ops.size(); ++i)
      if (ops[i]->ElementCount() != 1 || !IsInteger(ops[i]->type))
        return Status::Error("start indices must be integer scalars");
    starts = ops.size() - plan.first_index;
  }
  const std::vector<int64_t>& sizes = update ? ops[1]->dims : out.dims;
  if (starts != rank || sizes.size() != rank)
    return Status::Error("wrong number of start indices for an operand of rank " + std::to_string(rank));
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || sizes[d] > in.dims[d]) return Status::Error("slice size is larger than the operand");
    plan.limit.push_back(in.dims[d] - sizes[d]);
  }
  plan.stride = RowMajorStrides(in.dims);
  const std::vector<int64_t> size_strides = RowMajorStrides(sizes);
  Walk w;
  for (size_t d = 0; d < rank; ++d)
    w.Add(sizes[d], update ? size_strides[d] : plan.stride[d], update ? plan.stride[d] : size_strides[d]);
  plan.copy = PlanWalk(std::move(w), 0, 0, HostByteSize(out.type));
  return plan;
}

void RunDynamicSlice(const DynamicSlicePlan& plan, const Buf* ops, const Buf& out) {
  const int size = plan.copy.element_bytes;
  int64_t base = 0;
  for (size_t d = 0; d < plan.limit.size(); ++d) {
    const Buf& index = plan.vector_starts ? ops[plan.first_index] : ops[plan.first_index + d];
    const uint8_t* at = index.data + (plan.vector_starts ? d * HostByteSize(index.type()) : 0);
    base += std::clamp<int64_t>(LoadIndex(index.type(), at), 0, plan.limit[d]) * plan.stride[d];
  }
  if (!plan.update) {
    RunPlannedWalk(plan.copy, ops[0].data + base * size, out.data);
    return;
  }
  if (out.data != ops[0].data) std::memmove(out.data, ops[0].data, static_cast<size_t>(out.count()) * size);
  RunPlannedWalk(plan.copy, ops[1].data, out.data + base * size);
}

namespace {

Status RunDynamicSliceKernel(bool update, const std::vector<Buf>& ops, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(DynamicSlicePlan plan, PlanDynamicSlice(update, RecordsOf(ops), *out.rec));
  RunDynamicSlice(plan, ops.data(), out);
  return OkStatus();
}

}  // namespace

Status KernelDynamicSlice(const std::vector<Buf>& ops, const Buf& out) {
  return RunDynamicSliceKernel(false, ops, out);
}

Status KernelDynamicUpdateSlice(const std::vector<Buf>& ops, const Buf& out) {
  return RunDynamicSliceKernel(true, ops, out);
}

}  // namespace nhlo
