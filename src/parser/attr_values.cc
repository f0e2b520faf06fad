// SPDX-License-Identifier: Apache-2.0
// Readers for the structured attribute values: the parser captures a value's text once and
// turns it into the typed value the IR keeps (types/hlo_attrs.h, ir/ir.h). Nothing downstream
// reads attribute text again.
#include "parser/attr_values.h"

#include <charconv>
#include <optional>

#include "ir/printer.h"
#include "support/small_vec.h"

namespace nhlo {
namespace {

bool ReadInt(std::string_view s, int64_t& v) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  return ec == std::errc() && p == end;
}

// Inline storage: windows and paddings are split for every convolution the verifier sees.
using Parts = SmallVec<std::string_view, 8>;

Parts Split(std::string_view s, char sep) {
  Parts parts;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::string_view StripBraces(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = Trim(s.substr(1, s.size() - 2));
  return s;
}

// `3x3` or `0_1x1_1`: one group per dimension.
Parts DimGroups(std::string_view value) { return Split(value, 'x'); }

}  // namespace

Result<std::vector<WindowDim>> ReadWindow(std::string_view text) {
  std::string_view body = StripBraces(text);
  std::vector<WindowDim> dims;
  bool have_size = false;
  size_t pos = 0;
  struct Field {
    std::string_view key;
    Parts groups;
  };
  std::vector<Field> fields;
  while (pos < body.size()) {
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == ',')) ++pos;
    size_t end = pos;
    while (end < body.size() && body[end] != ' ' && body[end] != ',') ++end;
    if (end == pos) break;
    std::string_view item = body.substr(pos, end - pos);
    pos = end;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) return Status::Error("window item '" + std::string(item) + "' is not key=value");
    std::string_view key = item.substr(0, eq);
    Field f{key, DimGroups(item.substr(eq + 1))};
    if (key == "size") {
      have_size = true;
      dims.assign(f.groups.size(), WindowDim{});
    }
    fields.push_back(f);
  }
  if (fields.empty()) return dims;
  if (!have_size) return Status::Error("window has no size=");
  for (const Field& f : fields) {
    if (f.groups.size() != dims.size())
      return Status::Error("window " + std::string(f.key) + "= has " + std::to_string(f.groups.size()) + (f.groups.size() == 1 ? " dimension" : " dimensions") +
                           " but size= has " + std::to_string(dims.size()));
    for (size_t i = 0; i < dims.size(); ++i) {
      WindowDim& d = dims[i];
      std::string_view g = f.groups[i];
      bool ok = true;
      if (f.key == "size") {
        ok = ReadInt(g, d.size);
      } else if (f.key == "stride") {
        ok = ReadInt(g, d.stride);
      } else if (f.key == "lhs_dilate") {
        ok = ReadInt(g, d.base_dilation);
      } else if (f.key == "rhs_dilate") {
        ok = ReadInt(g, d.window_dilation);
      } else if (f.key == "rhs_reversal") {
        int64_t r = 0;
        ok = ReadInt(g, r) && (r == 0 || r == 1);
        d.reversal = r == 1;
      } else if (f.key == "pad") {
        Parts lh = Split(g, '_');
        ok = lh.size() == 2 && ReadInt(lh[0], d.pad_low) && ReadInt(lh[1], d.pad_high);
      } else {
        return Status::Error("window has an unknown field '" + std::string(f.key) + "'");
      }
      if (!ok) return Status::Error("window " + std::string(f.key) + "= value '" + std::string(g) + "' is malformed");
    }
  }
  return dims;
}

Result<std::vector<SliceDim>> ReadSliceRanges(std::string_view text) {
  std::string_view body = StripBraces(text);
  std::vector<SliceDim> dims;
  size_t pos = 0;
  for (;;) {
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == ',')) ++pos;
    if (pos >= body.size()) return dims;
    if (body[pos] != '[') return Status::Error("slice=" + std::string(text) + " is not a list of [start:limit:stride]");
    size_t close = body.find(']', pos);
    if (close == std::string_view::npos) return Status::Error("slice=" + std::string(text) + " has an unclosed '['");
    Parts parts = Split(body.substr(pos + 1, close - pos - 1), ':');
    SliceDim d;
    bool ok = (parts.size() == 2 || parts.size() == 3) && ReadInt(Trim(parts[0]), d.start) &&
              ReadInt(Trim(parts[1]), d.limit) && (parts.size() == 2 || ReadInt(Trim(parts[2]), d.stride));
    if (!ok)
      return Status::Error("slice range " + std::string(body.substr(pos, close - pos + 1)) +
                           " is not [start:limit] or [start:limit:stride]");
    dims.push_back(d);
    pos = close + 1;
  }
}

Result<std::vector<PaddingDim>> ReadPadding(std::string_view text) {
  std::vector<PaddingDim> dims;
  text = Trim(text);
  if (text.empty()) return dims;
  for (std::string_view g : DimGroups(text)) {
    Parts parts = Split(g, '_');
    PaddingDim d;
    bool ok = (parts.size() == 2 || parts.size() == 3) && ReadInt(parts[0], d.low) && ReadInt(parts[1], d.high) &&
              (parts.size() == 2 || ReadInt(parts[2], d.interior));
    if (!ok) return Status::Error("padding " + std::string(g) + " is not low_high or low_high_interior");
    dims.push_back(d);
  }
  return dims;
}

namespace {

// Reads one group of dim_labels (e.g. "b01f"): `first`/`second` are the two letters of the group
// (b,f or i,o); digits are spatial dimension numbers.
Status ReadLabels(std::string_view group, char first, char second, int64_t& first_dim, int64_t& second_dim,
                  SpatialDims& spatial, bool& unknown, const char* what) {
  SmallVec<int64_t, 16> by_number(group.size(), -1);
  size_t count = 0;
  for (size_t k = 0; k < group.size(); ++k) {
    char c = group[k];
    int64_t pos = static_cast<int64_t>(k);
    if (c == first || c == second) {
      int64_t& slot = c == first ? first_dim : second_dim;
      if (slot >= 0) return Status::Error(std::string("dim_labels has '") + c + "' twice in the " + what);
      slot = pos;
    } else if (c >= '0' && c <= '9') {
      size_t d = static_cast<size_t>(c - '0');
      if (d >= by_number.size() || by_number[d] >= 0)
        return Status::Error(std::string("dim_labels has a bad spatial dimension '") + c + "' in the " + what);
      by_number[d] = pos;
      ++count;
    } else if (c == '?') {
      unknown = true;
    } else {
      return Status::Error(std::string("dim_labels has an unexpected '") + c + "' in the " + what);
    }
  }
  if (first_dim < 0 || second_dim < 0)
    return Status::Error(std::string("dim_labels needs '") + first + "' and '" + second + "' in the " + what);
  for (size_t d = 0; d < count; ++d) {
    if (by_number[d] < 0)
      return Status::Error("dim_labels has no spatial dimension " + std::to_string(d) + " in the " + what);
    spatial.push_back(by_number[d]);
  }
  return OkStatus();
}

}  // namespace

Result<ConvDimLabels> ReadDimLabels(std::string_view text) {
  text = Trim(text);
  size_t under = text.find('_');
  size_t arrow = text.find("->");
  if (under == std::string_view::npos || arrow == std::string_view::npos || arrow < under)
    return Status::Error("dim_labels=" + std::string(text) + " is not lhs_rhs->out");
  std::string_view lhs = text.substr(0, under);
  std::string_view rhs = text.substr(under + 1, arrow - under - 1);
  std::string_view out = text.substr(arrow + 2);
  ConvDimLabels l;
  NHLO_TRY(ReadLabels(lhs, 'b', 'f', l.input_batch, l.input_feature, l.input_spatial, l.has_unknown, "input"));
  NHLO_TRY(ReadLabels(rhs, 'i', 'o', l.kernel_input_feature, l.kernel_output_feature, l.kernel_spatial,
                      l.has_unknown, "kernel"));
  NHLO_TRY(ReadLabels(out, 'b', 'f', l.output_batch, l.output_feature, l.output_spatial, l.has_unknown, "output"));
  if (l.input_spatial.size() != l.kernel_spatial.size() || l.input_spatial.size() != l.output_spatial.size())
    return Status::Error("dim_labels=" + std::string(text) + " has different numbers of spatial dimensions");
  l.input_rank = lhs.size();
  l.kernel_rank = rhs.size();
  l.output_rank = out.size();
  return l;
}


namespace {

// A cursor over a captured value: skips spaces, reads integers and punctuation.
class ValueCursor {
 public:
  explicit ValueCursor(std::string_view text) : s_(text) {}
  void SkipSpaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  bool Eat(char c) {
    SkipSpaces();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpaces();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool Int(int64_t& v) {
    SkipSpaces();
    const char* begin = s_.data() + pos_;
    const char* end = s_.data() + s_.size();
    auto [p, ec] = std::from_chars(begin, end, v);
    if (ec != std::errc() || p == begin) return false;
    pos_ += static_cast<size_t>(p - begin);
    return true;
  }
  bool AtEnd() {
    SkipSpaces();
    return pos_ == s_.size();
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// `{a,b,...}` into `out` (appended).
bool ReadIntGroup(ValueCursor& c, std::vector<int64_t>& out, size_t* count) {
  if (!c.Eat('{')) return false;
  *count = 0;
  if (c.Eat('}')) return true;
  for (;;) {
    int64_t v;
    if (!c.Int(v)) return false;
    out.push_back(v);
    ++*count;
    if (c.Eat('}')) return true;
    if (!c.Eat(',')) return false;
  }
}

// `[a,b,...]`.
bool ReadBracketList(ValueCursor& c, std::vector<int64_t>& out) {
  if (!c.Eat('[')) return false;
  if (c.Eat(']')) return true;
  for (;;) {
    int64_t v;
    if (!c.Int(v)) return false;
    out.push_back(v);
    if (c.Eat(']')) return true;
    if (!c.Eat(',')) return false;
  }
}

// `{{a,b},{c,d},...}`: the members one group after another, and each group's size.
bool ReadGroups(std::string_view text, std::vector<int64_t>& ids, std::vector<int64_t>& sizes) {
  ValueCursor c(text);
  if (!c.Eat('{')) return false;
  if (!c.Eat('}')) {
    for (;;) {
      size_t n;
      if (!ReadIntGroup(c, ids, &n)) return false;
      sizes.push_back(static_cast<int64_t>(n));
      if (c.Eat('}')) break;
      if (!c.Eat(',')) return false;
    }
  }
  return c.AtEnd();
}

}  // namespace

Result<ReplicaGroupList> ReadReplicaGroups(Arena& arena, std::string_view text) {
  ReplicaGroupList g;
  ValueCursor c(text);
  if (text.substr(0, 5) == "mesh[") {
    // XLA's mesh-axes form (`mesh['x'=2,'y'=2] {'y'}`) names device-mesh axes, not devices;
    // nhlo keeps its spelling and gives it no structure.
    g.mesh = true;
    return g;
  }
  if (c.Peek('[')) {
    // [num_groups,group_size]<=[reshape_dims]T(perm)
    std::vector<int64_t> shape, reshape, perm;
    bool ok = ReadBracketList(c, shape) && shape.size() == 2 && c.Eat('<') && c.Eat('=') && ReadBracketList(c, reshape);
    if (ok && c.Eat('T')) {
      ok = c.Eat('(');
      if (ok && !c.Eat(')')) {
        for (;;) {
          int64_t v;
          if (!c.Int(v)) {
            ok = false;
            break;
          }
          perm.push_back(v);
          if (c.Eat(')')) break;
          if (!c.Eat(',')) {
            ok = false;
            break;
          }
        }
      }
    }
    if (!ok || !c.AtEnd())
      return Status::Error("replica_groups=" + std::string(text) + " is neither {{...},...} nor [groups,size]<=[dims]T(perm)");
    if (shape[0] < 0 || shape[1] < 0) return Status::Error("replica_groups iota shape must not be negative");
    int64_t product = 1;
    for (int64_t d : reshape) {
      if (d < 0 || (d != 0 && product > INT64_MAX / d)) return Status::Error("replica_groups iota dimensions are invalid");
      product *= d;
    }
    if (shape[0] != 0 && shape[1] > INT64_MAX / shape[0]) return Status::Error("replica_groups iota shape is too large");
    if (product != shape[0] * shape[1])
      return Status::Error("replica_groups " + std::string(text) + ": the iota has " + std::to_string(product) + " ids, the groups " +
                           std::to_string(shape[0] * shape[1]));
    if (!perm.empty()) {
      if (perm.size() != reshape.size()) return Status::Error("replica_groups transpose does not match the iota dimensions");
      std::vector<bool> seen(perm.size(), false);
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return Status::Error("replica_groups transpose is not a permutation");
        seen[p] = true;
      }
    }
    g.iota = true;
    g.num_groups = shape[0];
    g.group_size = shape[1];
    g.reshape_dims = arena.Copy(reshape);
    g.transpose = arena.Copy(perm);
    return g;
  }
  std::vector<int64_t> ids, sizes;
  if (!ReadGroups(text, ids, sizes)) return Status::Error("replica_groups=" + std::string(text) + " is not a list of {id,...} groups");
  g.ids = arena.Copy(ids);
  g.group_sizes = arena.Copy(sizes);
  return g;
}

Result<std::vector<int64_t>> ReadPairList(std::string_view text) {
  std::vector<int64_t> ids, sizes;
  if (!ReadGroups(text, ids, sizes)) return Status::Error("source_target_pairs=" + std::string(text) + " is not a list of {source,target} pairs");
  for (int64_t n : sizes)
    if (n != 2) return Status::Error("source_target_pairs=" + std::string(text) + " has a group that is not a pair");
  return ids;
}

Result<std::vector<int64_t>> ReadEnumList(EnumSet set, AttrId id, std::string_view text) {
  std::vector<int64_t> codes;
  std::string_view body = text;
  while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
  while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
  if (body.size() < 2 || body.front() != '{' || body.back() != '}')
    return Status::Error(std::string(AttrName(id)) + "=" + std::string(text) + " is not a {value,...} list");
  body = body.substr(1, body.size() - 2);
  for (std::string_view item : Split(body, ',')) {
    item = Trim(item);
    if (item.empty() && codes.empty() && Trim(body).empty()) break;
    std::optional<uint8_t> code = EnumValueFromName(set, item);
    if (!code) return Status::Error("unknown " + std::string(AttrName(id)) + " value '" + std::string(item) + "'");
    codes.push_back(*code);
  }
  return codes;
}

Status DecodeStructuredValue(Arena& arena, Attribute& attr, std::string_view text) {
  switch (attr.kind) {
    case AttrKind::Window: {
      NHLO_ASSIGN_OR_RETURN(std::vector<WindowDim> w, ReadWindow(text));
      attr.window = arena.Copy(w);
      break;
    }
    case AttrKind::SliceRanges: {
      NHLO_ASSIGN_OR_RETURN(std::vector<SliceDim> s, ReadSliceRanges(text));
      attr.slices = arena.Copy(s);
      break;
    }
    case AttrKind::PaddingConfig: {
      NHLO_ASSIGN_OR_RETURN(std::vector<PaddingDim> p, ReadPadding(text));
      attr.padding = arena.Copy(p);
      break;
    }
    case AttrKind::DimLabels: {
      NHLO_ASSIGN_OR_RETURN(ConvDimLabels l, ReadDimLabels(text));
      attr.dim_labels = arena.New<ConvDimLabels>(l);
      break;
    }
    case AttrKind::Enum: {
      std::optional<uint8_t> code = EnumValueFromName(EnumSetOf(attr.id), text);
      if (!code) return Status::Error("unknown " + std::string(AttrName(attr.id)) + " value '" + std::string(text) + "'");
      attr.i = *code;
      break;
    }
    case AttrKind::EnumList: {
      NHLO_ASSIGN_OR_RETURN(std::vector<int64_t> codes, ReadEnumList(EnumSetOf(attr.id), attr.id, text));
      attr.ints = arena.Copy(codes);
      break;
    }
    case AttrKind::ReplicaGroups: {
      NHLO_ASSIGN_OR_RETURN(ReplicaGroupList g, ReadReplicaGroups(arena, text));
      attr.replica_groups = arena.New<ReplicaGroupList>(g);
      break;
    }
    case AttrKind::PairList: {
      NHLO_ASSIGN_OR_RETURN(std::vector<int64_t> pairs, ReadPairList(text));
      attr.ints = arena.Copy(pairs);
      break;
    }
    case AttrKind::Int: case AttrKind::Bool: case AttrKind::Float: case AttrKind::String: case AttrKind::Ident:
    case AttrKind::IntList: case AttrKind::Computation: case AttrKind::ComputationList:
    case AttrKind::InstructionList: case AttrKind::Shape: case AttrKind::Raw: case AttrKind::Config:
    case AttrKind::Literal:
      return OkStatus();
  }
  // Keep the source spelling only where the printer would write the value differently.
  if (attr.kind == AttrKind::ReplicaGroups && attr.replica_groups->mesh) return OkStatus();  // spelling kept
  std::string canonical;
  attr.text = {};
  AppendAttributeValue(canonical, attr);
  attr.text = canonical == text ? std::string_view() : text;
  return OkStatus();
}

}  // namespace nhlo
