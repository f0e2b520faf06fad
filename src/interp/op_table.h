// SPDX-License-Identifier: Apache-2.0
// How the interpreter executes each opcode: the family of step that runs it, or why it cannot.
// The family is opcodes.def's column (a new opcode names its family in its row), read once per
// bundle when a program is loaded.
#pragma once

#include <string_view>

#include "types/opcode.h"

namespace nhlo {

/// The kinds of step the interpreter has; each names one routine of the executor.
enum class OpFamily : uint8_t {
  kNotExecutable,
  kBound,  // parameter, constant: bound before the run
  kTuple,
  kGetTupleElement,
  kCopy,
  kTupleResult,
  kCall,
  kFusion,
  kWhile,
  kConditional,
  kScan,
  kReduce,
  kMap,
  kScatter,
  kSort,
  kReduceWindow,
  kUnary,
  kBinary,
  kCompare,
  kSelect,
  kClamp,
  kConvert,
  kBitcastConvert,
  kBroadcast,
  kReshape,
  kTranspose,
  kIota,
  kSlice,
  kConcatenate,
  kPad,
  kReverse,
  kDynamicSlice,
  kDynamicUpdateSlice,
  kDot,
  kGather,
  kConvolution,
  kScaledDot,
  kRaggedDot,
  kReducePrecision,
  kSelectAndScatter,
  kAfterAll,       // a token: nothing to compute
  kAddDependency,  // the first operand, after the token (ordering only)
  kRng,
  kCholesky,
  kTriangularSolve,
  kFft,
  kRngState,      // rng-get-and-update-state: the run's 128-bit counter
  kDynamicShape,  // get/set-dimension-size, dynamic-reshape: runtime sizes of bounded dimensions
  kTransfer,      // send/recv/infeed/outfeed: data from outside, only with ExecuteOptions::host_data
  kStochasticConvert,
  kCollective,  // collectives and device ids (interp.cc RunCollective)
  kAsync,       // async-start/update/done and copy-start/done, run synchronously at the start
};

struct OpExecution {
  OpFamily family = OpFamily::kNotExecutable;
  std::string_view not_executable;  // why, for kNotExecutable
};

OpExecution ExecutionOf(Opcode op);

}  // namespace nhlo
