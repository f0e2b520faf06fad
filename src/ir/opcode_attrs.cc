// SPDX-License-Identifier: Apache-2.0
#include "ir/opcode_attrs.h"

#include <bitset>
#include <initializer_list>

namespace nhlo {
namespace {

// The per-opcode answers, computed once from attr_schemas.def and opcodes.def's attrs column:
// the parser asks for every attribute it reads.
struct Table {
  struct Schema {
    std::bitset<kAttrCount> allowed;
    std::vector<AttrId> required;
    std::vector<AttrId> print_first;
  };
  Schema schemas[kAttrSchemaCount];

  void Fill(AttrSchema name, std::initializer_list<AttrId> allowed, std::initializer_list<AttrId> required,
            std::initializer_list<AttrId> print_first) {
    Schema& schema = schemas[static_cast<size_t>(name)];
    for (AttrId id : allowed) schema.allowed.set(static_cast<size_t>(id));
    schema.required = required;
    schema.print_first = print_first;
  }

  Table() {
    using enum AttrId;
#define NHLO_ATTR_LIST(...) \
  { __VA_ARGS__ }
#define NHLO_ATTR_SCHEMA(Name, allowed, required, print_first) \
  Fill(AttrSchema::k##Name, NHLO_ATTR_LIST allowed, NHLO_ATTR_LIST required, NHLO_ATTR_LIST print_first);
#include "types/attr_schemas.def"
#undef NHLO_ATTR_SCHEMA
#undef NHLO_ATTR_LIST
    const std::bitset<kAttrCount> generic = schemas[static_cast<size_t>(AttrSchema::kGeneric)].allowed;
    for (Schema& schema : schemas) schema.allowed |= generic;
  }

  const Schema& Of(Opcode op) const { return schemas[static_cast<size_t>(OpcodeAttrSchema(op))]; }
};

const Table& GetTable() {
  static const Table* table = new Table();
  return *table;
}

}  // namespace

bool AttrAllowed(Opcode op, AttrId id) { return GetTable().Of(op).allowed.test(static_cast<size_t>(id)); }

const std::vector<AttrId>& RequiredAttrs(Opcode op) { return GetTable().Of(op).required; }

int AttrPrintRank(Opcode op, AttrId id) {
  const std::vector<AttrId>& first = GetTable().Of(op).print_first;
  for (size_t i = 0; i < first.size(); ++i)
    if (first[i] == id) return static_cast<int>(i) - static_cast<int>(first.size());
  return 2 * static_cast<int>(id);
}

}  // namespace nhlo
