// SPDX-License-Identifier: Apache-2.0
// Data-movement kernels: broadcast, reshape, transpose, iota. They move bytes, so one
// implementation serves every element type.
#include <algorithm>
#include <cstring>

#include "interp/element_traits.h"
#include "interp/kernels.h"
#include "types/hlo_attrs.h"

namespace nhlo {

Status KernelBroadcast(const Step& bundle, const Buf& in, const Buf& out) {
  if (in.type() != out.type()) return Status::Error("bundle 'broadcast' changes the element type");
  std::vector<int64_t> map;
  if (const auto* dims = IntList(bundle, AttrId::kDimensions)) map = *dims;
  if (map.size() != in.rank()) return Status::Error("bundle 'broadcast' has a dimensions list of the wrong length");
  for (size_t i = 0; i < map.size(); ++i)
    if (map[i] < 0 || map[i] >= static_cast<int64_t>(out.rank()) ||
        (Dims(in)[i] != 1 && Dims(in)[i] != Dims(out)[map[i]]))
      return Status::Error("bundle 'broadcast' maps a dimension out of range");
  int size = HostByteSize(out.type());
  std::vector<int64_t> in_strides = RowMajorStrides(Dims(in));
  if (in.count() == 1) {
    for (int64_t i = 0; i < out.count(); ++i) std::memcpy(out.data + i * size, in.data, size);
    return OkStatus();
  }
  ForEachIndex(Dims(out), [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t src = 0;
    for (size_t i = 0; i < map.size(); ++i) src += (Dims(in)[i] == 1 ? 0 : index[map[i]]) * in_strides[i];
    std::memcpy(out.data + linear * size, in.data + src * size, size);
  });
  return OkStatus();
}

Status KernelReshape(const Buf& in, const Buf& out) {
  if (in.type() != out.type() || in.count() != out.count())
    return Status::Error("bundle 'reshape' changes the element type or count");
  std::memmove(out.data, in.data, static_cast<size_t>(out.count()) * HostByteSize(out.type()));
  return OkStatus();
}

Status KernelTranspose(const Step& bundle, const Buf& in, const Buf& out) {
  const auto* perm = IntList(bundle, AttrId::kDimensions);
  if (!perm || perm->size() != in.rank() || in.rank() != out.rank() || in.type() != out.type())
    return Status::Error("bundle 'transpose' has an invalid permutation");
  std::vector<bool> seen(in.rank(), false);
  for (size_t i = 0; i < perm->size(); ++i) {
    int64_t p = (*perm)[i];
    if (p < 0 || p >= static_cast<int64_t>(in.rank()) || seen[p] || Dims(out)[i] != Dims(in)[p])
      return Status::Error("bundle 'transpose' has an invalid permutation");
    seen[p] = true;
  }
  int size = HostByteSize(out.type());
  std::vector<int64_t> in_strides = RowMajorStrides(Dims(in));
  ForEachIndex(Dims(out), [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t src = 0;
    for (size_t i = 0; i < index.size(); ++i) src += index[i] * in_strides[(*perm)[i]];
    std::memcpy(out.data + linear * size, in.data + src * size, size);
  });
  return OkStatus();
}

Status KernelIota(const Step& bundle, const Buf& out) {
  const AttrRecord* dim = bundle.Find(AttrId::kIotaDimension);
  if (!dim || dim->i < 0 || dim->i >= static_cast<int64_t>(out.rank()))
    return Status::Error("bundle 'iota' has an invalid iota_dimension");
  int size = HostByteSize(out.type());
  PrimitiveType t = out.type();
  ForEachIndex(Dims(out), [&](int64_t linear, const std::vector<int64_t>& index) {
    if (IsFloat(t)) StoreFromDouble(t, out.data + linear * size, static_cast<double>(index[dim->i]));
    else StoreFromInt(t, out.data + linear * size, index[dim->i]);
  });
  return OkStatus();
}


Status KernelSlice(const Step& bundle, const Buf& in, const Buf& out) {
  const AttrRecord* a = bundle.Find(AttrId::kSlice);
  if (!a) return Status::Error("bundle 'slice' has no slice attribute");
  const std::vector<SliceDim>& ranges = a->slices;
  if (ranges.size() != in.rank() || in.type() != out.type() || out.rank() != in.rank())
    return Status::Error("bundle 'slice' does not match its operand");
  for (size_t d = 0; d < ranges.size(); ++d) {
    const SliceDim& r = ranges[d];
    if (r.start < 0 || r.limit > Dims(in)[d] || r.start > r.limit || r.stride <= 0 ||
        (r.limit == r.start ? 0 : 1 + (r.limit - r.start - 1) / r.stride) != Dims(out)[d])
      return Status::Error("bundle 'slice' has a range that does not fit its operand");
  }
  int size = HostByteSize(out.type());
  std::vector<int64_t> in_strides = RowMajorStrides(Dims(in));
  ForEachIndex(Dims(out), [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d) src += (ranges[d].start + index[d] * ranges[d].stride) * in_strides[d];
    std::memcpy(out.data + linear * size, in.data + src * size, size);
  });
  return OkStatus();
}

Status KernelConcatenate(const Step& bundle, const std::vector<Buf>& ins, const Buf& out) {
  const auto* dims = IntList(bundle, AttrId::kDimensions);
  if (!dims || dims->size() != 1 || ins.empty()) return Status::Error("bundle 'concatenate' needs one dimension");
  int64_t axis = (*dims)[0];
  if (axis < 0 || axis >= static_cast<int64_t>(out.rank())) return Status::Error("bundle 'concatenate' dimension is out of range");
  int64_t total = 0;
  for (const Buf& b : ins) {
    if (b.type() != out.type() || b.rank() != out.rank()) return Status::Error("bundle 'concatenate' operands do not match");
    for (size_t d = 0; d < out.rank(); ++d)
      if (static_cast<int64_t>(d) != axis && Dims(b)[d] != Dims(out)[d]) return Status::Error("bundle 'concatenate' operands do not match");
    total += Dims(b)[axis];
  }
  if (total != Dims(out)[axis]) return Status::Error("bundle 'concatenate' result size does not match its operands");
  // Copy each operand as contiguous rows of `inner` elements: outer index, then the axis.
  int size = HostByteSize(out.type());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= Dims(out)[d];
  for (size_t d = axis + 1; d < out.rank(); ++d) inner *= Dims(out)[d];
  int64_t offset = 0;
  for (const Buf& b : ins) {
    int64_t rows = Dims(b)[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.data + ((o * Dims(out)[axis] + offset) * inner) * size, b.data + (o * rows * inner) * size,
                  static_cast<size_t>(rows * inner * size));
    offset += rows;
  }
  return OkStatus();
}

Status KernelPad(const Step& bundle, const Buf& in, const Buf& value, const Buf& out) {
  const AttrRecord* a = bundle.Find(AttrId::kPadding);
  if (!a) return Status::Error("bundle 'pad' has no padding attribute");
  const std::vector<PaddingDim>& pads = a->padding;
  if (pads.size() != in.rank() || out.rank() != in.rank() || in.type() != out.type() || value.type() != out.type() ||
      value.count() != 1)
    return Status::Error("bundle 'pad' does not match its operands");
  for (size_t d = 0; d < pads.size(); ++d) {
    int64_t n = Dims(in)[d];
    // In 128 bits: edges near +-2^63 that cancel out are valid and must not overflow on the way.
    __int128 want = __int128{pads[d].low} + pads[d].high + n + (n > 0 ? __int128{n - 1} * pads[d].interior : 0);
    if (pads[d].interior < 0 || want != Dims(out)[d]) return Status::Error("bundle 'pad' result shape does not match its padding");
  }
  int size = HostByteSize(out.type());
  for (int64_t i = 0; i < out.count(); ++i) std::memcpy(out.data + i * size, value.data, size);
  std::vector<int64_t> out_strides = RowMajorStrides(Dims(out));
  ForEachIndex(Dims(in), [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t dst = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      __int128 pos = __int128{pads[d].low} + __int128{index[d]} * (__int128{pads[d].interior} + 1);
      if (pos < 0 || pos >= Dims(out)[d]) return;  // negative padding cuts elements away
      dst += static_cast<int64_t>(pos) * out_strides[d];
    }
    std::memcpy(out.data + dst * size, in.data + linear * size, size);
  });
  return OkStatus();
}

Status KernelReverse(const Step& bundle, const Buf& in, const Buf& out) {
  const auto* dims = IntList(bundle, AttrId::kDimensions);
  if (!dims || in.type() != out.type() || Dims(in) != Dims(out)) return Status::Error("bundle 'reverse' does not match its operand");
  std::vector<bool> flip(in.rank(), false);
  for (int64_t d : *dims) {
    if (d < 0 || d >= static_cast<int64_t>(in.rank())) return Status::Error("bundle 'reverse' dimension is out of range");
    flip[d] = true;
  }
  int size = HostByteSize(out.type());
  std::vector<int64_t> strides = RowMajorStrides(Dims(in));
  ForEachIndex(Dims(out), [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d) src += (flip[d] ? Dims(in)[d] - 1 - index[d] : index[d]) * strides[d];
    std::memcpy(out.data + linear * size, in.data + src * size, size);
  });
  return OkStatus();
}


namespace {

// Start indices of dynamic-slice / dynamic-update-slice: one scalar operand per dimension (or
// one vector), clamped so the slice stays inside the operand, as XLA does.
Result<std::vector<int64_t>> StartIndices(const std::vector<Buf>& ops, size_t first, const Buf& operand,
                                          const std::vector<int64_t>& sizes) {
  std::vector<int64_t> starts;
  if (ops.size() == first + 1 && ops[first].rank() == 1) {
    const Buf& v = ops[first];
    for (int64_t i = 0; i < v.count(); ++i) starts.push_back(LoadIndex(v.type(), v.data + i * HostByteSize(v.type())));
  } else {
    for (size_t i = first; i < ops.size(); ++i) {
      if (ops[i].count() != 1 || !IsInteger(ops[i].type())) return Status::Error("start indices must be integer scalars");
      starts.push_back(LoadIndex(ops[i].type(), ops[i].data));
    }
  }
  if (starts.size() != operand.rank() || sizes.size() != operand.rank())
    return Status::Error("wrong number of start indices for an operand of rank " + std::to_string(operand.rank()));
  for (size_t d = 0; d < starts.size(); ++d) {
    if (sizes[d] < 0 || sizes[d] > Dims(operand)[d]) return Status::Error("slice size is larger than the operand");
    starts[d] = std::min(std::max<int64_t>(starts[d], 0), Dims(operand)[d] - sizes[d]);
  }
  return starts;
}

}  // namespace

Status KernelDynamicSlice(const std::vector<Buf>& ops, const Buf& out) {
  if (ops.size() < 2) return Status::Error("dynamic-slice needs an operand and start indices");
  const Buf& in = ops[0];
  if (in.type() != out.type() || in.rank() != out.rank()) return Status::Error("bundle 'dynamic-slice' does not match its operand");
  NHLO_ASSIGN_OR_RETURN(std::vector<int64_t> starts, StartIndices(ops, 1, in, Dims(out)));
  int size = HostByteSize(out.type());
  std::vector<int64_t> strides = RowMajorStrides(Dims(in));
  ForEachIndex(Dims(out), [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d) src += (starts[d] + index[d]) * strides[d];
    std::memcpy(out.data + linear * size, in.data + src * size, size);
  });
  return OkStatus();
}

Status KernelDynamicUpdateSlice(const std::vector<Buf>& ops, const Buf& out) {
  if (ops.size() < 3) return Status::Error("dynamic-update-slice needs an operand, an update and start indices");
  const Buf& in = ops[0];
  const Buf& update = ops[1];
  if (in.type() != out.type() || update.type() != out.type() || Dims(in) != Dims(out) || update.rank() != in.rank())
    return Status::Error("bundle 'dynamic-update-slice' does not match its operands");
  NHLO_ASSIGN_OR_RETURN(std::vector<int64_t> starts, StartIndices(ops, 2, in, Dims(update)));
  int size = HostByteSize(out.type());
  if (out.data != in.data) std::memmove(out.data, in.data, static_cast<size_t>(out.count()) * size);
  std::vector<int64_t> strides = RowMajorStrides(Dims(out));
  ForEachIndex(Dims(update), [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t dst = 0;
    for (size_t d = 0; d < index.size(); ++d) dst += (starts[d] + index[d]) * strides[d];
    std::memcpy(out.data + dst * size, update.data + linear * size, size);
  });
  return OkStatus();
}

}  // namespace nhlo
