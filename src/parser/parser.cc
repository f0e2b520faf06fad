// SPDX-License-Identifier: Apache-2.0
// Recursive-descent parser for HLO text: modules, computations, instructions, operands and
// attributes (shapes and literals are in parse_shape.cc and parse_literal.cc). Each Parse*
// function is headed by the grammar rule it implements (see shared/reference/HLO_GRAMMAR.md for
// the full grammar).
#include "parser/parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/custom_calls.h"
#include "ir/literal.h"
#include "ir/opcode_attrs.h"
#include "ir/printer.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "parser/attr_values.h"
#include "parser/header_aliases.h"
#include "parser/parser_internal.h"

namespace nhlo {
namespace parser_internal {

bool IsKeyword(std::string_view w) { return IsHloKeyword(w); }

// Element types as HLO text spells them; `tuple` and `buffer` are not lexed as types.
std::optional<PrimitiveType> TypeFromWord(std::string_view w) {
  // Type names are short and start with one of these letters: skip the table otherwise.
  if (w.size() < 2 || w.size() > 13) return std::nullopt;
  switch (w[0]) {
    case 'p':
    case 's':
    case 'u':
    case 'f':
    case 'b':
    case 'c':
    case 't':
    case 'o': break;
    default: return std::nullopt;
  }
  if (w[0] != 'p' && w[0] != 't' && w[0] != 'o' && !IsDigit(w[1]) && w != "bf16") return std::nullopt;
  auto t = PrimitiveTypeFromName(w);
  if (!t || *t == PrimitiveType::kTuple || *t == PrimitiveType::kBuffer) return std::nullopt;
  return t;
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEof: return "end of file";
    case Tok::kError: return "'" + std::string(t.text) + "'";
    case Tok::kName: return "name '" + std::string(t.text) + "'";
    case Tok::kAttrName: return "attribute '" + std::string(t.text) + "='";
    case Tok::kString: return "string";
    case Tok::kIdent:
    case Tok::kInt:
    case Tok::kDecimal:
    case Tok::kNegInf:
    case Tok::kDimLabels:
    case Tok::kDxD:
    case Tok::kPad:
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
    case Tok::kEllipsis: break;
  }
  return "'" + std::string(t.text) + "'";
}

// Folds runs of whitespace and comments outside strings into one space, so raw attribute text
// prints the same however the input was wrapped.
std::string_view FoldRaw(Arena& arena, std::string_view raw, bool known_clean) {
  if (known_clean) return raw;
  bool needs_fold = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\n' || c == '\t' || c == '\r' || (c == ' ' && i + 1 < raw.size() && raw[i + 1] == ' ') ||
        (c == '/' && i + 1 < raw.size() && (raw[i + 1] == '*' || raw[i + 1] == '/'))) {
      needs_fold = true;
      break;
    }
  }
  if (!needs_fold) return raw;
  std::string out;
  out.reserve(raw.size());
  bool pending_space = false;
  for (size_t i = 0; i < raw.size();) {
    char c = raw[i];
    if (c == '"' || c == '\'') {
      if (pending_space && !out.empty()) out += ' ';
      pending_space = false;
      size_t j = i + 1;
      while (j < raw.size() && raw[j] != c) j += (raw[j] == '\\') ? 2 : 1;
      j = std::min(j + 1, raw.size());
      out.append(raw.substr(i, j - i));
      i = j;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      pending_space = true;
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < raw.size() && raw[i + 1] == '*') {
      size_t end = raw.find("*/", i + 2);
      i = end == std::string_view::npos ? raw.size() : end + 2;
      pending_space = true;
      continue;
    }
    if (c == '/' && i + 1 < raw.size() && raw[i + 1] == '/') {
      while (i < raw.size() && raw[i] != '\n' && raw[i] != '\r') ++i;
      pending_space = true;
      continue;
    }
    // No space right inside brackets or before a comma: `{ a }` and `{a}` print alike.
    bool opener_before = !out.empty() && (out.back() == '{' || out.back() == '(' || out.back() == '[');
    bool closer_now = c == '}' || c == ')' || c == ']' || c == ',';
    if (pending_space && !out.empty() && !opener_before && !closer_now) out += ' ';
    pending_space = false;
    out += c;
    ++i;
  }
  return arena.CopyString(out);
}

// hlo_text ::= ('HloModule' name (',' attr)*)? stack_frames? computation+
Status Parser::Run() {
  Advance();
  if (IsIdent("HloModule"))
    NHLO_TRY(ParseHeader());
  else if (StartsSingleInstruction())
    return RunSingleInstruction();
  NHLO_TRY(ParseStackFrames());
  if (tok_.kind == Tok::kEof) return ErrorHere("expected a computation, got end of file");
  while (tok_.kind != Tok::kEof) NHLO_TRY(ParseComputation());
  PlaceInlineComputations();
  // XLA's forms with `%` mark every fifth operand; of the bare forms, the dumps do and
  // ShortParsable() does not.
  module_.source_style.operand_index_comments = module_.source_style.percent || operand_comment_seen_;

  // Entry: the one marked ENTRY, else the last computation.
  Computation* entry = nullptr;
  for (auto& c : module_.computations)
    if (c->is_entry) entry = c.get();
  if (!entry) {
    entry = module_.computations.back().get();
    entry->is_entry = true;
  }
  module_.entry = entry;
  NHLO_TRY(CheckHeaderAliases());
  PlaceCompactGets();
  NameGeneratedInstructions();
  module_.ForgetNames();  // names generated for implied computations were cached mid-parse
  if (module_.name.empty()) {
    module_.name = module_.arena.CopyString("module_" + std::string(entry->name));
  }
  return OkStatus();
}

// Without a header, a text that opens with an instruction (`name = ...`, `ROOT ...`, or a shape)
// is that instruction alone; anything else is computations.
bool Parser::StartsSingleInstruction() {
  if (IsIdent("ROOT") || tok_.kind == Tok::kAttrName || tok_.kind == Tok::kLParen) return true;
  if (tok_.kind == Tok::kIdent && TypeFromWord(tok_.text)) return true;
  bool name = tok_.kind == Tok::kName || (tok_.kind == Tok::kIdent && !IsKeyword(tok_.text));
  return name && PeekNext().kind == Tok::kEqual;
}

// single_instruction ::= instruction | shape opcode '(' operands ')' (',' attribute)*
// XLA's ParseSingleInstruction: the module `_` has one computation `_` holding the instruction
// (named `_` when the text gives no name); each operand that names nothing defined, or names
// nothing at all, becomes a parameter of the shape written with it (`_N` when unnamed).
Status Parser::RunSingleInstruction() {
  module_.name = "_";
  Computation* comp = module_.AddComputation("_");
  comp->is_entry = true;
  comp->source_offset = tok_.offset;
  comp->source_id = source_id_;
  module_.source_style.percent = tok_.kind == Tok::kName;
  module_.source_style.signatures = false;
  style_seen_ = true;
  BeginBody(comp);
  current_comp_ = comp;
  single_instruction_ = comp;
  if (tok_.kind == Tok::kLParen || (tok_.kind == Tok::kIdent && TypeFromWord(tok_.text)))
    NHLO_TRY(ParseInstructionBody(comp, "_", tok_.offset, /*nested=*/false).status());
  else
    NHLO_TRY(ParseInstruction(comp));
  if (tok_.kind != Tok::kEof)
    return ErrorHere("expected the end of the text after its one instruction, got " + Describe(tok_) +
                     " (a module starts with 'HloModule' or a computation)");
  comp->root = comp->instructions.back();
  module_.entry = comp;
  PlaceInlineComputations();
  module_.source_style.operand_index_comments = module_.source_style.percent || operand_comment_seen_;
  PlaceCompactGets();
  NameGeneratedInstructions();
  module_.ForgetNames();
  return OkStatus();
}

// standalone_literal ::= shape literal
Result<const Literal*> Parser::RunStandaloneLiteral() {
  Advance();
  Shape shape;
  literal_follows_ = true;
  NHLO_TRY(ParseShape(shape));
  literal_follows_ = false;
  NHLO_ASSIGN_OR_RETURN(const Literal* lit, ParseLiteral(shape));
  if (tok_.kind != Tok::kEof) return Expected("end of the literal");
  return lit;
}

// header ::= 'HloModule' name (',' attr_name value)*
Status Parser::ParseHeader() {
  Advance();
  if (tok_.kind != Tok::kName && tok_.kind != Tok::kIdent) return Expected("module name");
  module_.name = tok_.text;
  Advance();
  while (tok_.kind == Tok::kComma) {
    Advance();
    if (tok_.kind != Tok::kAttrName) return Expected("module attribute");
    std::string_view name = tok_.text;
    static constexpr std::string_view kKnown[] = {"is_scheduled",
                                                  "input_output_alias",
                                                  "buffer_donor",
                                                  "alias_passthrough_params",
                                                  "entry_computation_layout",
                                                  "allow_spmd_sharding_propagation_to_parameters",
                                                  "allow_spmd_sharding_propagation_to_output",
                                                  "replica_count",
                                                  "num_partitions",
                                                  "frontend_attributes",
                                                  "origin_recovery_table",
                                                  "debug_attributes"};
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown))
      return ErrorHere("unknown module attribute '" + std::string(name) + "'");
    for (auto& [seen, value] : module_.header_attrs)
      if (seen == name) return ErrorHere("module attribute '" + std::string(name) + "' given twice");
    Advance();
    const uint32_t value_offset = tok_.offset;
    NHLO_ASSIGN_OR_RETURN(std::string_view raw, CaptureRaw());
    if (name == "debug_attributes") {
      Status checked = CheckDebugAttributes(raw);
      if (!checked.ok()) return ErrorAt(value_offset, checked.message());
    }
    module_.header_attrs.emplace_back(name, raw);
  }
  return OkStatus();
}

// input_output_alias and buffer_donor, judged against the entry computation once it is known;
// an error points at the attribute's value.
Status Parser::CheckHeaderAliases() {
  std::vector<AliasEntry> aliases;
  std::vector<DonorEntry> donors;
  std::string_view where;
  auto at = [&](std::string_view raw) {
    const char* text = src_.text.data();
    return raw.data() >= text && raw.data() < text + src_.text.size() ? static_cast<uint32_t>(raw.data() - text) : 0u;
  };
  for (const auto& [name, raw] : module_.header_attrs) {
    if (name == "input_output_alias") {
      Result<std::vector<AliasEntry>> parsed = ParseInputOutputAlias(raw);
      if (!parsed.ok()) return ErrorAt(at(raw), parsed.status().message());
      aliases = std::move(*parsed);
      where = raw;
    } else if (name == "buffer_donor") {
      Result<std::vector<DonorEntry>> parsed = ParseBufferDonor(raw);
      if (!parsed.ok()) return ErrorAt(at(raw), parsed.status().message());
      donors = std::move(*parsed);
      if (where.empty()) where = raw;
    }
  }
  if (aliases.empty() && donors.empty()) return OkStatus();
  Status checked = CheckAliases(aliases, donors, *module_.entry);
  if (!checked.ok()) return ErrorAt(at(where), checked.message());
  return OkStatus();
}

// stack_frames ::= (FileNames|FunctionNames|FileLocations|StackFrames) (INT (STRING|{...}))*
Status Parser::ParseStackFrames() {
  uint32_t start = tok_.offset, end = start;
  bool any = false;
  while (IsIdent("FileNames") || IsIdent("FunctionNames") || IsIdent("FileLocations") || IsIdent("StackFrames")) {
    any = true;
    end = tok_.offset + static_cast<uint32_t>(tok_.text.size());
    Advance();
    while (tok_.kind == Tok::kInt) {
      Advance();
      if (tok_.kind == Tok::kString) {
        end = tok_.offset + static_cast<uint32_t>(tok_.text.size()) + 2;
        Advance();
      } else if (tok_.kind == Tok::kLBrace) {
        lex_.set_position(tok_.offset);
        Token block = lex_.RawBraceBlock();
        if (block.kind == Tok::kError) return ErrorAt(block.offset, std::string(block.text));
        end = block.offset + static_cast<uint32_t>(block.text.size());
        Advance();
      } else {
        return Expected("a string or '{' in the stack-frame table");
      }
    }
  }
  if (any) module_.stack_frames = std::string_view(src_.text).substr(start, end - start);
  return OkStatus();
}

// computation ::= 'ENTRY'? name signature? '{' instruction+ '}' (',' 'execution_thread=' STRING)?
// signature   ::= '(' (name ':' shape (',' name ':' shape)*)? ')' '->' shape
Status Parser::ParseComputation() {
  bool is_entry = false;
  if (IsIdent("ENTRY")) {
    is_entry = true;
    Advance();
  }
  if (tok_.kind != Tok::kName && !(tok_.kind == Tok::kIdent && !IsKeyword(tok_.text)))
    return Expected("computation name");
  std::string_view name = tok_.text;
  uint32_t name_offset = tok_.offset;
  Computation* comp = module_.TryAddComputation(name);
  if (!comp) return ErrorHere("computation '" + std::string(name) + "' is defined twice");
  // The first computation header tells the form the module is written in (--print-style=as-read).
  const bool percent = tok_.kind == Tok::kName;
  Advance();
  if (!style_seen_) {
    style_seen_ = true;
    module_.source_style.percent = percent;
    module_.source_style.signatures = tok_.kind == Tok::kLParen;
  }
  Shape declared_result;
  bool has_declared_result = false;
  uint32_t result_offset = 0;
  if (tok_.kind == Tok::kLParen) {
    // The signature is redundant with the instructions and printed back from them; the
    // parameters are checked for syntax only, the result against the root (as XLA's parser).
    if (!SkipPlainSignatureParameters()) {
      while (tok_.kind != Tok::kRParen) {
        if (tok_.kind != Tok::kName) return Expected("parameter 'name:' in the signature");
        Advance();
        Shape ignored;
        NHLO_TRY(ParseShape(ignored));
        if (tok_.kind == Tok::kComma)
          Advance();
        else if (tok_.kind != Tok::kRParen)
          return Expected("',' or ')'");
      }
      Advance();
    }
    NHLO_TRY(Expect(Tok::kArrow, "'->'"));
    result_offset = tok_.offset;
    NHLO_TRY(ParseShape(declared_result));
    has_declared_result = true;
  }
  if (tok_.kind != Tok::kLBrace) return Expected("'{' to open the computation body");
  Advance();
  if (is_entry) {
    for (auto& c : module_.computations)
      if (c->is_entry) return ErrorAt(name_offset, "a module has at most one ENTRY computation");
  }
  comp->is_entry = is_entry;
  comp->source_offset = name_offset;
  comp->source_id = source_id_;
  BeginBody(comp);
  bool has_root = false;
  while (tok_.kind != Tok::kRBrace) {
    if (tok_.kind == Tok::kEof)
      return ErrorHere("expected '}' to close computation '" + std::string(name) + "', got end of file");
    bool is_root = IsIdent("ROOT");
    if (is_root && has_root) return ErrorHere("computation '" + std::string(name) + "' has more than one ROOT");
    has_root |= is_root;
    NHLO_TRY(ParseInstruction(comp));
    if (is_root) comp->root = comp->instructions.back();
  }
  if (comp->instructions.empty()) return ErrorHere("computation '" + std::string(name) + "' has no instructions");
  if (std::string_view(src_.text).substr(tok_.offset + 1, 4) == " // ") module_.source_style.closing_names = true;
  if (std::string_view(src_.text).substr(tok_.offset + 1, 3) == "\n \n") module_.source_style.spaced_blank_lines = true;
  Advance();
  if (!comp->root) comp->root = comp->instructions.back();
  if (has_declared_result && !SameShape(declared_result, comp->root->shape))
    return ErrorAt(result_offset, "computation '" + std::string(name) + "' is declared to return " +
                                      ShapeToString(declared_result, false) + ", but its root '" +
                                      std::string(comp->root->name) + "' is " +
                                      ShapeToString(comp->root->shape, false));
  if (tok_.kind == Tok::kComma) {
    Advance();
    if (tok_.kind != Tok::kAttrName || tok_.text != "execution_thread") return Expected("'execution_thread='");
    Advance();
    if (tok_.kind != Tok::kString) return Expected("string");
    comp->execution_thread = module_.arena.CopyString(CUnescape(tok_.text));
    Advance();
  }
  return OkStatus();
}

// A computation's body starts with an empty name scope and no parameter numbers.
void Parser::BeginBody(Computation* comp) {
  scope_.clear();
  param_numbers_.clear();
  if (!compact_gtes_.empty()) compact_gtes_.clear();
  // Post-fusion dumps are thousands of computations of a few instructions: one allocation for
  // those instead of growing 1, 2, 4, 8.
  comp->instructions.reserve(8);
}

// instruction ::= 'ROOT'? name '=' shape? opcode '(' operands ')' (',' attribute)*
Status Parser::ParseInstruction(Computation* comp) {
  current_comp_ = comp;
  if (IsIdent("ROOT")) Advance();
  bool plain_ident = tok_.kind == Tok::kIdent && !IsKeyword(tok_.text) && !TypeFromWord(tok_.text);
  if (tok_.kind != Tok::kName && !plain_ident) {
    if (tok_.kind == Tok::kAttrName)
      return ErrorHere("expected ' = ' after instruction name '" + std::string(tok_.text) + "' (write '%" +
                       std::string(tok_.text) + " =' or put spaces around '=')");
    return Expected("instruction name");
  }
  std::string_view name = tok_.text;
  uint32_t name_offset = tok_.offset;
  if (TypeFromWord(name) || (name.size() >= 2 && name[0] == '_' && name[1] == '_' && name.substr(0, 6) != "__xla_"))
    return ErrorHere("illegal instruction name '" + std::string(name) + "'");
  // A name defined twice is reported when the instruction is added; until then its slot loads.
  if (const void* slot = scope_.SlotFor(name)) __builtin_prefetch(slot);
  // `name = `: step over a plainly written '=' without making a token of it.
  const char* text = src_.text.data();
  const char* after_name = text + lex_.position();
  while (*after_name == ' ') ++after_name;
  if (*after_name == '=') {
    // ` = f32[8]{0} add(...)`: a shape the cache holds is taken straight from the text, without
    // first lexing its type word as a token.
    const char* shape_at = after_name + 1;
    while (*shape_at == ' ') ++shape_at;
    Shape shape;
    // (Not at the nesting limit: the token path reports that at the shape, which this would step over.)
    if (nesting_ < opts_.max_nesting && IsIdentStart(*shape_at) &&
        TryCachedShapeAt(static_cast<uint32_t>(shape_at - text), shape))
      return ParseInstructionBody(comp, name, name_offset, /*nested=*/false, &shape).status();
    lex_.set_position(static_cast<uint32_t>(after_name + 1 - text));
    Advance();
  } else {
    Advance();
    NHLO_TRY(Expect(Tok::kEqual, "'='"));
  }
  return ParseInstructionBody(comp, name, name_offset, /*nested=*/false).status();
}

// instruction_body ::= shape? opcode '(' operands ')' (',' attribute)*
// A nested operand (`add(f32[] parameter(0), ...)`) is a body without a name or attributes;
// it gets a generated name and is placed before its user.
Result<Instruction*> Parser::ParseInstructionBody(Computation* comp, std::string_view name, uint32_t name_offset,
                                                  bool nested, const Shape* shape_read) {
  if (++nesting_ > opts_.max_nesting)
    return ErrorHere("instructions nested deeper than " + std::to_string(opts_.max_nesting));
  struct Unnest {
    int& depth;
    ~Unnest() { --depth; }
  } unnest{nesting_};
  Instruction* inst = module_.arena.New<Instruction>();
  inst->name = name;
  inst->parent = comp;
  inst->source_offset = name_offset;
  inst->source_id = source_id_;
  if (!nested) current_instruction_ = name;
  sparse_layout_seen_ = false;
  bool has_shape = false;
  if (shape_read) {
    inst->shape = *shape_read;
    has_shape = true;
  } else if (tok_.kind == Tok::kIdent && TryCachedShape(inst->shape)) {
    has_shape = true;
  } else if (tok_.kind == Tok::kLParen || (tok_.kind == Tok::kIdent && TypeFromWord(tok_.text)) ||
             (IsIdent("b") && PeekNext().kind == Tok::kLParen)) {
    NHLO_TRY(ParseShape(inst->shape));
    has_shape = true;
  }
  const bool sparse_constant = std::exchange(sparse_layout_seen_, false);
  if (tok_.kind != Tok::kIdent) return Expected("opcode");
  const std::string_view opcode_word = tok_.text;
  auto opcode = OpcodeFromName(tok_.text);
  if (!opcode) {
    // Async sugar: X-start / X-update / X-done for an opcode X without native async forms.
    std::string_view text = tok_.text;
    for (auto [suffix, async_op] : {std::pair{std::string_view("-start"), Opcode::kAsyncStart},
                                    std::pair{std::string_view("-update"), Opcode::kAsyncUpdate},
                                    std::pair{std::string_view("-done"), Opcode::kAsyncDone}}) {
      if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) continue;
      if (auto wrapped = OpcodeFromName(text.substr(0, text.size() - suffix.size()))) {
        // XLA's ParseOpcode refuses the shorthand for the ops that have (or had) asynchronous
        // forms of their own.
        static constexpr Opcode kNoShorthand[] = {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kCollectivePermute,
                                                  Opcode::kCopy,      Opcode::kRecv,      Opcode::kSend};
        if (std::find(std::begin(kNoShorthand), std::end(kNoShorthand), *wrapped) != std::end(kNoShorthand))
          return ErrorHere("unknown opcode '" + std::string(text) + "' ('" + std::string(OpcodeName(*wrapped)) +
                           "' has no asynchronous shorthand)");
        opcode = async_op;
        inst->async_sugar = true;
        inst->async_wrapped = *wrapped;
      }
    }
  }
  const std::optional<Opcode> old_opcode = opcode ? std::nullopt : OldOpcode(tok_.text);
  if (old_opcode) opcode = old_opcode;
  if (!opcode) return ErrorHere("unknown opcode '" + std::string(tok_.text) + "'");
  inst->opcode = *opcode;
  uint32_t opcode_offset = tok_.offset;
  if (old_opcode) NoteOldOpcode(opcode_word, opcode_offset);
  AdvanceIfChar('(', Tok::kLParen);
  if (tok_.kind != Tok::kLParen) return Expected("'(' after the opcode");

  SmallVec<Instruction*, 8> operands;
  if (inst->opcode == Opcode::kParameter) {
    // `(N)` written plainly (up to 18 digits, so no overflow) is read straight from the text.
    const char* const text = src_.text.data();
    const char* digits = text + lex_.position();
    const char* end = digits;
    int64_t number = 0;
    while (IsDigit(*end) && end - digits < 18) number = number * 10 + (*end++ - '0');
    const bool plain = end != digits && *end == ')';
    uint32_t number_offset = static_cast<uint32_t>(digits - text);
    if (!plain) {
      Advance();
      if (tok_.kind != Tok::kInt) return Expected("parameter number");
      NHLO_ASSIGN_OR_RETURN(number, ParseInt(tok_));
      if (number < 0) return ErrorHere("parameter number must be >= 0");
      number_offset = tok_.offset;
    }
    if (!param_numbers_.Insert(number))
      return ErrorAt(number_offset, "parameter number " + std::to_string(number) + " is used twice");
    inst->parameter_number = number;
    if (plain) {
      lex_.set_position(static_cast<uint32_t>(end + 1 - text));
      Advance();
    } else {
      Advance();
      NHLO_TRY(Expect(Tok::kRParen, "')'"));
    }
  } else if (inst->opcode == Opcode::kConstant) {
    if (!has_shape) return ErrorAt(opcode_offset, "constant needs a result shape");
    Advance();
    if (sparse_constant && inst->shape.IsArray()) {
      Literal* lit = module_.arena.New<Literal>();
      lit->shape = inst->shape;
      int64_t bytes = HostBytes(inst->shape);
      if (bytes < 0 || bytes > opts_.max_fill_literal_bytes)
        return ErrorHere("sparse literal of shape " + ShapeToString(inst->shape, false) + " is too large");
      lit->data = module_.arena.NewArray<uint8_t>(static_cast<size_t>(bytes));
      NHLO_TRY(ParseSparseLiteral(inst->shape, *lit));
      inst->literal = lit;
    } else {
      NHLO_ASSIGN_OR_RETURN(inst->literal, ParseLiteral(inst->shape));
    }
    NHLO_TRY(Expect(Tok::kRParen, "')' after the literal"));
  } else {
    NHLO_TRY(ParseOperands(inst, operands));
  }
  inst->operands = module_.arena.Copy(operands.data(), operands.size());

  SmallVec<Attribute, 8> attrs;
  while (!nested && tok_.kind == Tok::kComma) {
    Advance();
    NHLO_TRY(ParseAttribute(inst, attrs));
  }
  if (old_opcode) NHLO_TRY(RewriteOldOpcode(opcode_word, opcode_offset, attrs));
  static const std::vector<AttrId> kNone;
  const std::vector<AttrId>& required_attrs = !inst->async_sugar                    ? RequiredAttrs(inst->opcode)
                                              : inst->opcode == Opcode::kAsyncStart ? RequiredAttrs(inst->async_wrapped)
                                                                                    : kNone;
  for (AttrId required : required_attrs) {
    bool present = false;
    for (const Attribute& a : attrs) present |= a.id == required;
    if (!present)
      return ErrorAt(opcode_offset, "'" + std::string(OpcodeName(inst->opcode)) + "' needs attribute '" +
                                        std::string(AttrName(required)) + "='");
  }
  // `broadcast(scalar)` may leave out `dimensions=` (a nested broadcast cannot write it); XLA
  // then broadcasts with none, and prints `dimensions={}`.
  if (inst->opcode == Opcode::kBroadcast && inst->operands.size() == 1) {
    bool has_dimensions = false;
    for (const Attribute& a : attrs) has_dimensions |= a.id == AttrId::kDimensions;
    if (!has_dimensions && inst->operands[0]->shape.IsScalar()) {
      Attribute none;
      none.id = AttrId::kDimensions;
      none.kind = AttrKind::IntList;
      attrs.push_back(none);
    } else if (!has_dimensions) {
      return ErrorAt(opcode_offset,
                     "'broadcast' needs attribute 'dimensions=' (only a broadcast of a scalar "
                     "may leave it out)");
    }
  }
  // Few attributes per instruction: an insertion sort puts them in printing order. An async
  // shorthand start writes its thread before the wrapped op's attributes, as XLA's
  // HloAsyncStartInstruction does.
  const Opcode print_as = inst->async_sugar ? inst->async_wrapped : inst->opcode;
  auto rank = [&](AttrId id) {
    if (inst->async_sugar && id == AttrId::kAsyncExecutionThread) return std::numeric_limits<int>::min();
    return AttrPrintRank(print_as, id);
  };
  for (size_t i = 1; i < attrs.size(); ++i)
    for (size_t j = i; j > 0 && rank(attrs[j].id) < rank(attrs[j - 1].id); --j) std::swap(attrs[j], attrs[j - 1]);
  inst->attrs = module_.arena.Copy(attrs.data(), attrs.size());
  DecodeCustomCallConfig(module_, *inst);  // the typed backend_config, decoded once
  // Old forms that become instructions of their own: tuple-select, transfers without a token,
  // copy-start's (target, context) shape.
  if (old_opcode || inst->opcode == Opcode::kInfeed || inst->opcode == Opcode::kOutfeed ||
      inst->opcode == Opcode::kRecv || inst->opcode == Opcode::kSend || inst->opcode == Opcode::kCopyStart ||
      (!old_shapes_.empty() && (inst->opcode == Opcode::kRecvDone || inst->opcode == Opcode::kSendDone)))
    NHLO_TRY(LowerOldInstruction(inst, opcode_word, opcode_offset, has_shape));
  // operand_precision=packed_nibble, an old form XLA read on dot and convolution only.
  if (const Attribute* precision = inst->FindAttr(AttrId::kOperandPrecision))
    for (int64_t code : precision->ints)
      if (code == static_cast<int64_t>(Precision::kPackedNibble)) {
        if (inst->opcode != Opcode::kDot && inst->opcode != Opcode::kConvolution)
          return ErrorAt(opcode_offset,
                         "operand_precision=packed_nibble is read only on dot and convolution, not on '" +
                             std::string(OpcodeName(inst->opcode)) + "'");
        NHLO_TRY(LowerPackedNibbles(inst, opcode_offset, has_shape));
        break;
      }
  if (inst->async_sugar && inst->opcode == Opcode::kAsyncStart && has_shape)
    NHLO_TRY(ImplyAsyncComputation(inst, opcode_offset));

  if (!has_shape) {
    Inference inf = InferShape(module_, *inst);
    if (inf.outcome == InferOutcome::kError) return ErrorAt(opcode_offset, inf.message);
    if (inf.outcome == InferOutcome::kNotInferable)
      return ErrorAt(opcode_offset, "the result shape of '" + std::string(OpcodeName(inst->opcode)) +
                                        "' cannot be inferred; write it before the opcode");
    inst->shape = inf.shape;
  }
  if (nested) {
    // XLA names a nested instruction `<opcode>.anon`, made unique once the module is read.
    inst->name = module_.arena.CopyString(std::string(OpcodeName(inst->opcode)) + ".anon");
    generated_.push_back(inst);
  } else {
    if (scope_.InsertUnique(inst))
      return ErrorAt(name_offset, "instruction '" + std::string(name) + "' is defined twice in computation '" +
                                      std::string(comp->name) + "'");
  }
  comp->instructions.push_back(inst);
  return inst;
}

// `negate-start(x)` and friends: XLA's parser builds the computation the sugar stands for (its
// parameters, and the wrapped op with the start's attributes as root; CreateAsyncWrappedComputation)
// and the start calls it. So does nhlo, marking it implied: the start runs as any async-start,
// and the printer writes the sugar again without the computation. A wrapped op that calls a
// computation itself through `calls=` (fusion) keeps that attribute and gets none.
Status Parser::ImplyAsyncComputation(Instruction* start, uint32_t opcode_offset) {
  const Shape& shape = start->shape;
  if (!shape.IsTuple() || shape.tuple.size() < 2 || !shape.tuple[0].IsTuple() ||
      shape.tuple[0].tuple.size() != start->operands.size())
    return ErrorAt(opcode_offset, "'" + std::string(OpcodeName(start->async_wrapped)) +
                                      "-start' needs the shape ((operand shapes...), result shape, state...)");
  // The operands the wrapped op takes: its arity, or a called computation's parameters.
  int64_t wanted = OpcodeArity(start->async_wrapped);
  const Computation* called = nullptr;
  for (const Attribute& a : start->attrs)
    if ((a.id == AttrId::kToApply || a.id == AttrId::kCalls) && !a.computations.empty()) called = a.computations[0];
  if (called) wanted = static_cast<int64_t>(called->Parameters().size());
  const std::string shorthand = std::string(OpcodeName(start->async_wrapped)) + "-start";
  if (wanted > static_cast<int64_t>(start->operands.size()))
    return ErrorAt(opcode_offset, "'" + shorthand + "' gives " + std::to_string(start->operands.size()) + " of the " +
                                      std::to_string(wanted) + (wanted == 1 ? " operand '" : " operands '") +
                                      std::string(OpcodeName(start->async_wrapped)) + "' takes" +
                                      std::string(kLateBindingRefusal));
  const Shape& result = shape.tuple[1];
  if (called && called->root && result.IsTuple() && result.tuple.empty() && !SameShape(result, called->root->shape))
    return ErrorAt(opcode_offset, "'" + shorthand + "' leaves its result unbound (`()` where computation '" +
                                      std::string(called->name) + "' returns " +
                                      ShapeToString(called->root->shape, false) + ")" +
                                      std::string(kLateBindingRefusal));
  for (const Attribute& a : start->attrs)
    if (a.id == AttrId::kCalls) return OkStatus();
  std::string base = std::string(start->name) + ".async_wrapped";
  std::string_view name = module_.arena.CopyString(base);
  for (int i = 1; module_.FindComputation(name); ++i) name = module_.arena.CopyString(base + "." + std::to_string(i));
  Computation* comp = module_.AddComputation(name);
  comp->implied = true;
  comp->source_offset = start->source_offset;
  comp->source_id = start->source_id;
  comp->execution_thread = {};
  std::vector<Instruction*> params;
  for (size_t i = 0; i < start->operands.size(); ++i) {
    Instruction* p = module_.NewInstruction(comp, Opcode::kParameter, shape.tuple[0].tuple[i], {}, "async_param");
    p->parameter_number = static_cast<int64_t>(i);
    p->source_offset = start->source_offset;
    p->source_id = start->source_id;
    params.push_back(p);
  }
  Instruction* op = module_.NewInstruction(comp, start->async_wrapped, shape.tuple[1], params, "async_op");
  op->source_offset = start->source_offset;
  op->source_id = start->source_id;
  SmallVec<Attribute, 8> wrapped;
  for (const Attribute& a : start->attrs)
    if (a.id != AttrId::kAsyncExecutionThread && a.id != AttrId::kOutputToOperandAliasing) wrapped.push_back(a);
  op->attrs = module_.arena.Copy(wrapped.data(), wrapped.size());
  DecodeCustomCallConfig(module_, *op);
  comp->root = op;
  inline_regions_.emplace_back(comp, current_comp_);  // placed before the computation holding the start
  Attribute calls;
  calls.id = AttrId::kCalls;
  calls.kind = AttrKind::Computation;
  Computation* callee[1] = {comp};
  calls.computations = module_.arena.Copy(callee, 1);
  SmallVec<Attribute, 8> attrs;
  for (const Attribute& a : start->attrs) attrs.push_back(a);
  attrs.push_back(calls);
  start->attrs = module_.arena.Copy(attrs.data(), attrs.size());
  return OkStatus();
}

// operands ::= '(' (shape? name (',' shape? name)*)? ')'
Status Parser::ParseOperands(Instruction* inst, SmallVec<Instruction*, 8>& operands) {
  // Fast path for the common `(%a, %b)`, `(a, b)` (XLA's dumps) and XLA's `/*index=5*/`
  // comments: names read straight from the text (NUL-terminated), without tokens. At anything
  // else (a shape, a word the token path reads as something other than a name, a line break,
  // an unknown name) the token path below takes over after the last operand read here.
  const char* const text = src_.text.data();
  const char* s = text + lex_.position();  // just after '('
  for (;;) {
    while (*s == ' ') ++s;
    if (*s == '/' && std::strncmp(s, "/*index=", 8) == 0) {
      operand_comment_seen_ = true;
      const char* digit = s + 8;
      while (IsDigit(*digit)) ++digit;
      if (digit == s + 8 || digit[0] != '*' || digit[1] != '/') break;
      s = digit + 2;
      continue;
    }
    const bool percent = *s == '%';
    const char* name = s + percent;
    if (!IsIdentStart(*name)) break;
    const char* end = text + SkipIdentChars(text, static_cast<size_t>(name + 1 - text), src_.text.size());
    const char* sep = end;
    while (*sep == ' ') ++sep;
    if (*sep != ',' && *sep != ')') break;
    const std::string_view word(name, static_cast<size_t>(end - name));
    Instruction* operand = scope_.find(word);
    if (!operand) break;
    // A plain word the lexer or the token path reads as a number, keyword or type is not a name.
    if (!percent && (word == "nan" || IsKeyword(word) || TypeFromWord(word))) break;
    operands.push_back(operand);
    s = sep + 1;
    lex_.set_position(static_cast<uint32_t>(s - text));
    if (*sep == ')') {
      AdvanceIfChar(',', Tok::kComma);
      return OkStatus();
    }
  }
  Advance();  // the first token after '(' or after the last operand's ','
  while (tok_.kind != Tok::kRParen) {
    uint32_t shape_start = tok_.offset;
    Shape written;
    bool has_shape = false;
    if (tok_.kind == Tok::kIdent && TryCachedShape(written)) {
      has_shape = true;
    } else if (tok_.kind == Tok::kLParen || (tok_.kind == Tok::kIdent && TypeFromWord(tok_.text)) ||
               (IsIdent("b") && PeekNext().kind == Tok::kLParen)) {  // b(...): a buffer shape
      NHLO_TRY(ParseShape(written));
      has_shape = true;
    }
    bool plain_ident = tok_.kind == Tok::kIdent && !IsKeyword(tok_.text) && !TypeFromWord(tok_.text);
    // An opcode and '(' is a nested instruction, even where an instruction of that name exists
    // (`add(add, add(add, add))`): XLA reads a name only when ',', ')' or '#' follows it.
    if (plain_ident && IsOpcodeWord(tok_.text) && PeekNext().kind == Tok::kLParen) {
      // A nested instruction; a written shape belongs to it.
      uint32_t at = tok_.offset;
      lex_.set_position(shape_start);
      Advance();
      NHLO_ASSIGN_OR_RETURN(Instruction * nested, ParseInstructionBody(inst->parent, {}, at, /*nested=*/true));
      operands.push_back(nested);
      if (tok_.kind == Tok::kComma)
        Advance();
      else if (tok_.kind != Tok::kRParen)
        return Expected("',' or ')' in the operand list");
      continue;
    }
    const bool implicit = inst->parent == single_instruction_ && single_instruction_ != nullptr;
    if (implicit && has_shape && (tok_.kind == Tok::kComma || tok_.kind == Tok::kRParen)) {
      // A lone instruction's operand written as a shape alone: a new parameter `_N`.
      operands.push_back(ImplicitParameter(inst->parent, {}, written, shape_start));
      if (tok_.kind == Tok::kComma) Advance();
      continue;
    }
    if (tok_.kind != Tok::kName && !plain_ident) return Expected("operand name");
    const std::string_view name = tok_.text;
    const uint32_t name_offset = tok_.offset;
    Instruction* operand = scope_.find(name);
    Advance();
    // Compact get-tuple-elements: `p0#1#0` is element 0 of element 1 of p0.
    SmallVec<TupleIndex, 4> indices;
    while (tok_.kind == Tok::kHash) {
      Advance();
      if (tok_.kind != Tok::kInt) return Expected("a tuple index after '#'");
      NHLO_ASSIGN_OR_RETURN(int64_t index, ParseInt(tok_));
      indices.push_back(TupleIndex{index, tok_.offset});
      Advance();
    }
    if (!operand && implicit && has_shape && indices.empty()) {
      operand = ImplicitParameter(inst->parent, name, written, name_offset);
    } else if (!operand && implicit && !has_shape) {
      return ErrorAt(name_offset, "operand '" + std::string(name) +
                                      "' has no shape: a lone instruction's "
                                      "undefined operands become parameters, and need one (`f32[2] " +
                                      std::string(name) + "`)");
    } else if (!operand) {
      return ErrorAt(name_offset, "unknown operand '" + std::string(name) + "'");
    }
    if (!indices.empty()) {
      NHLO_ASSIGN_OR_RETURN(operand, CompactGetTupleElement(operand, name, name_offset, indices));
    }
    if (has_shape) module_.source_style.operand_shapes = true;
    if (has_shape && !SameShape(written, operand->shape) && !WrittenWithOldShape(operand, written)) {
      std::string spelled(name);
      for (auto [index, at] : indices) spelled += "#" + std::to_string(index);
      return ErrorAt(name_offset, "operand '" + spelled + "' is written as " + ShapeToString(written, false) +
                                      " but has shape " + ShapeToString(operand->shape, false));
    }
    operands.push_back(operand);
    if (tok_.kind == Tok::kComma) {
      uint32_t after_comma = tok_.offset + 1;
      Advance();
      // More than one space after the comma: a comment, perhaps XLA's `/*index=5*/`.
      if (!operand_comment_seen_ && tok_.offset > after_comma + 1 &&
          std::string_view(src_.text).substr(after_comma, tok_.offset - after_comma).find("/*index=") !=
              std::string_view::npos)
        operand_comment_seen_ = true;
    } else if (tok_.kind != Tok::kRParen) {
      return Expected("',' or ')' in the operand list");
    }
  }
  Advance();
  return OkStatus();
}

// Opcodes as an operand list may start a nested instruction with them: every opcode, and the
// async shorthand (`negate-start`).
bool Parser::IsOpcodeWord(std::string_view word) const {
  if (OpcodeFromName(word) || OldOpcode(word)) return true;
  for (std::string_view suffix : {std::string_view("-start"), std::string_view("-update"), std::string_view("-done")})
    if (word.size() > suffix.size() && word.substr(word.size() - suffix.size()) == suffix &&
        OpcodeFromName(word.substr(0, word.size() - suffix.size())))
      return true;
  return false;
}

// `p0#1#0`: XLA's parser makes a get-tuple-element per index, once per computation for each
// written form, named after it (`p0_1`, `p0_1_0`; made unique with the other generated names).
// Each is placed right after the value it reads, where XLA's post-order printing puts it.
Result<Instruction*> Parser::CompactGetTupleElement(Instruction* base, std::string_view name, uint32_t offset,
                                                    const SmallVec<TupleIndex, 4>& indices) {
  std::string key(name);
  Instruction* current = base;
  for (auto [index, index_offset] : indices) {
    if (!current->shape.IsTuple())
      return ErrorAt(offset, "'" + key + "' is " + ShapeToString(current->shape, false) +
                                 ", not a tuple: '#' reads a tuple element");
    if (index < 0 || index >= static_cast<int64_t>(current->shape.tuple.size()))
      return ErrorAt(index_offset, "tuple index " + std::to_string(index) + " is out of range for '" + key + "' of " +
                                       ShapeToString(current->shape, false));
    key += "#" + std::to_string(index);
    auto [it, inserted] = compact_gtes_.try_emplace(key, nullptr);
    if (!inserted) {
      current = it->second;
      continue;
    }
    Computation* comp = current->parent;
    std::string gte_name = key;
    std::replace(gte_name.begin(), gte_name.end(), '#', '_');
    Instruction* gte = NewGeneratedInstruction(
        comp, Opcode::kGetTupleElement, current->shape.tuple[static_cast<size_t>(index)], {current}, gte_name, offset);
    Attribute element;
    element.id = AttrId::kIndex;
    element.kind = AttrKind::Int;
    element.i = index;
    gte->attrs = module_.arena.Copy(&element, 1);
    comp->instructions.pop_back();  // NewGeneratedInstruction appended it: it goes after `current`
    pending_gets_.emplace_back(gte, current);
    it->second = gte;
    current = gte;
  }
  return current;
}

// Puts each compact get-tuple-element right after the value it reads: where XLA's post-order
// printing puts it, the latest made first when several read one value (as if each had been
// inserted there when made). One rebuild per computation that has them, not a search per get.
void Parser::PlaceCompactGets() {
  if (pending_gets_.empty()) return;
  std::unordered_map<const Instruction*, SmallVec<Instruction*, 2>> readers;
  std::vector<Computation*> comps;  // in first-get order
  std::unordered_set<const Computation*> listed;
  for (auto [get, base] : pending_gets_) {
    readers[base].push_back(get);
    if (listed.insert(get->parent).second) comps.push_back(get->parent);
  }
  for (Computation* comp : comps) {
    InstructionList placed(comp->instructions.get_allocator());
    placed.reserve(comp->instructions.size() + pending_gets_.size());
    // Depth first without recursion: a value, then its readers newest first, each followed at
    // once by its own readers (a get of a get). Readers are pushed oldest first, so the newest
    // comes off the stack first.
    std::vector<Instruction*> stack;
    for (Instruction* inst : comp->instructions) {
      stack.push_back(inst);
      while (!stack.empty()) {
        Instruction* next = stack.back();
        stack.pop_back();
        placed.push_back(next);
        auto it = readers.find(next);
        if (it == readers.end()) continue;
        for (Instruction* get : it->second) stack.push_back(get);
      }
    }
    comp->instructions = std::move(placed);
  }
  pending_gets_.clear();
}

// A lone instruction's undefined operand: parameter N of its computation, named as written or
// `_N` (XLA's create_missing_instruction_ hook).
Instruction* Parser::ImplicitParameter(Computation* comp, std::string_view name, const Shape& shape, uint32_t offset) {
  Instruction* param = module_.arena.New<Instruction>();
  const int64_t number = implicit_parameters_++;
  param->name = name.empty() ? module_.arena.CopyString("_" + std::to_string(number)) : name;
  param->opcode = Opcode::kParameter;
  param->shape = shape;
  param->parent = comp;
  param->parameter_number = number;
  param->source_offset = offset;
  param->source_id = source_id_;
  param_numbers_.Insert(number);
  scope_.InsertUnique(param);
  comp->instructions.push_back(param);
  return param;
}

// Names for the instructions the parser made (nested operands, compact get-tuple-elements),
// in the order it made them: the name they were given if no written name and no earlier
// generated one holds it, else the first free `name.N` (XLA's NameUniquer).
void Parser::NameGeneratedInstructions() {
  if (generated_.empty()) return;
  const uint32_t generated = module_.NewMark();
  for (Instruction* inst : generated_) inst->mark = generated;
  std::unordered_set<std::string_view> taken;
  for (const auto& comp : module_.computations)
    for (const Instruction* inst : comp->instructions)
      if (inst->mark != generated) taken.insert(inst->name);
  for (Instruction* inst : generated_) {
    std::string_view base = inst->name;
    std::string_view name = base;
    for (int64_t suffix = 1; taken.count(name); ++suffix)
      name = module_.arena.CopyString(std::string(base) + "." + std::to_string(suffix));
    inst->name = name;
    taken.insert(name);
  }
  generated_.clear();
}

// inline_computation ::= '{' instruction+ '}'   (as the value of to_apply= and friends)
// The body becomes a computation of its own, named after the instruction that holds it and
// placed before the computation being parsed, so callees still precede callers.
Result<Computation*> Parser::ParseInlineComputation(std::string_view owner) {
  if (++nesting_ > opts_.max_nesting)
    return ErrorHere("computations nested deeper than " + std::to_string(opts_.max_nesting));
  struct Unnest {
    int& depth;
    ~Unnest() { --depth; }
  } unnest{nesting_};
  uint32_t open = tok_.offset;
  Advance();
  std::string base = std::string(owner.empty() ? "inline" : owner) + ".region";
  std::string_view name = module_.arena.CopyString(base);
  if (module_.FindComputation(name)) {
    // Computations are never removed, so the suffixes tried for this base before are still
    // taken: start after them rather than at 1 (owners of the same name recur in every
    // computation).
    int& i = next_region_suffix_[base];
    do name = module_.arena.CopyString(base + "." + std::to_string(++i));
    while (module_.FindComputation(name));
  }
  Computation* enclosing = current_comp_;
  Computation* comp = module_.AddComputation(name);
  comp->source_offset = open;
  comp->source_id = source_id_;
  inline_regions_.emplace_back(comp, enclosing);  // moved before `enclosing` at the end
  NameMap saved_scope = std::move(scope_);
  ParamNumbers saved_params = std::move(param_numbers_);
  std::unordered_map<std::string, Instruction*> saved_gtes = std::move(compact_gtes_);
  compact_gtes_.clear();
  std::string_view saved_instruction = current_instruction_;
  BeginBody(comp);
  bool has_root = false;
  while (tok_.kind != Tok::kRBrace) {
    if (tok_.kind == Tok::kEof) return ErrorHere("expected '}' to close the inline computation, got end of file");
    bool is_root = IsIdent("ROOT");
    if (is_root && has_root) return ErrorHere("inline computation has more than one ROOT");
    has_root |= is_root;
    NHLO_TRY(ParseInstruction(comp));
    if (is_root) comp->root = comp->instructions.back();
  }
  if (comp->instructions.empty()) return ErrorHere("inline computation has no instructions");
  if (!comp->root) comp->root = comp->instructions.back();
  Advance();
  scope_ = std::move(saved_scope);
  param_numbers_ = std::move(saved_params);
  compact_gtes_ = std::move(saved_gtes);
  current_instruction_ = saved_instruction;
  current_comp_ = enclosing;
  return comp;
}

// Puts every inline computation right before the computation that holds it, after the ones it
// holds itself, in the order they were written: callees before callers. Done once for the
// module: moving the list at each inline computation would cost the whole list every time.
void Parser::PlaceInlineComputations() {
  if (inline_regions_.empty()) return;
  std::unordered_map<const Computation*, std::vector<Computation*>> held;
  std::unordered_set<const Computation*> is_inline;
  for (auto [region, enclosing] : inline_regions_) {
    if (!enclosing) continue;
    held[enclosing].push_back(region);
    is_inline.insert(region);
  }
  std::vector<Computation*> order;
  order.reserve(module_.computations.size());
  // Recursion depth is bounded by ParseOptions::max_nesting, as for the inline computations.
  auto place = [&](auto& self, Computation* c) -> void {
    if (auto it = held.find(c); it != held.end())
      for (Computation* region : it->second) self(self, region);
    order.push_back(c);
  };
  for (const auto& c : module_.computations)
    if (!is_inline.count(c.get())) place(place, c.get());
  std::unordered_map<const Computation*, ComputationPtr> owned;
  for (auto& c : module_.computations) owned.emplace(c.get(), std::move(c));
  for (size_t i = 0; i < order.size(); ++i) module_.computations[i] = std::move(owned[order[i]]);
}

Result<Computation*> Parser::ParseComputationRef() {
  if (tok_.kind == Tok::kLBrace) return ParseInlineComputation(current_instruction_);
  if (tok_.kind != Tok::kName && tok_.kind != Tok::kIdent) return Expected("computation name");
  Computation* c = module_.FindComputation(tok_.text);
  if (!c)
    return ErrorHere("unknown computation '" + std::string(tok_.text) +
                     "' (computations must be defined before they are used)");
  Advance();
  return c;
}

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

}  // namespace parser_internal

using parser_internal::Parser;

Result<std::unique_ptr<Module>> ParseModule(std::string file, std::string text, const ParseOptions& options) {
  auto module = std::make_unique<Module>();
  auto src = std::make_unique<SourceBuffer>();
  src->name = std::move(file);
  src->text = std::move(text);
  if (src->text.size() >= UINT32_MAX) return Status::Error(src->name + ": input larger than 4 GiB is not supported");
  if (size_t nul = src->text.find('\0'); nul != std::string::npos)
    return Status::FromDiagnostic(DiagnosticAt(src->name, src->text, nul, "NUL byte in the input"));
  // A module takes about 2-3 arena bytes per text byte (docs/parser-performance.md).
  module->arena.ExpectBytes(src->text.size());
  module->sources.push_back(std::move(src));
  Parser parser(*module, *module->sources.back(), 0, options);
  NHLO_TRY(parser.Run());
  return module;
}

Result<const Literal*> ParseStandaloneLiteral(Module& module, std::string name, std::string text,
                                              const ParseOptions& options) {
  auto src = std::make_unique<SourceBuffer>();
  src->name = std::move(name);
  src->text = std::move(text);
  if (src->text.size() >= UINT32_MAX) return Status::Error(src->name + ": literal text is too large");
  module.sources.push_back(std::move(src));
  Parser parser(module, *module.sources.back(), static_cast<uint32_t>(module.sources.size() - 1), options);
  return parser.RunStandaloneLiteral();
}

}  // namespace nhlo
