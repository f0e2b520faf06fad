// SPDX-License-Identifier: Apache-2.0
#include "interp/dynamic_steps.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

namespace nhlo {

bool IsBounded(const BufferRecord& b) {
  for (uint8_t k : b.dim_kinds)
    if (k != 0) return true;
  return false;
}
bool HasBoundedLeaf(const ComputationRecord& comp, uint32_t buffer) {
  const BufferRecord& b = comp.buffers[buffer];
  if (b.type != PrimitiveType::kTuple) return IsBounded(b);
  for (uint32_t e : b.tuple)
    if (HasBoundedLeaf(comp, e)) return true;
  return false;
}
const BufferRecord* UnboundedLeaf(const ComputationRecord& comp, uint32_t buffer) {
  const BufferRecord& b = comp.buffers[buffer];
  for (uint32_t e : b.tuple)
    if (const BufferRecord* leaf = UnboundedLeaf(comp, e)) return leaf;
  for (uint8_t k : b.dim_kinds)
    if (k == 2) return &b;
  return nullptr;
}
bool FitsBound(const BufferRecord& b, const std::vector<int64_t>& dims) {
  if (!IsBounded(b) || dims.size() != b.dims.size()) return false;
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] < 0 || (b.dim_kinds[d] != 0 ? dims[d] > b.dims[d] : dims[d] != b.dims[d])) return false;
  return true;
}

namespace {

// The runtime sizes of an array buffer of the running computation.
std::vector<int64_t> RuntimeSizes(StepMachine& m, uint32_t buffer) {
  const std::vector<int64_t>& s = m.SizesOf(buffer);
  return s.empty() ? m.Running().buffers.at(buffer).dims : s;
}
Status SetSizes(StepMachine& m, uint32_t buffer, std::vector<int64_t> sizes) {
  const BufferRecord& b = m.Running().buffers.at(buffer);
  if (sizes == b.dims)
    sizes.clear();
  else if (!FitsBound(b, sizes))
    return Status::Error("runtime sizes do not fit '" + std::string(b.name) + "', whose shape is static or smaller");
  m.SizesOf(buffer) = std::move(sizes);
  return OkStatus();
}
void ClearSizes(StepMachine& m, uint32_t buffer) {
  const BufferRecord& b = m.Running().buffers.at(buffer);
  if (b.type == PrimitiveType::kTuple) {
    for (uint32_t e : b.tuple) ClearSizes(m, e);
    return;
  }
  m.SizesOf(buffer).clear();
}
// The leaves of `buffer` whose runtime sizes are below their bounds.
void PartialLeaves(StepMachine& m, uint32_t buffer, std::vector<uint32_t>& out) {
  const BufferRecord& b = m.Running().buffers.at(buffer);
  if (b.type == PrimitiveType::kTuple) {
    for (uint32_t e : b.tuple) PartialLeaves(m, e, out);
    return;
  }
  if (!m.SizesOf(buffer).empty()) out.push_back(buffer);
}

}  // namespace

namespace {

// Points `buffer` at other bytes for one step, then back.
class Rebind {
 public:
  Rebind(StepMachine& m, uint32_t buffer, uint8_t* data) : slot_(m.DataOf(buffer)), saved_(slot_) { slot_ = data; }
  ~Rebind() { slot_ = saved_; }
  Rebind(const Rebind&) = delete;
  Rebind& operator=(const Rebind&) = delete;

 private:
  uint8_t*& slot_;
  uint8_t* saved_;
};

// A copy of `x` with every element outside `sizes` set to the element `fill`.
std::string Masked(const Buf& x, const std::vector<int64_t>& sizes, const uint8_t* fill) {
  const int size = HostByteSize(x.type());
  std::string out(x.rec->size, '\0');
  for (size_t at = 0; fill && at + static_cast<size_t>(size) <= out.size(); at += static_cast<size_t>(size))
    std::memcpy(out.data() + at, fill, static_cast<size_t>(size));
  CopyBox(x.data, Dims(x), reinterpret_cast<uint8_t*>(out.data()), Dims(x), sizes, size);
  return out;
}

// The ops whose results need the padding masked or the sizes mapped (XLA's DynamicPadder
// rewrites them the same way): reduce reads its inputs with the padding replaced by the init
// value and keeps the sizes of the dimensions it does not reduce; dot reads both operands with
// zeros past the common size of each contracting pair and gives [batch, lhs free, rhs free]
// sizes; broadcast and transpose move the sizes with their dimensions.
Status RunSized(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const ComputationRecord& comp = m.Running();
  auto list = [&](AttrId id) -> std::vector<int64_t> {
    const AttrRecord* a = s.Find(id);
    return a && a->kind == AttrKind::IntList ? a->ints() : std::vector<int64_t>{};
  };
  std::vector<std::string> masked;
  std::vector<std::unique_ptr<Rebind>> rebound;
  masked.reserve(b.operands.size());
  auto mask = [&](uint32_t buffer, const std::vector<int64_t>& sizes, const uint8_t* fill) -> Status {
    NHLO_ASSIGN_OR_RETURN(Buf x, m.ArrayOf(buffer));
    masked.push_back(Masked(x, sizes, fill));
    rebound.push_back(std::make_unique<Rebind>(m, buffer, reinterpret_cast<uint8_t*>(masked.back().data())));
    return OkStatus();
  };
  const std::vector<int64_t> dims = list(AttrId::kDimensions);
  if (s.family == OpFamily::kReduce) {
    const size_t n = b.operands.size() / 2;
    if (n == 0 || b.operands.size() != 2 * n) return Status::Error("reduce needs inputs and as many init values");
    const std::vector<int64_t> sizes = RuntimeSizes(m, b.operands[0]);
    for (size_t i = 0; i < n; ++i) {
      if (RuntimeSizes(m, b.operands[i]) != sizes)
        return Status::Error("inputs of 'reduce' have different runtime sizes");
      NHLO_ASSIGN_OR_RETURN(Buf init, m.ArrayOf(b.operands[n + i]));
      if (init.type() != comp.buffers.at(b.operands[i]).type || init.count() != 1)
        return Status::Error("reduce init values must be scalars of their inputs' types");
      NHLO_TRY(mask(b.operands[i], sizes, init.data));
    }
    NHLO_TRY(m.RunPlain(s));
    std::vector<int64_t> kept;
    for (size_t d = 0; d < sizes.size(); ++d)
      if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) kept.push_back(sizes[d]);
    const BufferRecord& r = comp.buffers.at(b.result);
    if (r.type != PrimitiveType::kTuple) return SetSizes(m, b.result, kept);
    for (uint32_t leaf : r.tuple) NHLO_TRY(SetSizes(m, leaf, kept));
    return OkStatus();
  }
  if (s.family == OpFamily::kBroadcast) {
    const std::vector<int64_t> sizes = RuntimeSizes(m, b.operands[0]);
    std::vector<int64_t> out = comp.buffers.at(b.result).dims;
    if (dims.size() != sizes.size()) return Status::Error("bundle 'broadcast' has invalid dimensions");
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0 || static_cast<size_t>(dims[i]) >= out.size())
        return Status::Error("bundle 'broadcast' has invalid dimensions");
      out[dims[i]] = sizes[i];
    }
    NHLO_TRY(m.RunPlain(s));
    return SetSizes(m, b.result, std::move(out));
  }
  if (s.family == OpFamily::kSlice) {
    // A slice over the whole of a dimension below its bound keeps its size. Any other cut
    // into it: XLA drops the dimension's dynamism and leaves the result's elements unspecified
    // (they would come from the padding), so it is refused.
    const AttrRecord* a = s.Find(AttrId::kSlice);
    const BufferRecord& x = comp.buffers.at(b.operands[0]);
    const std::vector<int64_t> sizes = RuntimeSizes(m, b.operands[0]);
    std::vector<int64_t> out = comp.buffers.at(b.result).dims;
    if (!a || a->slices().size() != sizes.size() || out.size() != sizes.size())
      return Status::Error("bundle 'slice' does not match its operand");
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == x.dims[d]) continue;
      const SliceDim& r = a->slices()[d];
      if (r.start != 0 || r.stride != 1 || r.limit != x.dims[d])
        return Status::Error("'slice' cuts into dimension " + std::to_string(d) + " of '" + std::string(x.name) +
                             "', which holds " + std::to_string(sizes[d]) + " of its " + std::to_string(x.dims[d]) +
                             " elements: XLA leaves such a result unspecified");
      out[d] = sizes[d];
    }
    NHLO_TRY(m.RunPlain(s));
    return SetSizes(m, b.result, std::move(out));
  }
  if (s.family == OpFamily::kTranspose) {
    const std::vector<int64_t> sizes = RuntimeSizes(m, b.operands[0]);
    std::vector<int64_t> out;
    for (int64_t d : dims) {
      if (d < 0 || static_cast<size_t>(d) >= sizes.size())
        return Status::Error("bundle 'transpose' has invalid dimensions");
      out.push_back(sizes[d]);
    }
    NHLO_TRY(m.RunPlain(s));
    return SetSizes(m, b.result, std::move(out));
  }
  if (s.family == OpFamily::kDot) {
    const DotDimensionNumbers& dims = DotDims(s);
    const DimIndexList lb = dims.lhs_batch, lc = dims.lhs_contracting, rb = dims.rhs_batch, rc = dims.rhs_contracting;
    std::vector<int64_t> ls = RuntimeSizes(m, b.operands[0]), rs = RuntimeSizes(m, b.operands[1]);
    auto in = [](const std::vector<int64_t>& v, int64_t d) { return d >= 0 && static_cast<size_t>(d) < v.size(); };
    if (lb.size() != rb.size() || lc.size() != rc.size())
      return Status::Error("bundle 'dot' has invalid dimension numbers");
    for (size_t i = 0; i < lc.size(); ++i) {
      if (!in(ls, lc[i]) || !in(rs, rc[i])) return Status::Error("bundle 'dot' has invalid dimension numbers");
      ls[lc[i]] = rs[rc[i]] = std::min(ls[lc[i]], rs[rc[i]]);  // zeros past the common size
    }
    static const uint8_t kZero[16] = {};
    NHLO_TRY(mask(b.operands[0], ls, kZero));
    NHLO_TRY(mask(b.operands[1], rs, kZero));
    NHLO_TRY(m.RunPlain(s));
    std::vector<int64_t> out;
    for (int64_t d : lb) {
      if (!in(ls, d)) return Status::Error("bundle 'dot' has invalid dimension numbers");
      out.push_back(ls[d]);
    }
    for (size_t d = 0; d < ls.size(); ++d)
      if (std::find(lb.begin(), lb.end(), int64_t(d)) == lb.end() &&
          std::find(lc.begin(), lc.end(), int64_t(d)) == lc.end())
        out.push_back(ls[d]);
    for (size_t d = 0; d < rs.size(); ++d)
      if (std::find(rb.begin(), rb.end(), int64_t(d)) == rb.end() &&
          std::find(rc.begin(), rc.end(), int64_t(d)) == rc.end())
        out.push_back(rs[d]);
    return SetSizes(m, b.result, std::move(out));
  }
  return Status::Error("bundle is not a sized step");
}

}  // namespace

// A step that touches a bounded buffer. Its result starts at the bound; the ops that move
// values whole (copies, tuples, calls, loops) carry the operands' sizes along, elementwise
// ops give their result the operands' sizes, and the dynamic-shape ops set them. Any other op
// on a value below its bound would compute over the padding: refused, naming the op.
Status RunWithSizes(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  if (s.family == OpFamily::kBound) return OkStatus();  // parameters keep the sizes bound with them
  std::vector<uint32_t> partial;
  for (uint32_t o : b.operands) PartialLeaves(m, o, partial);
  ClearSizes(m, b.result);
  bool moves_whole = false, elementwise = false, sized = false;
  switch (s.family) {
    case OpFamily::kDynamicShape: return m.RunPlain(s);
    case OpFamily::kCopy:
    case OpFamily::kTuple:
    case OpFamily::kGetTupleElement:
    case OpFamily::kAddDependency:
    case OpFamily::kCall:
    case OpFamily::kFusion:
    case OpFamily::kWhile:
    case OpFamily::kConditional:
    case OpFamily::kAsyncStart:
    case OpFamily::kAsyncUpdate:
    case OpFamily::kAsyncDone:
    case OpFamily::kCopyStart:
    case OpFamily::kCopyDone: moves_whole = true; break;
    case OpFamily::kTupleResult:
      moves_whole = s.custom_call == CustomCallKind::kIdentity || s.custom_call == CustomCallKind::kCallComputation ||
                    s.custom_call == CustomCallKind::kSliceToDynamic || s.custom_call == CustomCallKind::kPadToStatic;
      break;
    case OpFamily::kUnary:
    case OpFamily::kBinary:
    case OpFamily::kCompare:
    case OpFamily::kSelect:
    case OpFamily::kClamp:
    case OpFamily::kConvert:
    case OpFamily::kReducePrecision: elementwise = true; break;
    case OpFamily::kReduce:
    case OpFamily::kBroadcast:
    case OpFamily::kTranspose:
    case OpFamily::kSlice:
    case OpFamily::kDot: sized = true; break;
    case OpFamily::kNotExecutable:
    case OpFamily::kBound:
    case OpFamily::kAfterAll:
    case OpFamily::kScan:
    case OpFamily::kMap:
    case OpFamily::kScatter:
    case OpFamily::kSort:
    case OpFamily::kReduceWindow:
    case OpFamily::kBitcastConvert:
    case OpFamily::kReshape:
    case OpFamily::kIota:
    case OpFamily::kConcatenate:
    case OpFamily::kPad:
    case OpFamily::kReverse:
    case OpFamily::kDynamicSlice:
    case OpFamily::kDynamicUpdateSlice:
    case OpFamily::kGather:
    case OpFamily::kConvolution:
    case OpFamily::kScaledDot:
    case OpFamily::kRaggedDot:
    case OpFamily::kSelectAndScatter:
    case OpFamily::kRng:
    case OpFamily::kCholesky:
    case OpFamily::kTriangularSolve:
    case OpFamily::kFft:
    case OpFamily::kRngState:
    case OpFamily::kTransferIn:
    case OpFamily::kTransferOut:
    case OpFamily::kSend:
    case OpFamily::kRecvDone:
    case OpFamily::kStochasticConvert:
    case OpFamily::kCollective: break;
  }
  if (partial.empty() || moves_whole) return m.RunPlain(s);
  if (sized) return RunSized(s, m);
  std::vector<int64_t> sizes = m.SizesOf(partial[0]);
  auto holds = [&](uint32_t o) {
    std::string text = "'" + std::string(m.Running().buffers.at(o).name) + "' holds (";
    const std::vector<int64_t>& at = m.SizesOf(o);
    for (size_t d = 0; d < at.size(); ++d) text += (d ? "," : "") + std::to_string(at[d]);
    return text + ")";
  };
  const char* why =
      ": runtime sizes are carried by elementwise ops, copies, tuples, calls, reduce, broadcast, transpose, "
      "whole-dimension slices and dot only (docs/interpreter.md, bounded dynamic shapes)";
  if (!elementwise)
    return Status::Error("'" + std::string(OpcodeName(b.opcode)) + "' of a value below its bound (" +
                         holds(partial[0]) + ")" + why);
  for (uint32_t o : partial)
    if (m.SizesOf(o) != sizes)
      return Status::Error("operands of '" + std::string(OpcodeName(b.opcode)) + "' have different runtime sizes (" +
                           holds(partial[0]) + ", " + holds(o) + ")");
  NHLO_TRY(m.RunPlain(s));
  NHLO_TRY(SetSizes(m, b.result, sizes));
  return OkStatus();
}

// get-dimension-size, set-dimension-size (the bytes as they are, one size replaced, as XLA's
// evaluator does) and dynamic-reshape (the operand's elements inside its sizes, row-major,
// laid out at the result's bound).
Status RunDynamicShape(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const AttrRecord* dims = s.Find(AttrId::kDimensions);
  auto dimension = [&](const BufferRecord& of) -> Result<size_t> {
    if (!dims || dims->ints().size() != 1 || dims->ints()[0] < 0 ||
        static_cast<size_t>(dims->ints()[0]) >= of.dims.size())
      return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no valid dimension");
    return static_cast<size_t>(dims->ints()[0]);
  };
  auto scalar = [&](uint32_t buffer) -> Result<int64_t> {
    NHLO_ASSIGN_OR_RETURN(Buf v, m.ArrayOf(buffer));
    if (v.count() != 1 || !IsInteger(v.type())) return Status::Error("dynamic sizes must be integer scalars");
    return LoadIndex(v.type(), v.data);
  };
  if (b.opcode == Opcode::kGetDimensionSize) {
    NHLO_ASSIGN_OR_RETURN(size_t d, dimension(m.Running().buffers.at(b.operands[0])));
    NHLO_ASSIGN_OR_RETURN(Buf out, m.ArrayOf(b.result));
    if (out.type() != PrimitiveType::kS32 || out.count() != 1) return Status::Error("get-dimension-size returns s32[]");
    int32_t size = static_cast<int32_t>(RuntimeSizes(m, b.operands[0])[d]);
    std::memcpy(out.data, &size, 4);
    return OkStatus();
  }
  if (b.opcode == Opcode::kSetDimensionSize) {
    const BufferRecord& r = m.Running().buffers.at(b.result);
    NHLO_ASSIGN_OR_RETURN(size_t d, dimension(r));
    NHLO_ASSIGN_OR_RETURN(int64_t size, scalar(b.operands[1]));
    if (size < 0 || size > r.dims[d])
      return Status::Error("set-dimension-size " + std::to_string(size) + " is outside [0, " +
                           std::to_string(r.dims[d]) + "], the bound of dimension " + std::to_string(d));
    std::vector<int64_t> sizes = RuntimeSizes(m, b.operands[0]);
    if (sizes.size() != r.dims.size() || m.Running().buffers.at(b.operands[0]).dims != r.dims)
      return Status::Error("set-dimension-size operand does not have its result's bounds");
    sizes[d] = size;
    NHLO_TRY(m.CopyBuffer(b.operands[0], b.result));
    NHLO_TRY(SetSizes(m, b.result, std::move(sizes)));
    return OkStatus();
  }
  if (b.opcode == Opcode::kDynamicReshape) {
    const BufferRecord& r = m.Running().buffers.at(b.result);
    if (b.operands.size() != r.dims.size() + 1)
      return Status::Error("dynamic-reshape takes its operand and one size per result dimension");
    std::vector<int64_t> sizes;
    for (size_t i = 1; i < b.operands.size(); ++i) {
      NHLO_ASSIGN_OR_RETURN(int64_t v, scalar(b.operands[i]));
      sizes.push_back(v);
    }
    NHLO_ASSIGN_OR_RETURN(Buf x, m.ArrayOf(b.operands[0]));
    NHLO_ASSIGN_OR_RETURN(Buf out, m.ArrayOf(b.result));
    if (x.type() != out.type()) return Status::Error("dynamic-reshape changes the element type");
    NHLO_TRY(KernelDynamicReshape(x, RuntimeSizes(m, b.operands[0]), sizes, out));
    NHLO_TRY(SetSizes(m, b.result, std::move(sizes)));
    return OkStatus();
  }
  return Status::Error("bundle is not a dynamic-shape step");
}

// SliceToDynamic(data, sizes...): the data with those runtime sizes; PadToStatic(value):
// (its data at the bound with zeros past the sizes, the sizes as s32 scalars).
Status RunSliceToDynamic(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const BufferRecord& r = m.Running().buffers.at(b.result);
  if (b.operands.size() != r.dims.size() + 1 || !IsArrayType(r.type))
    return Status::Error("SliceToDynamic takes its data and one size per dimension");
  std::vector<int64_t> sizes;
  for (size_t i = 1; i < b.operands.size(); ++i) {
    NHLO_ASSIGN_OR_RETURN(Buf v, m.ArrayOf(b.operands[i]));
    if (v.count() != 1 || !IsInteger(v.type())) return Status::Error("SliceToDynamic sizes must be integer scalars");
    int64_t size = LoadIndex(v.type(), v.data);
    if (size < 0 || size > r.dims[i - 1])
      return Status::Error("SliceToDynamic size " + std::to_string(size) + " is outside [0, " +
                           std::to_string(r.dims[i - 1]) + "] in dimension " + std::to_string(i - 1));
    sizes.push_back(size);
  }
  NHLO_TRY(m.CopyBuffer(b.operands[0], b.result));
  NHLO_TRY(SetSizes(m, b.result, std::move(sizes)));
  return OkStatus();
}
Status RunPadToStatic(const Step& s, StepMachine& m) {
  const BundleRecord& b = *s.bundle;
  const BufferRecord& r = m.Running().buffers.at(b.result);
  if (b.operands.size() != 1 || r.type != PrimitiveType::kTuple || r.tuple.empty())
    return Status::Error("PadToStatic takes one value and returns (data, sizes...)");
  NHLO_ASSIGN_OR_RETURN(Buf x, m.ArrayOf(b.operands[0]));
  NHLO_ASSIGN_OR_RETURN(Buf data, m.ArrayOf(r.tuple[0]));
  if (data.type() != x.type() || Dims(data) != Dims(x) || r.tuple.size() != x.rank() + 1)
    return Status::Error("PadToStatic result does not fit its operand");
  std::vector<int64_t> sizes = RuntimeSizes(m, b.operands[0]);
  if (data.rec->size) std::memset(data.data, 0, data.rec->size);
  CopyBox(x.data, Dims(x), data.data, Dims(data), sizes, HostByteSize(x.type()));
  for (size_t d = 0; d < sizes.size(); ++d) {
    NHLO_ASSIGN_OR_RETURN(Buf out, m.ArrayOf(r.tuple[d + 1]));
    if (out.type() != PrimitiveType::kS32 || out.count() != 1) return Status::Error("PadToStatic sizes are s32[]");
    int32_t v = static_cast<int32_t>(sizes[d]);
    std::memcpy(out.data, &v, 4);
  }
  return OkStatus();
}

}  // namespace nhlo
