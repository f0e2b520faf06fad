// SPDX-License-Identifier: Apache-2.0
#include "interp/dynamic_steps.h"

#include <cstring>
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

// The bytes of one array buffer into another of the same size.
Status CopyBytes(StepMachine& m, uint32_t from, uint32_t to) {
  NHLO_ASSIGN_OR_RETURN(Buf x, m.ArrayOf(from));
  NHLO_ASSIGN_OR_RETURN(Buf out, m.ArrayOf(to));
  if (x.rec->size != out.rec->size) return Status::Error("bundle copies between buffers of different sizes");
  if (x.data != out.data && out.rec->size) std::memmove(out.data, x.data, out.rec->size);
  return OkStatus();
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
  bool moves_whole = false, elementwise = false;
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
    case OpFamily::kAsync: moves_whole = true; break;
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
    case OpFamily::kNotExecutable:
    case OpFamily::kBound:
    case OpFamily::kAfterAll:
    case OpFamily::kScan:
    case OpFamily::kReduce:
    case OpFamily::kMap:
    case OpFamily::kScatter:
    case OpFamily::kSort:
    case OpFamily::kReduceWindow:
    case OpFamily::kBitcastConvert:
    case OpFamily::kBroadcast:
    case OpFamily::kReshape:
    case OpFamily::kTranspose:
    case OpFamily::kIota:
    case OpFamily::kSlice:
    case OpFamily::kConcatenate:
    case OpFamily::kPad:
    case OpFamily::kReverse:
    case OpFamily::kDynamicSlice:
    case OpFamily::kDynamicUpdateSlice:
    case OpFamily::kDot:
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
    case OpFamily::kTransfer:
    case OpFamily::kStochasticConvert:
    case OpFamily::kCollective: break;
  }
  if (partial.empty() || moves_whole) return m.RunPlain(s);
  std::vector<int64_t> sizes = m.SizesOf(partial[0]);
  auto holds = [&](uint32_t o) {
    std::string text = "'" + std::string(m.Running().buffers.at(o).name) + "' holds (";
    const std::vector<int64_t>& at = m.SizesOf(o);
    for (size_t d = 0; d < at.size(); ++d) text += (d ? "," : "") + std::to_string(at[d]);
    return text + ")";
  };
  const char* why =
      ": only elementwise ops, copies, tuples and calls carry runtime sizes yet (docs/interpreter.md, "
      "bounded dynamic shapes)";
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
    if (!dims || dims->ints.size() != 1 || dims->ints[0] < 0 || static_cast<size_t>(dims->ints[0]) >= of.dims.size())
      return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' has no valid dimension");
    return static_cast<size_t>(dims->ints[0]);
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
    NHLO_TRY(CopyBytes(m, b.operands[0], b.result));
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
  NHLO_TRY(CopyBytes(m, b.operands[0], b.result));
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
  std::memset(data.data, 0, data.rec->size);
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
