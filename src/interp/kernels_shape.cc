// SPDX-License-Identifier: Apache-2.0
// Data-movement kernels: broadcast, reshape, transpose, iota. They move bytes, so one
// implementation serves every element type.
#include <cstring>

#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

const std::vector<int64_t>* IntList(const BundleRecord& b, AttrId id) {
  const AttrRecord* a = b.Find(id);
  return a && a->kind == AttrKind::IntList ? &a->ints : nullptr;
}

// Walks every index of `dims` in row-major order, calling f(linear_out, index).
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F&& f) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    f(linear, index);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
}

}  // namespace

Status KernelBroadcast(const BundleRecord& bundle, const Buf& in, const Buf& out) {
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

Status KernelTranspose(const BundleRecord& bundle, const Buf& in, const Buf& out) {
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

Status KernelIota(const BundleRecord& bundle, const Buf& out) {
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

}  // namespace nhlo
