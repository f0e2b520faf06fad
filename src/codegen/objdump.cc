// SPDX-License-Identifier: Apache-2.0
#include "codegen/objdump.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>

#include "ir/printer.h"
#include "support/escape.h"

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
  return ArrayShapeText(b.type, b.dims, b.dim_kinds);
}

void AppendInts(std::string& out, const std::vector<int64_t>& v, char open = '{', char close = '}') {
  out += open;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  out += close;
}

std::string Tag(uint8_t tag) { return tag == kNoDtype ? "--" : Hex(tag, 2).substr(2); }

}  // namespace

void AppendAttrText(std::string& out, const BundleProgram& p, const AttrRecord& a) {
  out += AttrName(a.id);
  out += '=';
  switch (a.kind) {
    case AttrKind::Int: out += std::to_string(a.i()); break;
    case AttrKind::Bool: out += a.b() ? "true" : "false"; break;
    case AttrKind::Float: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), a.f());
      out.append(buf, r.ptr);
      break;
    }
    case AttrKind::String:
      out += '"';
      out += CEscape(a.text());
      out += '"';
      break;
    case AttrKind::Config:
      if (a.is_json()) {
        out += a.text();
      } else {
        out += '"';
        out += CEscape(a.text());
        out += '"';
      }
      break;
    case AttrKind::Ident:
    case AttrKind::Raw: out += a.text(); break;
    case AttrKind::Shape:
    case AttrKind::Literal:
    case AttrKind::InstructionList:
    case AttrKind::ShapeList:
    case AttrKind::BoolList:
    case AttrKind::KeyValues: break;  // never in a file
    case AttrKind::IntList: AppendInts(out, a.ints()); break;
    case AttrKind::PairList:
      out += '{';
      for (size_t i = 0; i + 1 < a.ints().size(); i += 2) {
        if (i) out += ',';
        out += '{' + std::to_string(a.ints()[i]) + ',' + std::to_string(a.ints()[i + 1]) + '}';
      }
      out += '}';
      break;
    case AttrKind::Enum: out += EnumValueName(EnumSetOf(a.id), a.i()); break;
    case AttrKind::EnumList: AppendEnumList(out, a.id, a.ints().data(), a.ints().size()); break;
    // As HLO text writes them (the IR printer's forms).
    case AttrKind::Window: AppendWindowText(out, a.window()); break;
    case AttrKind::SliceRanges: AppendSliceText(out, a.slices()); break;
    case AttrKind::PaddingConfig: AppendPaddingText(out, a.padding()); break;
    case AttrKind::DimLabels: AppendDimLabelsText(out, a.dim_labels()); break;
    case AttrKind::ReplicaGroups: {
      const ReplicaGroupsRecord& g = a.replica_groups();
      if (g.mesh) {
        out += "mesh";
      } else if (g.iota) {
        // As HLO writes it: [groups,size]<=[dims]T(perm).
        out += "[" + std::to_string(g.num_groups) + "," + std::to_string(g.group_size) + "]<=";
        AppendInts(out, g.reshape_dims, '[', ']');
        if (!g.transpose.empty()) {
          out += 'T';
          AppendInts(out, g.transpose, '(', ')');
        }
      } else {
        out += '{';
        size_t at = 0;
        for (size_t i = 0; i < g.group_sizes.size(); ++i) {
          if (i) out += ',';
          std::vector<int64_t> group(g.ids.begin() + at, g.ids.begin() + at + g.group_sizes[i]);
          AppendInts(out, group);
          at += g.group_sizes[i];
        }
        out += '}';
      }
      break;
    }
    case AttrKind::Computation:
      if (a.computations().size() == 1) {  // to_apply=add, as HLO writes one callee
        out += p.computations[a.computations()[0]].name;
        break;
      }
      [[fallthrough]];
    case AttrKind::ComputationList:
      out += '{';
      for (size_t i = 0; i < a.computations().size(); ++i) {
        if (i) out += ", ";
        out += p.computations[a.computations()[i]].name;
      }
      out += '}';
      break;
  }
}

std::string DumpBundleProgram(const BundleProgram& p, std::string_view file_name) {
  std::string out;
  out += std::string(file_name) + ": nhlo bundle file version " + std::to_string(p.version) + ", arch v" +
         std::to_string(static_cast<int>(p.arch)) + (p.flags & kFlagDeviceOnly ? ", device-only" : "") + ", " +
         std::to_string(p.bytes.size()) + " bytes, checksum " + Hex(p.checksum, 8) + "\n";
  out += "module " + std::string(p.module_name) + ", entry #" + std::to_string(p.entry) + " '" +
         std::string(p.computations[p.entry].name) + "', arena " + std::to_string(p.arena_size) + " bytes" +
         (p.devices() > 1 ? ", " + std::to_string(p.devices()) + " devices (" + std::to_string(p.replicas) +
                                (p.replicas == 1 ? " replica x " : " replicas x ") + std::to_string(p.partitions) +
                                (p.partitions == 1 ? " partition)" : " partitions)")
                          : "") +
         "\n\n";
  out += "Sections:\n";
  for (const SectionRecord& s : p.sections)
    out += "  " + Pad(std::string(SectionName(s.id)), 13) + " offset " + Hex(s.offset, 8) + "  size " + Hex(s.size, 8) +
           "\n";

  for (size_t c = 0; c < p.computations.size(); ++c) {
    const ComputationRecord& comp = p.computations[c];
    out += "\nComputation #" + std::to_string(c) + " '" + std::string(comp.name) + "'" +
           (c == p.entry ? " (entry)" : "") + ": params (";
    out += BufferList(comp.params);
    out += "), root #" + std::to_string(comp.root) + ", frame " + std::to_string(comp.frame_size) +
           " bytes (live-bytes bound " + std::to_string(comp.live_bytes_bound) + "), " +
           std::to_string(comp.bundles.size()) + " bundles\n";
    out += "  Buffers (" + std::to_string(comp.buffers.size()) + "):\n";
    size_t name_width = 8;
    for (const BufferRecord& b : comp.buffers) name_width = std::max(name_width, std::min<size_t>(b.name.size(), 40));
    size_t index_width = std::to_string(comp.buffers.size()).size() + 2;
    for (size_t i = 0; i < comp.buffers.size(); ++i) {
      const BufferRecord& b = comp.buffers[i];
      std::string line = "    " + Pad(Num("#", i), index_width + 1) + Pad(std::string(b.name), name_width) + " " +
                         Pad(BufferShapeText(p, b), 18) + " " + Pad(std::string(BufferKindName(b.kind)), 6);
      if (b.type != PrimitiveType::kTuple) {
        switch (b.kind) {
          case BufferKind::kTemp: line += Pad("@" + Hex(b.location, 6), 10); break;
          case BufferKind::kParameter: line += Pad("p" + std::to_string(b.location), 10); break;
          case BufferKind::kConstant: line += Pad("c" + Hex(b.location, 6), 10); break;
          case BufferKind::kAlias: line += Pad("=#" + std::to_string(b.location), 10); break;
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
    out += "  Bundles:\n";
    for (const BundleRecord& b : comp.bundles) {
      std::string line = "    " + Hex(b.file_offset, 8) + ":  " + Pad(std::string(OpcodeName(b.opcode)), 20) + " " +
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
        AppendAttrText(line, p, b.attrs[i]);
      }
      if (b.callee_frame != 0) line += ", callees at @" + Hex(b.callee_frame, 6);
      out += line + "\n";
    }
  }
  return out;
}

namespace {

std::string Ratio(uint64_t frame, uint64_t bound) {
  if (bound == 0) return frame == 0 ? "-" : "inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(frame) / static_cast<double>(bound));
  return buf;
}

std::string PadLeft(const std::string& s, size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

}  // namespace

std::string ArenaTable(const BundleProgram& p, std::string_view file_name) {
  // Column widths from the data: the widest cell of each column, headings included.
  const char* heads[] = {"#", "computation", "frame", "live-bytes bound", "ratio"};
  size_t w[5];
  for (size_t i = 0; i < 5; ++i) w[i] = std::string_view(heads[i]).size();
  std::vector<std::array<std::string, 5>> rows;
  rows.reserve(p.computations.size());
  for (size_t c = 0; c < p.computations.size(); ++c) {
    const ComputationRecord& comp = p.computations[c];
    rows.push_back({std::to_string(c), CEscape(comp.name), std::to_string(comp.frame_size),
                    std::to_string(comp.live_bytes_bound), Ratio(comp.frame_size, comp.live_bytes_bound)});
    for (size_t i = 0; i < 5; ++i) w[i] = std::max(w[i], rows.back()[i].size());
  }
  std::string out =
      std::string(file_name) + ": frame of each computation against the live-bytes lower bound in the file\n";
  auto line = [&](const std::array<std::string, 5>& r) {
    std::string l = "  " + PadLeft(r[0], w[0]) + "  " + Pad(r[1], w[1]) + "  " + PadLeft(r[2], w[2]) + "  " +
                    PadLeft(r[3], w[3]) + "  " + PadLeft(r[4], w[4]);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line({heads[0], heads[1], heads[2], heads[3], heads[4]});
  for (const auto& r : rows) line(r);
  const ComputationRecord& entry = p.computations[p.entry];
  out += "arena " + std::to_string(p.arena_size) + " bytes: the frame of entry #" + std::to_string(p.entry) + " '" +
         CEscape(entry.name) + "' (live-bytes bound " + std::to_string(entry.live_bytes_bound) + ", ratio " +
         Ratio(p.arena_size, entry.live_bytes_bound) + ")\n";
  return out;
}

}  // namespace nhlo
