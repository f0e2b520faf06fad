// SPDX-License-Identifier: Apache-2.0
#include "ir/opcode_attrs.h"

#include <bitset>

namespace nhlo {
namespace {

using A = AttrId;

struct AttrSpec {
  std::vector<AttrId> allowed;
  std::vector<AttrId> required;
};

// Attributes every instruction may carry (HLO_GRAMMAR.md §7).
bool IsGeneric(AttrId id) {
  switch (id) {
    case A::kSharding:
    case A::kFrontendAttributes:
    case A::kStatistics:
    case A::kParameterReplication:
    case A::kControlPredecessors:
    case A::kOrigin:
    case A::kMetadata:
    case A::kBackendConfig: return true;
    default: return false;
  }
}

const std::vector<AttrId> kDotAttrs = {A::kLhsBatchDims,       A::kLhsContractingDims, A::kRhsBatchDims,
                                       A::kRhsContractingDims, A::kOperandPrecision,   A::kAlgorithm};
const std::vector<AttrId> kCollectiveAttrs = {A::kReplicaGroups, A::kChannelId, A::kConstrainLayout,
                                              A::kUseGlobalDeviceIds, A::kMode};

AttrSpec SpecFor(Opcode op) {
  switch (op) {
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kCbrt:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kSinh:
    case Opcode::kCosh:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kErf: return {{A::kResultAccuracy}, {}};
    case Opcode::kCompare: return {{A::kDirection, A::kType}, {A::kDirection}};
    case Opcode::kReducePrecision: return {{A::kExponentBits, A::kMantissaBits}, {A::kExponentBits, A::kMantissaBits}};
    case Opcode::kMap: return {{A::kToApply, A::kDimensions}, {A::kToApply}};
    case Opcode::kIota: return {{A::kIotaDimension}, {A::kIotaDimension}};
    case Opcode::kBroadcast: return {{A::kDimensions}, {}};
    case Opcode::kReshape: return {{A::kInferredDimension}, {}};
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize: return {{A::kDimensions}, {A::kDimensions}};
    case Opcode::kSlice: return {{A::kSlice}, {A::kSlice}};
    case Opcode::kDynamicSlice: return {{A::kDynamicSliceSizes}, {A::kDynamicSliceSizes}};
    case Opcode::kPad: return {{A::kPadding}, {A::kPadding}};
    case Opcode::kGather:
      return {{A::kOffsetDims, A::kCollapsedSliceDims, A::kStartIndexMap, A::kIndexVectorDim, A::kSliceSizes,
               A::kIndicesAreSorted, A::kOperandBatchingDims, A::kStartIndicesBatchingDims},
              {A::kOffsetDims, A::kCollapsedSliceDims, A::kStartIndexMap, A::kIndexVectorDim, A::kSliceSizes}};
    case Opcode::kScatter:
      return {
          {A::kUpdateWindowDims, A::kInsertedWindowDims, A::kScatterDimsToOperandDims, A::kIndexVectorDim, A::kToApply,
           A::kIndicesAreSorted, A::kUniqueIndices, A::kInputBatchingDims, A::kScatterIndicesBatchingDims},
          {A::kUpdateWindowDims, A::kInsertedWindowDims, A::kScatterDimsToOperandDims, A::kIndexVectorDim,
           A::kToApply}};
    case Opcode::kGetTupleElement: return {{A::kIndex}, {A::kIndex}};
    case Opcode::kCopyStart: return {{A::kCrossProgramPrefetchIndex}, {}};
    case Opcode::kDomain: return {{A::kDomainAttr}, {A::kDomainAttr}};
    case Opcode::kTopK: return {{A::kK, A::kLargest, A::kIsStable}, {A::kK}};
    case Opcode::kReduce: return {{A::kDimensions, A::kToApply}, {A::kDimensions, A::kToApply}};
    case Opcode::kReduceWindow: return {{A::kWindow, A::kToApply}, {A::kToApply}};
    case Opcode::kSelectAndScatter: return {{A::kWindow, A::kSelect, A::kScatter}, {A::kSelect, A::kScatter}};
    case Opcode::kSort: return {{A::kDimensions, A::kToApply, A::kIsStable}, {A::kDimensions, A::kToApply}};
    case Opcode::kScan:
      return {{A::kToApply, A::kDimensions, A::kNumCarries, A::kIsReverse, A::kIsAssociative},
              {A::kToApply, A::kDimensions}};
    case Opcode::kDot: return {kDotAttrs, {}};
    case Opcode::kScaledDot: return {kDotAttrs, {}};
    case Opcode::kRaggedDot: {
      std::vector<AttrId> a = kDotAttrs;
      a.push_back(A::kLhsRaggedDims);
      a.push_back(A::kRhsGroupDims);
      return {a, {}};
    }
    case Opcode::kConvolution:
      return {{A::kDimLabels, A::kWindow, A::kFeatureGroupCount, A::kBatchGroupCount, A::kConvolutionKind,
               A::kOperandPrecision, A::kAlgorithm, A::kSparsityConfig},
              {A::kDimLabels}};
    case Opcode::kFft: return {{A::kFftType, A::kFftLength}, {A::kFftType, A::kFftLength}};
    case Opcode::kTriangularSolve: return {{A::kLeftSide, A::kLower, A::kUnitDiagonal, A::kTransposeA}, {}};
    case Opcode::kCholesky: return {{A::kLower}, {}};
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: return {{A::kEpsilon, A::kFeatureIndex}, {A::kEpsilon, A::kFeatureIndex}};
    case Opcode::kCall: return {{A::kToApply, A::kIsComposite}, {A::kToApply}};
    case Opcode::kFusion: return {{A::kKind, A::kCalls, A::kOutputToOperandAliasing}, {A::kKind, A::kCalls}};
    case Opcode::kWhile: return {{A::kCondition, A::kBody}, {A::kCondition, A::kBody}};
    case Opcode::kConditional: return {{A::kTrueComputation, A::kFalseComputation, A::kBranchComputations}, {}};
    case Opcode::kCustomCall:
      return {{A::kCustomCallTarget, A::kWindow, A::kDimLabels, A::kFeatureGroupCount, A::kBatchGroupCount,
               A::kOperandLayoutConstraints, A::kCustomCallHasSideEffect, A::kToApply, A::kCalledComputations,
               A::kOutputToOperandAliasing, A::kPaddingType, A::kLiteralAttr, A::kOperandPrecision, A::kSchedule,
               A::kApiVersion},
              {A::kCustomCallTarget}};
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: {
      std::vector<AttrId> a = kCollectiveAttrs;
      a.push_back(A::kToApply);
      return {a, {A::kToApply}};
    }
    case Opcode::kReduceScatter: {
      std::vector<AttrId> a = kCollectiveAttrs;
      a.push_back(A::kToApply);
      a.push_back(A::kDimensions);
      return {a, {A::kToApply, A::kDimensions}};
    }
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart: {
      std::vector<AttrId> a = kCollectiveAttrs;
      a.push_back(A::kDimensions);
      return {a, {A::kDimensions}};
    }
    case Opcode::kAllToAll: return {{A::kReplicaGroups, A::kChannelId, A::kDimensions, A::kConstrainLayout}, {}};
    case Opcode::kRaggedAllToAll: return {{A::kReplicaGroups, A::kChannelId, A::kDimensions}, {}};
    case Opcode::kCollectiveBroadcast: return {{A::kReplicaGroups, A::kChannelId, A::kHasDynamicRoot}, {}};
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return {{A::kSourceTargetPairs, A::kChannelId, A::kSliceSizes}, {A::kSourceTargetPairs}};
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone: return {{A::kChannelId, A::kIsHostTransfer}, {}};
    case Opcode::kInfeed: return {{A::kInfeedConfig}, {}};
    case Opcode::kOutfeed: return {{A::kOutfeedShape, A::kOutfeedConfig}, {}};
    case Opcode::kRng: return {{A::kDistribution}, {A::kDistribution}};
    case Opcode::kRngBitGenerator: return {{A::kAlgorithm}, {A::kAlgorithm}};
    case Opcode::kRngGetAndUpdateState: return {{A::kDelta}, {A::kDelta}};
    case Opcode::kAsyncStart: return {{A::kCalls, A::kAsyncExecutionThread, A::kOutputToOperandAliasing}, {A::kCalls}};
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone: return {{A::kCalls, A::kAsyncExecutionThread}, {}};
    default: return {};
  }
}

// The per-opcode answers, computed once: the parser asks for every attribute it reads.
struct Table {
  std::bitset<kAttrCount> allowed[kOpcodeCount];
  std::vector<AttrId> required[kOpcodeCount];
  Table() {
    for (int op = 0; op < kOpcodeCount; ++op) {
      AttrSpec spec = SpecFor(static_cast<Opcode>(op));
      for (AttrId id : spec.allowed) allowed[op].set(static_cast<size_t>(id));
      for (size_t id = 0; id < kAttrCount; ++id)
        if (IsGeneric(static_cast<AttrId>(id))) allowed[op].set(id);
      required[op] = std::move(spec.required);
    }
  }
};

const Table& GetTable() {
  static const Table* table = new Table();
  return *table;
}

}  // namespace

bool AttrAllowed(Opcode op, AttrId id) {
  return GetTable().allowed[static_cast<int>(op)].test(static_cast<size_t>(id));
}

const std::vector<AttrId>& RequiredAttrs(Opcode op) { return GetTable().required[static_cast<int>(op)]; }

int AttrPrintRank(Opcode op, AttrId id) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      switch (id) {
        case A::kChannelId: return -6;
        case A::kReplicaGroups: return -5;
        case A::kSourceTargetPairs: return -4;
        case A::kConstrainLayout: return -3;
        case A::kDimensions: return -2;
        case A::kUseGlobalDeviceIds: return -1;
        default: break;
      }
      break;
    case Opcode::kTopK:  // XLA's HloTopKInstruction: k, largest, then is_stable
      if (id == A::kK) return -3;
      if (id == A::kLargest) return -2;
      if (id == A::kIsStable) return -1;
      break;
    case Opcode::kCall:  // XLA prints a composite call's is_composite=true right after to_apply
      if (id == A::kIsComposite) return 2 * static_cast<int>(A::kToApply) + 1;
      break;
    default: break;
  }
  return 2 * static_cast<int>(id);
}

}  // namespace nhlo
