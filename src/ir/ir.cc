// SPDX-License-Identifier: Apache-2.0
#include "ir/ir.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "support/status.h"

namespace nhlo {
namespace {

struct OpcodeInfo {
  std::string_view text;
  int arity;
};
constexpr OpcodeInfo kOpcodes[] = {
#define NHLO_OPCODE(Enum, text, arity) {text, arity},
#include "ir/opcodes.def"
#undef NHLO_OPCODE
};

struct AttrInfo {
  std::string_view text;
  AttrKind kind;
};
constexpr AttrInfo kAttrs[] = {
#define NHLO_ATTR(Enum, text, kind) {text, AttrKind::kind},
#include "ir/attributes.def"
#undef NHLO_ATTR
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
      if (s.text == name) return s.row;
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

}  // namespace

std::string_view OpcodeName(Opcode op) { return kOpcodes[static_cast<int>(op)].text; }
int OpcodeArity(Opcode op) { return kOpcodes[static_cast<int>(op)].arity; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  static const TextIndex* index = new TextIndex(kOpcodes);
  int row = index->Find(name);
  if (row < 0) return std::nullopt;
  return static_cast<Opcode>(row);
}

std::string_view AttrName(AttrId id) { return kAttrs[static_cast<int>(id)].text; }
AttrKind AttrDeclaredKind(AttrId id) { return kAttrs[static_cast<int>(id)].kind; }

std::optional<AttrId> AttrFromName(std::string_view name) {
  static const TextIndex* index = new TextIndex(kAttrs);
  int row = index->Find(name);
  if (row < 0) return std::nullopt;
  return static_cast<AttrId>(row);
}

bool IsElementwiseUnary(Opcode op) {
  switch (op) {
    case Opcode::kAbs: case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin:
    case Opcode::kAsinh: case Opcode::kAtanh: case Opcode::kCbrt: case Opcode::kCeil:
    case Opcode::kClz: case Opcode::kCos: case Opcode::kCosh: case Opcode::kErf:
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kFloor: case Opcode::kImag:
    case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kNegate: case Opcode::kNot: case Opcode::kPopulationCount: case Opcode::kReal:
    case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven: case Opcode::kRsqrt:
    case Opcode::kSign: case Opcode::kSin: case Opcode::kSinh: case Opcode::kSqrt:
    case Opcode::kTan: case Opcode::kTanh: case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kRemainder: case Opcode::kPower: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAtan2: case Opcode::kComplex: case Opcode::kAnd: case Opcode::kOr:
    case Opcode::kXor: case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kMulhi:
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------
// Shapes

int64_t Shape::ElementCount() const {
  if (!IsArray()) return -1;
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return -1;
    if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
    n *= dims[i];
  }
  return n;
}

bool SameShape(const Shape& a, const Shape& b) {
  if (a.type != b.type) return false;
  if (a.IsTuple()) {
    if (a.tuple.size() != b.tuple.size()) return false;
    for (size_t i = 0; i < a.tuple.size(); ++i)
      if (!SameShape(a.tuple[i], b.tuple[i])) return false;
    return true;
  }
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] != b.dims[i]) return false;
    if (a.IsDynamicDim(i) != b.IsDynamicDim(i)) return false;
  }
  return true;
}

void AppendShape(std::string& out, const Shape& s, bool print_layout) {
  if (s.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < s.tuple.size(); ++i) {
      if (i) out += ", ";
      AppendShape(out, s.tuple[i], print_layout);
    }
    out += ')';
    return;
  }
  if (s.type == PrimitiveType::kBuffer) {
    out += "b(";
    if (!s.tuple.empty()) AppendShape(out, s.tuple[0], print_layout);
    out += ')';
    return;
  }
  out += PrimitiveTypeName(s.type);
  out += '[';
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i) out += ',';
    DimKind kind = s.dim_kinds.empty() ? DimKind::kStatic : s.dim_kinds[i];
    if (kind == DimKind::kUnbounded) {
      out += '?';
    } else {
      if (kind == DimKind::kBounded) out += "<=";
      out += std::to_string(s.dims[i]);
    }
  }
  out += ']';
  if (!print_layout || !s.IsArray()) return;
  if (s.dims.empty() && (s.layout == nullptr || s.layout->tail.empty())) return;
  out += '{';
  if (s.layout) {
    for (size_t i = 0; i < s.layout->minor_to_major.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(s.layout->minor_to_major[i]);
    }
    if (!s.layout->tail.empty()) {
      out += ':';
      out += s.layout->tail;
    }
  } else {
    for (size_t i = s.dims.size(); i-- > 0;) {
      out += std::to_string(i);
      if (i) out += ',';
    }
  }
  out += '}';
}

std::string ShapeToString(const Shape& s, bool print_layout) {
  std::string out;
  AppendShape(out, s, print_layout);
  return out;
}

// ---------------------------------------------------------------------------------------
// Instructions and modules

const Attribute* Instruction::FindAttr(AttrId id) const {
  for (const Attribute& a : attrs)
    if (a.id == id) return &a;
  return nullptr;
}

std::vector<Instruction*> Computation::Parameters() const {
  std::vector<Instruction*> params;
  AppendParameters(params);
  return params;
}

// Built on first use (passes), not while parsing: parsing a module must not pay for a second
// hash table of every name.
struct Module::NameSet {
  bool built = false;
  std::unordered_set<std::string_view> names;
  std::unordered_map<std::string_view, int64_t> next_suffix;
};

Module::Module() : names_(std::make_unique<NameSet>()) {}
Module::~Module() = default;

Computation* Module::AddComputation(std::string_view comp_name) {
  computations.push_back(std::make_unique<Computation>());
  Computation* comp = computations.back().get();
  comp->name = comp_name;
  comp->parent = this;
  return comp;
}

Computation* Module::FindComputation(std::string_view comp_name) const {
  for (const auto& c : computations)
    if (c->name == comp_name) return c.get();
  return nullptr;
}

void Module::ForgetNames() {
  names_->built = false;
  names_->names.clear();
}

std::string_view Module::UniqueName(std::string_view base) {
  // Strip a numeric ".N" suffix so that convert.3 begets convert.4, not convert.3.1.
  size_t dot = base.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < base.size() &&
      std::all_of(base.begin() + dot + 1, base.end(), [](char c) { return c >= '0' && c <= '9'; }))
    base = base.substr(0, dot);
  if (base.empty()) base = "inst";
  if (!names_->built) {
    for (const auto& comp : computations)
      for (const Instruction* inst : comp->instructions) names_->names.insert(inst->name);
    names_->built = true;
  }
  std::string_view stable_base = arena.CopyString(base);
  int64_t& suffix = names_->next_suffix[stable_base];
  for (;;) {
    std::string candidate = std::string(stable_base) + "." + std::to_string(++suffix);
    if (!names_->names.count(candidate)) {
      std::string_view stored = arena.CopyString(candidate);
      names_->names.insert(stored);
      return stored;
    }
  }
}

Instruction* Module::NewInstruction(Computation* comp, Opcode op, const Shape& shape,
                                    const std::vector<Instruction*>& operands,
                                    std::string_view base_name) {
  Instruction* inst = arena.New<Instruction>();
  inst->opcode = op;
  inst->shape = shape;
  inst->operands = arena.Copy(operands);
  inst->parent = comp;
  inst->name = UniqueName(base_name.empty() ? OpcodeName(op) : base_name);
  comp->instructions.push_back(inst);
  return inst;
}

Shape Module::MakeArrayShape(PrimitiveType type, const std::vector<int64_t>& dims) {
  Shape s;
  s.type = type;
  s.dims = arena.Copy(dims);
  return s;
}

Shape Module::MakeTupleShape(const std::vector<Shape>& elements) {
  Shape s;
  s.type = PrimitiveType::kTuple;
  s.tuple = arena.Copy(elements);
  return s;
}

std::vector<int> CountUsers(const Computation& comp) {
  std::unordered_map<const Instruction*, int> index;
  index.reserve(comp.instructions.size());
  for (size_t i = 0; i < comp.instructions.size(); ++i) index[comp.instructions[i]] = int(i);
  std::vector<int> users(comp.instructions.size(), 0);
  for (const Instruction* inst : comp.instructions)
    for (const Instruction* op : inst->operands) {
      auto it = index.find(op);
      if (it != index.end()) ++users[it->second];
    }
  return users;
}

}  // namespace nhlo
