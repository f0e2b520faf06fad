// SPDX-License-Identifier: Apache-2.0
#include "codegen/objdump.h"

#include <charconv>
#include <cstdio>

#include "parser/parser.h"

namespace nhlo {
namespace {

std::string Hex(uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

// prefix + number; spelled out because GCC 12 warns falsely (-Wrestrict) on "lit" + std::string&&.
std::string Num(const char* prefix, uint64_t v) {
  std::string s(prefix);
  s += std::to_string(v);
  return s;
}

// "#a, #b, #c"
std::string BufferList(const std::vector<uint32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ", ";
    s += Num("#", ids[i]);
  }
  return s;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string BufferShapeText(const BundleProgram& p, const BufferRecord& b) {
  if (b.type == PrimitiveType::kTuple) {
    std::string s = "(";
    s += BufferList(b.tuple);
    return s + ")";
  }
  (void)p;
  std::string s(PrimitiveTypeName(b.type));
  s += '[';
  for (size_t i = 0; i < b.dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(b.dims[i]);
  }
  return s + "]";
}

std::string Tag(uint8_t tag) { return tag == kNoDtype ? "--" : Hex(tag, 2).substr(2); }

void AppendAttr(std::string& out, const BundleProgram& p, const AttrRecord& a) {
  out += AttrName(a.id);
  out += '=';
  switch (a.kind) {
    case AttrKind::Int: out += std::to_string(a.i); break;
    case AttrKind::Bool: out += a.b ? "true" : "false"; break;
    case AttrKind::Float: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), a.f);
      out.append(buf, r.ptr);
      break;
    }
    case AttrKind::String:
      out += '"';
      out += CEscape(a.text);
      out += '"';
      break;
    case AttrKind::Config:
      if (a.is_json) {
        out += a.text;
      } else {
        out += '"';
        out += CEscape(a.text);
        out += '"';
      }
      break;
    case AttrKind::Ident: case AttrKind::Raw: case AttrKind::Shape: case AttrKind::Literal: out += a.text; break;
    case AttrKind::IntList:
      out += '{';
      for (size_t i = 0; i < a.ints.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(a.ints[i]);
      }
      out += '}';
      break;
    case AttrKind::Computation: case AttrKind::ComputationList: case AttrKind::InstructionList:
      out += '{';
      for (size_t i = 0; i < a.computations.size(); ++i) {
        if (i) out += ", ";
        out += p.computations[a.computations[i]].name;
      }
      out += '}';
      break;
  }
}

}  // namespace

std::string DumpBundleProgram(const BundleProgram& p, std::string_view file_name) {
  std::string out;
  out += std::string(file_name) + ": nhlo bundle file version " + std::to_string(p.version) + ", arch v" +
         std::to_string(static_cast<int>(p.arch)) + (p.flags & 1 ? ", device-only" : "") + ", " +
         std::to_string(p.bytes.size()) + " bytes, checksum " + Hex(p.checksum, 8) + "\n";
  out += "module " + std::string(p.module_name) + ", entry #" + std::to_string(p.entry) + " '" +
         std::string(p.computations[p.entry].name) + "', arena " + std::to_string(p.arena_size) + " bytes\n\n";
  out += "Sections:\n";
  for (const SectionRecord& s : p.sections)
    out += "  " + Pad(std::string(SectionName(s.id)), 13) + " offset " + Hex(s.offset, 8) + "  size " + Hex(s.size, 8) + "\n";

  out += "\nBuffers (" + std::to_string(p.buffers.size()) + "):\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferRecord& b = p.buffers[i];
    std::string line = "  " + Pad(Num("#", i), 6) + Pad(std::string(b.name), 20) + " " +
                       Pad(BufferShapeText(p, b), 18) + " " + Pad(std::string(BufferKindName(b.kind)), 6);
    if (b.type != PrimitiveType::kTuple) {
      switch (b.kind) {
        case BufferKind::kTemp: line += Pad("@" + Hex(b.location, 6), 10); break;
        case BufferKind::kParameter: line += Pad("p" + std::to_string(b.location), 10); break;
        case BufferKind::kConstant: line += Pad("c" + Hex(b.location, 6), 10); break;
      }
      line += " size " + Pad(std::to_string(b.size), 8);
      if (b.backend_dtype != kNoDtype) {
        line += " dtype " + std::string(BackendDtypeName(static_cast<BackendDtype>(b.backend_dtype))) + "(" +
                std::to_string(b.backend_dtype) + ") tag " + Tag(b.wire_tag) + " stride " + std::to_string(b.stride);
      } else {
        line += " host-only";
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }

  for (size_t c = 0; c < p.computations.size(); ++c) {
    const ComputationRecord& comp = p.computations[c];
    out += "\nComputation #" + std::to_string(c) + " '" + std::string(comp.name) + "'" + (c == p.entry ? " (entry)" : "") +
           ": params (";
    out += BufferList(comp.params);
    out += "), root #" + std::to_string(comp.root) + ", " + std::to_string(comp.bundles.size()) + " bundles\n";
    for (const BundleRecord& b : comp.bundles) {
      std::string line = "  " + Hex(b.file_offset, 8) + ":  " + Pad(std::string(OpcodeName(b.opcode)), 20) + " " +
                         Pad(Num("#", b.result), 5) + " <- ";
      std::string ops = "(";
      ops += BufferList(b.operands);
      ops += ')';
      line += Pad(ops, 14) + " tags " + Tag(b.result_tag) + " <-";
      for (uint8_t t : b.operand_tags) {
        line += ' ';
        line += Tag(t);
      }
      for (size_t i = 0; i < b.attrs.size(); ++i) {
        line += i ? ", " : "   ";
        AppendAttr(line, p, b.attrs[i]);
      }
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace nhlo
