// SPDX-License-Identifier: Apache-2.0
#include "ir/printer.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <vector>

#include "ir/literal.h"
#include "support/escape.h"
#include "support/text_scan.h"

namespace nhlo {
namespace {

void AppendDouble(std::string& out, double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

// `3x3`: one value per dimension joined by 'x'.
template <typename T, typename F>
void AppendPerDim(std::string& out, Span<T> dims, F&& value) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += 'x';
    value(dims[i]);
  }
}

template <typename T, typename P>
bool AnyDim(Span<T> dims, P&& pred) {
  for (const T& d : dims)
    if (pred(d)) return true;
  return false;
}

// XLA's window_util::ToString: size always, every other field only when not all default.
void AppendWindow(std::string& out, Span<WindowDim> w) {
  out += '{';
  if (!w.empty()) {
    out += "size=";
    AppendPerDim(out, w, [&](const WindowDim& d) { AppendInt(out, d.size); });
  }
  if (AnyDim(w, [](const WindowDim& d) { return d.stride != 1; })) {
    out += " stride=";
    AppendPerDim(out, w, [&](const WindowDim& d) { AppendInt(out, d.stride); });
  }
  if (AnyDim(w, [](const WindowDim& d) { return d.pad_low != 0 || d.pad_high != 0; })) {
    out += " pad=";
    AppendPerDim(out, w, [&](const WindowDim& d) {
      AppendInt(out, d.pad_low);
      out += '_';
      AppendInt(out, d.pad_high);
    });
  }
  if (AnyDim(w, [](const WindowDim& d) { return d.base_dilation != 1; })) {
    out += " lhs_dilate=";
    AppendPerDim(out, w, [&](const WindowDim& d) { AppendInt(out, d.base_dilation); });
  }
  if (AnyDim(w, [](const WindowDim& d) { return d.window_dilation != 1; })) {
    out += " rhs_dilate=";
    AppendPerDim(out, w, [&](const WindowDim& d) { AppendInt(out, d.window_dilation); });
  }
  if (AnyDim(w, [](const WindowDim& d) { return d.reversal; })) {
    out += " rhs_reversal=";
    AppendPerDim(out, w, [&](const WindowDim& d) { out += d.reversal ? '1' : '0'; });
  }
  out += '}';
}

// `{[0:10], [2:8:2]}`: strides printed for every dimension or none (XLA's rule).
void AppendSlices(std::string& out, Span<SliceDim> s) {
  bool strides = AnyDim(s, [](const SliceDim& d) { return d.stride != 1; });
  out += '{';
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += '[';
    AppendInt(out, s[i].start);
    out += ':';
    AppendInt(out, s[i].limit);
    if (strides) {
      out += ':';
      AppendInt(out, s[i].stride);
    }
    out += ']';
  }
  out += '}';
}

// `0_1x2_3`, with `_interior` on every dimension when any has interior padding.
void AppendPadding(std::string& out, Span<PaddingDim> p) {
  bool interior = AnyDim(p, [](const PaddingDim& d) { return d.interior != 0; });
  AppendPerDim(out, p, [&](const PaddingDim& d) {
    AppendInt(out, d.low);
    out += '_';
    AppendInt(out, d.high);
    if (interior) {
      out += '_';
      AppendInt(out, d.interior);
    }
  });
}

void AppendLabelGroup(std::string& out, size_t rank, int64_t first, char first_label, int64_t second, char second_label,
                      const SpatialDims& spatial) {
  std::string group(rank, '?');
  if (first >= 0 && static_cast<size_t>(first) < rank) group[first] = first_label;
  if (second >= 0 && static_cast<size_t>(second) < rank) group[second] = second_label;
  for (size_t i = 0; i < spatial.size(); ++i)
    if (spatial[i] >= 0 && static_cast<size_t>(spatial[i]) < rank) group[spatial[i]] = static_cast<char>('0' + i);
  out += group;
}

void AppendDimLabels(std::string& out, const ConvDimLabels& l) {
  AppendLabelGroup(out, l.input_rank, l.input_batch, 'b', l.input_feature, 'f', l.input_spatial);
  out += '_';
  AppendLabelGroup(out, l.kernel_rank, l.kernel_input_feature, 'i', l.kernel_output_feature, 'o', l.kernel_spatial);
  out += "->";
  AppendLabelGroup(out, l.output_rank, l.output_batch, 'b', l.output_feature, 'f', l.output_spatial);
}

void AppendIntGroup(std::string& out, const int64_t* v, size_t n) {
  out += '{';
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    AppendInt(out, v[i]);
  }
  out += '}';
}

void AppendBracketList(std::string& out, Span<int64_t> v, char open, char close) {
  out += open;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    AppendInt(out, v[i]);
  }
  out += close;
}

void AppendReplicaGroups(std::string& out, const ReplicaGroupList& g) {
  if (g.iota) {
    out += '[';
    AppendInt(out, g.num_groups);
    out += ',';
    AppendInt(out, g.group_size);
    out += "]<=";
    AppendBracketList(out, g.reshape_dims, '[', ']');
    if (!g.transpose.empty()) {
      out += 'T';
      AppendBracketList(out, g.transpose, '(', ')');
    }
    return;
  }
  out += '{';
  size_t at = 0;
  for (size_t i = 0; i < g.group_sizes.size(); ++i) {
    if (i) out += ',';
    size_t n = static_cast<size_t>(g.group_sizes[i]);
    AppendIntGroup(out, g.ids.data() + at, n);
    at += n;
  }
  out += '}';
}

// `{op_type="dot" op_name="a/b" source_line=3}`: strings quoted and escaped, integers and
// bare values as they are. Sized first, then written in place: metadata is on nearly every
// instruction of a large dump, and appending it piece by piece cost more than its bytes.
void AppendKeyValues(std::string& out, AttrId id, Span<KeyValue> entries) {
  const std::string_view sep = KeyValueSeparator(id);
  constexpr size_t kMaxIntSize = 20;  // -9223372036854775808
  size_t size = 2;
  uint64_t escaped = 0;  // strings (of the first 64 entries) that need escapes; the rest are copied
  for (size_t i = 0; i < entries.size(); ++i) {
    const KeyValue& e = entries[i];
    size += (i ? sep.size() : 0) + e.key.size() + 1;
    switch (e.kind) {
      case KeyValueKind::kString: {
        size_t escaped_size = CEscapedSize(e.text);
        if (escaped_size != e.text.size() || i >= 64) escaped |= uint64_t(1) << (i < 64 ? i : 63);
        size += escaped_size + 2;
        break;
      }
      case KeyValueKind::kInt: {
        char digits[kMaxIntSize];
        size += static_cast<size_t>(std::to_chars(digits, digits + kMaxIntSize, e.i).ptr - digits);
        break;
      }
      case KeyValueKind::kBare: size += e.text.size(); break;
    }
  }
  const size_t at = out.size();
  out.resize(at + size);
  char* p = out.data() + at;
  auto put = [&p](std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  *p++ = '{';
  for (size_t i = 0; i < entries.size(); ++i) {
    const KeyValue& e = entries[i];
    if (i) put(sep);
    put(e.key);
    *p++ = '=';
    switch (e.kind) {
      case KeyValueKind::kString:
        *p++ = '"';
        if (escaped >> (i < 64 ? i : 63) & 1)
          p = WriteCEscaped(p, e.text);
        else
          put(e.text);
        *p++ = '"';
        break;
      case KeyValueKind::kInt: p = std::to_chars(p, p + kMaxIntSize, e.i).ptr; break;
      case KeyValueKind::kBare: put(e.text); break;
    }
  }
  *p = '}';
}

// A literal attribute as XLA's Literal::PrintWithLayoutOneline writes it: `shape body`, and a
// tuple as `( shape body, shape body )` with no shape for the tuple itself.
void AppendShapedLiteral(std::string& out, const Literal& lit) {
  if (!lit.shape.IsTuple()) {
    AppendShape(out, lit.shape, /*print_layout=*/true, /*index_comments=*/true);
    out += ' ';
    AppendLiteral(out, lit);
    return;
  }
  out += "( ";
  for (size_t i = 0; i < lit.tuple.size(); ++i) {
    if (i) out += ", ";
    AppendShapedLiteral(out, *lit.tuple[i]);
  }
  out += " )";
}

}  // namespace

// XLA separates metadata fields by a space and frontend attributes by a bare comma.
std::string_view KeyValueSeparator(AttrId id) { return id == AttrId::kMetadata ? " " : ","; }

namespace {

// A name as the style writes it: with `%`, or bare when the style drops `%` and the bare word
// reads back as the same name (not a keyword or a type name, one identifier).
void AppendName(std::string& out, std::string_view name, const PrintStyle& style) {
  if (style.percent || !ScansAsOneIdentifier(name) || IsHloKeyword(name) || PrimitiveTypeFromName(name)) out += '%';
  out += name;
}

}  // namespace

// Text as written, with XLA's `/*index=N*/` before every fifth element of each tuple: the
// parenthesised lists of a layout (`(f32[2]{0}, ...)->(...)`) and the outer braces of a tuple
// sharding (`{{replicated}, {maximal device=0}, ...}`); unless the text already has comments.
void AppendWithTupleIndexComments(std::string& out, std::string_view text) {
  if (text.find("/*") != std::string_view::npos) {
    out += text;
    return;
  }
  const bool tuple_sharding = text.starts_with("{{");
  std::vector<int64_t> elements;  // per open bracket: the element being written; -1: not a tuple
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    out += c;
    if (c == '(')
      elements.push_back(0);
    else if (c == '{' && tuple_sharding && elements.empty())
      elements.push_back(0);
    else if (c == '[' || c == '{')
      elements.push_back(-1);
    else if ((c == ')' || c == ']' || c == '}') && !elements.empty())
      elements.pop_back();
    else if (c == ',' && !elements.empty() && elements.back() >= 0) {
      // The older printer joined a layout's parameters with a bare `,` and no comments; such
      // text is kept as it is.
      int64_t index = ++elements.back();
      if (index % 5 == 0 && i + 1 < text.size() && text[i + 1] == ' ') {
        out += text[++i];
        out += "/*index=" + std::to_string(index) + "*/";
      }
    }
  }
}

void AppendAttributeValue(std::string& out, const Attribute& a) { AppendAttributeValue(out, a, PrintStyle{}); }

void AppendAttributeValue(std::string& out, const Attribute& a, const PrintStyle& style) {
  switch (a.kind) {
    case AttrKind::Int: out += std::to_string(a.i); break;
    case AttrKind::Bool: out += a.b ? "true" : "false"; break;
    case AttrKind::Float: AppendDouble(out, a.f); break;
    case AttrKind::String:
      out += '"';
      AppendCEscaped(out, a.text);
      out += '"';
      break;
    case AttrKind::Ident:
    case AttrKind::Raw:
      if (a.id == AttrId::kSharding)
        AppendWithTupleIndexComments(out, a.text);
      else
        out += a.text;
      break;
    case AttrKind::IntList:
      out += '{';
      for (size_t i = 0; i < a.ints.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(a.ints[i]);
      }
      out += '}';
      break;
    case AttrKind::Computation: AppendName(out, a.computations[0]->name, style); break;
    case AttrKind::ComputationList:
      out += '{';
      for (size_t i = 0; i < a.computations.size(); ++i) {
        if (i) out += ", ";
        AppendName(out, a.computations[i]->name, style);
      }
      out += '}';
      break;
    case AttrKind::InstructionList:
      out += '{';
      for (size_t i = 0; i < a.instructions.size(); ++i) {
        if (i) out += ", ";
        AppendName(out, a.instructions[i]->name, style);
      }
      out += '}';
      break;
    case AttrKind::Shape: AppendShape(out, *a.shape, /*print_layout=*/true, /*index_comments=*/true); break;
    case AttrKind::ShapeList:  // XLA: shapes with their layouts, joined by ", "
      if (!a.text.empty()) {
        out += a.text;
        break;
      }
      out += '{';
      for (size_t i = 0; i < a.shapes.size(); ++i) {
        if (i) out += ", ";
        AppendShape(out, a.shapes[i], /*print_layout=*/true);
      }
      out += '}';
      break;
    case AttrKind::BoolList:  // XLA: joined by "," with no space
      if (!a.text.empty()) {
        out += a.text;
        break;
      }
      out += '{';
      for (size_t i = 0; i < a.bools.size(); ++i) {
        if (i) out += ',';
        out += a.bools[i] ? "true" : "false";
      }
      out += '}';
      break;
    case AttrKind::Config:
      // A string that is itself one balanced {...} block prints raw, as XLA does — unless the
      // parser would fold its whitespace or comments when reading it back (a line break outside
      // quotes, say), or it holds a NUL byte (an escaped \0, which the reader rejects in raw
      // text); then it stays a quoted string, so printing round-trips exactly.
      if (a.config_is_json || IsVerbatimRawBlock(a.text)) {
        out += a.text;
      } else {
        out += '"';
        out += CEscape(a.text);
        out += '"';
      }
      break;
    case AttrKind::Literal: AppendShapedLiteral(out, *a.literal); break;
    // Structured kinds: the source's own spelling when it kept one (see Attribute).
    case AttrKind::Window:
      if (a.text.empty())
        AppendWindow(out, a.window);
      else
        out += a.text;
      break;
    case AttrKind::SliceRanges:
      if (a.text.empty())
        AppendSlices(out, a.slices);
      else
        out += a.text;
      break;
    case AttrKind::PaddingConfig:
      if (a.text.empty())
        AppendPadding(out, a.padding);
      else
        out += a.text;
      break;
    case AttrKind::DimLabels:
      if (a.text.empty())
        AppendDimLabels(out, *a.dim_labels);
      else
        out += a.text;
      break;
    case AttrKind::Enum:
      if (a.text.empty())
        out += EnumValueName(EnumSetOf(a.id), a.i);
      else
        out += a.text;
      break;
    case AttrKind::EnumList:
      if (!a.text.empty()) {
        out += a.text;
        break;
      }
      AppendEnumList(out, a.id, a.ints.data(), a.ints.size());
      break;
    case AttrKind::ReplicaGroups:
      if (a.text.empty())
        AppendReplicaGroups(out, *a.replica_groups);
      else
        out += a.text;
      break;
    case AttrKind::KeyValues:
      if (a.text.empty())
        AppendKeyValues(out, a.id, a.entries);
      else
        out += a.text;
      break;
    case AttrKind::PairList:
      if (!a.text.empty()) {
        out += a.text;
        break;
      }
      out += '{';
      for (size_t i = 0; i + 1 < a.ints.size(); i += 2) {
        if (i) out += ',';
        AppendIntGroup(out, a.ints.data() + i, 2);
      }
      out += '}';
      break;
  }
}

namespace {

void AppendAttribute(std::string& out, const Attribute& a, const PrintStyle& style) {
  out += AttrName(a.id);
  out += '=';
  AppendAttributeValue(out, a, style);
}

void AppendComputation(std::string& out, const Computation& comp, const PrintStyle& style) {
  if (comp.is_entry) out += "ENTRY ";
  AppendName(out, comp.name, style);
  if (style.signatures) {
    out += " (";
    std::vector<Instruction*> params = comp.Parameters();
    bool first = true;
    for (const Instruction* p : params) {
      if (!p) continue;
      if (!first) out += ", ";
      first = false;
      out += p->name;
      out += ": ";
      AppendShape(out, p->shape, /*print_layout=*/false, /*index_comments=*/true);
    }
    out += ") -> ";
    AppendShape(out, comp.root->shape, /*print_layout=*/false, /*index_comments=*/true);
  }
  out += " {\n";
  for (const Instruction* inst : comp.instructions) {
    out += "  ";
    if (inst == comp.root) out += "ROOT ";
    AppendInstruction(out, *inst, style);
    out += '\n';
  }
  out += '}';
  if (!comp.execution_thread.empty()) {
    out += ", execution_thread=\"";
    out += CEscape(comp.execution_thread);
    out += '"';
  }
  // XLA's dumps of 2023-2025 name a computation again after its brace when it is long.
  if (style.closing_names && comp.instructions.size() > 5) {
    out += " // ";
    out += comp.name;
  }
  out += '\n';
}

}  // namespace

void AppendInstruction(std::string& out, const Instruction& inst) { AppendInstruction(out, inst, PrintStyle{}); }

void AppendInstruction(std::string& out, const Instruction& inst, const PrintStyle& style) {
  AppendName(out, inst.name, style);
  out += " = ";
  AppendShape(out, inst.shape, /*print_layout=*/true, /*index_comments=*/true);
  out += ' ';
  if (inst.async_sugar) {
    out += OpcodeName(inst.async_wrapped);
    out += inst.opcode == Opcode::kAsyncStart ? "-start" : inst.opcode == Opcode::kAsyncUpdate ? "-update" : "-done";
  } else {
    out += OpcodeName(inst.opcode);
  }
  out += '(';
  if (inst.opcode == Opcode::kParameter) {
    out += std::to_string(inst.parameter_number);
  } else if (inst.opcode == Opcode::kConstant) {
    if (inst.literal) AppendLiteral(out, *inst.literal);
  } else {
    // XLA marks every fifth operand: `, /*index=5*/%x`.
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      if (i) out += ", ";
      if (style.operand_index_comments && i % 5 == 0 && i > 0) out += "/*index=" + std::to_string(i) + "*/";
      if (style.operand_shapes) {
        AppendShape(out, inst.operands[i]->shape, /*print_layout=*/true, /*index_comments=*/true);
        out += ' ';
      }
      AppendName(out, inst.operands[i]->name, style);
    }
  }
  out += ')';
  for (const Attribute& a : inst.attrs) {
    // Computations the text only implies (an async-sugar start's, a custom call's bound
    // expansion) are nhlo's, not the text's.
    if ((a.kind == AttrKind::Computation || a.kind == AttrKind::ComputationList) && !a.computations.empty() &&
        std::all_of(a.computations.begin(), a.computations.end(), [](const Computation* c) { return c->implied; }))
      continue;
    if (a.id == AttrId::kMetadata && !style.metadata) continue;
    out += ", ";
    AppendAttribute(out, a, style);
  }
}

std::string PrintInstruction(const Instruction& inst) {
  std::string out;
  AppendInstruction(out, inst);
  return out;
}

PrintStyle NamedPrintStyle(PrintStyleName name, const Module& module) {
  PrintStyle style;  // kLong
  switch (name) {
    case PrintStyleName::kLong: break;
    case PrintStyleName::kLongShapes: style.operand_shapes = true; break;
    case PrintStyleName::kShort:
      style.percent = style.signatures = false;
      style.closing_names = true;
      break;
    case PrintStyleName::kShortParsable: style.percent = style.signatures = style.operand_index_comments = false; break;
    case PrintStyleName::kAsRead: return module.source_style;
  }
  return style;
}

std::optional<PrintStyleName> PrintStyleFromName(std::string_view name) {
  if (name == "long") return PrintStyleName::kLong;
  if (name == "long-shapes") return PrintStyleName::kLongShapes;
  if (name == "short") return PrintStyleName::kShort;
  if (name == "short-parsable") return PrintStyleName::kShortParsable;
  if (name == "as-read") return PrintStyleName::kAsRead;
  return std::nullopt;
}

namespace {

// The end of the quoted string (either quote, with escapes) starting at `at`, or npos.
size_t EndOfString(std::string_view text, size_t at) {
  size_t i = at + 1;
  for (; i < text.size() && text[i] != text[at]; ++i)
    if (text[i] == '\\') ++i;
  return i < text.size() ? i + 1 : std::string_view::npos;
}

// The end of the balanced `{...}` (ScanRawBraceBlock's rules, as the reader captured it) or the
// string starting at `at` in folded header text, or npos.
size_t EndOfGroup(std::string_view text, size_t at) {
  if (at < text.size() && text[at] == '{') {
    RawBlockScan scan = ScanRawBraceBlock(text, at);
    return scan.ok ? scan.end : std::string_view::npos;
  }
  return EndOfString(text, at);
}

// The top-level items of a `{a, b, ...}` value, split at its commas; empty when the text is not
// one brace group.
std::vector<std::string_view> TopLevelItems(std::string_view text) {
  std::vector<std::string_view> items;
  if (text.size() < 2 || text.front() != '{' || EndOfGroup(text, 0) != text.size()) return items;
  size_t start = 1;
  int depth = 0;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      size_t end = EndOfString(text, i);
      if (end == std::string_view::npos) return {};
      i = end - 1;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') ++depth;
    if (c == '}' || c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  items.push_back(text.substr(start, text.size() - 1 - start));
  for (std::string_view& item : items) {
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
  }
  return items;
}

// XLA's HloModule::Print writes debug_attributes one entry a line:
// `,\ndebug_attributes={\n  {"c"}:({log_mode=default}),\n  ...\n}`.
void AppendDebugAttributes(std::string& out, std::string_view value) {
  std::vector<std::string_view> entries = TopLevelItems(value);
  if (entries.empty() || (entries.size() == 1 && entries[0].empty())) {
    out += ", debug_attributes=";
    out += value;
    return;
  }
  out += ",\ndebug_attributes={\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    out += "  ";
    out += entries[i];
    out += i + 1 < entries.size() ? ",\n" : "\n";
  }
  out += '}';
}

// XLA's OriginalValueRecoveryTable::ToString, one entry a line and the recovery module as the
// string it is written in: `, origin_recovery_table={\n  {"a"} : {"b"},\n  "..."\n}\n`.
void AppendRecoveryTable(std::string& out, std::string_view value) {
  std::string text = "{\n";
  size_t at = 1;
  auto skip_blanks = [&] {
    while (at < value.size() && value[at] == ' ') ++at;
  };
  for (;;) {
    skip_blanks();
    if (at + 1 == value.size() && value[at] == '}') break;
    size_t replaced_end = at < value.size() && value[at] == '{' ? EndOfGroup(value, at) : std::string_view::npos;
    if (replaced_end == std::string_view::npos) return void(out += ", origin_recovery_table=" + std::string(value));
    std::string_view replaced = value.substr(at, replaced_end - at);
    at = replaced_end;
    skip_blanks();
    if (at >= value.size() || value[at] != ':') return void(out += ", origin_recovery_table=" + std::string(value));
    ++at;
    skip_blanks();
    size_t replacing_end = at < value.size() && value[at] == '{' ? EndOfGroup(value, at) : std::string_view::npos;
    if (replacing_end == std::string_view::npos) return void(out += ", origin_recovery_table=" + std::string(value));
    text += "  ";
    text += replaced;
    text += " : ";
    text += value.substr(at, replacing_end - at);
    at = replacing_end;
    skip_blanks();
    if (at < value.size() && value[at] == ',') {
      ++at;
      skip_blanks();
      size_t module_end = at < value.size() && value[at] == '"' ? EndOfGroup(value, at) : std::string_view::npos;
      if (module_end == std::string_view::npos) return void(out += ", origin_recovery_table=" + std::string(value));
      text += ",\n  ";
      text += value.substr(at, module_end - at);
      at = module_end;
    }
    text += '\n';
  }
  out += ", origin_recovery_table=";
  out += text;
  out += "}\n";
}

}  // namespace

std::string PrintModule(const Module& module) { return PrintModule(module, nullptr); }

std::string PrintModule(const Module& module, const std::function<bool(const Computation&)>& shown) {
  std::string out;
  out.reserve(4096);
  out += "HloModule ";
  // XLA prints the module name bare. A name only `%name` can spell (`HloModule %2`, `%nan`)
  // keeps its `%`, so the printed text reads back to the same name.
  if (!ScansAsOneIdentifier(module.name)) out += '%';
  out += module.name;
  if (shown) {
    // A filtered dump: the header's name only (its layouts can outweigh a computation), then the
    // chosen computations, each followed by its blank line.
    out += "\n\n";
    size_t count = module.computations.size();
    for (size_t i = 0; i < count; ++i) {
      const Computation& comp = *module.computations[i];
      if (comp.implied || !shown(comp)) continue;
      AppendComputation(out, comp, module.print_style);
      out += '\n';
    }
    return out;
  }
  for (const auto& [name, value] : module.header_attrs) {
    if (name == "debug_attributes") {
      AppendDebugAttributes(out, value);
      continue;
    }
    if (name == "origin_recovery_table") {
      AppendRecoveryTable(out, value);
      continue;
    }
    out += ", ";
    out += name;
    out += '=';
    if (name == "entry_computation_layout")
      AppendWithTupleIndexComments(out, value);
    else
      out += value;
  }
  // An older printer put a space on the blank lines between the header and the computations
  // and between computations, not on the last one.
  const char* between = module.print_style.spaced_blank_lines ? "\n \n" : "\n\n";
  out += between;
  if (!module.stack_frames.empty()) {
    out += module.stack_frames;
    out += "\n\n\n";  // XLA leaves two blank lines after the stack-frame index
  }
  // XLA ends every computation with a blank line, the last one too.
  size_t last = module.computations.size();
  while (last > 0 && module.computations[last - 1]->implied) --last;
  for (size_t i = 0; i < last; ++i) {
    if (module.computations[i]->implied) continue;
    AppendComputation(out, *module.computations[i], module.print_style);
    out += i + 1 < last ? between + 1 : "\n";
  }
  return out;
}

// The structured attribute values in HLO syntax, for nhlo-objdump (it holds them in vectors,
// not in an arena). The printers only read through the spans.
void AppendWindowText(std::string& out, const std::vector<WindowDim>& w) {
  AppendWindow(out, Span<WindowDim>(const_cast<WindowDim*>(w.data()), w.size()));
}
void AppendSliceText(std::string& out, const std::vector<SliceDim>& s) {
  AppendSlices(out, Span<SliceDim>(const_cast<SliceDim*>(s.data()), s.size()));
}
void AppendPaddingText(std::string& out, const std::vector<PaddingDim>& p) {
  AppendPadding(out, Span<PaddingDim>(const_cast<PaddingDim*>(p.data()), p.size()));
}
void AppendDimLabelsText(std::string& out, const ConvDimLabels& labels) { AppendDimLabels(out, labels); }

}  // namespace nhlo
