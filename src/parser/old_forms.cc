// SPDX-License-Identifier: Apache-2.0
// Forms of HLO text that older XLA versions printed and today's XLA no longer reads
// (docs/old-forms.md). Each is read into today's form and noted once per module with a warning
// that names the form and the XLA commit that retired it (Module::NoteOldForm); `--strict`
// turns the notes into errors. Whatever the old text meant is kept: a removed opcode becomes
// the instructions XLA replaced it with, a tokenless transfer gets its token.
#include <algorithm>
#include <cstring>

#include "parser/parser_internal.h"

namespace nhlo::parser_internal {
namespace {

// The comparison opcodes XLA replaced by `compare` (b354d8a847, 2019-03-07), with the direction
// each became.
struct OldComparison {
  std::string_view opcode;
  std::string_view direction;
};
constexpr OldComparison kOldComparisons[] = {
    {"equal-to", "EQ"},  {"not-equal-to", "NE"},          {"greater-than", "GT"}, {"greater-than-or-equal-to", "GE"},
    {"less-than", "LT"}, {"less-than-or-equal-to", "LE"},
};

std::string_view OldComparisonDirection(std::string_view word) {
  for (const OldComparison& c : kOldComparisons)
    if (c.opcode == word) return c.direction;
  return {};
}

// Attributes XLA removed, read and dropped: none carried meaning for the values computed.
struct RemovedAttribute {
  std::string_view name;
  std::string_view retired;
};
constexpr RemovedAttribute kRemovedAttributes[] = {
    {"outer_dimension_partitions", "a CPU parallel-task hint, removed in 99af7933ab, 2022-09-08"},
    {"async_group_id", "removed in 9696bb9735, 2024-01-12"},
    {"barrier", "all-reduce's barrier, moved into backend_config in 4f065ff52d, 2019-06-20"},
};

Attribute IntAttribute(AttrId id, int64_t value) {
  Attribute a;
  a.id = id;
  a.kind = AttrKind::Int;
  a.i = value;
  return a;
}

}  // namespace

void Parser::NoteOldForm(uint32_t offset, std::string message) {
  std::string note = "old form: " + std::move(message);
  if (!module_.RecountOldForm(note)) module_.NoteOldForm(DiagnosticAt(src_.name, src_.text, offset, std::move(note)));
}

std::optional<Opcode> Parser::OldOpcode(std::string_view word) {
  if (!OldComparisonDirection(word).empty()) return Opcode::kCompare;
  if (word == "tuple-select") return Opcode::kSelect;
  if (word == "cross-replica-sum") return Opcode::kAllReduce;
  return std::nullopt;
}

bool Parser::IsRemovedAttribute(std::string_view name) {
  for (const RemovedAttribute& a : kRemovedAttributes)
    if (a.name == name) return true;
  return false;
}

// removed_attribute ::= attr_name value   (read, noted, dropped)
Status Parser::SkipRemovedAttribute() {
  std::string_view name = tok_.text;
  uint32_t at = tok_.offset;
  std::string_view retired;
  for (const RemovedAttribute& a : kRemovedAttributes)
    if (a.name == name) retired = a.retired;
  Advance();
  NHLO_TRY(CaptureRaw().status());
  NoteOldForm(at, "attribute '" + std::string(name) + "' (" + std::string(retired) + "), dropped");
  return OkStatus();
}

// A constant of rank 2 and more (and a tuple constant) repeated its shape inside the literal
// until def8f96bee (2018-12-14): `constant(f32[2,3] { {1, 2, 3}, {4, 5, 6} })`. The shape is
// read, checked against the constant's, and dropped.
Status Parser::SkipOldLiteralShape(const Shape& shape) {
  bool array_start = tok_.kind == Tok::kIdent && TypeFromWord(tok_.text);
  bool tuple_start = tok_.kind == Tok::kLParen && shape.IsTuple();
  if (tuple_start) {
    Token next = PeekNext();
    tuple_start = next.kind == Tok::kIdent && TypeFromWord(next.text);
  }
  if (!array_start && !tuple_start) return OkStatus();
  uint32_t at = tok_.offset;
  Shape written;
  literal_follows_ = true;
  Status parsed = ParseShape(written);
  literal_follows_ = false;
  NHLO_TRY(parsed);
  if (!SameShape(written, shape))
    return ErrorAt(at, "the literal is written as " + ShapeToString(written, false) + ", but its shape is " +
                           ShapeToString(shape, false));
  NoteOldForm(at,
              "a literal that repeats its shape (`constant(f32[2,3] {...})`; XLA stopped writing and "
              "reading it in def8f96bee, 2018-12-14), read without it");
  return OkStatus();
}

// sparse_literal ::= '{' ((('[' INT (',' INT)* ']') | INT) ':' value ','?)* '}'
// The literal of a sparse layout (2018-01 to 31bec056e8, 2020-01-02): the elements it lists,
// at their indices, and zero everywhere else.
Status Parser::ParseSparseLiteral(const Shape& shape, Literal& lit) {
  NHLO_TRY(Expect(Tok::kLBrace, "'{' to open the sparse literal"));
  const int elem_size = HostByteSize(shape.type);
  while (tok_.kind != Tok::kRBrace) {
    uint32_t index_at = tok_.offset;
    SmallVec<int64_t, 8> index;
    if (tok_.kind == Tok::kLBracket) {
      Advance();
      while (tok_.kind != Tok::kRBracket) {
        if (tok_.kind != Tok::kInt) return Expected("an index in the sparse literal");
        NHLO_ASSIGN_OR_RETURN(int64_t i, ParseInt(tok_));
        index.push_back(i);
        Advance();
        if (tok_.kind == Tok::kComma)
          Advance();
        else if (tok_.kind != Tok::kRBracket)
          return Expected("',' or ']' in the sparse index");
      }
      Advance();
    } else if (tok_.kind == Tok::kInt) {
      NHLO_ASSIGN_OR_RETURN(int64_t i, ParseInt(tok_));
      index.push_back(i);
      Advance();
    } else {
      return Expected("an index ('[i, j, ...]' or 'i') in the sparse literal");
    }
    if (index.size() != shape.rank())
      return ErrorAt(index_at, "sparse index of " + std::to_string(index.size()) + " dimensions for a shape of rank " +
                                   std::to_string(shape.rank()));
    int64_t linear = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      if (index[d] < 0 || index[d] >= shape.dims[d])
        return ErrorAt(index_at, "sparse index out of range for " + ShapeToString(shape, false));
      linear = linear * shape.dims[d] + index[d];
    }
    NHLO_TRY(Expect(Tok::kColon, "':' after the sparse index"));
    NHLO_TRY(ParseElement(shape.type, lit.data.data() + linear * elem_size));
    if (tok_.kind == Tok::kComma) Advance();
  }
  Advance();
  return OkStatus();
}

// A new instruction the parser makes for `comp` (placed at its end, so before the instruction
// being parsed), named from `base` with the other generated names.
Instruction* Parser::NewGeneratedInstruction(Computation* comp, Opcode op, const Shape& shape,
                                             std::initializer_list<Instruction*> operands, std::string_view base,
                                             uint32_t offset) {
  Instruction* inst = module_.arena.New<Instruction>();
  inst->name = module_.arena.CopyString(base);
  inst->opcode = op;
  inst->shape = shape;
  inst->parent = comp;
  inst->source_offset = offset;
  inst->source_id = source_id_;
  const std::vector<Instruction*> read(operands);
  inst->operands = module_.arena.Copy(read);
  comp->instructions.push_back(inst);
  generated_.push_back(inst);
  return inst;
}

// The removed opcodes, noted where they are read (before the instruction's attributes).
void Parser::NoteOldOpcode(std::string_view opcode_word, uint32_t offset) {
  if (std::string_view direction = OldComparisonDirection(opcode_word); !direction.empty())
    NoteOldForm(offset, "opcode '" + std::string(opcode_word) +
                            "' (XLA replaced the comparison opcodes by compare in b354d8a847, 2019-03-07), read as "
                            "compare, direction=" +
                            std::string(direction));
  else if (opcode_word == "cross-replica-sum")
    NoteOldForm(offset,
                "opcode 'cross-replica-sum' (renamed all-reduce in XLA f0651d869d, 2018-12-17), read as "
                "all-reduce");
  else if (opcode_word == "tuple-select")
    NoteOldForm(offset,
                "opcode 'tuple-select' (removed from XLA in 137ac4bc39, 2022-04-20), read as a select of "
                "each tuple element");
}

// A comparison opcode is compare with the direction it named.
Status Parser::RewriteOldOpcode(std::string_view opcode_word, uint32_t offset, SmallVec<Attribute, 8>& attrs) {
  std::string_view direction = OldComparisonDirection(opcode_word);
  if (direction.empty()) return OkStatus();
  Attribute a;
  a.id = AttrId::kDirection;
  a.kind = AttrDeclaredKind(AttrId::kDirection);
  a.text = direction;
  NHLO_TRY(Structure(a, offset));
  attrs.push_back(a);
  return OkStatus();
}

// The old forms that need instructions of their own, once `inst` has its attributes:
// tuple-select, transfers without tokens, and copy-start's two-element shape.
Status Parser::LowerOldInstruction(Instruction* inst, std::string_view opcode_word, uint32_t offset, bool has_shape) {
  Computation* comp = inst->parent;
  const std::string name(inst->name.empty() ? "anon" : inst->name);
  const Shape token = module_.MakeArrayShape(PrimitiveType::kToken, {});
  const Shape u32 = module_.MakeArrayShape(PrimitiveType::kU32, {});
  const Shape empty = module_.MakeTupleShape({});

  if (opcode_word == "tuple-select") {
    // tuple-select(p, a, b) is a or b whole (29eb4c0c4e .. 137ac4bc39): today's select of each
    // leaf on the scalar predicate, gathered into the same tuple.
    if (inst->operands.size() != 3)
      return ErrorAt(offset, "'tuple-select' takes 3 operands, got " + std::to_string(inst->operands.size()));
    Instruction* pred = inst->operands[0];
    Instruction* on_true = inst->operands[1];
    Instruction* on_false = inst->operands[2];
    if (!pred->shape.IsScalar() || pred->shape.type != PrimitiveType::kPred)
      return ErrorAt(offset, "'tuple-select' chooses on a pred[], got " + ShapeToString(pred->shape, false));
    if (!on_true->shape.IsTuple() || !SameShape(on_true->shape, on_false->shape))
      return ErrorAt(offset, "'tuple-select' chooses between two tuples of one shape, got " +
                                 ShapeToString(on_true->shape, false) + " and " +
                                 ShapeToString(on_false->shape, false));
    if (has_shape && !SameShape(inst->shape, on_true->shape))
      return ErrorAt(offset, "'tuple-select' result shape is " + ShapeToString(inst->shape, false) +
                                 " but its operands give " + ShapeToString(on_true->shape, false));
    // Selects of every leaf; a tuple element becomes a tuple of its own leaves' selects.
    auto select = [&](auto& self, Instruction* a, Instruction* b, const Shape& shape) -> Result<Instruction*> {
      if (!shape.IsTuple()) {
        if (!shape.IsArray())
          return ErrorAt(offset, "'tuple-select' cannot choose a " + ShapeToString(shape, false) + " element");
        return NewGeneratedInstruction(comp, Opcode::kSelect, shape, {pred, a, b}, name + ".select", offset);
      }
      std::vector<Instruction*> parts;
      for (size_t i = 0; i < shape.tuple.size(); ++i) {
        Attribute index = IntAttribute(AttrId::kIndex, static_cast<int64_t>(i));
        Instruction* ai = NewGeneratedInstruction(comp, Opcode::kGetTupleElement, shape.tuple[i], {a},
                                                  name + ".get-tuple-element", offset);
        Instruction* bi = NewGeneratedInstruction(comp, Opcode::kGetTupleElement, shape.tuple[i], {b},
                                                  name + ".get-tuple-element", offset);
        ai->attrs = module_.arena.Copy(&index, 1);
        bi->attrs = module_.arena.Copy(&index, 1);
        NHLO_ASSIGN_OR_RETURN(Instruction * part, self(self, ai, bi, shape.tuple[i]));
        parts.push_back(part);
      }
      Instruction* tuple = NewGeneratedInstruction(comp, Opcode::kTuple, shape, {}, name + ".tuple", offset);
      tuple->operands = module_.arena.Copy(parts);
      return tuple;
    };
    NHLO_ASSIGN_OR_RETURN(Instruction * whole, select(select, on_true, on_false, on_true->shape));
    // The instruction keeps its name and place: it becomes the tuple that select built last.
    comp->instructions.pop_back();
    generated_.pop_back();
    inst->opcode = Opcode::kTuple;
    inst->operands = whole->operands;
    inst->shape = on_true->shape;
    return OkStatus();
  }

  // send and recv between 2017-12 and 69f140d6bc (2018-07-02): asynchronous, without a token.
  // `(T, u32[]) recv()` and `recv-done(recv)` of shape T; `(T, u32[]) send(x)` and `()
  // send-done(send)`. The start gets its token and today's (T, u32[], token[]) (its users may
  // still write the old shape); the done reads it as today's done and keeps its name for what
  // the old one gave.
  const bool data_and_context = inst->shape.IsTuple() && inst->shape.tuple.size() == 2 &&
                                inst->shape.tuple[1].IsScalar() && inst->shape.tuple[1].type == PrimitiveType::kU32;
  if (((inst->opcode == Opcode::kRecv && inst->operands.empty()) ||
       (inst->opcode == Opcode::kSend && inst->operands.size() == 1)) &&
      has_shape && data_and_context) {
    Instruction* after_all = NewGeneratedInstruction(comp, Opcode::kAfterAll, token, {}, name + ".token", offset);
    std::vector<Instruction*> operands(inst->operands.begin(), inst->operands.end());
    operands.push_back(after_all);
    inst->operands = module_.arena.Copy(operands);
    old_shapes_.emplace(inst, inst->shape);
    inst->shape = module_.MakeTupleShape({inst->shape.tuple[0], u32, token});
    NoteOldForm(offset, "'" + std::string(OpcodeName(inst->opcode)) +
                            "' without a token operand (XLA's send and recv "
                            "take tokens since 69f140d6bc, 2018-07-02), read with an after-all token");
    return OkStatus();
  }
  if ((inst->opcode == Opcode::kRecvDone || inst->opcode == Opcode::kSendDone) && inst->operands.size() == 1 &&
      old_shapes_.count(inst->operands[0])) {
    const bool recv = inst->opcode == Opcode::kRecvDone;
    Instruction* start = inst->operands[0];
    if (recv && (!has_shape || inst->shape.IsTuple())) return OkStatus();  // today's (data, token[])
    if (!recv && !(inst->shape.IsTuple() && inst->shape.tuple.empty())) return OkStatus();
    const Shape data = start->shape.tuple[0];
    Instruction* done =
        NewGeneratedInstruction(comp, inst->opcode, recv ? module_.MakeTupleShape({data, token}) : token, {start},
                                name + (recv ? ".recv-done" : ".send-done"), offset);
    done->attrs = inst->attrs;
    inst->attrs = {};
    if (recv) {
      Attribute index = IntAttribute(AttrId::kIndex, 0);
      Instruction* read[1] = {done};
      inst->opcode = Opcode::kGetTupleElement;
      inst->operands = module_.arena.Copy(read, 1);
      inst->attrs = module_.arena.Copy(&index, 1);
    } else {
      inst->opcode = Opcode::kTuple;
      inst->operands = {};
    }
    return OkStatus();
  }

  // Transfers before tokens (infeed/outfeed until eeaed0d970, 2018-06-25; send/recv until
  // 69f140d6bc, 2018-07-02, then synchronous): each gets an after-all token, send and recv
  // their done, and the instruction becomes what the old one gave its users.
  const bool ends_in_token = inst->shape.IsTuple() && !inst->shape.tuple.empty() &&
                             inst->shape.tuple[inst->shape.tuple.size() - 1].type == PrimitiveType::kToken;
  const bool returns_nothing = !has_shape || (inst->shape.IsTuple() && inst->shape.tuple.empty());
  const bool tokenless = ((inst->opcode == Opcode::kInfeed || inst->opcode == Opcode::kRecv) &&
                          inst->operands.empty() && has_shape && !ends_in_token) ||
                         ((inst->opcode == Opcode::kOutfeed || inst->opcode == Opcode::kSend) &&
                          inst->operands.size() == 1 && returns_nothing);
  if (tokenless) {
    const std::string op(OpcodeName(inst->opcode));
    Instruction* after_all = NewGeneratedInstruction(comp, Opcode::kAfterAll, token, {}, name + ".token", offset);
    const Attribute* channel = inst->FindAttr(AttrId::kChannelId);
    auto with_channel = [&](Instruction* done) {
      if (channel) done->attrs = module_.arena.Copy(channel, 1);
    };
    Instruction* transfer = nullptr;
    if (inst->opcode == Opcode::kInfeed || inst->opcode == Opcode::kRecv) {
      const Shape data = inst->shape;
      Instruction* done;
      if (inst->opcode == Opcode::kInfeed) {
        transfer = NewGeneratedInstruction(comp, Opcode::kInfeed, module_.MakeTupleShape({data, token}), {after_all},
                                           name + ".infeed", offset);
        done = transfer;
      } else {
        transfer = NewGeneratedInstruction(comp, Opcode::kRecv, module_.MakeTupleShape({data, u32, token}), {after_all},
                                           name + ".recv", offset);
        done = NewGeneratedInstruction(comp, Opcode::kRecvDone, module_.MakeTupleShape({data, token}), {transfer},
                                       name + ".recv-done", offset);
        with_channel(done);
      }
      Attribute index = IntAttribute(AttrId::kIndex, 0);
      inst->opcode = Opcode::kGetTupleElement;
      Instruction* read[1] = {done};
      inst->operands = module_.arena.Copy(read, 1);
      transfer->attrs = inst->attrs;
      inst->attrs = module_.arena.Copy(&index, 1);
    } else {
      Instruction* data = inst->operands[0];
      if (inst->opcode == Opcode::kOutfeed) {
        transfer = NewGeneratedInstruction(comp, Opcode::kOutfeed, token, {data, after_all}, name + ".outfeed", offset);
      } else {
        transfer = NewGeneratedInstruction(comp, Opcode::kSend, module_.MakeTupleShape({data->shape, u32, token}),
                                           {data, after_all}, name + ".send", offset);
        Instruction* done =
            NewGeneratedInstruction(comp, Opcode::kSendDone, token, {transfer}, name + ".send-done", offset);
        with_channel(done);
      }
      transfer->attrs = inst->attrs;
      inst->opcode = Opcode::kTuple;
      inst->operands = {};
      inst->attrs = {};
      inst->shape = empty;
    }
    const bool feed = op == "infeed" || op == "outfeed";
    NoteOldForm(offset, "'" + op + "' without a token operand (" +
                            (feed ? std::string("XLA's infeed and outfeed take tokens since eeaed0d970, 2018-06-25")
                                  : std::string("XLA's send and recv take tokens since 69f140d6bc, 2018-07-02")) +
                            "), read with an after-all token" + (feed ? "" : " and its -done"));
    return OkStatus();
  }

  // copy-start was (target, context) from 62ca6ec9a3 (2019-06-14) to 517bb273a0 (2020-01-28),
  // which added the source: (target, source, context). Users that write the old shape with the
  // operand still read it (ParseOperands asks old_shapes_).
  if (inst->opcode == Opcode::kCopyStart && has_shape && inst->operands.size() == 1 && inst->shape.IsTuple() &&
      inst->shape.tuple.size() == 2 && inst->shape.tuple[1].IsScalar() &&
      inst->shape.tuple[1].type == PrimitiveType::kU32) {
    old_shapes_.emplace(inst, inst->shape);
    inst->shape = module_.MakeTupleShape({inst->shape.tuple[0], inst->operands[0]->shape, inst->shape.tuple[1]});
    NoteOldForm(offset,
                "copy-start of shape (target, context) (XLA's is (target, source, context) since 517bb273a0, "
                "2020-01-28), read with the source");
  }
  return OkStatus();
}

// operand_precision={packed_nibble, packed_nibble} on a dot or convolution of 8-bit integers:
// each operand element holds two 4-bit numbers, and the result sums the products of the low
// nibbles and those of the high ones. XLA's compilers lowered it (operand_upcaster.cc) to what
// is built here: each nibble shifted out in the operand's own type (arithmetic shifts for s8,
// logical for u8), converted to the result's element type, one dot or convolution per nibble
// with the default precision, and their sum. The instruction keeps its name as that add. XLA's
// verifier refused one packed operand, and operands that are not 8-bit integers, with the
// messages below; its evaluator computed the same sums (for u8 operands of a signed result it
// sign-extended the low nibble instead: a deviation of the reference, not of the compilers).
Status Parser::LowerPackedNibbles(Instruction* inst, uint32_t offset, bool has_shape) {
  const Attribute* precision = inst->FindAttr(AttrId::kOperandPrecision);
  int packed = 0;
  for (int64_t code : precision->ints) packed += code == static_cast<int64_t>(Precision::kPackedNibble);
  const bool dot = inst->opcode == Opcode::kDot;
  const std::string what = dot ? "Dot" : "Convolution";
  if (inst->operands.size() != 2 || packed != 2 || precision->ints.size() != 2)
    return ErrorAt(offset, what + " cannot have a single packed nibble argument");
  for (size_t k = 0; k < 2; ++k) {
    const Shape& s = inst->operands[k]->shape;
    if (!s.IsArray() || (s.type != PrimitiveType::kS8 && s.type != PrimitiveType::kU8))
      return ErrorAt(offset, std::string("Packed nibble precision can only apply to 8 bit integers. ") +
                                 (k == 0 ? "LHS" : "RHS") + " is " + ShapeToString(s, false) + ".");
  }
  if (!dot) {
    for (AttrId id : {AttrId::kFeatureGroupCount, AttrId::kBatchGroupCount})
      if (const Attribute* a = inst->FindAttr(id); a && a->i != 1)
        return ErrorAt(
            offset, "packed nibble precision needs " + std::string(AttrName(id)) + "=1, got " + std::to_string(a->i));
  }
  if (!has_shape || !inst->shape.IsArray())
    return ErrorAt(offset,
                   "a packed nibble " + std::string(OpcodeName(inst->opcode)) + " needs its result shape written");
  Computation* comp = inst->parent;
  const std::string name(inst->name.empty() ? "anon" : inst->name);
  const PrimitiveType result_type = inst->shape.type;
  // The two nibbles of operand k, in the result's element type.
  auto nibbles = [&](Instruction* x, Instruction* out[2]) {
    const PrimitiveType t = x->shape.type;
    Literal* four = module_.arena.New<Literal>();
    four->shape = module_.MakeArrayShape(t, {});
    four->data = module_.arena.NewArray<uint8_t>(1);
    four->data[0] = 4;
    Instruction* c = NewGeneratedInstruction(comp, Opcode::kConstant, four->shape, {}, name + ".constant", offset);
    c->literal = four;
    Attribute none;
    none.id = AttrId::kDimensions;
    none.kind = AttrKind::IntList;
    Instruction* shift = NewGeneratedInstruction(comp, Opcode::kBroadcast, x->shape, {c}, name + ".broadcast", offset);
    shift->attrs = module_.arena.Copy(&none, 1);
    const Opcode right = t == PrimitiveType::kS8 ? Opcode::kShiftRightArithmetic : Opcode::kShiftRightLogical;
    Instruction* up =
        NewGeneratedInstruction(comp, Opcode::kShiftLeft, x->shape, {x, shift}, name + ".shift-left", offset);
    Instruction* low = NewGeneratedInstruction(comp, right, x->shape, {up, shift}, name + ".nibble0", offset);
    Instruction* high = NewGeneratedInstruction(comp, right, x->shape, {x, shift}, name + ".nibble1", offset);
    Shape wide = x->shape;  // the operand's dimensions and layout
    wide.type = result_type;
    out[0] = NewGeneratedInstruction(comp, Opcode::kConvert, wide, {low}, name + ".convert", offset);
    out[1] = NewGeneratedInstruction(comp, Opcode::kConvert, wide, {high}, name + ".convert", offset);
  };
  Instruction *lhs[2], *rhs[2];
  nibbles(inst->operands[0], lhs);
  nibbles(inst->operands[1], rhs);
  // The op's attributes without operand_precision (the default); the add keeps the metadata.
  std::vector<Attribute> kept, add_attrs;
  for (const Attribute& a : inst->attrs) {
    if (a.id != AttrId::kOperandPrecision) kept.push_back(a);
    if (a.id == AttrId::kMetadata) add_attrs.push_back(a);
  }
  const Span<Attribute> op_attrs = module_.arena.Copy(kept.data(), kept.size());
  Instruction* parts[2];
  for (int n = 0; n < 2; ++n) {
    parts[n] = NewGeneratedInstruction(comp, inst->opcode, inst->shape, {lhs[n], rhs[n]},
                                       name + (dot ? ".dot" : ".convolution"), offset);
    parts[n]->attrs = op_attrs;
  }
  inst->opcode = Opcode::kAdd;
  inst->operands = module_.arena.Copy(parts, 2);
  inst->attrs = module_.arena.Copy(add_attrs.data(), add_attrs.size());
  NoteOldForm(offset,
              "operand_precision=packed_nibble (no longer in XLA's Precision enum; its compilers lowered it "
              "in operand_upcaster.cc), read as the sum of a " +
                  std::string(dot ? "dot" : "convolution") + " of the low nibbles and one of the high nibbles");
  return OkStatus();
}

}  // namespace nhlo::parser_internal
