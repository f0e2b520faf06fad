// SPDX-License-Identifier: Apache-2.0
// The interface through which steps that live outside the machine's file (collectives, bounded
// dynamic shapes) reach the running computation's buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/kernels.h"

namespace nhlo {

/// What a step run outside the machine (collective_steps.cc, dynamic_steps.cc) asks of it.
class StepMachine {
 public:
  virtual ~StepMachine() = default;
  /// The computation running the step, whose buffers the step's indices name.
  virtual const ComputationRecord& Running() const = 0;
  virtual Result<Buf> ArrayOf(uint32_t buffer) const = 0;
  virtual Status CopyBuffer(uint32_t from, uint32_t to) = 0;
  virtual void ZeroBuffer(uint32_t buffer) = 0;
  virtual Result<const ComputationRecord*> CalledComputation(const Step& s, AttrId id) = 0;
  /// Runs `f` on two scalars; its result's bytes.
  virtual Result<const uint8_t*> CallOnScalars(const BundleRecord& b, const ComputationRecord& f, const uint8_t* x,
                                               const uint8_t* y) = 0;
  /// The runtime sizes of a buffer of the running computation with bounded dynamic
  /// dimensions; empty when every dimension is at its bound.
  virtual std::vector<int64_t>& SizesOf(uint32_t buffer) = 0;
  /// Where the bytes of a buffer of the running computation are (to point it elsewhere).
  virtual uint8_t*& DataOf(uint32_t buffer) = 0;
  /// Runs a step as if no buffer had runtime sizes.
  virtual Status RunPlain(const Step& s) = 0;
  /// Runs `f` (called by bundle `b`) with its array parameters at `params`; `got` receives the
  /// bytes of the buffers `root_leaves` of `f` (views into its frame, valid until the next call).
  virtual Status CallWithPointers(const BundleRecord& b, const ComputationRecord& f,
                                  const std::vector<uint8_t*>& params, const std::vector<uint32_t>& root_leaves,
                                  std::vector<const uint8_t*>& got) = 0;
};

}  // namespace nhlo
