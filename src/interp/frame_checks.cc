// SPDX-License-Identifier: Apache-2.0
#include "interp/frame_checks.h"

#include <algorithm>
#include <vector>

namespace nhlo {

uint64_t RequiredAlignment(PrimitiveType type) {
  uint64_t size = static_cast<uint64_t>(std::max(HostByteSize(type), 1));
  uint64_t align = 1;
  while (align < size && align < 8) align *= 2;
  return align;
}

Status CheckFrameAlignment(const ComputationRecord& comp) {
  for (const BufferRecord& b : comp.buffers) {
    if (b.kind != BufferKind::kTemp || !IsArrayType(b.type)) continue;
    if (b.location % RequiredAlignment(b.type) != 0)
      return Status::Error("buffer '" + std::string(b.name) + "' of '" + std::string(comp.name) + "' at frame offset " +
                           std::to_string(b.location) + " is not aligned for " +
                           std::string(PrimitiveTypeName(b.type)));
  }
  return OkStatus();
}

uint64_t FrameAlignment(const ComputationRecord& comp) {
  uint64_t align = 1;
  for (const BufferRecord& b : comp.buffers)
    if (b.kind == BufferKind::kTemp && IsArrayType(b.type) && b.size > 0)
      align = std::max(align, RequiredAlignment(b.type));
  return align;
}

Result<uint64_t> CheckCalleeFrameAlignment(const BundleRecord& b, const std::vector<uint64_t>& frame_alignment) {
  uint64_t need = 1;
  for (const AttrRecord& a : b.attrs)
    for (uint32_t callee : a.computations()) need = std::max(need, frame_alignment[callee]);
  if (b.callee_frame % need != 0)
    return Status::Error("callees' frame at offset " + std::to_string(b.callee_frame) + " is not aligned to the " +
                         std::to_string(need) + " bytes its temps need");
  return need;
}

namespace {

struct ByteRange {
  uint64_t begin = 0, end = 0;
  uint32_t buffer = 0;
};

// The frame bytes of the array leaves of buffer `index` (tuples walked with an explicit stack:
// a file may nest tuples as deep as it has buffers).
void AppendTempLeaves(const ComputationRecord& comp, uint32_t index, std::vector<ByteRange>& out,
                      std::vector<uint32_t>& stack) {
  stack.assign(1, index);
  while (!stack.empty()) {
    const BufferRecord& b = comp.buffers[stack.back()];
    uint32_t current = stack.back();
    stack.pop_back();
    if (b.type == PrimitiveType::kTuple) {
      stack.insert(stack.end(), b.tuple.begin(), b.tuple.end());
      continue;
    }
    if (b.kind == BufferKind::kTemp && b.size > 0) out.push_back({b.location, b.location + b.size, current});
  }
}

bool MayWriteInPlace(OpFamily family) {
  switch (family) {
    case OpFamily::kUnary:
    case OpFamily::kBinary:
    case OpFamily::kCompare:
    case OpFamily::kSelect:
    case OpFamily::kClamp:
    case OpFamily::kConvert:
    case OpFamily::kCopy:  // copy: a memmove
    case OpFamily::kReducePrecision:
    case OpFamily::kAddDependency:  // add-dependency: a memmove
    case OpFamily::kReshape:        // reshape and bitcast: a memmove, none when aliased; a layout
                                    // bitcast permutes through a copy of its operand
      return true;
    case OpFamily::kNotExecutable:
    case OpFamily::kBound:
    case OpFamily::kAfterAll:
    case OpFamily::kTuple:
    case OpFamily::kGetTupleElement:
    case OpFamily::kTupleResult:
    case OpFamily::kCall:
    case OpFamily::kFusion:
    case OpFamily::kWhile:
    case OpFamily::kConditional:
    case OpFamily::kScan:
    case OpFamily::kReduce:
    case OpFamily::kMap:
    case OpFamily::kScatter:
    case OpFamily::kSort:
    case OpFamily::kReduceWindow:
    case OpFamily::kBitcastConvert:
    case OpFamily::kBroadcast:
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
    case OpFamily::kDynamicShape:
    case OpFamily::kTransferIn:
    case OpFamily::kTransferOut:
    case OpFamily::kSend:
    case OpFamily::kRecvDone:
    case OpFamily::kStochasticConvert:
    case OpFamily::kCollective:
    case OpFamily::kAsyncStart:
    case OpFamily::kAsyncUpdate:
    case OpFamily::kAsyncDone:
    case OpFamily::kCopyStart:
    case OpFamily::kCopyDone: return false;
  }
  return false;
}

}  // namespace

Status CheckBundlePlacement(const BundleProgram& program, const ComputationRecord& comp, const BundleRecord& b,
                            OpFamily family) {
  // A tuple or get-tuple-element result names its operands' buffers: it writes nothing.
  if (family == OpFamily::kTuple || family == OpFamily::kGetTupleElement || family == OpFamily::kBound ||
      family == OpFamily::kAfterAll)
    return OkStatus();
  std::vector<ByteRange> written, read;
  std::vector<uint32_t> stack;
  AppendTempLeaves(comp, b.result, written, stack);
  for (uint32_t operand : b.operands) AppendTempLeaves(comp, operand, read, stack);
  // The callees' frame is written while the bundle runs.
  uint64_t callee_end = 0;
  for (const AttrRecord& a : b.attrs)
    for (uint32_t callee : a.computations()) callee_end = std::max(callee_end, program.computations[callee].frame_size);
  if (callee_end > 0) written.push_back({b.callee_frame, b.callee_frame + callee_end, UINT32_MAX});
  auto name = [&](uint32_t buffer) {
    return buffer == UINT32_MAX ? std::string("the callees' frame")
                                : "'" + std::string(comp.buffers[buffer].name) + "'";
  };
  auto error = [&](const ByteRange& w, const ByteRange& r, const char* what) {
    return Status::Error("bundle '" + std::string(OpcodeName(b.opcode)) + "' of '" + std::string(comp.name) +
                         "' places " + name(w.buffer) + " over " + name(r.buffer) + ", which it " + what);
  };
  auto by_begin = [](const ByteRange& x, const ByteRange& y) { return x.begin < y.begin; };
  std::sort(written.begin(), written.end(), by_begin);
  for (size_t i = 1; i < written.size(); ++i)
    if (written[i].begin < written[i - 1].end) return error(written[i], written[i - 1], "also writes");
  // `written` is now disjoint and sorted, so its ends are sorted too: each read range finds the
  // written ranges it meets by binary search.
  const bool in_place = MayWriteInPlace(family);
  for (const ByteRange& r : read) {
    auto it = std::upper_bound(written.begin(), written.end(), r.begin,
                               [](uint64_t at, const ByteRange& w) { return at < w.end; });
    for (; it != written.end() && it->begin < r.end; ++it) {
      bool exact = it->begin == r.begin && it->end == r.end && it->buffer != UINT32_MAX &&
                   HostByteSize(comp.buffers[it->buffer].type) == HostByteSize(comp.buffers[r.buffer].type);
      if (!(in_place && exact)) return error(*it, r, "reads");
    }
  }
  return OkStatus();
}

}  // namespace nhlo
