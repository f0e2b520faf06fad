// SPDX-License-Identifier: Apache-2.0
#include "ir/printer.h"

#include <charconv>

#include "ir/literal.h"
#include "parser/lexer.h"
#include "parser/parser.h"

namespace nhlo {
namespace {

// A backend_config string that is itself one balanced {...} block prints raw, as XLA does —
// unless the parser would fold its whitespace or comments when reading it back (a line break
// outside quotes, say), or it holds a NUL byte (an escaped \0, which the reader rejects in raw
// text); then it stays a quoted string, so printing round-trips exactly.
bool LooksLikeJsonObject(std::string_view text) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  if (text.find('\0') != std::string_view::npos) return false;
  Lexer lex(text);
  Token t = lex.RawBraceBlock();
  return t.kind == Tok::kString && t.text.size() == text.size() && !lex.last_block_needs_fold();
}

// XLA prints the module name bare. A name only `%name` can spell (`HloModule %2`, `%nan`)
// keeps its `%`, so the printed text reads back to the same name.
bool ReadsBackBare(std::string_view name) {
  Lexer lex(name);
  Token t = lex.Next();
  return t.kind == Tok::kIdent && t.text == name && lex.Next().kind == Tok::kEof;
}

void AppendDouble(std::string& out, double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

void AppendAttribute(std::string& out, const Attribute& a) {
  out += AttrName(a.id);
  out += '=';
  switch (a.kind) {
    case AttrKind::Int: out += std::to_string(a.i); break;
    case AttrKind::Bool: out += a.b ? "true" : "false"; break;
    case AttrKind::Float: AppendDouble(out, a.f); break;
    case AttrKind::String:
      out += '"';
      out += CEscape(a.text);
      out += '"';
      break;
    case AttrKind::Ident:
    case AttrKind::Raw:
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
    case AttrKind::Computation:
      out += '%';
      out += a.computations[0]->name;
      break;
    case AttrKind::ComputationList:
      out += '{';
      for (size_t i = 0; i < a.computations.size(); ++i) {
        if (i) out += ", ";
        out += '%';
        out += a.computations[i]->name;
      }
      out += '}';
      break;
    case AttrKind::InstructionList:
      out += '{';
      for (size_t i = 0; i < a.instructions.size(); ++i) {
        if (i) out += ", ";
        out += '%';
        out += a.instructions[i]->name;
      }
      out += '}';
      break;
    case AttrKind::Shape:
      AppendShape(out, *a.shape);
      break;
    case AttrKind::Config:
      if (a.config_is_json || LooksLikeJsonObject(a.text)) {
        out += a.text;
      } else {
        out += '"';
        out += CEscape(a.text);
        out += '"';
      }
      break;
    case AttrKind::Literal:
      AppendShape(out, a.literal->shape);
      out += ' ';
      AppendLiteral(out, *a.literal);
      break;
  }
}

void AppendComputation(std::string& out, const Computation& comp) {
  if (comp.is_entry) out += "ENTRY ";
  out += '%';
  out += comp.name;
  out += " (";
  std::vector<Instruction*> params = comp.Parameters();
  bool first = true;
  for (const Instruction* p : params) {
    if (!p) continue;
    if (!first) out += ", ";
    first = false;
    out += p->name;
    out += ": ";
    AppendShape(out, p->shape, /*print_layout=*/false);
  }
  out += ") -> ";
  AppendShape(out, comp.root->shape, /*print_layout=*/false);
  out += " {\n";
  for (const Instruction* inst : comp.instructions) {
    out += "  ";
    if (inst == comp.root) out += "ROOT ";
    AppendInstruction(out, *inst);
    out += '\n';
  }
  out += '}';
  if (!comp.execution_thread.empty()) {
    out += ", execution_thread=\"";
    out += CEscape(comp.execution_thread);
    out += '"';
  }
  out += '\n';
}

}  // namespace

void AppendInstruction(std::string& out, const Instruction& inst) {
  out += '%';
  out += inst.name;
  out += " = ";
  AppendShape(out, inst.shape);
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
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      if (i) out += ", ";
      out += '%';
      out += inst.operands[i]->name;
    }
  }
  out += ')';
  for (const Attribute& a : inst.attrs) {
    out += ", ";
    AppendAttribute(out, a);
  }
}

std::string PrintInstruction(const Instruction& inst) {
  std::string out;
  AppendInstruction(out, inst);
  return out;
}

std::string PrintModule(const Module& module) {
  std::string out;
  out.reserve(4096);
  out += "HloModule ";
  if (!ReadsBackBare(module.name)) out += '%';
  out += module.name;
  for (const auto& [name, value] : module.header_attrs) {
    out += ", ";
    out += name;
    out += '=';
    out += value;
  }
  out += "\n\n";
  if (!module.stack_frames.empty()) {
    out += module.stack_frames;
    out += "\n\n";
  }
  for (size_t i = 0; i < module.computations.size(); ++i) {
    if (i) out += '\n';
    AppendComputation(out, *module.computations[i]);
  }
  return out;
}

}  // namespace nhlo
