// SPDX-License-Identifier: Apache-2.0
// The vocabulary every layer shares: HLO opcodes, instruction attribute ids and kinds, and the
// closed value sets of enum-valued attributes. Each comes from one X-macro table
// (opcodes.def, attributes.def, attr_enums.def) whose `code` column is the number written to
// bundle files: rows may be added or reordered, codes never change meaning.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nhlo {

enum class Opcode : uint8_t {
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, bytes, elementwise, collective, infer, attrs) k##Enum,
#include "types/opcodes.def"
#undef NHLO_OPCODE
};
inline constexpr int kOpcodeCount = 0
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, bytes, elementwise, collective, infer, attrs) +1
#include "types/opcodes.def"
#undef NHLO_OPCODE
    ;

/// Whether an op has a side effect of its own (opcodes.def's effect column; XLA's
/// HloInstruction::HasSideEffectNoRecurse). Some classes depend on the instruction's attributes.
enum class SideEffect : uint8_t {
  kNone,
  kAlways,      // send/recv, infeed/outfeed, rng, the async collective halves, collective-broadcast
  kCollective,  // with constrain_layout=true or a channel_id
  kChannelId,   // with a channel_id
  kFlagged,     // with custom_call_has_side_effect=true
};

std::string_view OpcodeName(Opcode op);
SideEffect OpcodeSideEffect(Opcode op);
std::optional<Opcode> OpcodeFromName(std::string_view name);
/// Operand count the opcode takes; -1 for variadic.
int OpcodeArity(Opcode op);
/// opcodes.def's elementwise column: element i of the result is a function of element i of each
/// operand, all of one shape.
enum class Elementwise : uint8_t { kNo, kUnary, kBinary };
Elementwise OpcodeElementwise(Opcode op);
inline bool IsElementwiseUnary(Opcode op) { return OpcodeElementwise(op) == Elementwise::kUnary; }
inline bool IsElementwiseBinary(Opcode op) { return OpcodeElementwise(op) == Elementwise::kBinary; }
/// opcodes.def's family column: the kind of step the interpreter runs the op with; each names one
/// routine of the executor.
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
  // Data from outside, only with ExecuteOptions::host_data: infeed and recv receive (zeros),
  // outfeed and send-done drop it, send holds its operand, recv-done takes what recv received.
  kTransferIn,
  kTransferOut,
  kSend,
  kRecvDone,
  kStochasticConvert,
  kCollective,  // collectives and device ids (interp.cc RunCollective)
  // The asynchronous pairs, run synchronously at the start.
  kAsyncStart,
  kAsyncUpdate,
  kAsyncDone,
  kCopyStart,
  kCopyDone,
};
OpFamily OpcodeFamily(Opcode op);

/// opcodes.def's bytes column: how a result's bytes may meet its operands'. Buffer assignment
/// (codegen) places results by it and the load checks placements by it (interp/frame_checks.cc).
enum class ResultBytes : uint8_t {
  kOwn,     // written from scratch: never over anything the op reads
  kLanes,   // reads element i of each operand before writing element i: may sit exactly over an
            // operand whose elements have the result's size
  kUpdate,  // copies operand 0, then overwrites parts of it: may sit exactly over operand 0
  kMoves,   // each result leaf is an operand leaf moved unchanged (which one is the op's own rule):
            // it may sit over that leaf or share its bytes
  kLoop,    // while: a state leaf may keep the bytes of its init's leaf at the same position
};
ResultBytes OpcodeResultBytes(Opcode op);

/// opcodes.def's collective column: how the op combines the data of the devices it meets.
enum class CollectiveKind : uint8_t {
  kNo,
  kAllReduce,  // all-reduce, all-reduce-start
  kAllGather,  // all-gather, all-gather-start
  kReduceScatter,
  kAllToAll,
  kRaggedAllToAll,
  kBroadcast,  // collective-broadcast
  kPermute,    // collective-permute, collective-permute-start
  kDone,       // the second half of an async collective
  kId,         // replica-id, partition-id
};
CollectiveKind OpcodeCollective(Opcode op);
/// A collective that meets a group of devices (replica groups or source-target pairs) and
/// exchanges data: every kind but No, Done and Id.
bool IsExchangingCollective(Opcode op);
/// opcodes.def's infer column: whether XLA's parser lets the text omit the result shape.
bool ParserMayInferShape(Opcode op);
/// The async start whose result `op` (a -done or -update) takes: all-gather-start for
/// all-gather-done, send for send-done, async-start for async-update; `op` itself for the rest.
/// Derived from the spellings (`X-done` -> `X-start`, else `X`).
Opcode AsyncStartOf(Opcode op);
/// Whether some -done or -update takes `op`'s result (all-gather-start, send, recv, copy-start,
/// async-start, ...).
bool IsAsyncStart(Opcode op);

/// opcodes.def's attrs column: a row of attr_schemas.def.
enum class AttrSchema : uint8_t {
#define NHLO_ATTR_SCHEMA(Name, allowed, required, print_first) k##Name,
#include "types/attr_schemas.def"
#undef NHLO_ATTR_SCHEMA
};
inline constexpr int kAttrSchemaCount = 0
#define NHLO_ATTR_SCHEMA(Name, allowed, required, print_first) +1
#include "types/attr_schemas.def"
#undef NHLO_ATTR_SCHEMA
    ;
AttrSchema OpcodeAttrSchema(Opcode op);

/// The elementwise ops as enums of their own (opcodes.def's elementwise column): a kernel or shape
/// rule that handles only them switches over every one of them, with no default, so a new row is
/// a compile error in each until it is handled or refused there.
#define NHLO_UNARY_Unary(...) __VA_ARGS__
#define NHLO_UNARY_Binary(...)
#define NHLO_UNARY_No(...)
#define NHLO_BINARY_Unary(...)
#define NHLO_BINARY_Binary(...) __VA_ARGS__
#define NHLO_BINARY_No(...)
enum class UnaryOp : uint8_t {
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, bytes, elementwise, collective, infer, attrs) \
  NHLO_UNARY_##elementwise(k##Enum, )
#include "types/opcodes.def"
#undef NHLO_OPCODE
};
enum class BinaryOp : uint8_t {
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, bytes, elementwise, collective, infer, attrs) \
  NHLO_BINARY_##elementwise(k##Enum, )
#include "types/opcodes.def"
#undef NHLO_OPCODE
};
inline constexpr Opcode kUnaryOpcodes[] = {
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, bytes, elementwise, collective, infer, attrs) \
  NHLO_UNARY_##elementwise(Opcode::k##Enum, )
#include "types/opcodes.def"
#undef NHLO_OPCODE
};
inline constexpr Opcode kBinaryOpcodes[] = {
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, bytes, elementwise, collective, infer, attrs) \
  NHLO_BINARY_##elementwise(Opcode::k##Enum, )
#include "types/opcodes.def"
#undef NHLO_OPCODE
};
#undef NHLO_UNARY_Unary
#undef NHLO_UNARY_Binary
#undef NHLO_UNARY_No
#undef NHLO_BINARY_Unary
#undef NHLO_BINARY_Binary
#undef NHLO_BINARY_No
constexpr Opcode OpcodeOf(UnaryOp op) { return kUnaryOpcodes[static_cast<size_t>(op)]; }
constexpr Opcode OpcodeOf(BinaryOp op) { return kBinaryOpcodes[static_cast<size_t>(op)]; }
namespace detail {
// Opcode -> index into kUnaryOpcodes / kBinaryOpcodes, or -1.
template <size_t N>
constexpr auto ElementwiseIndex(const Opcode (&ops)[N]) {
  struct Index {
    int8_t of[kOpcodeCount];
  } index{};
  for (size_t op = 0; op < static_cast<size_t>(kOpcodeCount); ++op) index.of[op] = -1;
  for (size_t i = 0; i < N; ++i) index.of[static_cast<size_t>(ops[i])] = static_cast<int8_t>(i);
  return index;
}
inline constexpr auto kUnaryIndex = ElementwiseIndex(kUnaryOpcodes);
inline constexpr auto kBinaryIndex = ElementwiseIndex(kBinaryOpcodes);
}  // namespace detail
/// The elementwise op `op` is, or nullopt.
constexpr std::optional<UnaryOp> AsUnaryOp(Opcode op) {
  int8_t i = detail::kUnaryIndex.of[static_cast<size_t>(op)];
  return i < 0 ? std::nullopt : std::optional<UnaryOp>(static_cast<UnaryOp>(i));
}
constexpr std::optional<BinaryOp> AsBinaryOp(Opcode op) {
  int8_t i = detail::kBinaryIndex.of[static_cast<size_t>(op)];
  return i < 0 ? std::nullopt : std::optional<BinaryOp>(static_cast<BinaryOp>(i));
}

/// The pinned wire code of an opcode, and back (nullopt for a code no row has).
uint16_t OpcodeWireCode(Opcode op);
std::optional<Opcode> OpcodeFromWireCode(uint32_t code);

/// How an attribute value is written and stored. The numbers are wire codes (bundle files
/// carry the kind beside each attribute), so they are pinned too.
enum class AttrKind : uint8_t {
  Int = 0,
  Bool = 1,
  Float = 2,
  String = 3,
  Ident = 4,  // a bare word from an open set (kLoop, API_VERSION_..., schedule names)
  IntList = 5,
  Computation = 6,
  ComputationList = 7,
  InstructionList = 8,
  Shape = 9,
  Raw = 10,     // text nhlo keeps but gives no structure (sharding, statistics, ...)
  Config = 11,  // backend_config: a "string" or a raw {...} JSON object
  Literal = 12,
  Window = 13,         // window={size=3x3 stride=2x2 pad=0_1x1_1 ...}
  SliceRanges = 14,    // slice={[0:10], [2:8:2]}
  PaddingConfig = 15,  // padding=0_1x2_3_1
  DimLabels = 16,      // dim_labels=b01f_01io->b01f
  Enum = 17,           // a word from a closed set (attr_enums.def)
  EnumList = 18,       // operand_precision={high,default}
  ReplicaGroups = 19,  // replica_groups={{0,1},{2,3}} or [2,2]<=[4] or [2,2]<=[2,2]T(1,0)
  PairList = 20,       // source_target_pairs={{0,1},{1,2}}
  KeyValues = 21,      // metadata={op_name="a" source_line=3}, frontend_attributes={k="v"}
  ShapeList = 22,      // operand_layout_constraints={f32[2,3]{1,0}, s32[]}
  BoolList = 23,       // parameter_replication={true,false}
};
inline constexpr int kAttrKindCount = 24;

enum class AttrId : uint8_t {
#define NHLO_ATTR(Enum, text, kind, code, enum_set) k##Enum,
#include "types/attributes.def"
#undef NHLO_ATTR
};
inline constexpr int kAttrCount = 0
#define NHLO_ATTR(Enum, text, kind, code, enum_set) +1
#include "types/attributes.def"
#undef NHLO_ATTR
    ;

std::string_view AttrName(AttrId id);
AttrKind AttrDeclaredKind(AttrId id);
std::optional<AttrId> AttrFromName(std::string_view name);
uint16_t AttrWireCode(AttrId id);
std::optional<AttrId> AttrFromWireCode(uint32_t code);

/// The value sets of Enum and EnumList attributes (attributes.def's enum_set column; kNone for
/// the other kinds).
enum class EnumSet : uint8_t {
  kNone,
  kComparisonDirection,
  kComparisonType,
  kFftType,
  kDistribution,
  kTransposeA,
  kPrecision,
  kAlgorithm
};
/// Which set an Enum/EnumList attribute draws from.
EnumSet EnumSetOf(AttrId id);
/// The spelling of `code` in `set`, or "" when the set has no such code.
std::string_view EnumValueName(EnumSet set, int64_t code);
/// `{high,default}`: an EnumList attribute's codes as HLO text.
void AppendEnumList(std::string& out, AttrId id, const int64_t* codes, size_t count);
/// The code of `text` in `set`.
std::optional<uint8_t> EnumValueFromName(EnumSet set, std::string_view text);

// The value sets, with their pinned wire codes.
enum class ComparisonDirection : uint8_t { kEq = 0, kNe = 1, kGe = 2, kGt = 3, kLe = 4, kLt = 5 };
enum class ComparisonType : uint8_t { kFloat = 0, kTotalOrder = 1, kSigned = 2, kUnsigned = 3 };
enum class FftType : uint8_t { kFft = 0, kIfft = 1, kRfft = 2, kIrfft = 3 };
enum class Distribution : uint8_t { kUniform = 0, kNormal = 1 };
enum class TransposeA : uint8_t { kNoTranspose = 0, kTranspose = 1, kAdjoint = 2 };
enum class Precision : uint8_t { kDefault = 0, kHigh = 1, kHighest = 2, kPackedNibble = 3 };
enum class Algorithm : uint8_t {
  kRngDefault = 0,
  kRngThreeFry = 1,
  kRngPhilox = 2,
  kDotAnyF8AnyF8F32 = 16,
  kDotAnyF8AnyF8F32Fast = 17,
  kDotF16F16F16 = 18,
  kDotF16F16F32 = 19,
  kDotBf16Bf16Bf16 = 20,
  kDotBf16Bf16F32 = 21,
  kDotBf16Bf16F32X3 = 22,
  kDotBf16Bf16F32X6 = 23,
  kDotBf16Bf16F32X9 = 24,
  kDotTf32Tf32F32 = 25,
  kDotTf32Tf32F32X3 = 26,
  kDotF32F32F32 = 27,
  kDotF64F64F64 = 28,
};

/// Algorithm codes below this are RNG algorithms; the rest are dot algorithms.
inline constexpr uint8_t kFirstDotAlgorithmCode = 16;

}  // namespace nhlo
