// SPDX-License-Identifier: Apache-2.0
// Recursive-descent parser for HLO text: modules, computations and instructions. Operands and
// inline computations are in parse_operands.cc, attributes in parse_attribute.cc, shapes and
// literals in parse_shape.cc and parse_literal.cc. Each Parse* function is headed by the grammar
// rule it implements (see shared/reference/HLO_GRAMMAR.md for the full grammar).
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
