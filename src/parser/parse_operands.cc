// SPDX-License-Identifier: Apache-2.0
// The parts of an instruction that name other values: its operands (with XLA's compact
// get-tuple-element forms and the parameters a computation implies), computations written
// inline in an attribute, and references to computations by name. Each Parse* function is
// headed by the grammar rule it implements (shared/reference/HLO_GRAMMAR.md).
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "ir/opcode_attrs.h"
#include "parser/parser_internal.h"

namespace nhlo::parser_internal {

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

}  // namespace nhlo::parser_internal
