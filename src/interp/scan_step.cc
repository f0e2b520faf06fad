// SPDX-License-Identifier: Apache-2.0
// scan(inputs..., inits...), num_carries=c, as XLA's ScanExpander lowers it to a loop: step k
// (index k, or N-1-k with is_reverse=true) calls to_apply on (slice k of each input along
// `dimensions`, the carries) and gets (outputs..., new carries...); output j of the step is
// stored at its index, so the result is (the outputs stacked along the dimension..., the last
// carries). A non-tuple result is one output or one carry alone (XLA's 1 - num_carries).
// Slices and carries live in scratch memory the callee's parameters point at; a new carry is
// copied out of the callee's frame before the next step overwrites it.
#include "interp/scan_step.h"

#include <cstring>
#include <string>

namespace nhlo {
namespace {

using Along = ScanPlan::Along;

// `whole` is `slice` with dimension `dim` inserted; its bytes, as blocks along `dim`.
Result<Along> BlocksAlong(const BufferRecord& whole, const BufferRecord& slice, int64_t dim) {
  auto bad = [&] {
    return Status::Error("scan operand '" + std::string(whole.name) + "' does not fit the computation's slice '" +
                         std::string(slice.name) + "'");
  };
  if (!IsArrayType(whole.type) || whole.type != slice.type || dim < 0 ||
      dim >= static_cast<int64_t>(whole.dims.size()) || whole.dims.size() != slice.dims.size() + 1)
    return bad();
  for (size_t d = 0, s = 0; d < whole.dims.size(); ++d)
    if (static_cast<int64_t>(d) != dim && whole.dims[d] != slice.dims[s++]) return bad();
  Along a;
  a.length = whole.dims[dim];
  if (whole.size == 0 || slice.size == 0) return a;            // nothing to move (and no product to overflow)
  for (int64_t d = 0; d < dim; ++d) a.outer *= whole.dims[d];  // bounded: the buffer holds them all
  a.inner = static_cast<int64_t>(slice.size) / a.outer;
  if (static_cast<uint64_t>(a.length) * slice.size != whole.size) return bad();
  return a;
}

}  // namespace

Result<ScanPlan> PlanScan(const ComputationRecord& comp, const ComputationRecord& f, const Step& s) {
  const BundleRecord& b = *s.bundle;
  const AttrRecord* dims = s.Find(AttrId::kDimensions);
  const AttrRecord* carries_attr = s.Find(AttrId::kNumCarries);
  const size_t n = b.operands.size();
  if (!dims || dims->ints().size() != 1 || !carries_attr || carries_attr->i() < 0 ||
      static_cast<uint64_t>(carries_attr->i()) > n)
    return Status::Error("scan needs one dimension and num_carries within its operands");
  ScanPlan plan;
  plan.carries = static_cast<size_t>(carries_attr->i());
  plan.inputs = n - plan.carries;
  const int64_t dim = dims->ints()[0];
  const BufferRecord& r = comp.buffers[b.result];
  const BufferRecord& root = f.buffers[f.root];
  // The result's leaves and the callee root's, in order: a tuple's elements, or the one array.
  plan.result_leaves = r.type == PrimitiveType::kTuple ? r.tuple : std::vector<uint32_t>{b.result};
  plan.root_leaves = root.type == PrimitiveType::kTuple ? root.tuple : std::vector<uint32_t>{f.root};
  if (f.params.size() != n || plan.root_leaves.size() != plan.result_leaves.size() ||
      plan.result_leaves.size() < plan.carries)
    return Status::Error("scan computation '" + std::string(f.name) + "' does not fit the scan");
  plan.outputs = plan.result_leaves.size() - plan.carries;
  plan.in_along.resize(plan.inputs);
  plan.out_along.resize(plan.outputs);
  int64_t length = -1;
  for (size_t i = 0; i < n; ++i) {
    const BufferRecord& pb = f.buffers[f.params[i]];
    const BufferRecord& ob = comp.buffers[b.operands[i]];
    if (!IsArrayType(pb.type)) return Status::Error("scan over tuple or token operands is not supported");
    if (i < plan.inputs) {
      NHLO_ASSIGN_OR_RETURN(plan.in_along[i], BlocksAlong(ob, pb, dim));
      if (length >= 0 && plan.in_along[i].length != length) return Status::Error("scan inputs differ in length");
      length = plan.in_along[i].length;
    } else if (ob.type != pb.type || ob.dims != pb.dims) {
      return Status::Error("scan init '" + std::string(ob.name) + "' does not match parameter '" +
                           std::string(pb.name) + "'");
    }
  }
  for (size_t k = 0; k < plan.result_leaves.size(); ++k) {
    const BufferRecord& leaf = f.buffers[plan.root_leaves[k]];
    const BufferRecord& rb = comp.buffers[plan.result_leaves[k]];
    if (k < plan.outputs) {
      NHLO_ASSIGN_OR_RETURN(plan.out_along[k], BlocksAlong(rb, leaf, dim));
      if (length >= 0 && plan.out_along[k].length != length)
        return Status::Error("scan outputs differ in length from the inputs");
      length = plan.out_along[k].length;
      continue;
    }
    // A carry: result, callee result and parameter are all the init's shape.
    const BufferRecord& pb = f.buffers[f.params[plan.inputs + k - plan.outputs]];
    if (!IsArrayType(rb.type) || rb.type != leaf.type || rb.dims != leaf.dims || rb.type != pb.type ||
        rb.dims != pb.dims)
      return Status::Error("scan carry result '" + std::string(leaf.name) + "' does not match its parameter '" +
                           std::string(pb.name) + "'");
  }
  plan.length = length;
  const AttrRecord* reverse_attr = s.Find(AttrId::kIsReverse);
  plan.reverse = reverse_attr && reverse_attr->kind == AttrKind::Bool && reverse_attr->b();
  return plan;
}

Status RunScan(const Step& s, StepMachine& m) {
  NHLO_ASSIGN_OR_RETURN(const ComputationRecord* f, m.CalledComputation(s, AttrId::kToApply));
  if (const auto* plan = PlanOf<ScanPlan>(s)) return RunPlannedScan(s, *plan, *f, m);
  NHLO_ASSIGN_OR_RETURN(ScanPlan plan, PlanScan(m.Running(), *f, s));
  return RunPlannedScan(s, plan, *f, m);
}

Status RunPlannedScan(const Step& s, const ScanPlan& plan, const ComputationRecord& callee, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const ComputationRecord* f = &callee;
  const size_t n = b.operands.size(), inputs = plan.inputs, carries = plan.carries, outputs = plan.outputs;
  const std::vector<uint32_t>& result_leaves = plan.result_leaves;
  const std::vector<uint32_t>& root_leaves = plan.root_leaves;
  const std::vector<Along>& in_along = plan.in_along;
  const std::vector<Along>& out_along = plan.out_along;
  const int64_t length = plan.length;
  const bool reverse = plan.reverse;
  std::vector<std::vector<uint64_t>> scratch(n);  // 8-byte aligned
  std::vector<uint8_t*> params(n);
  for (size_t i = 0; i < n; ++i) {
    scratch[i].assign(f->buffers[f->params[i]].size / 8 + 1, 0);
    params[i] = reinterpret_cast<uint8_t*>(scratch[i].data());
  }
  for (size_t c = 0; c < carries; ++c) {
    NHLO_ASSIGN_OR_RETURN(Buf init, m.ArrayOf(b.operands[inputs + c]));
    if (init.rec->size) std::memcpy(params[inputs + c], init.data, init.rec->size);
  }
  std::vector<Buf> in(inputs), out(result_leaves.size());
  for (size_t i = 0; i < inputs; ++i) {
    NHLO_ASSIGN_OR_RETURN(in[i], m.ArrayOf(b.operands[i]));
  }
  for (size_t k = 0; k < result_leaves.size(); ++k) {
    NHLO_ASSIGN_OR_RETURN(out[k], m.ArrayOf(result_leaves[k]));
  }
  std::vector<const uint8_t*> got;
  for (int64_t step = 0; step < std::max<int64_t>(length, 0); ++step) {
    const int64_t at = reverse ? length - 1 - step : step;
    for (size_t i = 0; i < inputs; ++i) {
      const Along& a = in_along[i];
      for (int64_t o = 0; o < a.outer && a.inner; ++o)
        std::memcpy(params[i] + o * a.inner, in[i].data + (o * a.length + at) * a.inner, static_cast<size_t>(a.inner));
    }
    NHLO_TRY(m.CallWithPointers(b, *f, params, root_leaves, got));
    for (size_t k = 0; k < result_leaves.size(); ++k) {
      const uint64_t size = f->buffers[root_leaves[k]].size;
      if (k < outputs) {
        const Along& a = out_along[k];
        for (int64_t o = 0; o < a.outer && a.inner; ++o)
          std::memcpy(out[k].data + (o * a.length + at) * a.inner, got[k] + o * a.inner, static_cast<size_t>(a.inner));
      } else if (size) {
        std::memmove(out[k].data, got[k], size);  // the result holds the newest carry
      }
    }
    for (size_t c = 0; c < carries; ++c)
      if (uint64_t size = out[outputs + c].rec->size) std::memcpy(params[inputs + c], out[outputs + c].data, size);
  }
  for (size_t c = 0; c < carries && length <= 0; ++c)  // no steps: the carries are the inits
    if (uint64_t size = out[outputs + c].rec->size) std::memcpy(out[outputs + c].data, params[inputs + c], size);
  return OkStatus();
}

}  // namespace nhlo
