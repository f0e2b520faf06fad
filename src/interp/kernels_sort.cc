// SPDX-License-Identifier: Apache-2.0
// top-k: the topk op and XLA's TopK custom call, as XLA's TopkDecomposer expands both: a stable
// sort of each last-dimension row (with an iota for the indices), then the first k elements.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "interp/kernels.h"
#include "support/merge_sort.h"

namespace nhlo {
namespace {

// A key whose signed order is XLA's total order on the type: for floats
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN (sign and magnitude of the bits), integers by
// value.
int64_t TotalOrderKey(PrimitiveType t, const uint8_t* p) {
  if (IsSignedInt(t)) return LoadAsInt(t, p);
  if (IsUnsignedInt(t) || t == PrimitiveType::kPred) {
    uint64_t u = LoadAsUint(t, p);
    return static_cast<int64_t>(u ^ (uint64_t{1} << 63));  // order-preserving into int64
  }
  uint64_t bits = LoadBits(t, p);
  int width = BitWidth(t);
  if (t == PrimitiveType::kF8E8M0FNU) return static_cast<int64_t>(bits);  // no sign bit
  uint64_t sign = uint64_t{1} << (width - 1);
  int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude - 1 : magnitude;
}

}  // namespace

Result<TopKPlan> PlanTopK(const BufferRecord& x, const BufferRecord& values, const BufferRecord& indices) {
  const std::vector<int64_t>& dims = x.dims;
  // s32 for topk and XLA's TopK; Neuron's AwsNeuronTopK gives u32 (transformers-neuronx) or s64.
  if (dims.empty() || values.type != x.type || !IsInteger(indices.type) || values.dims != indices.dims ||
      values.dims.size() != dims.size())
    return Status::Error("topk takes an array of rank >= 1 and returns (values, integer indices) of its rank");
  size_t last = dims.size() - 1;
  TopKPlan plan;
  plan.n = dims[last];
  plan.k = values.dims[last];
  for (size_t d = 0; d < last; ++d)
    if (values.dims[d] != dims[d]) return Status::Error("topk results must keep the operand's leading dimensions");
  if (plan.k > plan.n)
    return Status::Error("topk asks for " + std::to_string(plan.k) + " of " + std::to_string(plan.n) + " elements");
  if (IsComplex(x.type)) return Status::Error("topk does not order complex elements");
  plan.rows = plan.n > 0 ? x.ElementCount() / plan.n : 0;
  return plan;
}

Status KernelTopK(const Buf& x, const Buf& values, const Buf& indices, TopKOrder order, const ScalarCall& less) {
  NHLO_ASSIGN_OR_RETURN(TopKPlan plan, PlanTopK(*x.rec, *values.rec, *indices.rec));
  return RunTopK(plan, x, values, indices, order, less);
}

Status RunTopK(const TopKPlan& plan, const Buf& x, const Buf& values, const Buf& indices, TopKOrder order,
               const ScalarCall& less) {
  const int64_t n = plan.n, k = plan.k;
  if (k == 0) return OkStatus();  // k <= n, so n > 0 from here
  const int index_size = HostByteSize(indices.type());
  const int64_t rows = plan.rows;
  int size = HostByteSize(x.type());
  std::vector<int64_t> order_of(static_cast<size_t>(n)), key(static_cast<size_t>(n));
  Status failure;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = x.data + r * n * size;
    for (int64_t i = 0; i < n; ++i) {
      order_of[i] = i;
      key[i] = TotalOrderKey(x.type(), row + i * size);
    }
    StableMergeSort(order_of, [&](int64_t a, int64_t b) {
      switch (order) {
        case TopKOrder::kDescending: return key[a] > key[b];
        case TopKOrder::kAscending: return key[a] < key[b];
        case TopKOrder::kComparator: break;
      }
      if (!failure.ok()) return false;
      Result<const uint8_t*> result = less(row + a * size, row + b * size);
      if (!result.ok()) {
        failure = result.status();
        return false;
      }
      return **result != 0;
    });
    NHLO_TRY(failure);
    for (int64_t i = 0; i < k; ++i) {
      std::memcpy(values.data + (r * k + i) * size, row + order_of[i] * size, size);
      StoreFromInt(indices.type(), indices.data + (r * k + i) * index_size, order_of[i]);
    }
  }
  return OkStatus();
}

}  // namespace nhlo
