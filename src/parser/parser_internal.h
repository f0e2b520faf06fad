// SPDX-License-Identifier: Apache-2.0
// The parser's pieces shared by its source files (parser.cc: modules, computations,
// instructions and attributes; parse_shape.cc: shapes and layouts; parse_literal.cc: literals).
// Not a public API: use parser/parser.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"
#include "parser/lexer.h"
#include "parser/parser.h"
#include "support/name_table.h"
#include "support/small_vec.h"
#include "support/status.h"

namespace nhlo::parser_internal {

/// Words the grammar reserves (HloModule, ENTRY, ROOT, true, ...); never instruction names.
bool IsKeyword(std::string_view w);
/// The element type a word names, if it names one (`tuple` and `buffer` do not count).
std::optional<PrimitiveType> TypeFromWord(std::string_view w);
/// A token as diagnostics name it: "name 'x'", "end of file", "'('".
std::string Describe(const Token& t);
/// Raw attribute text with runs of whitespace and comments outside strings folded to one
/// space, so it prints the same however the input was wrapped; `known_clean` skips the check.
std::string_view FoldRaw(Arena& arena, std::string_view raw, bool known_clean = false);

// Instruction names of the computation being parsed (see support/name_table.h).
using NameMap = NameTable<Instruction>;

// Parameter numbers of the computation being parsed, to reject one used twice. Numbers are
// nearly always written 0, 1, 2, ...: while they are, a count answers; any other order goes to
// a hash set. Nothing is sized by a number (a text may write any).
class ParamNumbers {
 public:
  void clear() {
    dense_ = 0;
    if (!sparse_.empty()) sparse_ = {};  // a fresh set: clear() would walk every old bucket
  }
  /// False if `number` was seen before.
  bool Insert(int64_t number) {
    if (number < dense_) return false;
    if (sparse_.empty() && number == dense_) {
      ++dense_;
      return true;
    }
    return sparse_.insert(number).second;
  }

 private:
  int64_t dense_ = 0;  // 0 .. dense_-1 seen
  std::unordered_set<int64_t> sparse_;
};

// One `#i` of a compact get-tuple-element operand (`p0#1#0`), with where the index is written.
struct TupleIndex {
  int64_t index;
  uint32_t offset;
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
  // Advance, for the places where the next token is nearly always the single character `c`
  // written right after the current one (`add(`, `), `, `}, `): that character becomes the
  // token without lexing. The source is NUL-terminated, so reading at its end is safe.
  void AdvanceIfChar(char c, Tok kind) {
    uint32_t at = lex_.position();
    if (src_.text[at] != c) return Advance();
    tok_ = Token{kind, at, std::string_view(src_.text.data() + at, 1)};
    lex_.set_position(at + 1);
  }
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
    if (tok_.kind == Tok::kError && tok_.text.size() > 1) return ErrorAt(tok_.offset, std::string(tok_.text));
    return ErrorAt(tok_.offset, "expected " + std::string(what) + ", got " + Describe(tok_));
  }
  Status Expect(Tok kind, std::string_view what) {
    if (tok_.kind != kind) return Expected(what);
    Advance();
    return OkStatus();
  }

  // ---- grammar
  Status ParseHeader();
  Status CheckHeaderAliases();
  Status ParseStackFrames();
  Status ParseComputation();
  void BeginBody(Computation* comp);
  Status ParseInstruction(Computation* comp);
  Result<Instruction*> ParseInstructionBody(Computation* comp, std::string_view name, uint32_t name_offset, bool nested,
                                            const Shape* shape_read = nullptr);
  Result<Computation*> ParseInlineComputation(std::string_view owner);
  Status ParseOperands(Instruction* inst, SmallVec<Instruction*, 8>& operands);
  Status RunSingleInstruction();
  bool StartsSingleInstruction();
  bool IsOpcodeWord(std::string_view word) const;
  Result<Instruction*> CompactGetTupleElement(Instruction* base, std::string_view name, uint32_t offset,
                                              const SmallVec<TupleIndex, 4>& indices);
  Instruction* ImplicitParameter(Computation* comp, std::string_view name, const Shape& shape, uint32_t offset);
  void NameGeneratedInstructions();
  void PlaceCompactGets();
  // ---- forms older XLA printed (old_forms.cc)
  void NoteOldForm(uint32_t offset, std::string message);
  static std::optional<Opcode> OldOpcode(std::string_view word);
  static bool IsRemovedAttribute(std::string_view name);
  Status SkipRemovedAttribute();
  Status SkipOldLiteralShape(const Shape& shape);
  Status ParseSparseLiteral(const Shape& shape, Literal& lit);
  Instruction* NewGeneratedInstruction(Computation* comp, Opcode op, const Shape& shape,
                                       std::initializer_list<Instruction*> operands, std::string_view base,
                                       uint32_t offset);
  void NoteOldOpcode(std::string_view opcode_word, uint32_t offset);
  Status RewriteOldOpcode(std::string_view opcode_word, uint32_t offset, SmallVec<Attribute, 8>& attrs);
  Status LowerOldInstruction(Instruction* inst, std::string_view opcode_word, uint32_t offset, bool has_shape);
  Status LowerPackedNibbles(Instruction* inst, uint32_t offset, bool has_shape);
  /// An operand written with the shape an old form had before it was read in today's form.
  bool WrittenWithOldShape(const Instruction* operand, const Shape& written) const {
    if (old_shapes_.empty()) return false;
    auto it = old_shapes_.find(operand);
    return it != old_shapes_.end() && SameShape(it->second, written);
  }
  static bool CapturedAsRaw(AttrKind kind);
  Status Structure(Attribute& attr, uint32_t value_offset);
  Status ParseAttribute(Instruction* inst, SmallVec<Attribute, 8>& attrs);
  Status ParseShape(Shape& shape, int depth = 0);
  bool TryCachedShape(Shape& shape);
  bool TryCachedShapeAt(uint32_t at, Shape& shape);
  bool SkipPlainSignatureParameters();
  void RememberShape(uint32_t start, uint32_t end, const Shape& shape);
  Status CheckLayoutTail(std::string_view tail, uint32_t offset, size_t rank);
  Status ParseLayout(Shape& shape, uint32_t* close_offset);
  Result<const Literal*> ParseLiteral(const Shape& shape, int depth = 0);
  Result<const Literal*> ParseShapedLiteral(int depth = 0);
  Status ParseArrayLevel(const Shape& shape, Literal& lit, size_t dim, int64_t& index);
  Status ParseElement(PrimitiveType type, uint8_t* out);
  int64_t ScanNumberRow(PrimitiveType type, uint8_t* out, int64_t want, int64_t& index);
  Result<std::string_view> CaptureRaw();
  Status ParseShapeList(Attribute& attr);
  Result<int64_t> ParseInt(const Token& t);
  Result<double> ParseFloatToken(const Token& t, uint64_t* nan_payload);
  Status ParseIntList(SmallVec<int64_t, 16>& out);
  Result<Computation*> ParseComputationRef();
  void PlaceInlineComputations();
  Status ImplyAsyncComputation(Instruction* start, uint32_t opcode_offset);
  bool BraceGroupIsFollowedByBrace();

  Module& module_;
  const SourceBuffer& src_;
  uint32_t source_id_;
  const ParseOptions& opts_;
  Lexer lex_;
  Token tok_;
  NameMap scope_;               // current computation's names
  ParamNumbers param_numbers_;  // current computation's parameter numbers
  // Inline computations with the computation holding them (PlaceInlineComputations).
  std::vector<std::pair<Computation*, Computation*>> inline_regions_;
  std::unordered_map<std::string, int> next_region_suffix_;  // generated inline names, per base
  // Instructions the parser makes that the text does not name (nested operands, compact
  // get-tuple-elements), in creation order: NameGeneratedInstructions gives them unique names
  // once every written name is known, as XLA's name uniquer does.
  std::vector<Instruction*> generated_;
  // Compact get-tuple-elements of the current computation by their written form (`p0#1#0`),
  // so each is made once and every later use reads the same instruction.
  std::unordered_map<std::string, Instruction*> compact_gtes_;
  // Each compact get-tuple-element with the instruction it reads, in creation order; placed
  // after it once the module is read (PlaceCompactGets), in one pass per computation.
  std::vector<std::pair<Instruction*, Instruction*>> pending_gets_;
  // A text that is one instruction (XLA's ParseSingleInstruction): the computation built around
  // it, where an unknown operand written with a shape becomes a new parameter.
  Computation* single_instruction_ = nullptr;
  // Instructions read in today's form whose old shape their users may still write (copy-start's
  // (target, context), tokenless send and recv's (data, context)): that old shape.
  std::unordered_map<const Instruction*, Shape> old_shapes_;
  bool sparse_layout_seen_ = false;  // the last shape parsed had an old `sparse{N}` layout
  int64_t implicit_parameters_ = 0;
  bool literal_follows_ = false;          // parsing the shape of `shape literal` text
  bool style_seen_ = false;               // the first computation header set the module's source style
  bool operand_comment_seen_ = false;     // an operand list held `/*index=N*/`
  int nesting_ = 0;                       // depth of nested instructions and inline computations
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
  // Behind the ring, every plain array shape parsed (`type[dims]` with no layout or an
  // integer-only one, the text PlainShapeExtent measures) in a direct-mapped table hashed on
  // its text: a dump has a few hundred distinct shapes, too many for the ring (a fifth of the
  // Mixtral dump's shapes missed it) and few enough that collisions are rare. Allocated at the
  // first shape, so a parser that reads none pays nothing.
  struct HashedShape {
    uint32_t offset = 0;
    uint32_t length = 0;  // 0: empty slot
    Shape shape;
  };
  static constexpr uint32_t kShapeTableSize = 512;
  std::unique_ptr<HashedShape[]> shape_table_;
  bool TryHashedShape(uint32_t at, Shape& shape, uint32_t* length);
};

}  // namespace nhlo::parser_internal
