// SPDX-License-Identifier: Apache-2.0
#include "interp/op_table.h"

// A missing opcode is a compile error, not a run-time surprise.
#pragma GCC diagnostic error "-Wswitch"

namespace nhlo {

OpExecution ExecutionOf(Opcode op) {
  switch (op) {
    case Opcode::kAbs: return {OpFamily::kUnary, {}};
    case Opcode::kAcos: return {OpFamily::kUnary, {}};
    case Opcode::kAcosh: return {OpFamily::kUnary, {}};
    case Opcode::kAdd: return {OpFamily::kBinary, {}};
    case Opcode::kAddDependency: return {OpFamily::kAddDependency, {}};
    case Opcode::kAfterAll: return {OpFamily::kAfterAll, {}};
    case Opcode::kAllGather: return {OpFamily::kCollective, {}};
    case Opcode::kAllGatherDone: return {OpFamily::kCollective, {}};
    case Opcode::kAllGatherStart: return {OpFamily::kCollective, {}};
    case Opcode::kAllReduce: return {OpFamily::kCollective, {}};
    case Opcode::kAllReduceDone: return {OpFamily::kCollective, {}};
    case Opcode::kAllReduceStart: return {OpFamily::kCollective, {}};
    case Opcode::kAllToAll: return {OpFamily::kCollective, {}};
    case Opcode::kAnd: return {OpFamily::kBinary, {}};
    case Opcode::kAsin: return {OpFamily::kUnary, {}};
    case Opcode::kAsinh: return {OpFamily::kUnary, {}};
    case Opcode::kAsyncDone: return {OpFamily::kAsync, {}};
    case Opcode::kAsyncStart: return {OpFamily::kAsync, {}};
    case Opcode::kAsyncUpdate: return {OpFamily::kAsync, {}};
    case Opcode::kAtan2: return {OpFamily::kBinary, {}};
    case Opcode::kAtanh: return {OpFamily::kUnary, {}};
    case Opcode::kBatchNormGrad: return {OpFamily::kTupleResult, {}};
    case Opcode::kBatchNormInference: return {OpFamily::kTupleResult, {}};
    case Opcode::kBatchNormTraining: return {OpFamily::kTupleResult, {}};
    case Opcode::kBitcast: return {OpFamily::kReshape, {}};
    case Opcode::kBitcastConvert: return {OpFamily::kBitcastConvert, {}};
    case Opcode::kBroadcast: return {OpFamily::kBroadcast, {}};
    case Opcode::kCall: return {OpFamily::kCall, {}};
    case Opcode::kCbrt: return {OpFamily::kUnary, {}};
    case Opcode::kCeil: return {OpFamily::kUnary, {}};
    case Opcode::kCholesky: return {OpFamily::kCholesky, {}};
    case Opcode::kClamp: return {OpFamily::kClamp, {}};
    case Opcode::kCollectiveBroadcast: return {OpFamily::kCollective, {}};
    case Opcode::kCollectivePermute: return {OpFamily::kCollective, {}};
    case Opcode::kCollectivePermuteDone: return {OpFamily::kCollective, {}};
    case Opcode::kCollectivePermuteStart: return {OpFamily::kCollective, {}};
    case Opcode::kCompare: return {OpFamily::kCompare, {}};
    case Opcode::kComplex: return {OpFamily::kBinary, {}};
    case Opcode::kConcatenate: return {OpFamily::kConcatenate, {}};
    case Opcode::kConditional: return {OpFamily::kConditional, {}};
    case Opcode::kConstant: return {OpFamily::kBound, {}};
    case Opcode::kConvert: return {OpFamily::kConvert, {}};
    case Opcode::kConvolution: return {OpFamily::kConvolution, {}};
    case Opcode::kCopy: return {OpFamily::kCopy, {}};
    case Opcode::kCopyDone: return {OpFamily::kAsync, {}};
    case Opcode::kCopyStart: return {OpFamily::kAsync, {}};
    case Opcode::kCosh: return {OpFamily::kUnary, {}};
    case Opcode::kCos: return {OpFamily::kUnary, {}};
    case Opcode::kClz: return {OpFamily::kUnary, {}};
    case Opcode::kCustomCall: return {OpFamily::kTupleResult, {}};
    case Opcode::kDivide: return {OpFamily::kBinary, {}};
    case Opcode::kDomain: return {OpFamily::kCopy, {}};  // a sharding-domain marker: the value unchanged
    case Opcode::kDot: return {OpFamily::kDot, {}};
    case Opcode::kDynamicReshape: return {OpFamily::kDynamicShape, {}};
    case Opcode::kDynamicSlice: return {OpFamily::kDynamicSlice, {}};
    case Opcode::kDynamicUpdateSlice: return {OpFamily::kDynamicUpdateSlice, {}};
    case Opcode::kErf: return {OpFamily::kUnary, {}};
    case Opcode::kExp: return {OpFamily::kUnary, {}};
    case Opcode::kExpm1: return {OpFamily::kUnary, {}};
    case Opcode::kFft: return {OpFamily::kFft, {}};
    case Opcode::kFloor: return {OpFamily::kUnary, {}};
    case Opcode::kFusion: return {OpFamily::kFusion, {}};
    case Opcode::kGather: return {OpFamily::kGather, {}};
    case Opcode::kGetDimensionSize: return {OpFamily::kDynamicShape, {}};
    case Opcode::kGetTupleElement: return {OpFamily::kGetTupleElement, {}};
    case Opcode::kImag: return {OpFamily::kUnary, {}};
    case Opcode::kInfeed: return {OpFamily::kTransfer, {}};
    case Opcode::kIota: return {OpFamily::kIota, {}};
    case Opcode::kIsFinite: return {OpFamily::kUnary, {}};
    case Opcode::kLog: return {OpFamily::kUnary, {}};
    case Opcode::kLog1p: return {OpFamily::kUnary, {}};
    case Opcode::kLogistic: return {OpFamily::kUnary, {}};
    case Opcode::kMap: return {OpFamily::kMap, {}};
    case Opcode::kMaximum: return {OpFamily::kBinary, {}};
    case Opcode::kMinimum: return {OpFamily::kBinary, {}};
    case Opcode::kMulhi: return {OpFamily::kBinary, {}};
    case Opcode::kMultiply: return {OpFamily::kBinary, {}};
    case Opcode::kNegate: return {OpFamily::kUnary, {}};
    case Opcode::kNot: return {OpFamily::kUnary, {}};
    case Opcode::kOptimizationBarrier: return {OpFamily::kCopy, {}};
    case Opcode::kOr: return {OpFamily::kBinary, {}};
    case Opcode::kOutfeed: return {OpFamily::kTransfer, {}};
    case Opcode::kPad: return {OpFamily::kPad, {}};
    case Opcode::kParameter: return {OpFamily::kBound, {}};
    case Opcode::kPartitionId: return {OpFamily::kCollective, {}};
    case Opcode::kPopulationCount: return {OpFamily::kUnary, {}};
    case Opcode::kPower: return {OpFamily::kBinary, {}};
    case Opcode::kRaggedAllToAll: return {OpFamily::kCollective, {}};
    case Opcode::kRaggedDot: return {OpFamily::kRaggedDot, {}};
    case Opcode::kReal: return {OpFamily::kUnary, {}};
    case Opcode::kRecv: return {OpFamily::kTransfer, {}};
    case Opcode::kRecvDone: return {OpFamily::kTransfer, {}};
    case Opcode::kReduce: return {OpFamily::kReduce, {}};
    case Opcode::kReducePrecision: return {OpFamily::kReducePrecision, {}};
    case Opcode::kReduceScatter: return {OpFamily::kCollective, {}};
    case Opcode::kReduceWindow: return {OpFamily::kReduceWindow, {}};
    case Opcode::kRemainder: return {OpFamily::kBinary, {}};
    case Opcode::kReplicaId: return {OpFamily::kCollective, {}};
    case Opcode::kReshape: return {OpFamily::kReshape, {}};
    case Opcode::kReverse: return {OpFamily::kReverse, {}};
    case Opcode::kRng: return {OpFamily::kRng, {}};
    case Opcode::kRngBitGenerator: return {OpFamily::kTupleResult, {}};
    case Opcode::kRngGetAndUpdateState: return {OpFamily::kRngState, {}};
    case Opcode::kRoundNearestAfz: return {OpFamily::kUnary, {}};
    case Opcode::kRoundNearestEven: return {OpFamily::kUnary, {}};
    case Opcode::kRsqrt: return {OpFamily::kUnary, {}};
    case Opcode::kScaledDot: return {OpFamily::kScaledDot, {}};
    case Opcode::kScan: return {OpFamily::kScan, {}};
    case Opcode::kScatter: return {OpFamily::kScatter, {}};
    case Opcode::kSelect: return {OpFamily::kSelect, {}};
    case Opcode::kSelectAndScatter: return {OpFamily::kSelectAndScatter, {}};
    case Opcode::kSend: return {OpFamily::kTransfer, {}};
    case Opcode::kSendDone: return {OpFamily::kTransfer, {}};
    case Opcode::kSetDimensionSize: return {OpFamily::kDynamicShape, {}};
    case Opcode::kShiftLeft: return {OpFamily::kBinary, {}};
    case Opcode::kShiftRightArithmetic: return {OpFamily::kBinary, {}};
    case Opcode::kShiftRightLogical: return {OpFamily::kBinary, {}};
    case Opcode::kSign: return {OpFamily::kUnary, {}};
    case Opcode::kSin: return {OpFamily::kUnary, {}};
    case Opcode::kSinh: return {OpFamily::kUnary, {}};
    case Opcode::kSlice: return {OpFamily::kSlice, {}};
    case Opcode::kSort: return {OpFamily::kSort, {}};
    case Opcode::kSqrt: return {OpFamily::kUnary, {}};
    case Opcode::kStochasticConvert: return {OpFamily::kStochasticConvert, {}};
    case Opcode::kSubtract: return {OpFamily::kBinary, {}};
    case Opcode::kTan: return {OpFamily::kUnary, {}};
    case Opcode::kTanh: return {OpFamily::kUnary, {}};
    case Opcode::kTopK: return {OpFamily::kTupleResult, {}};
    case Opcode::kTranspose: return {OpFamily::kTranspose, {}};
    case Opcode::kTriangularSolve: return {OpFamily::kTriangularSolve, {}};
    case Opcode::kTuple: return {OpFamily::kTuple, {}};
    case Opcode::kWhile: return {OpFamily::kWhile, {}};
    case Opcode::kXor: return {OpFamily::kBinary, {}};
  }
  return {OpFamily::kNotExecutable, "unknown opcode"};
}

}  // namespace nhlo
