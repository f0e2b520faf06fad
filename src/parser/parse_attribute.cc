// SPDX-License-Identifier: Apache-2.0
// One `name=value` attribute of an instruction: its value read by the kind attributes.def gives
// the name, typed where it enters (parser/attr_values.h decodes the structured kinds) or kept as
// raw text with its whitespace folded.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/custom_calls.h"
#include "ir/literal.h"
#include "ir/opcode_attrs.h"
#include "ir/printer.h"
#include "parser/attr_values.h"
#include "parser/parser_internal.h"

namespace nhlo::parser_internal {

// Kinds whose value text is captured as a balanced block or token run, then decoded.
bool Parser::CapturedAsRaw(AttrKind kind) {
  switch (kind) {
    case AttrKind::Raw:
    case AttrKind::Window:
    case AttrKind::SliceRanges:
    case AttrKind::EnumList:
    case AttrKind::ReplicaGroups:
    case AttrKind::PairList:
    case AttrKind::BoolList:
    case AttrKind::KeyValues: return true;
    case AttrKind::ShapeList:
    case AttrKind::Int:
    case AttrKind::Bool:
    case AttrKind::Float:
    case AttrKind::String:
    case AttrKind::Ident:
    case AttrKind::IntList:
    case AttrKind::Computation:
    case AttrKind::ComputationList:
    case AttrKind::InstructionList:
    case AttrKind::Shape:
    case AttrKind::Config:
    case AttrKind::Literal:
    case AttrKind::PaddingConfig:
    case AttrKind::DimLabels:
    case AttrKind::Enum: return false;
  }
  return false;
}

// Turns the captured text of a structured attribute into its typed value; a malformed value is
// an error at the value's first character.
Status Parser::Structure(Attribute& attr, uint32_t value_offset) {
  Status s = DecodeStructuredValue(module_.arena, attr, attr.text);
  if (!s.ok()) return ErrorAt(value_offset, s.message());
  return OkStatus();
}

// attribute ::= attr_name value   (the value syntax depends on the attribute, see attributes.def)
Status Parser::ParseAttribute(Instruction* inst, SmallVec<Attribute, 8>& attrs) {
  if (tok_.kind != Tok::kAttrName) return Expected("attribute 'name='");
  auto id = AttrFromName(tok_.text);
  if (!id && IsRemovedAttribute(tok_.text)) return SkipRemovedAttribute();
  if (!id) return ErrorHere("unknown attribute '" + std::string(tok_.text) + "'");
  for (const Attribute& a : attrs)
    if (a.id == *id) return ErrorHere("attribute '" + std::string(tok_.text) + "' given twice");
  if (!AttrAllowed(inst->opcode, *id) && !(inst->async_sugar && AttrAllowed(inst->async_wrapped, *id)))
    return ErrorHere("'" + std::string(OpcodeName(inst->opcode)) + "' does not take attribute '" +
                     std::string(tok_.text) + "'");
  // A conditional on a pred names its two branches, one on an index its list (XLA's parser
  // accepts only the matching attributes).
  if (inst->opcode == Opcode::kConditional && !inst->operands.empty() && inst->operands[0]->shape.IsScalar()) {
    const PrimitiveType selector = inst->operands[0]->shape.type;
    if (selector == PrimitiveType::kPred && *id == AttrId::kBranchComputations)
      return ErrorHere(
          "unexpected attribute 'branch_computations': a conditional on a pred takes "
          "true_computation= and false_computation=");
    if (selector == PrimitiveType::kS32 && (*id == AttrId::kTrueComputation || *id == AttrId::kFalseComputation))
      return ErrorHere("unexpected attribute '" + std::string(tok_.text) +
                       "': a conditional on an index takes branch_computations=");
  }
  Attribute attr;
  attr.id = *id;
  attr.kind = AttrDeclaredKind(*id);
  Arena& arena = module_.arena;
  const bool raw_text = CapturedAsRaw(attr.kind);
  if (raw_text || attr.kind == AttrKind::IntList) {
    // The two most common value forms, read without tokens when plainly written: a raw {...}
    // block (metadata) and a flat integer list (dimensions, contracting dims).
    const char* text = src_.text.data();
    const char* p = text + lex_.position();
    while (*p == ' ') ++p;
    if (*p == '{' && raw_text) {
      uint32_t value_offset = static_cast<uint32_t>(p - text);
      // Plainly written metadata is decoded in the same pass that finds its end.
      if (attr.kind == AttrKind::KeyValues) {
        if (size_t length = ReadPlainKeyValues(arena, attr, std::string_view(src_.text).substr(value_offset))) {
          lex_.set_position(value_offset + static_cast<uint32_t>(length));
          AdvanceIfChar(',', Tok::kComma);
          attrs.push_back(attr);
          return OkStatus();
        }
      }
      lex_.set_position(value_offset);
      Token block = lex_.RawBraceBlock();
      if (block.kind == Tok::kError) return ErrorAt(block.offset, std::string(block.text));
      AdvanceIfChar(',', Tok::kComma);
      attr.text = FoldRaw(arena, block.text, !lex_.last_block_needs_fold());
      NHLO_TRY(Structure(attr, value_offset));
      attrs.push_back(attr);
      return OkStatus();
    }
    if (*p == '{' && attr.kind == AttrKind::IntList) {
      SmallVec<int64_t, 16> values;
      const char* q = p + 1;
      for (;;) {
        while (*q == ' ') ++q;
        if (*q == '}' && values.empty()) break;
        bool negative = *q == '-';
        const char* digits = q + negative;
        const char* end = digits;
        int64_t v = 0;
        while (IsDigit(*end) && end - digits < 18) v = v * 10 + (*end++ - '0');
        if (end == digits || IsIdentChar(*end)) break;  // not a plain integer: token path
        values.push_back(negative ? -v : v);
        q = end;
        while (*q == ' ') ++q;
        if (*q == ',') {
          ++q;
          continue;
        }
        if (*q != '}') break;
        attr.ints = arena.Copy(values.data(), values.size());
        lex_.set_position(static_cast<uint32_t>(q + 1 - text));
        AdvanceIfChar(',', Tok::kComma);
        attrs.push_back(attr);
        return OkStatus();
      }
      if (*q == '}' && values.empty()) {
        lex_.set_position(static_cast<uint32_t>(q + 1 - text));
        Advance();
        attrs.push_back(attr);
        return OkStatus();
      }
    }
  }
  Advance();
  switch (attr.kind) {
    case AttrKind::Int: {
      if (tok_.kind != Tok::kInt) return Expected("integer");
      NHLO_ASSIGN_OR_RETURN(attr.i, ParseInt(tok_));
      Advance();
      break;
    }
    case AttrKind::Bool:
      if (IsIdent("true"))
        attr.b = true;
      else if (!IsIdent("false"))
        return Expected("'true' or 'false'");
      Advance();
      break;
    case AttrKind::Float: {
      NHLO_ASSIGN_OR_RETURN(attr.f, ParseFloatToken(tok_, nullptr));
      Advance();
      break;
    }
    case AttrKind::String:
      if (tok_.kind != Tok::kString) return Expected("string");
      attr.text = arena.CopyString(CUnescape(tok_.text));
      Advance();
      break;
    case AttrKind::Ident:
    case AttrKind::PaddingConfig:
    case AttrKind::DimLabels:
    case AttrKind::Enum: {
      if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kPad && tok_.kind != Tok::kDxD &&
          tok_.kind != Tok::kDimLabels && tok_.kind != Tok::kInt)
        return Expected("a value");
      attr.text = tok_.text;
      uint32_t value_offset = tok_.offset;
      Advance();
      NHLO_TRY(Structure(attr, value_offset));
      break;
    }
    case AttrKind::IntList: {
      if (tok_.kind == Tok::kLBrace && PeekNext().kind == Tok::kLBrace) {
        attr.kind = AttrKind::Raw;  // a list of lists (e.g. collective-permute slice_sizes)
        NHLO_ASSIGN_OR_RETURN(attr.text, CaptureRaw());
        break;
      }
      SmallVec<int64_t, 16> values;
      NHLO_TRY(ParseIntList(values));
      attr.ints = arena.Copy(values.data(), values.size());
      break;
    }
    case AttrKind::Computation: {
      NHLO_ASSIGN_OR_RETURN(Computation * c, ParseComputationRef());
      attr.computations = arena.Copy(&c, 1);
      break;
    }
    case AttrKind::ComputationList: {
      NHLO_TRY(Expect(Tok::kLBrace, "'{'"));
      std::vector<Computation*> comps;
      while (tok_.kind != Tok::kRBrace) {
        NHLO_ASSIGN_OR_RETURN(Computation * c, ParseComputationRef());
        comps.push_back(c);
        if (tok_.kind == Tok::kComma)
          Advance();
        else if (tok_.kind != Tok::kRBrace)
          return Expected("',' or '}'");
      }
      Advance();
      attr.computations = arena.Copy(comps);
      break;
    }
    case AttrKind::InstructionList: {
      NHLO_TRY(Expect(Tok::kLBrace, "'{'"));
      std::vector<Instruction*> insts;
      while (tok_.kind != Tok::kRBrace) {
        if (tok_.kind != Tok::kName && tok_.kind != Tok::kIdent) return Expected("instruction name");
        Instruction* pred = scope_.find(tok_.text);
        if (!pred) return ErrorHere("unknown instruction '" + std::string(tok_.text) + "'");
        insts.push_back(pred);
        Advance();
        if (tok_.kind == Tok::kComma)
          Advance();
        else if (tok_.kind != Tok::kRBrace)
          return Expected("',' or '}'");
      }
      Advance();
      attr.instructions = arena.Copy(insts);
      break;
    }
    case AttrKind::Shape: {
      Shape s;
      NHLO_TRY(ParseShape(s));
      attr.shape = arena.New<Shape>(s);
      break;
    }
    case AttrKind::ShapeList: NHLO_TRY(ParseShapeList(attr)); break;
    case AttrKind::Raw:
    case AttrKind::Window:
    case AttrKind::SliceRanges:
    case AttrKind::EnumList:
    case AttrKind::ReplicaGroups:
    case AttrKind::PairList:
    case AttrKind::BoolList:
    case AttrKind::KeyValues: {
      uint32_t value_offset = tok_.offset;
      NHLO_ASSIGN_OR_RETURN(attr.text, CaptureRaw());
      NHLO_TRY(Structure(attr, value_offset));
      break;
    }
    case AttrKind::Config:
      if (tok_.kind == Tok::kString) {
        std::string value = CUnescape(tok_.text);
        attr.text = arena.CopyString(value);
        Advance();
      } else if (tok_.kind == Tok::kLBrace) {
        lex_.set_position(tok_.offset);
        Token block = lex_.RawBraceBlock();
        if (block.kind == Tok::kError) return ErrorAt(block.offset, std::string(block.text));
        attr.text = FoldRaw(arena, block.text, !lex_.last_block_needs_fold());
        attr.config_is_json = true;
        Advance();
      } else {
        return Expected("a string or '{'");
      }
      // Parsed once here, for whoever reads it; text that is not JSON is still a valid config.
      attr.json = module_.ParseJson(attr.text);
      break;
    case AttrKind::Literal: NHLO_ASSIGN_OR_RETURN(attr.literal, ParseShapedLiteral()); break;
  }
  attrs.push_back(attr);
  return OkStatus();
}

// int_list ::= '{' (INT (',' INT)*)? '}'
Status Parser::ParseIntList(SmallVec<int64_t, 16>& out) {
  NHLO_TRY(Expect(Tok::kLBrace, "'{'"));
  while (tok_.kind != Tok::kRBrace) {
    if (tok_.kind != Tok::kInt) return Expected("integer");
    NHLO_ASSIGN_OR_RETURN(int64_t v, ParseInt(tok_));
    out.push_back(v);
    Advance();
    if (tok_.kind == Tok::kComma)
      Advance();
    else if (tok_.kind != Tok::kRBrace)
      return Expected("',' or '}'");
  }
  Advance();
  return OkStatus();
}

// shape_list ::= '{' (shape (',' shape)*)? '}'   (operand_layout_constraints; layouts kept)
Status Parser::ParseShapeList(Attribute& attr) {
  uint32_t start = tok_.offset;
  NHLO_TRY(Expect(Tok::kLBrace, "'{'"));
  std::vector<Shape> shapes;
  while (tok_.kind != Tok::kRBrace) {
    Shape& s = shapes.emplace_back();
    NHLO_TRY(ParseShape(s));
    if (tok_.kind == Tok::kComma)
      Advance();
    else if (tok_.kind != Tok::kRBrace)
      return Expected("',' or '}'");
  }
  uint32_t end = tok_.offset + 1;
  Advance();
  attr.shapes = module_.arena.Copy(shapes);
  // The source spelling is kept only where the printer would write the list otherwise.
  std::string canonical;
  AppendAttributeValue(canonical, attr);
  std::string_view text = FoldRaw(module_.arena, std::string_view(src_.text).substr(start, end - start));
  if (canonical != text) attr.text = text;
  return OkStatus();
}

// raw_value ::= '{' balanced '}' | '[' ... ']' ('<=' '[' ... ']' ('T' '(' ... ')')?)? | token
Result<std::string_view> Parser::CaptureRaw() {
  std::string_view text = src_.text;
  uint32_t start = tok_.offset;
  if (tok_.kind == Tok::kLBrace) {
    lex_.set_position(tok_.offset);
    Token block = lex_.RawBraceBlock();
    if (block.kind == Tok::kError) return ErrorAt(block.offset, std::string(block.text));
    Advance();
    return FoldRaw(module_.arena, block.text, !lex_.last_block_needs_fold());
  }
  auto skip_group = [&](Tok open, Tok close) -> Status {
    int depth = 0;
    do {
      if (tok_.kind == Tok::kEof || tok_.kind == Tok::kError) return Expected("a closing bracket");
      if (tok_.kind == open) ++depth;
      if (tok_.kind == close) --depth;
      Advance();
    } while (depth > 0);
    return OkStatus();
  };
  uint32_t end = 0;
  if (IsIdent("mesh") && PeekNext().kind == Tok::kLBracket) {
    // Named-mesh replica groups: mesh[...] {axes}
    Advance();
    NHLO_TRY(skip_group(Tok::kLBracket, Tok::kRBracket));
    if (tok_.kind == Tok::kLBrace) NHLO_TRY(skip_group(Tok::kLBrace, Tok::kRBrace));
    end = tok_.offset;
    while (end > start &&
           (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\t' || text[end - 1] == '\r'))
      --end;
  } else if (tok_.kind == Tok::kLBracket || tok_.kind == Tok::kLParen) {
    Tok open = tok_.kind, close = open == Tok::kLBracket ? Tok::kRBracket : Tok::kRParen;
    NHLO_TRY(skip_group(open, close));
    if (tok_.kind == Tok::kLeq) {  // iota replica groups: [G,S]<=[N] or [..]<=[..]T(1,0)
      Advance();
      NHLO_TRY(skip_group(Tok::kLBracket, Tok::kRBracket));
      if (IsIdent("T") && PeekNext().kind == Tok::kLParen) {
        Advance();
        NHLO_TRY(skip_group(Tok::kLParen, Tok::kRParen));
      }
    }
    end = tok_.offset;
    while (end > start &&
           (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\t' || text[end - 1] == '\r'))
      --end;
  } else {
    switch (tok_.kind) {
      case Tok::kIdent:
      case Tok::kInt:
      case Tok::kDecimal:
      case Tok::kNegInf:
      case Tok::kPad:
      case Tok::kDxD:
      case Tok::kDimLabels: end = tok_.offset + static_cast<uint32_t>(tok_.text.size()); break;
      case Tok::kString: end = tok_.offset + static_cast<uint32_t>(tok_.text.size()) + 2; break;
      case Tok::kEof:
      case Tok::kError:
      case Tok::kName:
      case Tok::kAttrName:
      case Tok::kEqual:
      case Tok::kComma:
      case Tok::kColon:
      case Tok::kStar:
      case Tok::kQuestion:
      case Tok::kHash:
      case Tok::kPlus:
      case Tok::kTilde:
      case Tok::kLBracket:
      case Tok::kRBracket:
      case Tok::kLBrace:
      case Tok::kRBrace:
      case Tok::kLParen:
      case Tok::kRParen:
      case Tok::kArrow:
      case Tok::kLeq:
      case Tok::kEllipsis: return Expected("an attribute value");
    }
    Advance();
  }
  return FoldRaw(module_.arena, text.substr(start, end - start));
}

}  // namespace nhlo::parser_internal
