// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the shape rules in shape_inference*.cc and the verifier; not a public API.
//
// Dimension sizes are compared the way XLA's ShapeUtil::Compatible does: layouts and the
// dynamic flag are ignored, bounds must agree, and an unbounded dimension (`?`) matches any size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/shape_inference.h"
#include "support/large_alloc.h"
#include "support/small_vec.h"

namespace nhlo::infer {

inline Inference Inferred(Shape s) { return Inference{InferOutcome::kInferred, s, {}}; }
inline Inference Error(std::string message) { return Inference{InferOutcome::kError, {}, std::move(message)}; }
inline Inference NotInferable() { return Inference{}; }

/// A shape in messages: no layout.
std::string Str(const Shape& s);
/// `{1,2,3}`, as the attribute is written.
std::string List(const std::vector<int64_t>& v);
inline std::string Num(int64_t v) { return std::to_string(v); }
/// "1 range", "2 ranges"; `plural` for irregular nouns ("index", "indices").
inline std::string Count(size_t n, const std::string& noun, const std::string& plural = {}) {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}
inline std::string Op(const Instruction& inst) { return std::string(OpcodeName(inst.opcode)); }

inline DimKind KindAt(const Shape& s, size_t i) { return s.dim_kinds.empty() ? DimKind::kStatic : s.dim_kinds[i]; }
inline bool Unbounded(const Shape& s, size_t i) { return KindAt(s, i) == DimKind::kUnbounded; }
template <typename List>
bool Contains(const List& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
/// True if dimension i of a and dimension j of b can hold the same number of elements.
bool DimMatches(const Shape& a, size_t i, const Shape& b, size_t j);
/// Same rank and matching dimensions; element types are not looked at.
bool SameDims(const Shape& a, const Shape& b);
/// Same element type (tuples: same structure) and matching dimensions.
bool Compatible(const Shape& a, const Shape& b);
/// As Compatible, but any two floating-point types count as equal (XLA lets reducers mix
/// precisions, e.g. a bf16 input reduced in f32).
bool CompatibleIgnoringFp(const Shape& a, const Shape& b);
bool SameTypeIgnoringFp(PrimitiveType a, PrimitiveType b);
bool HasDynamicDim(const Shape& s);

Shape WithType(const Shape& s, PrimitiveType t);
PrimitiveType ComplexComponent(PrimitiveType t);

/// Builds an array shape dimension by dimension, keeping each dimension's dynamic kind.
class DimList {
 public:
  void Add(int64_t size, DimKind kind = DimKind::kStatic) {
    sizes_.push_back(size);
    kinds_.push_back(kind);
  }
  /// Appends dimension i of s (size and kind).
  void Take(const Shape& s, size_t i) { Add(s.dims[i], KindAt(s, i)); }
  void Set(size_t i, int64_t size, DimKind kind) {
    sizes_[i] = size;
    kinds_[i] = kind;
  }
  size_t size() const { return sizes_.size(); }
  Shape Build(Module& m, PrimitiveType type) const;

 private:
  // Inline storage: the verifier builds several of these for every instruction.
  SmallVec<int64_t, 8> sizes_;
  SmallVec<DimKind, 8> kinds_;
};

/// The IntList attribute `id`, or nullopt when absent (or written as a list of lists).
std::optional<std::vector<int64_t>> IntList(const Instruction& inst, AttrId id);
std::optional<int64_t> IntAttr(const Instruction& inst, AttrId id);
/// The single computation of a Computation attribute, or null.
const Computation* Called(const Instruction& inst, AttrId id);
/// The one dimension of a `dimensions={d}` attribute; an error message when it is not one entry.
std::optional<int64_t> SingleDimension(const Instruction& inst, std::string& error);

/// A computation's parameter shapes (by parameter number) and root shape.
struct Signature {
  SmallVec<const Shape*, 8> params;  // null where a parameter number is missing
  const Shape* result = nullptr;
};
Signature SignatureOf(const Computation& c);

/// While one is alive (on this thread), SignatureOf answers from a table filled on the first
/// question about each computation instead of scanning the computation every time, so a
/// computation called from many sites costs its size once. Only for code that changes no
/// computation meanwhile: the verifier holds one for its run.
class SignatureCache {
 public:
  /// `computations`: how many it will likely hold (no rehashing on the way).
  explicit SignatureCache(size_t computations = 0);
  ~SignatureCache();
  SignatureCache(const SignatureCache&) = delete;
  SignatureCache& operator=(const SignatureCache&) = delete;
  Signature Get(const Computation& c);

 private:
  uint32_t id_;  // unique among the caches of the process
  // Compact: 16 bytes a computation plus 8 a parameter, in two flat lists (a Signature with its
  // inline storage is 100 bytes, which on modules of many small computations was a tenth of the
  // text's size again).
  struct Entry {
    uint32_t first_param = 0;
    uint32_t param_count = 0;
    const Shape* result = nullptr;
  };
  std::vector<Entry, LargeAllocator<Entry>> entries_;
  std::vector<const Shape*, LargeAllocator<const Shape*>> params_;
  SignatureCache* outer_;
};
/// `'name' (f32[], f32[]) -> f32[]` for messages.
std::string Describe(const Computation& c);

/// Checks `reducer` as the combiner of `inputs` arrays whose accumulators start from `inits`
/// (XLA's VerifyReducerShape): 2N scalar parameters, a scalar or N-tuple of scalars as result,
/// accumulator i, init i and parameter N+i of matching types. Empty if fine.
std::string CheckReducer(const char* what, const Computation& reducer, std::span<const Shape* const> inits,
                         std::span<const PrimitiveType> input_types, const char* init_name = "init value");

/// Window output sizes for `base` (XLA's InferWindowOutputShape); appends one dimension per
/// window dimension to `out`. Empty if fine.
std::string WindowOutput(const std::string& what, const Shape& base, const std::vector<WindowDim>& window,
                         DimList& out);
/// The `window=` attribute (rank 0 when absent); `error` is set when it does not parse.
std::vector<WindowDim> WindowOf(const Instruction& inst, std::string& error);

/// InferShape's body: the arity check, the parse-mode gate, then the rule of the opcode.
Inference Dispatch(Module& m, const Instruction& inst, InferMode mode);

// Rules by family. Each gets an instruction whose fixed arity is already checked.
Inference InferUnary(Module& m, const Instruction& inst);
Inference InferBinary(Module& m, const Instruction& inst);
Inference InferSelect(Module& m, const Instruction& inst);
Inference InferClamp(Module& m, const Instruction& inst);
Inference InferMap(Module& m, const Instruction& inst);

Inference InferSlice(Module& m, const Instruction& inst);
Inference InferDynamicSlice(Module& m, const Instruction& inst);
Inference InferDynamicUpdateSlice(Module& m, const Instruction& inst);
Inference InferConcatenate(Module& m, const Instruction& inst);
Inference InferPad(Module& m, const Instruction& inst);
Inference InferGather(Module& m, const Instruction& inst);
Inference InferScatter(Module& m, const Instruction& inst);
Inference InferReverse(Module& m, const Instruction& inst);
Inference InferTranspose(Module& m, const Instruction& inst);
Inference InferSort(Module& m, const Instruction& inst);
Inference InferTopK(Module& m, const Instruction& inst);
Inference InferGetDimensionSize(Module& m, const Instruction& inst);
Inference InferSetDimensionSize(Module& m, const Instruction& inst);

Inference InferReduce(Module& m, const Instruction& inst);
Inference InferReduceWindow(Module& m, const Instruction& inst);
Inference InferSelectAndScatter(Module& m, const Instruction& inst);
Inference InferScan(Module& m, const Instruction& inst);
Inference InferDot(Module& m, const Instruction& inst);
Inference InferRaggedDot(Module& m, const Instruction& inst);
Inference InferScaledDot(Module& m, const Instruction& inst);
Inference InferConvolution(Module& m, const Instruction& inst);
Inference InferFft(Module& m, const Instruction& inst);
Inference InferTriangularSolve(Module& m, const Instruction& inst);
Inference InferCholesky(Module& m, const Instruction& inst);
Inference InferBatchNorm(Module& m, const Instruction& inst);
Inference InferReducePrecision(Module& m, const Instruction& inst);

Inference InferCall(Module& m, const Instruction& inst);
Inference InferWhile(Module& m, const Instruction& inst);
Inference InferConditional(Module& m, const Instruction& inst);
Inference InferFusion(Module& m, const Instruction& inst);
Inference InferAsync(Module& m, const Instruction& inst);
Inference InferCollective(Module& m, const Instruction& inst);
Inference InferAfterAll(Module& m, const Instruction& inst);
Inference InferAddDependency(Module& m, const Instruction& inst);
Inference InferSend(Module& m, const Instruction& inst);
Inference InferSendDone(Module& m, const Instruction& inst);
Inference InferRecv(Module& m, const Instruction& inst);  // recv, infeed
Inference InferRecvDone(Module& m, const Instruction& inst);
Inference InferOutfeed(Module& m, const Instruction& inst);
Inference InferReplicaId(Module& m, const Instruction& inst);  // replica-id, partition-id
Inference InferDomain(Module& m, const Instruction& inst);     // domain, opt-barrier
Inference InferRngGetAndUpdateState(Module& m, const Instruction& inst);
Inference InferCopyStart(Module& m, const Instruction& inst);
Inference InferCopyDone(Module& m, const Instruction& inst);
Inference InferRng(Module& m, const Instruction& inst);
Inference InferDynamicReshape(Module& m, const Instruction& inst);
Inference InferStochasticConvert(Module& m, const Instruction& inst);

}  // namespace nhlo::infer
