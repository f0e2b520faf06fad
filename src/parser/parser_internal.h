// SPDX-License-Identifier: Apache-2.0
// The parser's pieces shared by its source files (parser.cc: modules, computations,
// instructions and attributes; parse_shape.cc: shapes and layouts; parse_literal.cc: literals).
// Not a public API: use parser/parser.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "parser/lexer.h"
#include "parser/parser.h"
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

// Instruction names of the computation being parsed: open addressing over the instructions
// themselves (the key is the instruction's name, a view into the source). A slot holds the
// instruction and its name's full hash, side by side in one 16-byte entry: a probe compares
// names only when the hashes are equal, growing never re-reads names, and a new name's insert
// touches one cache line. No allocation per name.
class NameMap {
 public:
  void clear() {
    slots_.assign(64, Slot{});
    size_ = 0;
  }
  Instruction* find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    uint64_t h = Hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (!slot.inst) return nullptr;
      if (slot.hash == h && slot.inst->name == name) return slot.inst;
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
    size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    for (; slots_[i].inst; i = (i + 1) & mask)
      if (slots_[i].hash == h && slots_[i].inst->name == value->name) return slots_[i].inst;
    slots_[i] = Slot{value, h};
    ++size_;
    return nullptr;
  }

 private:
  struct Slot {
    Instruction* inst = nullptr;
    uint64_t hash = 0;
  };
  // Eight bytes a step (names are looked up once per operand), then murmur3's finalizer so the
  // slot index (low bits) depends on every byte.
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
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (!slot.inst) continue;
      size_t i = slot.hash & mask;
      while (slots_[i].inst) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }
  std::vector<Slot> slots_;
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
  static bool CapturedAsRaw(AttrKind kind);
  Status Structure(Attribute& attr, uint32_t value_offset);
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

}  // namespace nhlo::parser_internal
