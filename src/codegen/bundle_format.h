// SPDX-License-Identifier: Apache-2.0
// The bundle file, version 2: constants of the binary format (docs/bundle-format.md is the
// normative spec) and the decoded program that the single reader produces for both the
// interpreter and nhlo-objdump. Nothing here depends on the IR: a decoded program is typed
// data (opcodes, buffers, typed attribute values) that the interpreter runs without any text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "support/status.h"
#include "types/backend_dtype.h"
#include "types/custom_call_configs.h"
#include "types/dimension_numbers.h"
#include "types/hlo_attrs.h"
#include "types/opcode.h"
#include "types/primitive_type.h"

namespace nhlo {

inline constexpr char kBundleMagic[8] = {'N', 'H', 'L', 'O', 'B', 'N', 'D', 'L'};
inline constexpr uint16_t kBundleVersion = 4;
inline constexpr uint32_t kHeaderSize = 24;
inline constexpr uint32_t kSectionEntrySize = 12;
inline constexpr uint32_t kBufferFixedSize = 40;
inline constexpr uint32_t kComputationFixedSize = 56;
inline constexpr uint32_t kBundleFixedSize = 32;
inline constexpr uint32_t kAttrHeaderSize = 8;
inline constexpr uint8_t kNoDtype = 0xff;  // backend dtype / wire tag of a host-only type
/// Set in a buffer record's kind byte when a dimension-kind list follows its tuple list.
inline constexpr uint8_t kBufferHasDimKinds = 0x80;
// The header's flags byte (docs/bundle-format.md, offset 11).
inline constexpr uint8_t kFlagDeviceOnly = 1;       // compiled with --device-only
inline constexpr uint8_t kFlagStatesOneDevice = 2;  // the HloModule header states a device count of one

enum class SectionId : uint32_t {
  kStrings = 1,
  kBuffers = 2,
  kConstants = 3,
  kComputations = 4,
  kCode = 5,
  kModule = 6,
};
inline constexpr uint32_t kSectionCount = 6;
std::string_view SectionName(SectionId id);

/// Where a buffer's bytes live at run time. A tuple-typed buffer has no bytes of its own: its
/// `tuple` list names the element buffers, which have the same kind (a temp tuple's elements may
/// also be aliases).
enum class BufferKind : uint8_t {
  kTemp = 0,       // in its computation's frame at offset `location`
  kParameter = 1,  // bound at call time to the value of parameter number `location`
  kConstant = 2,   // in the constant section at `location` (sub-byte types packed)
  kAlias = 3,      // the bytes of array buffer `location` (an earlier parameter or constant) of the
                   // same size: a get-tuple-element, tuple element, reshape, bitcast or loop state
                   // that XLA's buffer assignment aliases; nothing writes it
};
std::string_view BufferKindName(BufferKind kind);

enum class TargetArch : uint8_t { kV3 = 3, kV4 = 4 };

struct BufferRecord {
  std::string_view name;
  PrimitiveType type = PrimitiveType::kInvalid;
  uint8_t backend_dtype = kNoDtype;
  uint8_t wire_tag = kNoDtype;
  BufferKind kind = BufferKind::kTemp;
  uint32_t stride = 0;
  uint64_t size = 0;  // bytes in the host layout (one byte per sub-byte element)
  uint64_t location = 0;
  std::vector<int64_t> dims;
  std::vector<uint32_t> tuple;  // element buffers (indices in the same computation)
  /// Per dimension 0 static, 1 bounded dynamic (`<=N`, dims holds N), 2 unbounded (`?`, dims
  /// holds 0); empty when every dimension is static.
  std::vector<uint8_t> dim_kinds;
  uint32_t file_offset = 0;

  int64_t ElementCount() const;
};

/// The buffer whose bytes `buffers[index]` holds: an alias's target (the reader has checked that
/// it is no alias itself), else `index`.
inline uint32_t ResolveAlias(const std::vector<BufferRecord>& buffers, uint32_t index) {
  const BufferRecord& b = buffers[index];
  return b.kind == BufferKind::kAlias ? static_cast<uint32_t>(b.location) : index;
}

/// An array's type and dimensions as HLO writes them, `f32[<=8,?,4]`: `dim_kinds` as in
/// BufferRecord (empty: every dimension static).
std::string ArrayShapeText(PrimitiveType type, const std::vector<int64_t>& dims, const std::vector<uint8_t>& dim_kinds);

/// replica_groups as decoded: the explicit list or the iota form.
struct ReplicaGroupsRecord {
  bool iota = false;
  bool mesh = false;                 // XLA's mesh-axes form: no device lists in the file
  std::vector<int64_t> ids;          // list form: members, one group after another
  std::vector<int64_t> group_sizes;  // list form
  int64_t num_groups = 0;            // iota form
  int64_t group_size = 0;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose;
};

/// One decoded attribute: its id, its kind and a value of that kind. The value is a variant
/// (large kinds boxed), so a record is 64 bytes rather than every kind's fields at once. Readers
/// of a value use the accessor of the attribute's kind; an accessor of another kind returns an
/// empty value (the reader checks every attribute has its declared kind, so code that reads an
/// attribute by its declared kind always gets its value). The `set_` accessors make the value
/// that kind's (empty) value first; they are for code that builds records.
struct AttrRecord {
  struct Text {
    std::string_view text;
    bool is_json = false;  // Config written as a raw {...} block
  };
  using Value = std::variant<std::monostate, int64_t, double, bool, Text, std::vector<int64_t>, std::vector<uint32_t>,
                             std::vector<WindowDim>, std::vector<SliceDim>, std::vector<PaddingDim>,
                             std::unique_ptr<ConvDimLabels>, std::unique_ptr<ReplicaGroupsRecord>>;

  AttrRecord() = default;
  AttrRecord(const AttrRecord& other);  // copies the boxed values too
  AttrRecord& operator=(const AttrRecord& other);
  AttrRecord(AttrRecord&&) noexcept = default;
  AttrRecord& operator=(AttrRecord&&) noexcept = default;

  AttrId id{};
  AttrKind kind{};
  uint32_t file_offset = 0;   // where its header starts
  uint32_t payload_size = 0;  // bytes after the 8-byte header, before the padding to 4
  Value value;

  int64_t i() const { return Get<int64_t>(); }                                      // Int; Enum code
  double f() const { return Get<double>(); }                                        // Float
  bool b() const { return Get<bool>(); }                                            // Bool
  std::string_view text() const { return Get<Text>().text; }                        // String, Ident, Config, Raw
  bool is_json() const { return Get<Text>().is_json; }                              // Config
  const std::vector<int64_t>& ints() const { return Get<std::vector<int64_t>>(); }  // IntList, EnumList, PairList
  const std::vector<uint32_t>& computations() const { return Get<std::vector<uint32_t>>(); }  // Computation(List)
  const std::vector<WindowDim>& window() const { return Get<std::vector<WindowDim>>(); }
  const std::vector<SliceDim>& slices() const { return Get<std::vector<SliceDim>>(); }
  const std::vector<PaddingDim>& padding() const { return Get<std::vector<PaddingDim>>(); }
  const ConvDimLabels& dim_labels() const { return Boxed<ConvDimLabels>(); }
  const ReplicaGroupsRecord& replica_groups() const { return Boxed<ReplicaGroupsRecord>(); }

  int64_t& set_i() { return Set<int64_t>(); }
  double& set_f() { return Set<double>(); }
  bool& set_b() { return Set<bool>(); }
  Text& set_text() { return Set<Text>(); }
  std::vector<int64_t>& set_ints() { return Set<std::vector<int64_t>>(); }
  std::vector<uint32_t>& set_computations() { return Set<std::vector<uint32_t>>(); }
  std::vector<WindowDim>& set_window() { return Set<std::vector<WindowDim>>(); }
  std::vector<SliceDim>& set_slices() { return Set<std::vector<SliceDim>>(); }
  std::vector<PaddingDim>& set_padding() { return Set<std::vector<PaddingDim>>(); }
  ConvDimLabels& set_dim_labels() { return SetBoxed<ConvDimLabels>(); }
  ReplicaGroupsRecord& set_replica_groups() { return SetBoxed<ReplicaGroupsRecord>(); }

  /// The value as a T (an empty T when it holds another kind); Boxed for the boxed kinds.
  template <typename T>
  const T& Get() const {
    static const T kEmpty{};
    const T* v = std::get_if<T>(&value);
    return v ? *v : kEmpty;
  }
  template <typename T>
  const T& Boxed() const {
    static const T kEmpty{};
    const auto* v = std::get_if<std::unique_ptr<T>>(&value);
    return v && *v ? **v : kEmpty;
  }
  /// Makes the value a T (empty) unless it is one, and returns it.
  template <typename T>
  T& Set() {
    if (!std::holds_alternative<T>(value)) value.template emplace<T>();
    return std::get<T>(value);
  }
  template <typename T>
  T& SetBoxed() {
    auto* v = std::get_if<std::unique_ptr<T>>(&value);
    if (!v || !*v) v = &value.template emplace<std::unique_ptr<T>>(std::make_unique<T>());
    return **v;
  }
};

static_assert(sizeof(AttrRecord) <= 64, "a decoded module holds one per attribute");

struct BundleRecord {
  BundleRecord() = default;
  // Moved, never copied: `dims` views the lists in `attrs`, which a move keeps in place.
  BundleRecord(BundleRecord&&) noexcept = default;
  BundleRecord& operator=(BundleRecord&&) noexcept = default;
  BundleRecord(const BundleRecord&) = delete;
  BundleRecord& operator=(const BundleRecord&) = delete;

  Opcode opcode{};
  uint32_t result = 0;
  uint8_t result_tag = kNoDtype;
  std::vector<uint32_t> operands;
  std::vector<uint8_t> operand_tags;
  std::vector<AttrRecord> attrs;
  /// A custom call's backend_config decoded for its target when the bundle is read
  /// (types/custom_call_configs.h); null for other ops.
  std::shared_ptr<const CustomCallConfig> config;
  /// dot, scaled-dot, ragged-dot, gather, scatter and convolution: their dimension numbers,
  /// views of `attrs` made once by the reader (types/dimension_numbers.h); null for the rest
  /// (boxed: most records have none).
  std::unique_ptr<const DimensionNumbers> dims;
  /// For ops that call computations: where, in this computation's frame, the callees' frame
  /// starts while they run. 0 for other ops.
  uint64_t callee_frame = 0;
  uint32_t file_offset = 0;
  uint32_t size = 0;

  const AttrRecord* Find(AttrId id) const;
};

struct ComputationRecord {
  std::string_view name;
  std::vector<BufferRecord> buffers;  // this computation's buffers; bundles index into it
  uint32_t first_buffer = 0;          // index of buffers[0] in the file's buffer table
  std::vector<uint32_t> params;       // buffer of parameter i
  uint32_t root = 0;
  uint64_t frame_size = 0;        // bytes of arena this computation needs while it runs
  uint64_t live_bytes_bound = 0;  // the compiler's lower bound for frame_size (informational)
  std::vector<BundleRecord> bundles;
  uint32_t file_offset = 0;
  uint32_t code_offset = 0;  // where its bundle stream starts in the file
  uint32_t code_size = 0;    // bytes of its bundle stream
};

struct SectionRecord {
  SectionId id;
  uint32_t offset;
  uint32_t size;
};

/// A validated bundle file. Views point into `bytes`.
struct BundleProgram {
  std::string bytes;
  uint16_t version = 0;
  TargetArch arch = TargetArch::kV4;
  uint8_t flags = 0;  ///< kFlagDeviceOnly | kFlagStatesOneDevice
  uint32_t checksum = 0;
  std::vector<SectionRecord> sections;
  std::string_view module_name;
  uint32_t entry = 0;
  uint64_t arena_size = 0;  // the entry computation's frame
  /// replica_count and num_partitions of the module header (the module section's two u32s after
  /// the entry; 0, written for an absent count, reads as 1). The program runs on
  /// replicas × partitions devices.
  uint32_t replicas = 1;
  uint32_t partitions = 1;
  /// Whether the header gave either count (a per-device dump often gives neither while its
  /// collectives name several devices; nhlo-run then runs on the devices they imply).
  bool device_counts_given = false;
  uint64_t devices() const { return uint64_t{replicas} * partitions; }
  uint32_t buffer_count = 0;
  std::string_view constants;
  std::vector<ComputationRecord> computations;
};

/// FNV-1a (32-bit) over the file with the checksum field (bytes 16..19) read as zero.
uint32_t BundleChecksum(std::string_view bytes);
/// Writes BundleChecksum of the `size` bytes at `data` into their checksum field; for tools that
/// edit a bundle on purpose (the bundle fuzzer, nhlo-golden's `patch`). Files shorter than the
/// field are left alone.
void StoreBundleChecksum(char* data, size_t size);

/// Bytes a constant of `type` with `count` elements takes in the constant section: sub-byte
/// types are packed (lane 0 in the low bits), everything else as in the host layout.
uint64_t PackedConstantBytes(PrimitiveType type, int64_t count);

}  // namespace nhlo
