// SPDX-License-Identifier: Apache-2.0
// Recursive-descent parser for HLO text. Each Parse* function is headed by the grammar rule it
// implements (see shared/reference/HLO_GRAMMAR.md for the full grammar).
#include "parser/parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "ir/literal.h"
#include "ir/opcode_attrs.h"
#include "ir/shape_inference.h"
#include "parser/lexer.h"
#include "support/small_vec.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

bool IsKeyword(std::string_view w) {
  // Every keyword is at least 3 characters and starts with one of these letters; most
  // identifiers (instruction names, opcodes) are rejected by the first test.
  if (w.size() < 3) return false;
  switch (w[0]) {
    case 'H': return w == "HloModule";
    case 'E': return w == "ENTRY";
    case 'R': return w == "ROOT";
    case 't': return w == "true";
    case 'f': return w == "false";
    case 'i': return w == "inf";
    case 'm': return w == "maximal" || w == "manual";
    case 'r': return w == "replicated";
    case 'u': return w == "unknown" || w == "unreduced";
    case 'l': return w == "last_tile_dim_replicate";
    case 's': return w == "shard_as" || w == "shard_like";
    case 'F': return w == "FileNames" || w == "FunctionNames" || w == "FileLocations";
    case 'S': return w == "StackFrames";
    default: return false;
  }
}

// Element types as HLO text spells them; `tuple` and `buffer` are not lexed as types.
std::optional<PrimitiveType> TypeFromWord(std::string_view w) {
  // Type names are short and start with one of these letters: skip the table otherwise.
  if (w.size() < 2 || w.size() > 13) return std::nullopt;
  switch (w[0]) {
    case 'p': case 's': case 'u': case 'f': case 'b': case 'c': case 't': case 'o':
      break;
    default:
      return std::nullopt;
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
    default: return "'" + std::string(t.text) + "'";
  }
}

// Folds runs of whitespace and comments outside strings into one space, so raw attribute text
// prints the same however the input was wrapped.
std::string_view FoldRaw(Arena& arena, std::string_view raw, bool known_clean = false) {
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
      while (i < raw.size() && raw[i] != '\n') ++i;
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

// Instruction names of the computation being parsed: open addressing over the instructions
// themselves (the key is the instruction's name, a view into the source). A slot is one
// 64-bit word: the pointer in the low 48 bits and 16 bits of the name's hash above them, so a
// probe only dereferences an instruction whose hash tag matches; the low 32 hash bits are kept
// beside it so growing never re-reads names. No allocation per name, 12 bytes a slot.
class NameMap {
 public:
  void clear() {
    slots_.assign(64, 0);
    hashes_.assign(64, 0);
    size_ = 0;
  }
  Instruction* find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    uint64_t h = Hash(name);
    uint64_t tag = h >> 48;
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint64_t slot = slots_[i];
      if (!slot) return nullptr;
      if ((slot >> 48) == tag) {
        Instruction* inst = reinterpret_cast<Instruction*>(slot & kPointerMask);
        if (inst->name == name) return inst;
      }
    }
  }
  /// Where the lookup of `name` starts (null while empty). A new name's slot is a random place
  /// in a table that outgrows the caches on big modules, so the parser prefetches it when it
  /// reads the name and uses it once the instruction is parsed. (The prefetch is at the call
  /// site: GCC deems a function that only prefetches free of effects and drops the call.)
  const void* SlotFor(std::string_view name) const {
    return slots_.empty() ? nullptr : &slots_[Hash(name) & (slots_.size() - 1)];
  }
  /// Adds `value` unless an instruction of the same name is there; returns that one, or null.
  Instruction* InsertUnique(Instruction* value) {
    if (slots_.empty()) clear();
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    uint64_t h = Hash(value->name);
    uint64_t tag = h >> 48;
    NHLO_CHECK((reinterpret_cast<uintptr_t>(value) & ~kPointerMask) == 0, "pointer wider than 48 bits");
    size_t mask = slots_.size() - 1;
    size_t i = static_cast<uint32_t>(h) & mask;
    for (; slots_[i]; i = (i + 1) & mask) {
      uint64_t slot = slots_[i];
      if ((slot >> 48) == tag) {
        Instruction* inst = reinterpret_cast<Instruction*>(slot & kPointerMask);
        if (inst->name == value->name) return inst;
      }
    }
    slots_[i] = reinterpret_cast<uintptr_t>(value) | (tag << 48);
    hashes_[i] = static_cast<uint32_t>(h);
    ++size_;
    return nullptr;
  }

 private:
  static constexpr uint64_t kPointerMask = (uint64_t(1) << 48) - 1;
  // Eight bytes a step (names are looked up once per operand), then murmur3's finalizer so the
  // slot index (low bits) and the tag (high bits) both depend on every byte.
  static uint64_t Hash(std::string_view s) {
    const char* p = s.data();
    size_t n = s.size();
    constexpr uint64_t kMul = 0xFF51AFD7ED558CCDULL;
    uint64_t h = n * 0x9E3779B97F4A7C15ULL;
    auto load8 = [](const char* q) {
      uint64_t w;
      std::memcpy(&w, q, 8);
      return w;
    };
    auto load4 = [](const char* q) {
      uint32_t w;
      std::memcpy(&w, q, 4);
      return uint64_t(w);
    };
    // Fixed-size loads only (a variable-length memcpy is a library call); short names are read
    // as two overlapping halves.
    if (n >= 8) {
      for (size_t i = 0; i + 8 <= n; i += 8) {
        h = (h ^ load8(p + i)) * kMul;
        h ^= h >> 32;
      }
      h = (h ^ load8(p + n - 8)) * kMul;
    } else if (n >= 4) {
      h = (h ^ (load4(p) | (load4(p + n - 4) << 32))) * kMul;
    } else if (n > 0) {
      h = (h ^ (uint64_t(uint8_t(p[0])) | uint64_t(uint8_t(p[n / 2])) << 8 | uint64_t(uint8_t(p[n - 1])) << 16)) * kMul;
    }
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
  }
  void Place(uint64_t slot, uint32_t low_hash) {
    size_t mask = slots_.size() - 1;  // at most 2^32 slots: the low hash bits pick the start
    size_t i = low_hash & mask;
    while (slots_[i]) i = (i + 1) & mask;
    slots_[i] = slot;
    hashes_[i] = low_hash;
  }
  void Grow() {
    std::vector<uint64_t> old = std::move(slots_);
    std::vector<uint32_t> old_hashes = std::move(hashes_);
    slots_.assign(old.size() * 2, 0);
    hashes_.assign(old.size() * 2, 0);
    for (size_t i = 0; i < old.size(); ++i)
      if (old[i]) Place(old[i], old_hashes[i]);
  }
  std::vector<uint64_t> slots_;
  std::vector<uint32_t> hashes_;
  size_t size_ = 0;
};

class Parser {
 public:
  Parser(Module& module, const SourceBuffer& src, uint32_t source_id, const ParseOptions& opts)
      : module_(module), src_(src), source_id_(source_id), opts_(opts), lex_(src.text) {}

  Status Run();
  Result<const Literal*> RunStandaloneLiteral();

 private:
  // ---- token plumbing
  void Advance() { lex_.NextInto(tok_); }
  Token PeekNext() {
    uint32_t saved = lex_.position();
    Token t = lex_.Next();
    lex_.set_position(saved);
    return t;
  }
  bool IsIdent(std::string_view w) const { return tok_.kind == Tok::kIdent && tok_.text == w; }
  Status ErrorAt(uint32_t offset, std::string message) {
    return Status::FromDiagnostic(DiagnosticAt(src_.name, src_.text, offset, std::move(message)));
  }
  Status ErrorHere(std::string message) {
    if (tok_.kind == Tok::kError && !tok_.text.empty() && tok_.text.size() > 1)
      return ErrorAt(tok_.offset, std::string(tok_.text));
    return ErrorAt(tok_.offset, std::move(message));
  }
  Status Expected(std::string_view what) {
    if (tok_.kind == Tok::kError && tok_.text.size() > 1)
      return ErrorAt(tok_.offset, std::string(tok_.text));
    return ErrorAt(tok_.offset, "expected " + std::string(what) + ", got " + Describe(tok_));
  }
  Status Expect(Tok kind, std::string_view what) {
    if (tok_.kind != kind) return Expected(what);
    Advance();
    return OkStatus();
  }

  // ---- grammar
  Status ParseHeader();
  Status ParseStackFrames();
  Status ParseComputation();
  Status ParseInstruction(Computation* comp);
  Result<Instruction*> ParseInstructionBody(Computation* comp, std::string_view name, uint32_t name_offset, bool nested);
  Result<Computation*> ParseInlineComputation(std::string_view owner);
  Status ParseOperands(Instruction* inst, SmallVec<Instruction*, 8>& operands);
  Status ParseAttribute(Instruction* inst, SmallVec<Attribute, 8>& attrs);
  Status ParseShape(Shape& shape, int depth = 0);
  bool TryCachedShape(Shape& shape);
  void RememberShape(uint32_t start, uint32_t end, const Shape& shape);
  Status ParseLayout(Shape& shape, uint32_t* close_offset);
  Result<const Literal*> ParseLiteral(const Shape& shape, int depth = 0);
  Status ParseArrayLevel(const Shape& shape, Literal& lit, size_t dim, int64_t& index);
  Status ParseElement(PrimitiveType type, uint8_t* out);
  int64_t ScanNumberRow(PrimitiveType type, uint8_t* out, int64_t want, int64_t& index);
  Result<std::string_view> CaptureRaw();
  Result<int64_t> ParseInt(const Token& t);
  Result<double> ParseFloatToken(const Token& t, uint64_t* nan_payload);
  Status ParseIntList(SmallVec<int64_t, 16>& out);
  Result<Computation*> ParseComputationRef();
  bool BraceGroupIsFollowedByBrace();

  Module& module_;
  const SourceBuffer& src_;
  uint32_t source_id_;
  const ParseOptions& opts_;
  Lexer lex_;
  Token tok_;
  NameMap scope_;  // current computation's names
  bool literal_follows_ = false;  // parsing the shape of `shape literal` text
  int nesting_ = 0;               // depth of nested instructions and inline computations
  std::string_view current_instruction_;  // for naming inline computations
  Computation* current_comp_ = nullptr;   // the computation whose instructions are being parsed
  // Shapes repeat: most instructions of a large module share a few result shapes. The last
  // array shapes parsed are kept with the span of source text they came from; a shape whose
  // text is byte-identical reuses the parsed Shape, so its dims and layout are shared arena
  // memory (nothing mutates a shape's spans in place).
  struct CachedShape {
    uint64_t prefix = 0;  // the text's first (up to) 8 bytes, masked
    uint64_t mask = 0;
    uint32_t offset = 0;
    uint32_t length = 0;  // 0: empty slot
    Shape shape;
  };
  static constexpr int kShapeCacheSize = 8;
  CachedShape shape_cache_[kShapeCacheSize];
  int shape_cache_next_ = 0;
};

// hlo_text ::= ('HloModule' name (',' attr)*)? stack_frames? computation+
Status Parser::Run() {
  Advance();
  if (IsIdent("HloModule")) NHLO_TRY(ParseHeader());
  NHLO_TRY(ParseStackFrames());
  if (tok_.kind == Tok::kEof) return ErrorHere("expected a computation, got end of file");
  while (tok_.kind != Tok::kEof) NHLO_TRY(ParseComputation());

  // Entry: the one marked ENTRY, else the last computation.
  Computation* entry = nullptr;
  for (auto& c : module_.computations)
    if (c->is_entry) entry = c.get();
  if (!entry) {
    entry = module_.computations.back().get();
    entry->is_entry = true;
  }
  module_.entry = entry;
  module_.ForgetNames();  // names generated for nested operands were cached mid-parse
  if (module_.name.empty()) {
    module_.name = module_.arena.CopyString("module_" + std::string(entry->name));
  }
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
    static constexpr std::string_view kKnown[] = {
        "is_scheduled", "input_output_alias", "buffer_donor", "alias_passthrough_params",
        "entry_computation_layout", "allow_spmd_sharding_propagation_to_parameters",
        "allow_spmd_sharding_propagation_to_output", "replica_count", "num_partitions",
        "frontend_attributes", "origin_recovery_table", "debug_attributes"};
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown))
      return ErrorHere("unknown module attribute '" + std::string(name) + "'");
    for (auto& [seen, value] : module_.header_attrs)
      if (seen == name) return ErrorHere("module attribute '" + std::string(name) + "' given twice");
    Advance();
    NHLO_ASSIGN_OR_RETURN(std::string_view raw, CaptureRaw());
    module_.header_attrs.emplace_back(name, raw);
  }
  return OkStatus();
}

// stack_frames ::= (FileNames|FunctionNames|FileLocations|StackFrames) (INT (STRING|{...}))*
Status Parser::ParseStackFrames() {
  uint32_t start = tok_.offset, end = start;
  bool any = false;
  while (IsIdent("FileNames") || IsIdent("FunctionNames") || IsIdent("FileLocations") ||
         IsIdent("StackFrames")) {
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
  if (module_.FindComputation(name))
    return ErrorHere("computation '" + std::string(name) + "' is defined twice");
  Advance();
  if (tok_.kind == Tok::kLParen) {
    // The signature is redundant with the parameter instructions; it is checked for syntax
    // only, as XLA does, and printed back from the parameters.
    Advance();
    while (tok_.kind != Tok::kRParen) {
      if (tok_.kind != Tok::kName) return Expected("parameter 'name:' in the signature");
      Advance();
      Shape ignored;
      NHLO_TRY(ParseShape(ignored));
      if (tok_.kind == Tok::kComma) Advance();
      else if (tok_.kind != Tok::kRParen) return Expected("',' or ')'");
    }
    Advance();
    NHLO_TRY(Expect(Tok::kArrow, "'->'"));
    Shape ignored;
    NHLO_TRY(ParseShape(ignored));
  }
  if (tok_.kind != Tok::kLBrace) return Expected("'{' to open the computation body");
  Advance();
  if (is_entry) {
    for (auto& c : module_.computations)
      if (c->is_entry) return ErrorAt(name_offset, "a module has at most one ENTRY computation");
  }
  Computation* comp = module_.AddComputation(name);
  comp->is_entry = is_entry;
  comp->source_offset = name_offset;
  comp->source_id = source_id_;
  scope_.clear();
  bool has_root = false;
  while (tok_.kind != Tok::kRBrace) {
    if (tok_.kind == Tok::kEof) return ErrorHere("expected '}' to close computation '" +
                                                 std::string(name) + "', got end of file");
    bool is_root = IsIdent("ROOT");
    if (is_root && has_root)
      return ErrorHere("computation '" + std::string(name) + "' has more than one ROOT");
    has_root |= is_root;
    NHLO_TRY(ParseInstruction(comp));
    if (is_root) comp->root = comp->instructions.back();
  }
  if (comp->instructions.empty())
    return ErrorHere("computation '" + std::string(name) + "' has no instructions");
  Advance();
  if (!comp->root) comp->root = comp->instructions.back();
  if (tok_.kind == Tok::kComma) {
    Advance();
    if (tok_.kind != Tok::kAttrName || tok_.text != "execution_thread")
      return Expected("'execution_thread='");
    Advance();
    if (tok_.kind != Tok::kString) return Expected("string");
    comp->execution_thread = module_.arena.CopyString(CUnescape(tok_.text));
    Advance();
  }
  return OkStatus();
}

// instruction ::= 'ROOT'? name '=' shape? opcode '(' operands ')' (',' attribute)*
Status Parser::ParseInstruction(Computation* comp) {
  current_comp_ = comp;
  if (IsIdent("ROOT")) Advance();
  bool plain_ident = tok_.kind == Tok::kIdent && !IsKeyword(tok_.text) && !TypeFromWord(tok_.text);
  if (tok_.kind != Tok::kName && !plain_ident) {
    if (tok_.kind == Tok::kAttrName)
      return ErrorHere("expected ' = ' after instruction name '" + std::string(tok_.text) +
                       "' (write '%" + std::string(tok_.text) + " =' or put spaces around '=')");
    return Expected("instruction name");
  }
  std::string_view name = tok_.text;
  uint32_t name_offset = tok_.offset;
  if (TypeFromWord(name) || (name.size() >= 2 && name.substr(0, 2) == "__" &&
                             name.substr(0, 6) != "__xla_"))
    return ErrorHere("illegal instruction name '" + std::string(name) + "'");
  // A name defined twice is reported when the instruction is added; until then its slot loads.
  if (const void* slot = scope_.SlotFor(name)) __builtin_prefetch(slot);
  // `name = `: step over a plainly written '=' without making a token of it.
  const char* text = src_.text.data();
  const char* after_name = text + lex_.position();
  while (*after_name == ' ') ++after_name;
  if (*after_name == '=') {
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
                                                  bool nested) {
  if (++nesting_ > opts_.max_nesting) return ErrorHere("instructions nested deeper than " + std::to_string(opts_.max_nesting));
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
  bool has_shape = false;
  if (tok_.kind == Tok::kIdent && TryCachedShape(inst->shape)) {
    has_shape = true;
  } else if (tok_.kind == Tok::kLParen || (tok_.kind == Tok::kIdent && TypeFromWord(tok_.text)) ||
             (IsIdent("b") && PeekNext().kind == Tok::kLParen)) {
    NHLO_TRY(ParseShape(inst->shape));
    has_shape = true;
  }
  if (tok_.kind != Tok::kIdent) return Expected("opcode");
  auto opcode = OpcodeFromName(tok_.text);
  if (!opcode) {
    // Async sugar: X-start / X-update / X-done for an opcode X without native async forms.
    std::string_view text = tok_.text;
    for (auto [suffix, async_op] : {std::pair{std::string_view("-start"), Opcode::kAsyncStart},
                                    std::pair{std::string_view("-update"), Opcode::kAsyncUpdate},
                                    std::pair{std::string_view("-done"), Opcode::kAsyncDone}}) {
      if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) continue;
      if (auto wrapped = OpcodeFromName(text.substr(0, text.size() - suffix.size()))) {
        opcode = async_op;
        inst->async_sugar = true;
        inst->async_wrapped = *wrapped;
      }
    }
  }
  if (!opcode) return ErrorHere("unknown opcode '" + std::string(tok_.text) + "'");
  inst->opcode = *opcode;
  uint32_t opcode_offset = tok_.offset;
  Advance();
  if (tok_.kind != Tok::kLParen) return Expected("'(' after the opcode");

  SmallVec<Instruction*, 8> operands;
  if (inst->opcode == Opcode::kParameter) {
    Advance();
    if (tok_.kind != Tok::kInt) return Expected("parameter number");
    NHLO_ASSIGN_OR_RETURN(int64_t number, ParseInt(tok_));
    if (number < 0) return ErrorHere("parameter number must be >= 0");
    for (Instruction* other : comp->instructions)
      if (other->opcode == Opcode::kParameter && other->parameter_number == number)
        return ErrorHere("parameter number " + std::to_string(number) + " is used twice");
    inst->parameter_number = number;
    Advance();
    NHLO_TRY(Expect(Tok::kRParen, "')'"));
  } else if (inst->opcode == Opcode::kConstant) {
    if (!has_shape) return ErrorAt(opcode_offset, "constant needs a result shape");
    Advance();
    NHLO_ASSIGN_OR_RETURN(inst->literal, ParseLiteral(inst->shape));
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
  static const std::vector<AttrId> kNone;
  const std::vector<AttrId>& required_attrs =
      !inst->async_sugar ? RequiredAttrs(inst->opcode)
                         : inst->opcode == Opcode::kAsyncStart ? RequiredAttrs(inst->async_wrapped) : kNone;
  for (AttrId required : required_attrs) {
    bool present = false;
    for (const Attribute& a : attrs) present |= a.id == required;
    if (!present)
      return ErrorAt(opcode_offset, "'" + std::string(OpcodeName(inst->opcode)) + "' needs attribute '" +
                                        std::string(AttrName(required)) + "='");
  }
  // Few attributes per instruction: an insertion sort keeps the printing order stable.
  for (size_t i = 1; i < attrs.size(); ++i)
    for (size_t j = i; j > 0 && attrs[j].id < attrs[j - 1].id; --j) std::swap(attrs[j], attrs[j - 1]);
  inst->attrs = module_.arena.Copy(attrs.data(), attrs.size());

  if (!has_shape) {
    Inference inf = InferShape(module_, *inst);
    if (inf.outcome == InferOutcome::kError) return ErrorAt(opcode_offset, inf.message);
    if (inf.outcome == InferOutcome::kNotInferable)
      return ErrorAt(opcode_offset, "the result shape of '" + std::string(OpcodeName(inst->opcode)) +
                                        "' cannot be inferred; write it before the opcode");
    inst->shape = inf.shape;
  }
  if (nested) {
    inst->name = module_.UniqueName(std::string(OpcodeName(inst->opcode)) + ".nested");
  } else {
    if (scope_.InsertUnique(inst))
      return ErrorAt(name_offset, "instruction '" + std::string(name) + "' is defined twice in computation '" +
                                      std::string(comp->name) + "'");
  }
  comp->instructions.push_back(inst);
  return inst;
}

// operands ::= '(' (shape? name (',' shape? name)*)? ')'
Status Parser::ParseOperands(Instruction* inst, SmallVec<Instruction*, 8>& operands) {
  // Fast path for the common `(%a, %b)`: names read straight from the text (NUL-terminated),
  // without tokens. At anything else (a shape, a plain name, a comment, a line break, an
  // unknown name) the token path below takes over after the last operand read here.
  const char* const text = src_.text.data();
  const char* s = text + lex_.position();  // just after '('
  for (;;) {
    while (*s == ' ') ++s;
    if (*s != '%') break;
    const char* name = s + 1;
    const char* end = name;
    while (IsIdentChar(*end)) ++end;
    const char* sep = end;
    while (*sep == ' ') ++sep;
    if (end == name || (*sep != ',' && *sep != ')')) break;
    Instruction* operand = scope_.find(std::string_view(name, static_cast<size_t>(end - name)));
    if (!operand) break;
    operands.push_back(operand);
    s = sep + 1;
    lex_.set_position(static_cast<uint32_t>(s - text));
    if (*sep == ')') {
      Advance();
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
    } else if (tok_.kind == Tok::kLParen || (tok_.kind == Tok::kIdent && TypeFromWord(tok_.text))) {
      NHLO_TRY(ParseShape(written));
      has_shape = true;
    }
    bool plain_ident = tok_.kind == Tok::kIdent && !IsKeyword(tok_.text) && !TypeFromWord(tok_.text);
    if (plain_ident && !scope_.find(tok_.text) && OpcodeFromName(tok_.text) && PeekNext().kind == Tok::kLParen) {
      // A nested instruction; a written shape belongs to it.
      uint32_t at = tok_.offset;
      lex_.set_position(shape_start);
      Advance();
      NHLO_ASSIGN_OR_RETURN(Instruction * nested, ParseInstructionBody(inst->parent, {}, at, /*nested=*/true));
      operands.push_back(nested);
      if (tok_.kind == Tok::kComma) Advance();
      else if (tok_.kind != Tok::kRParen) return Expected("',' or ')' in the operand list");
      continue;
    }
    if (tok_.kind != Tok::kName && !plain_ident) return Expected("operand name");
    Instruction* operand = scope_.find(tok_.text);
    if (!operand) return ErrorHere("unknown operand '" + std::string(tok_.text) + "'");
    if (has_shape && !SameShape(written, operand->shape))
      return ErrorHere("operand '" + std::string(tok_.text) + "' is written as " +
                       ShapeToString(written, false) + " but has shape " +
                       ShapeToString(operand->shape, false));
    operands.push_back(operand);
    Advance();
    if (tok_.kind == Tok::kComma) Advance();
    else if (tok_.kind != Tok::kRParen) return Expected("',' or ')' in the operand list");
  }
  Advance();
  return OkStatus();
}

// inline_computation ::= '{' instruction+ '}'   (as the value of to_apply= and friends)
// The body becomes a computation of its own, named after the instruction that holds it and
// placed before the computation being parsed, so callees still precede callers.
Result<Computation*> Parser::ParseInlineComputation(std::string_view owner) {
  if (++nesting_ > opts_.max_nesting) return ErrorHere("computations nested deeper than " + std::to_string(opts_.max_nesting));
  struct Unnest {
    int& depth;
    ~Unnest() { --depth; }
  } unnest{nesting_};
  uint32_t open = tok_.offset;
  Advance();
  std::string base = std::string(owner.empty() ? "inline" : owner) + ".region";
  std::string_view name = module_.arena.CopyString(base);
  for (int i = 1; module_.FindComputation(name); ++i) name = module_.arena.CopyString(base + "." + std::to_string(i));
  Computation* enclosing = current_comp_;
  Computation* comp = module_.AddComputation(name);
  comp->source_offset = open;
  comp->source_id = source_id_;
  // Move it right before the computation that uses it.
  auto& list = module_.computations;
  auto at = std::find_if(list.begin(), list.end(), [&](const auto& c) { return c.get() == enclosing; });
  if (at != list.end()) std::rotate(at, list.end() - 1, list.end());
  NameMap saved_scope = std::move(scope_);
  std::string_view saved_instruction = current_instruction_;
  scope_.clear();
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
  current_instruction_ = saved_instruction;
  current_comp_ = enclosing;
  return comp;
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

// attribute ::= attr_name value   (the value syntax depends on the attribute, see attributes.def)
Status Parser::ParseAttribute(Instruction* inst, SmallVec<Attribute, 8>& attrs) {
  if (tok_.kind != Tok::kAttrName) return Expected("attribute 'name='");
  auto id = AttrFromName(tok_.text);
  if (!id) return ErrorHere("unknown attribute '" + std::string(tok_.text) + "'");
  for (const Attribute& a : attrs)
    if (a.id == *id) return ErrorHere("attribute '" + std::string(tok_.text) + "' given twice");
  if (!AttrAllowed(inst->opcode, *id) && !(inst->async_sugar && AttrAllowed(inst->async_wrapped, *id)))
    return ErrorHere("'" + std::string(OpcodeName(inst->opcode)) + "' does not take attribute '" + std::string(tok_.text) + "'");
  Attribute attr;
  attr.id = *id;
  attr.kind = AttrDeclaredKind(*id);
  Arena& arena = module_.arena;
  if (attr.kind == AttrKind::Raw || attr.kind == AttrKind::IntList) {
    // The two most common value forms, read without tokens when plainly written: a raw {...}
    // block (metadata) and a flat integer list (dimensions, contracting dims).
    const char* text = src_.text.data();
    const char* p = text + lex_.position();
    while (*p == ' ') ++p;
    if (*p == '{' && attr.kind == AttrKind::Raw) {
      lex_.set_position(static_cast<uint32_t>(p - text));
      Token block = lex_.RawBraceBlock();
      if (block.kind == Tok::kError) return ErrorAt(block.offset, std::string(block.text));
      Advance();
      attr.text = FoldRaw(arena, block.text, !lex_.last_block_needs_fold());
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
        Advance();
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
      if (IsIdent("true")) attr.b = true;
      else if (!IsIdent("false")) return Expected("'true' or 'false'");
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
      if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kPad && tok_.kind != Tok::kDxD &&
          tok_.kind != Tok::kDimLabels && tok_.kind != Tok::kInt)
        return Expected("a value");
      attr.text = tok_.text;
      Advance();
      break;
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
        if (tok_.kind == Tok::kComma) Advance();
        else if (tok_.kind != Tok::kRBrace) return Expected("',' or '}'");
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
        if (tok_.kind == Tok::kComma) Advance();
        else if (tok_.kind != Tok::kRBrace) return Expected("',' or '}'");
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
    case AttrKind::Raw: {
      NHLO_ASSIGN_OR_RETURN(attr.text, CaptureRaw());
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
      break;
    case AttrKind::Literal: {
      Shape s;
      literal_follows_ = true;
      Status shape_status = ParseShape(s);
      literal_follows_ = false;
      NHLO_TRY(shape_status);
      NHLO_ASSIGN_OR_RETURN(attr.literal, ParseLiteral(s));
      break;
    }
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
    if (tok_.kind == Tok::kComma) Advance();
    else if (tok_.kind != Tok::kRBrace) return Expected("',' or '}'");
  }
  Advance();
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
  uint32_t end;
  if (IsIdent("mesh") && PeekNext().kind == Tok::kLBracket) {
    // Named-mesh replica groups: mesh[...] {axes}
    Advance();
    NHLO_TRY(skip_group(Tok::kLBracket, Tok::kRBracket));
    if (tok_.kind == Tok::kLBrace) NHLO_TRY(skip_group(Tok::kLBrace, Tok::kRBrace));
    end = tok_.offset;
    while (end > start && (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\t' ||
                           text[end - 1] == '\r'))
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
    while (end > start && (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\t' ||
                           text[end - 1] == '\r'))
      --end;
  } else {
    switch (tok_.kind) {
      case Tok::kIdent: case Tok::kInt: case Tok::kDecimal: case Tok::kNegInf: case Tok::kPad:
      case Tok::kDxD: case Tok::kDimLabels:
        end = tok_.offset + static_cast<uint32_t>(tok_.text.size());
        break;
      case Tok::kString:
        end = tok_.offset + static_cast<uint32_t>(tok_.text.size()) + 2;
        break;
      default:
        return Expected("an attribute value");
    }
    Advance();
  }
  return FoldRaw(module_.arena, text.substr(start, end - start));
}

// shape ::= '(' (shape (',' shape)*)? ')' | TYPE '[' (dim (',' dim)*)? ']' layout?
// dim   ::= INT | '<=' INT | '?'
Status Parser::ParseShape(Shape& shape, int depth) {
  if (depth > opts_.max_nesting)
    return ErrorHere("shape nesting deeper than " + std::to_string(opts_.max_nesting));
  if (tok_.kind == Tok::kLParen) {
    Advance();
    std::vector<Shape> elements;
    while (tok_.kind != Tok::kRParen) {
      Shape e;
      NHLO_TRY(ParseShape(e, depth + 1));
      elements.push_back(e);
      if (tok_.kind == Tok::kComma) Advance();
      else if (tok_.kind != Tok::kRParen) return Expected("',' or ')' in the tuple shape");
    }
    Advance();
    shape = module_.MakeTupleShape(elements);
    return OkStatus();
  }
  if (IsIdent("b") && PeekNext().kind == Tok::kLParen) {
    Advance();
    Advance();
    Shape inner;
    NHLO_TRY(ParseShape(inner, depth + 1));
    NHLO_TRY(Expect(Tok::kRParen, "')'"));
    shape = Shape();
    shape.type = PrimitiveType::kBuffer;
    shape.tuple = module_.arena.Copy(&inner, 1);
    return OkStatus();
  }
  if (tok_.kind != Tok::kIdent) return Expected("shape");
  if (TryCachedShape(shape)) return OkStatus();
  auto type = TypeFromWord(tok_.text);
  if (!type) return ErrorHere("unknown element type '" + std::string(tok_.text) + "'");
  uint32_t text_start = tok_.offset;
  Advance();
  NHLO_TRY(Expect(Tok::kLBracket, "'['"));
  SmallVec<int64_t, 8> dims;
  SmallVec<DimKind, 8> kinds;
  bool dynamic = false;
  int64_t elements = 1;
  while (tok_.kind != Tok::kRBracket) {
    DimKind kind = DimKind::kStatic;
    int64_t value = 0;
    if (tok_.kind == Tok::kQuestion) {
      kind = DimKind::kUnbounded;
      value = -1;
      Advance();
    } else {
      if (tok_.kind == Tok::kLeq) {
        kind = DimKind::kBounded;
        Advance();
      }
      if (tok_.kind != Tok::kInt) return Expected("dimension size");
      NHLO_ASSIGN_OR_RETURN(value, ParseInt(tok_));
      if (value < 0) return ErrorHere("dimension size must be >= 0");
      if (value != 0 && elements > INT64_MAX / value)
        return ErrorHere("shape has more than 2^63 elements");
      elements *= value;
      Advance();
    }
    dynamic |= kind != DimKind::kStatic;
    dims.push_back(value);
    kinds.push_back(kind);
    if (tok_.kind == Tok::kComma) Advance();
    else if (tok_.kind != Tok::kRBracket) return Expected("',' or ']' in the dimensions");
  }
  uint32_t text_end = tok_.offset + 1;
  Advance();
  shape = Shape();
  shape.type = *type;
  shape.dims = module_.arena.Copy(dims.data(), dims.size());
  if (dynamic) shape.dim_kinds = module_.arena.Copy(kinds.data(), kinds.size());
  if (tok_.kind == Tok::kLBrace) {
    Tok next = PeekNext().kind;
    if ((next == Tok::kInt || next == Tok::kColon) && (!literal_follows_ || BraceGroupIsFollowedByBrace())) {
      uint32_t close = 0;
      NHLO_TRY(ParseLayout(shape, &close));
      text_end = close + 1;
    }
  }
  RememberShape(text_start, text_end, shape);
  return OkStatus();
}

// The cache applies when the source at the current token repeats a remembered shape's text
// exactly and nothing after it could extend the shape: text that ends at `]` must not be
// followed by a `{` (a layout) or a comment hiding one.
bool Parser::TryCachedShape(Shape& shape) {
  if (literal_follows_) return false;
  std::string_view text = src_.text;
  uint32_t at = tok_.offset;
  if (size_t(at) + 8 > text.size()) return false;
  uint64_t head;
  std::memcpy(&head, text.data() + at, 8);
  for (const CachedShape& c : shape_cache_) {
    if (c.length == 0 || (head & c.mask) != c.prefix || size_t(at) + c.length > text.size()) continue;
    if (std::memcmp(text.data() + at, text.data() + c.offset, c.length) != 0) continue;
    uint32_t end = at + c.length;
    if (text[end - 1] == ']') {
      size_t q = end;
      while (q < text.size() && (text[q] == ' ' || text[q] == '\t' || text[q] == '\n' || text[q] == '\r')) ++q;
      if (q < text.size() && (text[q] == '{' || text[q] == '/')) return false;
    }
    shape = c.shape;
    lex_.set_position(end);
    Advance();
    return true;
  }
  return false;
}

void Parser::RememberShape(uint32_t start, uint32_t end, const Shape& shape) {
  if (literal_follows_ || end <= start || end - start > 128) return;
  CachedShape& c = shape_cache_[shape_cache_next_];
  shape_cache_next_ = (shape_cache_next_ + 1) % kShapeCacheSize;
  c.offset = start;
  c.length = end - start;
  c.mask = c.length >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * c.length)) - 1;
  c.prefix = 0;
  std::memcpy(&c.prefix, src_.text.data() + start, std::min<uint32_t>(c.length, 8));
  c.shape = shape;
}

// In `f32[2] {1, 2}` the braces are the literal, in `f32[2]{0} {1, 2}` the first pair is the
// layout: where a literal follows the shape, a brace group is a layout only if another `{`
// comes after it.
bool Parser::BraceGroupIsFollowedByBrace() {
  uint32_t saved = lex_.position();
  int depth = 1;
  Token t;
  do {
    t = lex_.Next();
    if (t.kind == Tok::kLBrace) ++depth;
    if (t.kind == Tok::kRBrace) --depth;
  } while (depth > 0 && t.kind != Tok::kEof && t.kind != Tok::kError);
  bool brace = depth == 0 && lex_.Next().kind == Tok::kLBrace;
  lex_.set_position(saved);
  return brace;
}

// layout ::= '{' (INT (',' INT)*)? (':' layout_attrs)? '}'
Status Parser::ParseLayout(Shape& shape, uint32_t* close_offset) {
  uint32_t open = tok_.offset;
  Advance();
  SmallVec<int64_t, 8> minor_to_major;
  while (tok_.kind == Tok::kInt) {
    NHLO_ASSIGN_OR_RETURN(int64_t v, ParseInt(tok_));
    minor_to_major.push_back(v);
    Advance();
    if (tok_.kind == Tok::kComma) Advance();
  }
  Layout* layout = module_.arena.New<Layout>();
  if (tok_.kind == Tok::kColon) {
    // Everything up to the matching '}' is kept as text (tiles, memory space, element size...).
    // Only the characters layout attributes use are accepted, with properly nested brackets,
    // so the kept text always prints back to something that parses the same way.
    std::string_view text = src_.text;
    uint32_t start = lex_.position(), i = start;
    char closers[64];
    int depth = 0;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (c == '}' && depth == 0) break;
      if (c == '(' || c == '[' || c == '{') {
        if (depth == static_cast<int>(sizeof(closers))) return ErrorAt(i, "layout nested too deeply");
        closers[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0 || closers[depth - 1] != c)
          return ErrorAt(i, std::string("unbalanced '") + c + "' in the layout");
        --depth;
      } else if (!IsIdentChar(c) && c != ',' && c != '*' && c != '#' && c != '+' && c != '~' && c != ':' &&
                 c != ' ' && c != '\n' && c != '\t' && c != '\r') {
        return ErrorAt(i, std::string("unexpected '") + c + "' in the layout");
      }
    }
    if (i >= text.size()) return ErrorAt(open, "unterminated layout");
    layout->tail = FoldRaw(module_.arena, text.substr(start, i - start));
    while (!layout->tail.empty() && layout->tail.back() == ' ') layout->tail.remove_suffix(1);
    while (!layout->tail.empty() && layout->tail.front() == ' ') layout->tail.remove_prefix(1);
    lex_.set_position(i);
    Advance();
  }
  if (tok_.kind != Tok::kRBrace) return Expected("'}' to close the layout");
  if (minor_to_major.size() != shape.dims.size())
    return ErrorAt(open, "layout has " + std::to_string(minor_to_major.size()) +
                             " dimensions but the shape has rank " +
                             std::to_string(shape.dims.size()));
  for (size_t i = 0; i < minor_to_major.size(); ++i) {
    int64_t d = minor_to_major[i];
    bool repeated = false;
    for (size_t j = 0; j < i; ++j) repeated |= minor_to_major[j] == d;
    if (d < 0 || d >= static_cast<int64_t>(shape.dims.size()) || repeated)
      return ErrorAt(open, "layout is not a permutation of the dimensions");
  }
  *close_offset = tok_.offset;
  Advance();
  bool is_default = layout->tail.empty();
  for (size_t i = 0; i < minor_to_major.size() && is_default; ++i)
    is_default = minor_to_major[i] == static_cast<int64_t>(minor_to_major.size() - 1 - i);
  if (!is_default) {
    layout->minor_to_major = module_.arena.Copy(minor_to_major.data(), minor_to_major.size());
    shape.layout = layout;
  }
  return OkStatus();
}

Result<int64_t> Parser::ParseInt(const Token& t) {
  std::string_view s = t.text;
  bool negative = !s.empty() && s[0] == '-';
  uint64_t magnitude = 0;
  auto r = std::from_chars(s.data() + (negative ? 1 : 0), s.data() + s.size(), magnitude);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    return ErrorAt(t.offset, "integer '" + std::string(s) + "' is out of range");
  if (negative) {
    if (magnitude > uint64_t(INT64_MAX) + 1)
      return ErrorAt(t.offset, "integer '" + std::string(s) + "' is out of range");
    return static_cast<int64_t>(0 - magnitude);
  }
  return static_cast<int64_t>(magnitude);  // values up to 2^64-1 are bit-cast, as XLA does
}

Result<double> Parser::ParseFloatToken(const Token& t, uint64_t* nan_payload) {
  if (nan_payload) *nan_payload = 0;
  if (t.kind == Tok::kIdent && t.text == "inf") return std::numeric_limits<double>::infinity();
  if (t.kind == Tok::kNegInf) return -std::numeric_limits<double>::infinity();
  if (t.kind != Tok::kInt && t.kind != Tok::kDecimal) return ErrorAt(t.offset, "expected a number, got " + Describe(t));
  std::string_view s = t.text;
  bool negative = !s.empty() && s[0] == '-';
  std::string_view body = negative ? s.substr(1) : s;
  if (body.substr(0, 3) == "nan") {
    if (body.size() > 3 && nan_payload) {
      std::string_view hex = body.substr(6, body.size() - 7);  // nan(0x...)
      uint64_t payload = 0;
      auto r = std::from_chars(hex.data(), hex.data() + hex.size(), payload, 16);
      if (r.ec != std::errc() || payload == 0)
        return ErrorAt(t.offset, "bad NaN payload in '" + std::string(s) + "'");
      *nan_payload = payload;
    }
    double nan = std::numeric_limits<double>::quiet_NaN();
    return negative ? -nan : nan;
  }
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars reports underflow as out of range too; only overflow is an error.
    double probe = std::strtod(std::string(s).c_str(), nullptr);
    if (std::isinf(probe)) return ErrorAt(t.offset, "number '" + std::string(s) + "' overflows a double");
    return probe;
  }
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    return ErrorAt(t.offset, "malformed number '" + std::string(s) + "'");
  return v;
}

// literal ::= '(' literal (',' literal)* ')'              for tuples
//           | value                                     for scalars
//           | '{' ... '}' nested rank deep | '{...}'    for arrays
Result<const Literal*> Parser::ParseLiteral(const Shape& shape, int depth) {
  if (depth > opts_.max_nesting)
    return ErrorHere("literal nesting deeper than " + std::to_string(opts_.max_nesting));
  Literal* lit = module_.arena.New<Literal>();
  lit->shape = shape;
  if (shape.IsTuple()) {
    NHLO_TRY(Expect(Tok::kLParen, "'(' to open a tuple literal"));
    std::vector<const Literal*> elements;
    for (size_t i = 0; i < shape.tuple.size(); ++i) {
      NHLO_ASSIGN_OR_RETURN(const Literal* e, ParseLiteral(shape.tuple[i], depth + 1));
      elements.push_back(e);
      if (tok_.kind == Tok::kComma) Advance();
    }
    NHLO_TRY(Expect(Tok::kRParen, "')' to close the tuple literal"));
    lit->tuple = module_.arena.Copy(elements);
    return static_cast<const Literal*>(lit);
  }
  if (!shape.IsArray()) {
    if (shape.type == PrimitiveType::kToken || shape.type == PrimitiveType::kOpaque)
      return static_cast<const Literal*>(lit);
    return ErrorHere("a literal of this shape cannot be written");
  }
  for (size_t i = 0; i < shape.dims.size(); ++i)
    if (shape.IsDynamicDim(i)) return ErrorHere("a literal cannot have a dynamic shape");
  int64_t bytes = HostBytes(shape);
  if (bytes < 0) return ErrorHere("literal of shape " + ShapeToString(shape, false) + " is too large");
  if (!shape.dims.empty() && tok_.kind == Tok::kLBrace && PeekNext().kind == Tok::kEllipsis) {
    // Elided data ({...}) has no bytes; codegen and the interpreter treat it as zeros.
    Advance();
    Advance();
    NHLO_TRY(Expect(Tok::kRBrace, "'}' after '...'"));
    lit->elided = true;
    return static_cast<const Literal*>(lit);
  }
  // Every element takes at least one character, so a literal cannot hold more elements than
  // the text has bytes left; checking first keeps a bad shape from allocating gigabytes.
  if (tok_.kind == Tok::kLBrace && shape.ElementCount() > static_cast<int64_t>(src_.text.size() - tok_.offset))
    return ErrorHere("literal of shape " + ShapeToString(shape, false) + " has more elements than the text has characters");
  lit->data = module_.arena.NewArray<uint8_t>(static_cast<size_t>(bytes));
  if (shape.dims.empty()) {
    NHLO_TRY(ParseElement(shape.type, lit->data.data()));
    return static_cast<const Literal*>(lit);
  }
  if (tok_.kind != Tok::kLBrace) {
    // XLA accepts one value for a whole array (`f32[3,3] constant(1)`): every element gets it.
    int size = HostByteSize(shape.type);
    uint8_t value[16] = {};  // an array with no elements still has a value to parse
    NHLO_TRY(ParseElement(shape.type, value));
    for (int64_t i = 0; i < shape.ElementCount(); ++i)
      std::memcpy(lit->data.data() + i * size, value, static_cast<size_t>(size));
    return static_cast<const Literal*>(lit);
  }
  if (shape.dims.size() > static_cast<size_t>(opts_.max_nesting))
    return ErrorHere("literal nesting deeper than " + std::to_string(opts_.max_nesting));
  int64_t index = 0;
  NHLO_TRY(ParseArrayLevel(shape, *lit, 0, index));
  return static_cast<const Literal*>(lit);
}

Status Parser::ParseArrayLevel(const Shape& shape, Literal& lit, size_t dim, int64_t& index) {
  uint32_t open = tok_.offset;
  NHLO_TRY(Expect(Tok::kLBrace, "'{' (the literal has rank " + std::to_string(shape.dims.size()) + ")"));
  int64_t count = 0, want = shape.dims[dim];
  int elem_size = HostByteSize(shape.type);
  if (dim + 1 == shape.dims.size() && (shape.type == PrimitiveType::kF32 || shape.type == PrimitiveType::kS32))
    count = ScanNumberRow(shape.type, lit.data.data() + index * elem_size, want, index);
  while (tok_.kind != Tok::kRBrace) {
    if (count == want)
      return ErrorHere("too many elements in dimension " + std::to_string(dim) + " of the literal (expected " +
                       std::to_string(want) + ")");
    if (dim + 1 == shape.dims.size()) {
      NHLO_TRY(ParseElement(shape.type, lit.data.data() + index * elem_size));
      ++index;
    } else {
      NHLO_TRY(ParseArrayLevel(shape, lit, dim + 1, index));
    }
    ++count;
    if (tok_.kind == Tok::kComma) Advance();
    else if (tok_.kind != Tok::kRBrace) return Expected("',' or '}' in the literal");
  }
  if (count != want)
    return ErrorAt(open, "dimension " + std::to_string(dim) + " of the literal has " + std::to_string(count) +
                             " elements, the shape says " + std::to_string(want));
  Advance();
  return OkStatus();
}

// Clinger's fast path for f32: a decimal whose digits form an integer of at most 2^24, with at
// most 10 fraction digits, is one exactly representable integer divided by an exact power of
// ten, so a single float division rounds it correctly. On success advances `s` past the number;
// on anything else (more digits, an exponent, a letter after the digits) returns false and
// leaves `s` alone for from_chars. The text must end in a non-digit (the source buffer is a
// std::string, NUL-terminated), so the digit loops need no bounds checks.
bool ReadF32Fast(const char*& s, float* out) {
  static constexpr float kPow10[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
  const char* p = s;
  bool negative = *p == '-';
  p += negative;
  uint64_t mantissa = 0;  // wraps past 19 digits, which the count check rejects
  const char* digits_start = p;
  while (static_cast<unsigned>(*p - '0') < 10) mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
  size_t digits = static_cast<size_t>(p - digits_start), frac = 0;
  if (*p == '.') {
    const char* frac_start = ++p;
    while (static_cast<unsigned>(*p - '0') < 10) mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
    frac = static_cast<size_t>(p - frac_start);
    digits += frac;
  }
  if (digits == 0 || digits > 19 || frac > 10 || mantissa > (uint64_t(1) << 24) || IsIdentStart(*p)) return false;
  float v = static_cast<float>(mantissa);  // exact: <= 2^24
  if (frac) v /= kPow10[frac];
  *out = negative ? -v : v;
  s = p;
  return true;
}

// Big constants are most of a large dump's bytes. For f32 and s32 rows this reads plain
// numbers straight from the text, skipping the token machinery; at the first thing it does not
// handle (nan, inf, comments, an out-of-range value, a malformed number) it stops and leaves the
// rest of the row, from the start of that element, to the general path, which also produces
// any diagnostic.
int64_t Parser::ScanNumberRow(PrimitiveType type, uint8_t* out, int64_t want, int64_t& index) {
  const char* const text_end = src_.text.data() + src_.text.size();  // *text_end == '\0'
  const char* s = src_.text.data() + tok_.offset;
  const char* resume = s;
  int64_t n = 0;
  while (n < want) {
    const char* start = s;
    char c = *s;
    if (!(IsDigit(c) || c == '-' || c == '.')) break;
    if (type == PrimitiveType::kF32) {
      float v;
      if (!ReadF32Fast(s, &v)) {
        auto r = std::from_chars(start, text_end, v);
        if (r.ec != std::errc()) break;
        s = r.ptr;
      }
      std::memcpy(out + n * 4, &v, 4);
    } else {
      int32_t v;
      auto r = std::from_chars(start, text_end, v);
      if (r.ec != std::errc()) break;
      s = r.ptr;
      std::memcpy(out + n * 4, &v, 4);
    }
    while (IsSpace(*s)) ++s;
    if (*s == ',') {
      ++n;
      ++s;
      while (IsSpace(*s)) ++s;
      resume = s;
      continue;
    }
    if (*s == '}') {
      ++n;
      resume = s;
    }
    break;
  }
  if (n > 0) {
    index += n;
    lex_.set_position(static_cast<uint32_t>(resume - src_.text.data()));
    Advance();
  }
  return n;
}

// value ::= INT | DECIMAL | 'inf' | '-inf' | 'nan' ('(0x' HEX ')')? | 'true' | 'false'
//         | '(' value ',' value ')'   (complex)
Status Parser::ParseElement(PrimitiveType type, uint8_t* out) {
  Token t = tok_;
  if (type == PrimitiveType::kPred) {
    if (t.kind == Tok::kIdent && (t.text == "true" || t.text == "false")) {
      out[0] = t.text == "true";
    } else if (t.kind == Tok::kInt) {
      NHLO_ASSIGN_OR_RETURN(int64_t v, ParseInt(t));
      out[0] = v != 0;
    } else {
      return Expected("'true', 'false' or an integer");
    }
    Advance();
    return OkStatus();
  }
  if (IsComplex(type)) {
    PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    NHLO_TRY(Expect(Tok::kLParen, "'(' to open a complex value"));
    NHLO_TRY(ParseElement(part, out));
    NHLO_TRY(Expect(Tok::kComma, "','"));
    NHLO_TRY(ParseElement(part, out + HostByteSize(part)));
    NHLO_TRY(Expect(Tok::kRParen, "')' to close a complex value"));
    return OkStatus();
  }
  if (IsInteger(type)) {
    if (t.kind != Tok::kInt) return Expected("integer");
    std::string_view s = t.text;
    bool negative = s[0] == '-';
    uint64_t magnitude = 0;
    auto r = std::from_chars(s.data() + negative, s.data() + s.size(), magnitude);
    int bits = BitWidth(type);
    bool fits = r.ec == std::errc();
    if (fits && IsSignedInt(type)) {
      uint64_t limit = uint64_t(1) << (bits - 1);
      fits = negative ? magnitude <= limit : magnitude < limit;
    } else if (fits) {
      fits = !negative && (bits == 64 || magnitude < (uint64_t(1) << bits));
    }
    if (!fits)
      return ErrorHere("value " + std::string(s) + " is out of range for " +
                       std::string(PrimitiveTypeName(type)));
    StoreBits(type, out, negative ? 0 - magnitude : magnitude);
    Advance();
    return OkStatus();
  }
  if (!IsFloat(type)) return ErrorHere("no literal syntax for " + std::string(PrimitiveTypeName(type)));
  if (type == PrimitiveType::kF32 && (t.kind == Tok::kInt || (t.kind == Tok::kDecimal && t.text.back() != 'n' && t.text.back() != ')'))) {
    // Hot path for big f32 constants: one correctly rounded conversion straight to float.
    float v;
    const char* end = t.text.data() + t.text.size();
    const char* fast_end = t.text.data();  // the token lies inside the NUL-terminated source
    std::from_chars_result r{end, std::errc()};
    if (!ReadF32Fast(fast_end, &v) || fast_end != end) r = std::from_chars(t.text.data(), end, v);
    if (r.ec == std::errc() && r.ptr == end) {
      std::memcpy(out, &v, 4);
      Advance();
      return OkStatus();
    }
  }
  uint64_t payload = 0;
  NHLO_ASSIGN_OR_RETURN(double v, ParseFloatToken(t, &payload));
  if (payload != 0) {
    bool neg = std::signbit(v);
    switch (type) {
      case PrimitiveType::kF64:
        StoreBits(type, out, (neg ? 0xfff0000000000000ULL : 0x7ff0000000000000ULL) | (payload & 0xfffffffffffffULL));
        break;
      case PrimitiveType::kF32:
        StoreBits(type, out, (neg ? 0xff800000u : 0x7f800000u) | (payload & 0x7fffff));
        break;
      case PrimitiveType::kBF16:
        StoreBits(type, out, (neg ? 0xff80u : 0x7f80u) | (payload & 0x7f));
        break;
      case PrimitiveType::kF16:
        StoreBits(type, out, (neg ? 0xfc00u : 0x7c00u) | (payload & 0x3ff));
        break;
      default:
        return ErrorHere("NaN payloads are not supported for " + std::string(PrimitiveTypeName(type)));
    }
    Advance();
    return OkStatus();
  }
  StoreFromDouble(type, out, v);
  if (std::isfinite(v)) {
    double back = LoadAsDouble(type, out);
    if (!std::isfinite(back))
      return ErrorHere("value " + std::string(t.text) + " is out of range for " +
                       std::string(PrimitiveTypeName(type)));
  }
  Advance();
  return OkStatus();
}

}  // namespace

Result<std::unique_ptr<Module>> ParseModule(std::string file, std::string text,
                                            const ParseOptions& options) {
  auto module = std::make_unique<Module>();
  auto src = std::make_unique<SourceBuffer>();
  src->name = std::move(file);
  src->text = std::move(text);
  if (src->text.size() >= UINT32_MAX)
    return Status::Error(src->name + ": input larger than 4 GiB is not supported");
  if (size_t nul = src->text.find('\0'); nul != std::string::npos)
    return Status::FromDiagnostic(DiagnosticAt(src->name, src->text, nul, "NUL byte in the input"));
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

std::vector<InputPiece> SplitInputFile(std::string_view text) {
  std::vector<InputPiece> pieces;
  std::string current;
  int line = 1, piece_start = 1;
  bool in_block_comment = false;  // a `// -----` inside /* ... */ is text, not a separator
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
    std::string_view content = text.substr(pos, (eol == std::string_view::npos ? text.size() : eol) - pos);
    while (!content.empty() && (content.back() == '\r' || content.back() == ' ')) content.remove_suffix(1);
    if (!in_block_comment && content == "// -----") {
      pieces.push_back({std::move(current), piece_start});
      current = std::string(static_cast<size_t>(line), '\n');  // keep line numbers of the file
      piece_start = line + 1;
    } else {
      current.append(text.substr(pos, next - pos));
      for (size_t i = 0; i < content.size(); ++i) {
        if (in_block_comment) {
          if (content.substr(i, 2) == "*/") in_block_comment = false, ++i;
        } else if (content.substr(i, 2) == "//") {
          break;
        } else if (content.substr(i, 2) == "/*") {
          in_block_comment = true;
          ++i;
        } else if (content[i] == '"') {
          for (++i; i < content.size() && content[i] != '"'; ++i)
            if (content[i] == '\\') ++i;
        }
      }
    }
    pos = next;
    ++line;
  }
  pieces.push_back({std::move(current), piece_start});
  return pieces;
}

std::string CUnescape(std::string_view body) {
  if (body.find('\\') == std::string_view::npos) return std::string(body);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case 'x': {
        int value = 0, digits = 0;
        while (i + 1 < body.size() && digits < 2 && std::isxdigit(static_cast<unsigned char>(body[i + 1]))) {
          char h = body[++i];
          value = value * 16 + (IsDigit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
          ++digits;
        }
        out += static_cast<char>(value);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = e - '0', digits = 1;
          while (i + 1 < body.size() && digits < 3 && body[i + 1] >= '0' && body[i + 1] <= '7') {
            value = value * 8 + (body[++i] - '0');
            ++digits;
          }
          out += static_cast<char>(value);
        } else {
          out += e;  // \" \\ \' \?
        }
    }
  }
  return out;
}

std::string CEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[5];
          buf[0] = '\\';
          buf[1] = static_cast<char>('0' + ((c >> 6) & 7));
          buf[2] = static_cast<char>('0' + ((c >> 3) & 7));
          buf[3] = static_cast<char>('0' + (c & 7));
          out.append(buf, 4);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace nhlo
