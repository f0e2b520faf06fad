// SPDX-License-Identifier: Apache-2.0
#include "ir/expanded_calls.h"

#include "ir/block_scaling.h"
#include "ir/custom_calls.h"
#include "ir/expansion_builder.h"
#include "ir/gpu_attention_calls.h"
#include "ir/gpu_library_calls.h"
#include "ir/gpu_sort_calls.h"
#include "ir/host_callbacks.h"

namespace nhlo {
namespace {

// What an expanded kind checks and how its expansion is built.
struct ExpandedCallRow {
  Status (*check)(const Instruction&);
  Result<Instruction*> (*build)(ExpansionBuilder&, const Instruction&);
};

// The row of `call`'s kind; null for a kind that runs without an expansion.
const ExpandedCallRow* RowOf(const Instruction& call) {
  static constexpr ExpandedCallRow kQuantize{CheckBlockQuantize, BuildBlockQuantize};
  static constexpr ExpandedCallRow kDequantize{CheckBlockDequantize, BuildBlockDequantize};
  static constexpr ExpandedCallRow kScaledDot{CheckBlockScaledDot, BuildBlockScaledDot};
  static constexpr ExpandedCallRow kGemm{CheckGemmCall, BuildGemmCall};
  static constexpr ExpandedCallRow kConv{CheckConvCall, BuildConvCall};
  static constexpr ExpandedCallRow kCubSort{CheckCubSortCall, BuildCubSortCall};
  static constexpr ExpandedCallRow kFmha{CheckFmhaCall, BuildFmhaCall};
  static constexpr ExpandedCallRow kHostCallback{CheckHostCallback, BuildHostCallback};
  switch (CustomCallKindOf(call)) {
    case CustomCallKind::kBlockQuantize: return &kQuantize;
    case CustomCallKind::kBlockDequantize: return &kDequantize;
    case CustomCallKind::kBlockScaledDot: return &kScaledDot;
    case CustomCallKind::kCublasGemm: return &kGemm;
    case CustomCallKind::kCudnnConv: return &kConv;
    case CustomCallKind::kCubSort: return &kCubSort;
    case CustomCallKind::kCudnnFmha: return &kFmha;
    case CustomCallKind::kHostCallback: return &kHostCallback;
    case CustomCallKind::kNone:
    case CustomCallKind::kUnknown:
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize:
    case CustomCallKind::kQuantizeMx:
    case CustomCallKind::kScaledMatmul:
    case CustomCallKind::kIdentity:
    case CustomCallKind::kShardShape:
    case CustomCallKind::kTopK:
    case CustomCallKind::kCallComputation:
    case CustomCallKind::kBuilderMath:
    case CustomCallKind::kEinsum:
    case CustomCallKind::kMatrixDiagonal:
    case CustomCallKind::kScramblePhiloxKey:
    case CustomCallKind::kTridiagonalSolve:
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kPadToStatic:
    case CustomCallKind::kThreefry2x32:
    case CustomCallKind::kLu:
    case CustomCallKind::kCholesky:
    case CustomCallKind::kQr:
    case CustomCallKind::kQrQ:
    case CustomCallKind::kPivotsToPermutation:
    case CustomCallKind::kTriangularSolve:
    case CustomCallKind::kEigh:
    case CustomCallKind::kSvd:
    case CustomCallKind::kGtsv:
    case CustomCallKind::kEig:
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin:
    case CustomCallKind::kShadowProbe: break;
  }
  return nullptr;
}

Status NotExpanded(const Instruction& call) {
  return Status::Error("compiler bug: '" + std::string(CustomCallTarget(call)) + "' has no expansion");
}

}  // namespace

Status CheckExpandedCall(const Instruction& call) {
  const ExpandedCallRow* row = RowOf(call);
  return row ? row->check(call) : NotExpanded(call);
}

Result<Computation*> ExpandCall(Module& module, const Instruction& call, std::vector<Computation*>& added) {
  const ExpandedCallRow* row = RowOf(call);
  if (!row) return NotExpanded(call);
  NHLO_TRY(row->check(call));
  Computation* comp = ExpansionBuilder::NewComputation(module, call, "expansion");
  ExpansionBuilder x(module, call, comp);
  NHLO_ASSIGN_OR_RETURN(Instruction * root, row->build(x, call));
  x.Finish(root, added);
  return comp;
}

}  // namespace nhlo
