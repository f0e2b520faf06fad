// SPDX-License-Identifier: Apache-2.0
// The in-memory HLO: Module -> Computation -> Instruction, with shapes, literals and typed
// attributes. Nodes live in the module's arena and hold only views, so parsing allocates little
// and a module is freed in one go. Everything the text says is kept, so the printer can write
// it back (the printer is the parser's inverse).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "support/arena.h"
#include "support/status.h"
#include "types/custom_call_configs.h"
#include "types/hlo_attrs.h"
#include "types/opcode.h"
#include "types/primitive_type.h"

namespace nhlo {

// ----------------------------------------------------------------------------------------
// Shapes

/// How one dimension is sized: static, bounded-dynamic (`<=N`) or unbounded (`?`).
enum class DimKind : uint8_t { kStatic, kBounded, kUnbounded };

/// A layout: minor_to_major plus the rest of the `{...:...}` text (tiles, memory space, ...),
/// kept verbatim after the colon.
struct Layout {
  Span<int64_t> minor_to_major{};
  std::string_view tail;
};

/// The layout of an array shape whose text gave none (`u32[4] iota()`, as JAX wrote modules
/// before layout assignment): row-major like the default, but printed without braces, so a
/// module reprints as it was written. Compared by address.
extern const Layout kLayoutNotWritten;

/// An array shape (element type + dims), a tuple, a token or opaque. Trivially copyable: the
/// spans point into the module arena (or are empty).
struct Shape {
  // Field order packs the 4-aligned spans and the type into 48 bytes: tuple shapes hold one
  // Shape per element, and an instruction holds one.
  Span<int64_t> dims{};       // for `?` dims the value is -1
  Span<DimKind> dim_kinds{};  // empty when every dim is static
  Span<Shape> tuple{};        // elements when type == kTuple
  PrimitiveType type = PrimitiveType::kInvalid;
  const Layout* layout = nullptr;  // null: default (row-major) layout; &kLayoutNotWritten: the same, unprinted

  bool IsTuple() const { return type == PrimitiveType::kTuple; }
  bool IsArray() const { return IsArrayType(type); }
  size_t rank() const { return dims.size(); }
  bool IsScalar() const { return IsArray() && dims.empty(); }
  bool IsDynamicDim(size_t i) const { return !dim_kinds.empty() && dim_kinds[i] != DimKind::kStatic; }
  /// Element count for arrays (product of dims, 1 for scalars); -1 if unknown or overflowing.
  int64_t ElementCount() const;
  /// Whether the layout is row-major (none given, or {n-1,...,0} with no tiles or other parts).
  bool HasDefaultLayout() const { return layout == nullptr || layout == &kLayoutNotWritten; }
};

/// Shape equality on type, dims, dynamic kinds and tuple structure (layouts ignored).
bool SameShape(const Shape& a, const Shape& b);
/// An array shape's minor_to_major order ({rank-1, ..., 0} for the default layout).
std::vector<int64_t> MinorToMajor(const Shape& s);
/// `f32[2,3]{1,0}` with the default layout printed for arrays of rank >= 1 (XLA's long form).
std::string ShapeToString(const Shape& s, bool print_layout = true);
/// `index_comments`: XLA's printer marks every fifth tuple element (`, /*index=5*/f32[]`).
void AppendShape(std::string& out, const Shape& s, bool print_layout = true, bool index_comments = false);

// ----------------------------------------------------------------------------------------
// Literals

/// Constant data. Arrays store elements row-major in the host layout of primitive_type.h
/// (HostByteSize bytes each, little-endian; sub-byte types one per byte, sign-extended for s4).
/// An elided literal (`{...}`) has zeroed data and prints as `{...}` again.
struct Literal {
  Shape shape;
  Span<uint8_t> data{};
  Span<const Literal*> tuple{};
  bool elided = false;
};

// ----------------------------------------------------------------------------------------
// Attributes

struct Computation;
struct Instruction;

/// `replica_groups=`: an explicit list of groups (`{{0,1},{2,3}}`, `{}`) or XLA's iota form
/// `[num_groups,group_size]<=[reshape_dims]T(transpose)`.
struct ReplicaGroupList {
  bool iota = false;
  bool mesh = false;            // XLA's mesh-axes form, kept only as the attribute's text
  Span<int64_t> ids{};          // list form: the groups' members, one group after another
  Span<int64_t> group_sizes{};  // list form: members per group
  int64_t num_groups = 0;       // iota form
  int64_t group_size = 0;
  Span<int64_t> reshape_dims{};
  Span<int64_t> transpose{};  // empty: no T(...)
};

/// One `key=value` of a KeyValues attribute (metadata, frontend_attributes). XLA's values are
/// strings and integers; anything else (a bare word such as `true`, a `{...}` block) is kept as
/// written.
enum class KeyValueKind : uint8_t { kString, kInt, kBare };
struct KeyValue {
  std::string_view key;
  union {
    std::string_view text{};  // kString: the value unescaped; kBare: as written (whitespace folded)
    int64_t i;                // kInt
  };
  KeyValueKind kind = KeyValueKind::kString;
};

/// One `name=value`. Which fields are meaningful depends on `kind`; the kind-specific values
/// share storage (48 bytes an attribute: large modules carry millions of them).
///
/// Structured kinds (Window, SliceRanges, PaddingConfig, DimLabels, Enum, EnumList,
/// ReplicaGroups, PairList, KeyValues) hold their typed value; `text` is empty unless the
/// source spelled the value differently from how the printer writes it (`{{0, 1}}`, fields out
/// of order), in which case it keeps that spelling so that printing a parsed module changes
/// nothing. Code that changes a typed value clears `text`.
struct Attribute {
  AttrId id{};
  AttrKind kind{};
  bool b = false;
  bool config_is_json = false;  // Config written as a raw {...} block (else a quoted string)
  union {
    int64_t i = 0;  // Int; Enum: the value's code (attr_enums.def)
    double f;       // Float
  };
  std::string_view text;  // String (unescaped), Ident, Raw, Config, ShapeList, BoolList (what prints); see above
  union {
    Span<int64_t> ints{};                    // IntList; EnumList: codes; PairList: source, target, ...
    Span<Computation*> computations;         // Computation (one) and ComputationList
    Span<Instruction*> instructions;         // InstructionList
    const Shape* shape;                      // Shape
    Span<Shape> shapes;                      // ShapeList (layouts kept)
    Span<bool> bools;                        // BoolList
    const Literal* literal;                  // Literal
    Span<WindowDim> window;                  // Window
    Span<SliceDim> slices;                   // SliceRanges
    Span<PaddingDim> padding;                // PaddingConfig
    const ConvDimLabels* dim_labels;         // DimLabels
    const ReplicaGroupList* replica_groups;  // ReplicaGroups
    Span<KeyValue> entries;                  // KeyValues, in source order
    const nlohmann::json* json;              // Config: `text` parsed once (Module::ParseJson); null if not JSON
  };
};

static_assert(sizeof(Attribute) == 48, "a large module carries millions of attributes");
static_assert(sizeof(Shape) == 48, "a tuple shape holds one Shape per element");

// ----------------------------------------------------------------------------------------
// Instructions, computations, modules

// Field order keeps padding out: a large module holds a million of these.
struct Instruction {
  std::string_view name;
  Shape shape;
  Span<Instruction*> operands{};
  Span<Attribute> attrs{};  // sorted by AttrId: the printer's order
  Computation* parent = nullptr;
  const Literal* literal = nullptr;  // kConstant
  int64_t parameter_number = -1;     // kParameter
  Opcode opcode{};
  // Async sugar (`custom-call-start(...)`): an async-start/update/done written as the wrapped
  // opcode plus a suffix, printed back the same way.
  bool async_sugar = false;
  Opcode async_wrapped{};
  // Scratch for analyses that need a per-instruction flag without a hash set (see
  // Module::NewMark); its value means nothing between analyses.
  mutable uint32_t mark = 0;
  uint32_t source_offset = kNoLocation;  // byte offset of the name in the source
  static constexpr uint32_t kNoLocation = UINT32_MAX;
  uint32_t source_id = 0;  // which source buffer of the module

  const Attribute* FindAttr(AttrId id) const;
  const Instruction* operand(size_t i) const { return operands[i]; }
};

static_assert(sizeof(Instruction) == 128, "a module holds one per instruction: about 2x the text of short lines");

/// A computation's instructions, in its module's arena: a post-fusion dump has a list per few
/// instructions, and as malloc'd vectors they were a quarter of a big module's page faults.
using InstructionList = std::vector<Instruction*, ArenaAllocator<Instruction*>>;

class UseIndex;  // ir/uses.h
struct UseIndexDeleter {
  void operator()(UseIndex* index) const;  // ir/uses.cc
};

struct Computation {
  explicit Computation(Arena& arena) : instructions(ArenaAllocator<Instruction*>(arena)) {}

  std::string_view name;
  InstructionList instructions;  // program order
  Instruction* root = nullptr;
  bool is_entry = false;
  /// The computation an async-sugar start implies (`negate-start(x)`: its wrapped op over
  /// parameters), made by the parser so the start runs as a plain async-start; never printed.
  bool implied = false;
  std::string_view execution_thread;  // empty = main
  uint32_t source_offset = 0;
  uint32_t source_id = 0;
  struct Module* parent = nullptr;
  // Where the live infer::SignatureCache (if any) keeps this computation's signature: the cache's
  // id and the entry's index. Kept here, not in a hash table, because the verifier asks about
  // every reducer and fused computation of a module, and a table of 100k+ entries missed the
  // caches on every question.
  mutable uint32_t signature_cache_id = 0;
  mutable uint32_t signature_index = 0;
  /// The users of each instruction while a pass edits this computation (ir/uses.h
  /// ScopedUseIndex); null otherwise. The builder keeps it current.
  std::unique_ptr<UseIndex, UseIndexDeleter> uses;

  /// Parameter instructions sorted by parameter number. In a verified computation the numbers
  /// are 0..N-1, so element i is parameter(i); the size never depends on how large a number
  /// the text wrote.
  std::vector<Instruction*> Parameters() const;
  /// The same instructions, appended to any container with push_back/begin/end (the verifier
  /// asks for every called computation and uses inline storage).
  template <typename Container>
  void AppendParameters(Container& out) const {
    for (Instruction* inst : instructions)
      if (inst->opcode == Opcode::kParameter) out.push_back(inst);
    // Parameters are nearly always written in order; sorting only when they are not keeps the
    // common case free of stable_sort's buffer.
    auto by_number = [](const Instruction* a, const Instruction* b) {
      return a->parameter_number < b->parameter_number;
    };
    if (!std::is_sorted(out.begin(), out.end(), by_number)) std::stable_sort(out.begin(), out.end(), by_number);
  }
};

/// One source buffer a module was parsed from; diagnostics point into it.
struct SourceBuffer {
  std::string name;
  std::string text;

  /// A diagnostic at byte `offset` of `text`: the line found in an index of line starts built
  /// on the first call (a file with 20,000 errors is located in one pass, not 20,000).
  Diagnostic At(size_t offset, std::string message, Severity severity = Severity::kError) const {
    std::call_once(lines_built_, [this] { lines_ = std::make_unique<LineStarts>(text); });
    return DiagnosticAt(name, text, *lines_, offset, std::move(message), severity);
  }

 private:
  mutable std::once_flag lines_built_;
  mutable std::unique_ptr<LineStarts> lines_;
};

/// How a module prints (docs/cli.md, --print-style): the print options of XLA's forms that
/// differ between its printers. The default is HloModule::ToString() (`long`).
struct PrintStyle {
  bool percent = true;                 // `%` before instruction and computation names
  bool signatures = true;              // `%c (p: f32[]) -> f32[] {` rather than `c {`
  bool operand_shapes = false;         // `add(f32[] %x, f32[] %y)` (XLA's long form before 2025)
  bool operand_index_comments = true;  // `, /*index=5*/%x` in operand lists
  bool closing_names = false;          // `} // name` after computations of more than 5 instructions
  bool spaced_blank_lines = false;     // the blank lines between computations hold one space (an
                                       // older XLA printer, PyTorch/XLA's IrToHlo dumps)
  bool metadata = true;                // `metadata={...}` on instructions (--print-metadata=false:
                                       // XLA's HloPrintOptions::print_metadata)
  bool operator==(const PrintStyle&) const = default;
};

/// Computations live in their module's arena (a post-fusion dump has one per few instructions);
/// the module's list owns them only to run their destructors.
struct DestroyComputation {
  void operator()(Computation* c) const { c->~Computation(); }
};
using ComputationPtr = std::unique_ptr<Computation, DestroyComputation>;

struct Module {
  Module();
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  Arena arena;
  std::string_view name;
  /// Callees before callers. Add through AddComputation, which keeps FindComputation's index;
  /// reordering is free, but removing or renaming a computation must go through the index too.
  std::vector<ComputationPtr, LargeAllocator<ComputationPtr>> computations;
  Computation* entry = nullptr;
  /// Header attributes other than the name, kept as (name, raw text) in source order.
  std::vector<std::pair<std::string_view, std::string_view>> header_attrs;
  /// Stack-frame tables (FileNames ... StackFrames), kept verbatim.
  std::string_view stack_frames;
  /// The style the parser saw the module written in, and the one PrintModule uses.
  PrintStyle source_style;
  PrintStyle print_style;
  std::vector<std::unique_ptr<SourceBuffer>> sources;

  /// A value no instruction's `mark` holds yet: an analysis sets marks to it to flag visited
  /// instructions in O(1) without a set.
  uint32_t NewMark() { return ++mark_counter_; }

  /// A new computation at the end of `computations`. Its name must not be taken (the parser
  /// reports a duplicate before adding).
  Computation* AddComputation(std::string_view name);
  /// AddComputation for a name not known to be free: null, and nothing added, when it is taken.
  Computation* TryAddComputation(std::string_view name);
  /// The computation called `name`, or null; hashed, as it is asked once per computation and
  /// once per reference (dumps have thousands of computations).
  Computation* FindComputation(std::string_view name) const;
  /// A new instruction in `comp`, appended at the end (callers reorder as needed). The name is
  /// made unique within the module from `base_name`.
  Instruction* NewInstruction(Computation* comp, Opcode op, const Shape& shape,
                              const std::vector<Instruction*>& operands, std::string_view base_name = {});
  /// A name not yet used by any instruction of the module, derived from `base`.
  std::string_view UniqueName(std::string_view base);
  /// Drops the name cache UniqueName keeps (the parser calls it once the module is complete).
  void ForgetNames();

  /// `text` parsed as JSON, kept by the module for its lifetime; null when the text is not valid
  /// JSON, which is no error (XLA accepts any backend_config string; only the custom calls nhlo
  /// gives meaning to reject one, see ir/custom_calls.h). The parser calls it once per
  /// backend_config, so nothing downstream parses config text.
  const nlohmann::json* ParseJson(std::string_view text);
  /// The backend_config of each custom call decoded for its target (ir/custom_calls.h
  /// DecodeCustomCallConfig, called by the parser and the builder), keyed by instruction.
  std::unordered_map<const Instruction*, CustomCallConfig> custom_call_configs;

  /// Forms of the text that today's XLA no longer writes but some version printed and read
  /// (docs/old-forms.md). The reader accepts them and notes each form once, at its first
  /// occurrence, with a count of the others; `--strict` turns the notes into errors.
  struct OldForm {
    Diagnostic first;  ///< a warning naming the form, at its first occurrence
    int64_t more = 0;  ///< further occurrences of the same form
  };
  std::vector<OldForm> old_forms;
  /// Counts one more occurrence of the form noted with `message` and returns true; false when
  /// none is noted yet. Callers ask first and locate a note (DiagnosticAt scans the text before
  /// it) only for a form's first occurrence: a dump can hold the same form thousands of times.
  bool RecountOldForm(std::string_view message);
  /// Notes `diag` (a warning) unless a note with the same message exists; then counts it there.
  void NoteOldForm(Diagnostic diag);

  /// Moves every computation of `other` into this module, in front of this module's own
  /// (callees before callers), renamed `<prefix>.<name>` (made unique) and marked implied (never
  /// printed); `other` stays alive inside this module, since its arena holds them. Returns what
  /// was `other`'s entry. For custom-call expansions (driver/custom_call_expansions.h).
  Computation* Adopt(std::unique_ptr<Module> other, std::string_view prefix);
  /// Removes the computations the entry does not reach through called computations (XLA's
  /// HloDCE: "a computation is dead if it is not the entry computation of the module and it is
  /// not reachable from the entry computation"). Returns their names, in module order. Nothing
  /// is removed from a module without an entry.
  std::vector<std::string> RemoveDeadComputations();

  /// Shape helpers allocating in the arena.
  Shape MakeArrayShape(PrimitiveType type, const std::vector<int64_t>& dims);
  Shape MakeTupleShape(const std::vector<Shape>& elements);

 private:
  Computation* NewComputation();  // in the arena, not yet listed
  struct NameSet;
  std::unique_ptr<NameSet> names_;
  struct ComputationIndex;
  std::unique_ptr<ComputationIndex> computation_index_;
  uint32_t mark_counter_ = 0;
  // Parsed configs live outside the arena: JSON values own heap memory and need destroying. The
  // deleter is defined beside ParseJson (ir/json_values.cc), so only that file includes the
  // full nlohmann header.
  struct JsonDeleter {
    void operator()(nlohmann::json* value) const;
  };
  std::vector<std::unique_ptr<nlohmann::json, JsonDeleter>> json_values_;
  std::vector<std::unique_ptr<Module>> adopted_;  // modules whose computations Adopt took
};

/// Counts the users of every instruction in `comp` (by instruction pointer, control edges
/// excluded). Index by position in comp.instructions.
std::vector<int> CountUsers(const Computation& comp);

/// Every computation `inst` calls (to_apply, calls, body, condition, branches, ...), in
/// attribute order.
std::vector<const Computation*> CalledComputations(const Instruction& inst);

/// XLA's HloInstruction::HasSideEffectNoRecurse: the opcode's own side effect
/// (OpcodeSideEffect), given the instruction's attributes.
bool HasSideEffectNoRecurse(const Instruction& inst);

/// XLA's HloInstruction::HasSideEffect: the instruction's own side effect, or one of any
/// instruction of a computation it calls, at any depth. Each computation is judged once, in the
/// module's order (callees before callers), without recursion: a chain of 100k calls is fine.
class SideEffects {
 public:
  explicit SideEffects(const Module& module);
  bool Of(const Instruction& inst) const;
  bool Of(const Computation& comp) const;

 private:
  std::unordered_map<const Computation*, bool> computations_;
};

}  // namespace nhlo
