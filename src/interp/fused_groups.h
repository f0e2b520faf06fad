// SPDX-License-Identifier: Apache-2.0
// Fused, tiled execution of elementwise chains (issue 32, docs/interpreter.md "Fused groups").
//
// At load, each computation's steps are scanned for maximal runs of consecutive elementwise
// steps over the same element count: unary and binary ops, compares, selects, converts, clamps,
// reduce-precision, broadcasts of a scalar and reshapes. Such a run becomes a group that runs
// tile by tile (kFusedTile elements at a time): each member's span kernel (elementwise_spans.h)
// runs on the tile, so the tile's intermediates stay in L1 instead of each op writing a whole array that the
// next reads back. A member's result is stored in its buffer only when something outside the
// group reads it (a later step, the computation's root); the others live in tile scratch and get
// no stores. Each member computes exactly what its op-by-op kernel computes for the same
// elements, so results are bit-identical with fusion on and off (nhlo-run --fusion=off).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/bundle_format.h"
#include "interp/elementwise_spans.h"
#include "interp/kernels.h"

namespace nhlo {

/// Elements per tile: a multiple of every vector width and of kFloatBlock, so each span kernel
/// meets the same vector/tail split it meets op by op.
inline constexpr int64_t kFusedTile = 1024;

/// Where a member's operand or result is while its group runs.
struct FusedSlot {
  enum class Kind : uint8_t {
    kBuffer,  // a buffer of the computation, advanced tile by tile
    kScalar,  // a one-element buffer (a broadcast's operand), the same for every tile
    kTile,    // tile scratch number `index`
  };
  Kind kind = Kind::kBuffer;
  uint32_t index = 0;    // the buffer (kBuffer, kScalar) or the scratch tile (kTile)
  uint32_t element = 0;  // host bytes per element
};

struct FusedMember {
  SpanOp op;
  uint32_t step = 0;           // the member's step in its computation
  uint16_t in[3] = {0, 0, 0};  // slots of the operands (op.operands of them)
  uint16_t out = 0;            // slot of the result
  /// A rematerialized broadcast: its tile holds the same elements for every tile of the group,
  /// so it is filled on a chunk's first tile only (its scratch tile is never reused).
  bool once = false;
};

struct FusedGroup {
  uint32_t first_step = 0, step_count = 0;  // the steps the group replaces
  int64_t elements = 0;                     // every member's result element count
  uint32_t scratch_tiles = 0;               // tiles of kFusedTile 8-byte elements
  std::vector<FusedSlot> slots;
  std::vector<FusedMember> members;
  uint32_t stored = 0;  // members whose result is written to its buffer
};

/// The groups of one computation: group_at[i] is the index in `groups` of the group that starts
/// at step i, or -1.
struct FusionPlan {
  std::vector<int32_t> group_at;
  /// elided[i]: step i is a broadcast of a parameter or constant scalar that only groups read,
  /// each filling its own tiles from the scalar, so running it would store an array nobody reads.
  /// Only while groups run as groups (not with --fusion=off or --max-steps).
  std::vector<uint8_t> elided;
  std::vector<FusedGroup> groups;
};

/// Plans the groups of `comp` (whose steps are `steps`, in order). Never fails: a step that
/// cannot join a group runs op by op.
FusionPlan PlanFusion(const ComputationRecord& comp, const std::vector<Step>& steps);

/// Runs group `g` of `comp` with the frame's buffer pointers `ptrs` (indexed by buffer).
Status RunFusedGroup(const ComputationRecord& comp, const FusedGroup& g, uint8_t* const* ptrs);

/// The span form of step `s` of `comp` when its kernel's checks all pass, so that running the
/// span is what the kernel would do; fn is null otherwise.
SpanOp SpanOpOf(const ComputationRecord& comp, const Step& s);

/// A map whose callee is a chain of scalar elementwise steps (torch-neuronx's GELU, SiLU and erf
/// expansions are such maps, docs/custom-calls.md) run as one group over the map's arrays: each
/// step's span kernel on a tile of elements, where running the callee per element would go
/// through the executor once per element and step. Each element meets the same scalar ops in the
/// same order, so the results are the bytes the per-element run gives. Slots: kBuffer `index`
/// k < operands is map operand k, k == operands the map's result; kScalar `index` is
/// constants[index], which a member fills into a tile once per chunk.
struct LiftedCallee {
  FusedGroup group;
  std::vector<std::string> constants;  // one element each, host layout
};

/// Whether a lifted callee may hold steps of family `f` (besides parameters and constants): the
/// families SpanOpOf gives a span for, but broadcast, whose span reads one element for all.
bool LiftableFamily(OpFamily f);

/// The lifted form of bundle `map` of `comp` (a map) whose to_apply is `callee`, lowered to
/// `steps`; null when a value of the callee is not a scalar of at most 8 bytes, or a step has no
/// span form (a broadcast, a call, anything but the elementwise families and reshape).
std::shared_ptr<const LiftedCallee> LiftCallee(const BundleProgram& p, const ComputationRecord& comp,
                                               const BundleRecord& map, const ComputationRecord& callee,
                                               const std::vector<Step>& steps);

/// Runs a lifted map over its operands `in` into `out`, in parallel chunks whose cut depends on
/// the element count alone.
void RunLiftedCallee(const LiftedCallee& lifted, const std::vector<Buf>& in, const Buf& out);

}  // namespace nhlo
