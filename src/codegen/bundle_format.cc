// SPDX-License-Identifier: Apache-2.0
#include "codegen/bundle_format.h"

#include <cstring>

#include "support/checked_math.h"

namespace nhlo {

namespace {

AttrRecord::Value CopyValue(const AttrRecord::Value& value) {
  return std::visit(
      [](const auto& v) -> AttrRecord::Value {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::unique_ptr<ConvDimLabels>> ||
                      std::is_same_v<T, std::unique_ptr<ReplicaGroupsRecord>>)
          return v ? std::make_unique<typename T::element_type>(*v) : nullptr;
        else
          return v;
      },
      value);
}

}  // namespace

AttrRecord::AttrRecord(const AttrRecord& other)
    : id(other.id),
      kind(other.kind),
      file_offset(other.file_offset),
      payload_size(other.payload_size),
      value(CopyValue(other.value)) {}

AttrRecord& AttrRecord::operator=(const AttrRecord& other) {
  if (this == &other) return *this;
  id = other.id;
  kind = other.kind;
  file_offset = other.file_offset;
  payload_size = other.payload_size;
  value = CopyValue(other.value);
  return *this;
}

std::string_view SectionName(SectionId id) {
  switch (id) {
    case SectionId::kStrings: return "strings";
    case SectionId::kBuffers: return "buffers";
    case SectionId::kConstants: return "constants";
    case SectionId::kComputations: return "computations";
    case SectionId::kCode: return "code";
    case SectionId::kModule: return "module";
  }
  return "unknown";
}

std::string_view BufferKindName(BufferKind kind) {
  switch (kind) {
    case BufferKind::kTemp: return "temp";
    case BufferKind::kParameter: return "param";
    case BufferKind::kConstant: return "const";
    case BufferKind::kAlias: return "alias";
  }
  return "unknown";
}

int64_t BufferRecord::ElementCount() const { return CheckedElementCount(dims); }

std::string ArrayShapeText(PrimitiveType type, const std::vector<int64_t>& dims,
                           const std::vector<uint8_t>& dim_kinds) {
  std::string s(PrimitiveTypeName(type));
  s += '[';
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    // A bounded dimension `<=N`, an unbounded one `?` (stored as 0).
    uint8_t kind = i < dim_kinds.size() ? dim_kinds[i] : 0;
    s += kind == 2 ? "?" : (kind == 1 ? "<=" : "") + std::to_string(dims[i]);
  }
  return s + "]";
}

const AttrRecord* BundleRecord::Find(AttrId id) const {
  for (const AttrRecord& a : attrs)
    if (a.id == id) return &a;
  return nullptr;
}

uint32_t BundleChecksum(std::string_view bytes) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < bytes.size(); ++i) {
    uint8_t c = (i >= 16 && i < 20) ? 0 : static_cast<uint8_t>(bytes[i]);
    h = (h ^ c) * 16777619u;
  }
  return h;
}

void StoreBundleChecksum(char* data, size_t size) {
  if (size < 20) return;
  uint32_t checksum = BundleChecksum(std::string_view(data, size));
  std::memcpy(data + 16, &checksum, 4);
}

uint64_t PackedConstantBytes(PrimitiveType type, int64_t count) {
  int bits = BitWidth(type);
  if (bits > 0 && bits < 8) {
    int per_byte = 8 / bits;
    return static_cast<uint64_t>((count + per_byte - 1) / per_byte);
  }
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(HostByteSize(type));
}

}  // namespace nhlo
