// SPDX-License-Identifier: Apache-2.0
#include "types/opcode.h"

#include <string>
#include <vector>

#include "support/name_table.h"

namespace nhlo {
namespace {

struct OpcodeInfo {
  std::string_view text;
  int arity;
  uint16_t code;
  SideEffect effect;
  OpFamily family;
  ResultBytes bytes;
  Elementwise elementwise;
  CollectiveKind collective;
  bool infer;
  AttrSchema attrs;
};
constexpr bool kYes = true, kNo = false;
constexpr OpcodeInfo kOpcodes[] = {
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, bytes, elementwise, collective, infer, attrs) \
  {text,                                                                                                   \
   arity,                                                                                                  \
   code,                                                                                                   \
   SideEffect::k##effect,                                                                                  \
   OpFamily::k##family,                                                                                    \
   ResultBytes::k##bytes,                                                                                  \
   Elementwise::k##elementwise,                                                                            \
   CollectiveKind::k##collective,                                                                          \
   k##infer,                                                                                               \
   AttrSchema::k##attrs},
#include "types/opcodes.def"
#undef NHLO_OPCODE
};

struct AttrInfo {
  std::string_view text;
  AttrKind kind;
  uint16_t code;
  EnumSet enum_set;
};
constexpr AttrInfo kAttrs[] = {
#define NHLO_ATTR(Enum, text, kind, code, enum_set) {text, AttrKind::kind, code, EnumSet::k##enum_set},
#include "types/attributes.def"
#undef NHLO_ATTR
};

struct EnumInfo {
  EnumSet set;
  uint8_t code;
  std::string_view text;
};
constexpr EnumInfo kEnumValues[] = {
#define NHLO_ENUM(Set, Enum, text) {EnumSet::k##Set, static_cast<uint8_t>(Set::k##Enum), text},
#include "types/attr_enums.def"
#undef NHLO_ENUM
};

// Name -> row lookup for the opcode and attribute tables: open addressing with a short hash of
// the length and a few characters, sized so most lookups touch one slot. The parser asks for
// every opcode and attribute it reads.
class TextIndex {
 public:
  template <typename Info, size_t N>
  explicit TextIndex(const Info (&table)[N]) {
    size_t size = 64;
    while (size < N * 4) size *= 2;
    slots_.assign(size, Slot{});
    for (size_t i = 0; i < N; ++i) {
      size_t h = Hash(table[i].text) & (size - 1);
      while (slots_[h].row >= 0) h = (h + 1) & (size - 1);
      slots_[h] = Slot{table[i].text, static_cast<int>(i)};
    }
  }
  int Find(std::string_view name) const {
    size_t mask = slots_.size() - 1;
    for (size_t h = Hash(name) & mask;; h = (h + 1) & mask) {
      const Slot& s = slots_[h];
      if (s.row < 0) return -1;
      if (SameName(s.text, name)) return s.row;
    }
  }

 private:
  struct Slot {
    std::string_view text;
    int row = -1;
  };
  static size_t Hash(std::string_view s) {
    if (s.empty()) return 0;
    size_t h = s.size() * 0x9e3779b1u;
    h ^= static_cast<uint8_t>(s[0]) * 0x85ebca6bu;
    h ^= static_cast<uint8_t>(s[s.size() - 1]) * 0xc2b2ae35u;
    h ^= static_cast<uint8_t>(s[s.size() / 2]) * 0x27d4eb2fu;
    if (s.size() > 3) h ^= static_cast<uint8_t>(s[3]) * 0x165667b1u;
    return h ^ (h >> 15);
  }
  std::vector<Slot> slots_;
};

// Wire code -> row. Codes are small (pinned, assigned densely), so a flat table suffices.
template <typename Info, size_t N>
std::vector<int> CodeIndex(const Info (&table)[N]) {
  uint32_t max = 0;
  for (const Info& info : table) max = info.code > max ? info.code : max;
  std::vector<int> rows(max + 1, -1);
  for (size_t i = 0; i < N; ++i) rows[table[i].code] = static_cast<int>(i);
  return rows;
}

}  // namespace

std::string_view OpcodeName(Opcode op) { return kOpcodes[static_cast<int>(op)].text; }
int OpcodeArity(Opcode op) { return kOpcodes[static_cast<int>(op)].arity; }
SideEffect OpcodeSideEffect(Opcode op) { return kOpcodes[static_cast<int>(op)].effect; }
uint16_t OpcodeWireCode(Opcode op) { return kOpcodes[static_cast<int>(op)].code; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  static const TextIndex* index = new TextIndex(kOpcodes);
  int row = index->Find(name);
  if (row < 0) return std::nullopt;
  return static_cast<Opcode>(row);
}

std::optional<Opcode> OpcodeFromWireCode(uint32_t code) {
  static const std::vector<int>* rows = new std::vector<int>(CodeIndex(kOpcodes));
  if (code >= rows->size() || (*rows)[code] < 0) return std::nullopt;
  return static_cast<Opcode>((*rows)[code]);
}

std::string_view AttrName(AttrId id) { return kAttrs[static_cast<int>(id)].text; }
AttrKind AttrDeclaredKind(AttrId id) { return kAttrs[static_cast<int>(id)].kind; }
uint16_t AttrWireCode(AttrId id) { return kAttrs[static_cast<int>(id)].code; }

std::optional<AttrId> AttrFromName(std::string_view name) {
  static const TextIndex* index = new TextIndex(kAttrs);
  int row = index->Find(name);
  if (row < 0) return std::nullopt;
  return static_cast<AttrId>(row);
}

std::optional<AttrId> AttrFromWireCode(uint32_t code) {
  static const std::vector<int>* rows = new std::vector<int>(CodeIndex(kAttrs));
  if (code >= rows->size() || (*rows)[code] < 0) return std::nullopt;
  return static_cast<AttrId>((*rows)[code]);
}

EnumSet EnumSetOf(AttrId id) { return kAttrs[static_cast<int>(id)].enum_set; }

std::string_view EnumValueName(EnumSet set, int64_t code) {
  for (const EnumInfo& e : kEnumValues)
    if (e.set == set && e.code == code) return e.text;
  return {};
}

void AppendEnumList(std::string& out, AttrId id, const int64_t* codes, size_t count) {
  out += '{';
  for (size_t i = 0; i < count; ++i) {
    if (i) out += ',';
    out += EnumValueName(EnumSetOf(id), codes[i]);
  }
  out += '}';
}

std::optional<uint8_t> EnumValueFromName(EnumSet set, std::string_view text) {
  for (const EnumInfo& e : kEnumValues)
    if (e.set == set && e.text == text) return e.code;
  // XLA reads precision names in any case (HLO_GRAMMAR.md §5).
  if (set == EnumSet::kPrecision) {
    std::string lower(text);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    for (const EnumInfo& e : kEnumValues)
      if (e.set == set && e.text == lower) return e.code;
  }
  return std::nullopt;
}

Elementwise OpcodeElementwise(Opcode op) { return kOpcodes[static_cast<size_t>(op)].elementwise; }
OpFamily OpcodeFamily(Opcode op) { return kOpcodes[static_cast<size_t>(op)].family; }
ResultBytes OpcodeResultBytes(Opcode op) { return kOpcodes[static_cast<size_t>(op)].bytes; }
CollectiveKind OpcodeCollective(Opcode op) { return kOpcodes[static_cast<size_t>(op)].collective; }

bool IsExchangingCollective(Opcode op) {
  switch (OpcodeCollective(op)) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kRaggedAllToAll:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kPermute: return true;
    case CollectiveKind::kNo:
    case CollectiveKind::kDone:
    case CollectiveKind::kId: return false;
  }
  return false;
}
bool ParserMayInferShape(Opcode op) { return kOpcodes[static_cast<size_t>(op)].infer; }
AttrSchema OpcodeAttrSchema(Opcode op) { return kOpcodes[static_cast<size_t>(op)].attrs; }

namespace {

// Each opcode's async start (itself when none), and which opcodes some -done or -update takes:
// derived once from the spellings.
struct AsyncPairs {
  std::vector<Opcode> start_of;
  std::vector<bool> is_start;
  AsyncPairs() : start_of(kOpcodeCount), is_start(kOpcodeCount, false) {
    for (int i = 0; i < kOpcodeCount; ++i) {
      const auto self = static_cast<Opcode>(i);
      std::string_view text = kOpcodes[i].text;
      start_of[i] = self;
      for (std::string_view suffix : {std::string_view("-done"), std::string_view("-update")}) {
        if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) continue;
        std::string_view base = text.substr(0, text.size() - suffix.size());
        if (auto start = OpcodeFromName(std::string(base) + "-start"))
          start_of[i] = *start;
        else if (auto plain = OpcodeFromName(base))
          start_of[i] = *plain;
      }
      if (start_of[i] != self) is_start[static_cast<size_t>(start_of[i])] = true;
    }
  }
};

const AsyncPairs& Pairs() {
  static const AsyncPairs* pairs = new AsyncPairs();
  return *pairs;
}

}  // namespace

Opcode AsyncStartOf(Opcode op) { return Pairs().start_of[static_cast<size_t>(op)]; }
bool IsAsyncStart(Opcode op) { return Pairs().is_start[static_cast<size_t>(op)]; }

}  // namespace nhlo
