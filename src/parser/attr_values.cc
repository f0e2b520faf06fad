// SPDX-License-Identifier: Apache-2.0
// Readers for the structured attribute values: the parser captures a value's text once and
// turns it into the typed value the IR keeps (types/hlo_attrs.h, ir/ir.h). Nothing downstream
// reads attribute text again.
#include "parser/attr_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "ir/printer.h"
#include "parser/value_cursor.h"
#include "support/checked_math.h"
#include "support/escape.h"
#include "support/small_vec.h"
#include "support/text_scan.h"

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
      return Status::Error("window " + std::string(f.key) + "= has " + std::to_string(f.groups.size()) +
                           (f.groups.size() == 1 ? " dimension" : " dimensions") + " but size= has " +
                           std::to_string(dims.size()));
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
  NHLO_TRY(ReadLabels(rhs, 'i', 'o', l.kernel_input_feature, l.kernel_output_feature, l.kernel_spatial, l.has_unknown,
                      "kernel"));
  NHLO_TRY(ReadLabels(out, 'b', 'f', l.output_batch, l.output_feature, l.output_spatial, l.has_unknown, "output"));
  if (l.input_spatial.size() != l.kernel_spatial.size() || l.input_spatial.size() != l.output_spatial.size())
    return Status::Error("dim_labels=" + std::string(text) + " has different numbers of spatial dimensions");
  l.input_rank = lhs.size();
  l.kernel_rank = rhs.size();
  l.output_rank = out.size();
  return l;
}

namespace {

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

// The axis a mesh axis reference names: `'b'` by name, or `'1'` by index (XLA's printer writes
// either, and an index may be out of range); nullopt when it is neither a name nor a number.
static std::optional<int64_t> MeshAxis(std::string_view ref, const std::vector<std::string_view>& names) {
  auto it = std::find(names.begin(), names.end(), ref);
  if (it != names.end()) return it - names.begin();
  int64_t index = -1;
  auto [end, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), index);
  if (ref.empty() || ec != std::errc() || end != ref.data() + ref.size()) return std::nullopt;
  return index;
}

// A mesh-axes replica group list as read: the mesh's axes, the axes the groups span (as
// referenced, repeats kept), and whether it lists device ids or takes sub-axes.
struct MeshAxes {
  std::vector<std::string_view> names;
  std::vector<int64_t> sizes;
  std::vector<int64_t> spanned;
  bool device_ids = false, sub_axes = false;
};

// XLA's ParseMesh and ParseAxisRefList judge a mesh-axes replica group list: quoted axis names
// with sizes, an optional device_ids=(...) list holding one id per mesh device (or an iota
// `[dims]T(perm)`), then `{...}` axis references that name an axis or give its index, each
// optionally a sub-axis `:(pre_size)size`.
static Result<MeshAxes> ReadMesh(std::string_view text) {
  ValueCursor c(text.substr(4));
  if (!c.Eat('[')) return Status::Error("expected '[' after mesh");
  MeshAxes mesh;
  std::vector<std::string_view>& names = mesh.names;
  int64_t devices = 1;
  std::string sizes_text;
  if (!c.Eat(']')) {
    for (;;) {
      if (c.Word("device_ids")) {
        if (names.empty()) return Status::Error("mesh device_ids= needs the mesh axes before it");
        if (!c.Eat('=') || !c.Eat('(')) return Status::Error("expected '=(' after mesh device_ids");
        mesh.device_ids = true;
        if (c.Peek('[')) {
          std::vector<int64_t> reshape, perm;
          if (!ReadBracketList(c, reshape)) return Status::Error("malformed iota mesh device_ids");
          if (c.Eat('T')) {
            if (!c.Eat('(')) return Status::Error("expected '(' after T in mesh device_ids");
            if (!c.Eat(')')) {
              do {
                int64_t v;
                if (!c.Int(v)) return Status::Error("malformed transpose in mesh device_ids");
              } while (c.Eat(','));
              if (!c.Eat(')')) return Status::Error("expected ')' to end the transpose in mesh device_ids");
            }
          }
        } else {
          int64_t listed = 0;
          if (!c.Peek(')')) {
            do {
              int64_t id;
              if (!c.Int(id)) return Status::Error("mesh device_ids must be integers");
              ++listed;
            } while (c.Eat(','));
          }
          if (listed != devices)
            return Status::Error("mesh [" + sizes_text + "] has " + std::to_string(devices) +
                                 " devices, but device_ids lists " + std::to_string(listed));
        }
        if (!c.Eat(')')) return Status::Error("expected ')' to end mesh device_ids");
        if (!c.Eat(']')) return Status::Error("expected ']' after mesh device_ids");
        break;
      }
      std::string_view name;
      int64_t size;
      if (!c.Quoted(name) || !c.Eat('=') || !c.Int(size)) return Status::Error("expected 'axis'=size in the mesh");
      if (size < 0 || (size != 0 && MulOverflows(devices, size, &devices)))
        return Status::Error("mesh axis '" + std::string(name) + "' has an invalid size");
      if (size == 0) devices = 0;
      sizes_text += (names.empty() ? "" : ",") + std::to_string(size);
      names.push_back(name);
      mesh.sizes.push_back(size);
      if (c.Eat(']')) break;
      if (!c.Eat(',')) return Status::Error("expected ',' or ']' in the mesh axes");
    }
  }
  if (!c.Eat('{')) return Status::Error("expected '{' with the mesh axes the groups span");
  if (!c.Eat('}')) {
    do {
      std::string_view ref;
      if (!c.Quoted(ref)) return Status::Error("expected a quoted mesh axis name or index");
      std::optional<int64_t> axis = MeshAxis(ref, names);
      if (!axis)
        return Status::Error("axis '" + std::string(ref) + "' is not a valid axis name or index in mesh [" +
                             sizes_text + "]");
      if (*axis < 0 || *axis >= static_cast<int64_t>(names.size()))
        return Status::Error("axis index " + std::string(ref) + " is out of bounds for mesh [" + sizes_text +
                             "], which has " + std::to_string(names.size()) + (names.size() == 1 ? " axis" : " axes"));
      mesh.spanned.push_back(*axis);
      if (c.Eat(':')) {
        int64_t pre_size, size;
        if (!c.Eat('(') || !c.Int(pre_size) || !c.Eat(')') || !c.Int(size))
          return Status::Error("expected a sub-axis ':(pre_size)size' after mesh axis '" + std::string(ref) + "'");
        mesh.sub_axes = true;
      }
    } while (c.Eat(','));
    if (!c.Eat('}')) return Status::Error("expected ',' or '}' in the mesh axis list");
  }
  if (!c.AtEnd()) return Status::Error("unexpected text after the mesh axis list");
  return mesh;
}

// `mesh['a'=2,'b'=4] {'b'}` as `[2,4]<=[2,4]T(0,1)`; leaves `g` alone unless every axis has a
// size of 1 or more and the groups span whole axes, each once, over no device_ids list.
static void MeshAsIota(const MeshAxes& mesh, Arena& arena, ReplicaGroupList& g) {
  if (mesh.names.empty() || mesh.device_ids || mesh.sub_axes) return;
  std::vector<bool> grouped(mesh.names.size(), false);
  for (int64_t axis : mesh.spanned) {
    if (grouped[static_cast<size_t>(axis)]) return;
    grouped[static_cast<size_t>(axis)] = true;
  }
  std::vector<int64_t> perm;
  int64_t total = 1, group = 1;
  for (size_t i = 0; i < mesh.sizes.size(); ++i) {
    if (mesh.sizes[i] < 1 || MulOverflows(total, mesh.sizes[i], &total)) return;
    if (!grouped[i]) perm.push_back(static_cast<int64_t>(i));
  }
  for (int64_t axis : mesh.spanned) {
    group *= mesh.sizes[static_cast<size_t>(axis)];
    perm.push_back(axis);
  }
  g.iota = true;
  g.num_groups = total / group;
  g.group_size = group;
  g.reshape_dims = arena.Copy(mesh.sizes);
  g.transpose = arena.Copy(perm);
}

Result<ReplicaGroupList> ReadReplicaGroups(Arena& arena, std::string_view text) {
  ReplicaGroupList g;
  ValueCursor c(text);
  if (text.substr(0, 5) == "mesh[") {
    // XLA's mesh-axes form (`mesh['x'=2,'y'=2] {'y'}`) names device-mesh axes, not devices; its
    // spelling is kept for printing. Whole axes are also read as the iota form they stand for
    // (docs/multi-device-semantics.md 3.3): an iota over the mesh, the grouped axes moved
    // last in the order listed [inferred], rows of their product. Sub-axes and explicit device
    // lists keep no structure (the interpreter refuses them by name).
    g.mesh = true;
    NHLO_ASSIGN_OR_RETURN(MeshAxes mesh, ReadMesh(text));
    MeshAsIota(mesh, arena, g);
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
      return Status::Error("replica_groups=" + std::string(text) +
                           " is neither {{...},...} nor [groups,size]<=[dims]T(perm)");
    if (const char* problem = IotaDeviceListProblem(shape[0], shape[1], reshape, perm)) {
      if (problem != kIotaCountMismatch) return Status::Error("replica_groups=" + std::string(text) + ": " + problem);
      int64_t product = 1;  // no overflow: the check above found only the mismatch
      for (int64_t d : reshape) product *= d;
      return Status::Error("replica_groups " + std::string(text) + ": the iota has " + std::to_string(product) +
                           " ids, the groups " + std::to_string(shape[0] * shape[1]));
    }
    g.iota = true;
    g.num_groups = shape[0];
    g.group_size = shape[1];
    g.reshape_dims = arena.Copy(reshape);
    g.transpose = arena.Copy(perm);
    return g;
  }
  std::vector<int64_t> ids, sizes;
  if (!ReadGroups(text, ids, sizes))
    return Status::Error("replica_groups=" + std::string(text) + " is not a list of {id,...} groups");
  g.ids = arena.Copy(ids);
  g.group_sizes = arena.Copy(sizes);
  return g;
}

Result<std::vector<int64_t>> ReadPairList(std::string_view text) {
  std::vector<int64_t> ids, sizes;
  if (!ReadGroups(text, ids, sizes))
    return Status::Error("source_target_pairs=" + std::string(text) + " is not a list of {source,target} pairs");
  for (int64_t n : sizes)
    if (n != 2) return Status::Error("source_target_pairs=" + std::string(text) + " has a group that is not a pair");
  return ids;
}

Result<std::vector<uint8_t>> ReadBoolList(std::string_view text) {
  std::vector<uint8_t> out;
  std::string_view body = Trim(text);
  if (body.size() < 2 || body.front() != '{' || body.back() != '}')
    return Status::Error("parameter_replication=" + std::string(text) + " is not a {true,false,...} list");
  body = Trim(body.substr(1, body.size() - 2));
  if (body.empty()) return out;
  for (std::string_view item : Split(body, ',')) {
    item = Trim(item);
    if (item != "true" && item != "false")
      return Status::Error("parameter_replication=" + std::string(text) + " holds '" + std::string(item) +
                           "', not true or false");
    out.push_back(item == "true");
  }
  return out;
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

namespace {

// Where ScanKeyValues reads from: one folded block (the whole text), or the source itself from
// the block's '{' on, where anything whitespace folding would change sends the block back the
// general way.
enum class KeyValueInput { kBlock, kSource };

// `{key=value ...}` of metadata and frontend_attributes. Keys are attribute names (the
// characters the lexer reads before `=`); a value is a quoted string, a balanced {...} block or
// a bare word (an integer when it reads as one); entries are separated by spaces and/or commas.
// While reading, notes whether the printer writes the entries back as the text, so the spelling
// is kept only when it would not (one pass, no trial print: metadata is on nearly every
// instruction of a large dump). Returns the length of the block; from kSource, 0 when the block
// must be captured and folded first (including every malformed block, so that errors are
// reported the one way).
Result<size_t> ScanKeyValues(Arena& arena, Attribute& attr, std::string_view text, KeyValueInput input) {
  const bool from_source = input == KeyValueInput::kSource;
  if (text.size() < 2 || text.front() != '{' || (!from_source && text.back() != '}')) {
    if (from_source) return size_t{0};
    return Status::Error(std::string(AttrName(attr.id)) + "=" + std::string(text) + " is not a {key=value ...} list");
  }
  // Pointers rather than indices and substr: this runs for nearly every instruction.
  const char* const begin = text.data();
  const char* const limit = begin + text.size();
  auto malformed = [&](const char* at) -> Result<size_t> {
    if (from_source) return size_t{0};
    return Status::Error(std::string(AttrName(attr.id)) + "={...} is not a list of key=value entries at '" +
                         std::string(at, std::min<size_t>(24, static_cast<size_t>(limit - at))) + "'");
  };
  auto view = [](const char* from, const char* to) { return std::string_view(from, static_cast<size_t>(to - from)); };
  auto offset = [&](const char* at) { return static_cast<size_t>(at - begin); };
  const std::string_view sep = KeyValueSeparator(attr.id);
  SmallVec<KeyValue, 8> entries;
  bool canonical = true;
  const char* p = begin + 1;
  for (;;) {
    const char* sep_start = p;
    for (; p < limit && (*p == ' ' || *p == ','); ++p)
      if (from_source && *p == ' ' && p + 1 < limit && p[1] == ' ') return size_t{0};  // folding joins them
    if (p == limit) return malformed(sep_start);
    if (*p == '}') {
      canonical &= p == sep_start;
      ++p;
      break;
    }
    if (entries.size() == 0) {
      canonical &= p == sep_start;
    } else if (static_cast<size_t>(p - sep_start) != sep.size()) {
      canonical = false;
    } else {
      for (size_t i = 0; i < sep.size(); ++i) canonical &= sep_start[i] == sep[i];
    }
    KeyValue kv;
    const char* key = p;
    if (!IsIdentStart(*p)) return malformed(p);
    while (p < limit && IsIdentChar(*p)) ++p;
    kv.key = view(key, p);
    if (p < limit && *p == ' ') {
      canonical = false;
      ++p;
    }
    if (p == limit || *p != '=') return malformed(key);
    ++p;
    if (p < limit && *p == ' ') {
      canonical = false;
      ++p;
    }
    if (p == limit || *p == '}') return malformed(key);
    const char c = *p;
    if (c == '"' || c == '\'') {
      kv.kind = KeyValueKind::kString;
      // Nearly every string is plain up to its closing quote: then it is its own value and
      // prints as written.
      size_t close = FindNotPlain(begin, offset(p + 1), text.size());
      if (c == '"' && close < text.size() && begin[close] == '"') {
        kv.text = view(p + 1, begin + close);
      } else {
        close = offset(p + 1);
        for (;;) {
          close = FindEither(begin, close, text.size(), c, '\\');
          if (close >= text.size()) return malformed(key);
          if (begin[close] == c) break;
          close += 2;  // an escape: skip the escaped character
        }
        std::string_view body = view(p + 1, begin + close);
        std::string value = CUnescape(body);
        kv.text = arena.CopyString(value);
        canonical &= c == '"' && CEscape(value) == body;
      }
      p = begin + close + 1;
    } else if (c == '{') {
      RawBlockScan block = ScanRawBraceBlock(text, offset(p));
      if (!block.ok || (from_source && block.needs_fold)) return malformed(key);
      kv.kind = KeyValueKind::kBare;
      kv.text = view(p, begin + block.end);
      p = begin + block.end;
    } else {
      // A bare word runs to a separator, a brace, a quote or whitespace; a '/' is part of it
      // unless it opens a comment.
      const char* word = p;
      for (;;) {
        while (p < limit && !IsRawSpecial(*p) && *p != ',') ++p;
        if (p + 1 < limit && *p == '/' && p[1] != '/' && p[1] != '*') {
          ++p;
          continue;
        }
        break;
      }
      if (p == word || (p < limit && (*p == '/' || *p == '\n' || *p == '\t' || *p == '\r'))) return malformed(key);
      // Up to 18 digits without a leading zero (as the printer writes them) are read here;
      // anything longer or odder that from_chars takes is checked against to_chars.
      const char* digits = word + (*word == '-');
      bool plain_int = p > digits && p - digits <= 18 && (*digits != '0' || (p - digits == 1 && digits == word));
      int64_t v = 0;
      for (const char* d = digits; plain_int && d < p; ++d) {
        plain_int = IsDigit(*d);
        v = v * 10 + (*d - '0');
      }
      if (plain_int) {
        kv.kind = KeyValueKind::kInt;
        kv.i = digits == word ? v : -v;
      } else if (auto [q, ec] = std::from_chars(word, p, v); ec == std::errc() && q == p) {
        kv.kind = KeyValueKind::kInt;
        kv.i = v;
        char buf[24];
        auto printed = std::to_chars(buf, buf + sizeof(buf), v);
        canonical &= view(buf, printed.ptr) == view(word, p);
      } else {
        kv.kind = KeyValueKind::kBare;
        kv.text = view(word, p);
      }
    }
    entries.push_back(kv);
  }
  if (!from_source && p != limit) return malformed(p);
  attr.entries = arena.Copy(entries.data(), entries.size());
  attr.text = canonical ? std::string_view() : view(begin, p);
  return offset(p);
}

}  // namespace

size_t ReadPlainKeyValues(Arena& arena, Attribute& attr, std::string_view source) {
  Result<size_t> length = ScanKeyValues(arena, attr, source, KeyValueInput::kSource);
  return length.ok() ? *length : 0;
}

namespace {

// result_accuracy={mode=DEFAULT|HIGHEST} or {tolerance={atol=A,rtol=R,ulps=U}} with A, R >= 0
// and U a non-negative integer (XLA's ResultAccuracy; the mode in any letter case).
Status CheckResultAccuracy(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::Error("invalid result_accuracy " + std::string(text) + ": " + why);
  };
  ValueCursor c(text);
  if (!c.Eat('{')) return bad("expected '{'");
  std::string_view rest = text.substr(1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.starts_with("mode=")) {
    size_t end = rest.find('}');
    std::string mode(rest.substr(5, end == std::string_view::npos ? std::string_view::npos : end - 5));
    while (!mode.empty() && mode.back() == ' ') mode.pop_back();
    for (char& ch : mode) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (mode != "DEFAULT" && mode != "HIGHEST") return bad("the mode is DEFAULT or HIGHEST");
    if (end == std::string_view::npos || rest.substr(end + 1).find_first_not_of(' ') != std::string_view::npos)
      return bad("text after the mode");
    return OkStatus();
  }
  if (!rest.starts_with("tolerance=")) return bad("expected mode= or tolerance=");
  rest.remove_prefix(10);
  if (rest.empty() || rest.front() != '{') return bad("expected '{' after tolerance=");
  size_t close = rest.find('}');
  if (close == std::string_view::npos) return bad("unclosed tolerance");
  std::string_view fields = rest.substr(1, close - 1);
  std::string_view after = rest.substr(close + 1);
  while (!after.empty() && after.front() == ' ') after.remove_prefix(1);
  if (after != "}") return bad("text after the tolerance");
  bool seen[3] = {false, false, false};
  while (!fields.empty()) {
    while (!fields.empty() && (fields.front() == ' ' || fields.front() == ',')) fields.remove_prefix(1);
    if (fields.empty()) break;
    size_t eq = fields.find('=');
    if (eq == std::string_view::npos) return bad("a tolerance field has no value");
    std::string_view key = fields.substr(0, eq);
    size_t end = fields.find(',', eq);
    std::string value(fields.substr(eq + 1, end == std::string_view::npos ? std::string_view::npos : end - eq - 1));
    fields = end == std::string_view::npos ? std::string_view() : fields.substr(end + 1);
    int k = key == "atol" ? 0 : key == "rtol" ? 1 : key == "ulps" ? 2 : -1;
    if (k < 0) return bad("unknown tolerance field '" + std::string(key) + "'");
    if (seen[k]) return bad("'" + std::string(key) + "' given twice");
    seen[k] = true;
    char* stop = nullptr;
    double v = k == 2 ? static_cast<double>(std::strtoll(value.c_str(), &stop, 10)) : std::strtod(value.c_str(), &stop);
    if (value.empty() || stop != value.c_str() + value.size() || !std::isfinite(v))
      return bad("'" + std::string(key) + "' is not " + (k == 2 ? "an integer" : "a number"));
    if (v < 0) return bad("'" + std::string(key) + "' is negative");
  }
  return OkStatus();
}

}  // namespace

Status DecodeStructuredValue(Arena& arena, Attribute& attr, std::string_view text) {
  if (attr.id == AttrId::kResultAccuracy) NHLO_TRY(CheckResultAccuracy(text));
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
      if (!code)
        return Status::Error("unknown " + std::string(AttrName(attr.id)) + " value '" + std::string(text) + "'");
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
    case AttrKind::BoolList: {
      NHLO_ASSIGN_OR_RETURN(std::vector<uint8_t> flags, ReadBoolList(text));
      attr.bools = arena.NewArray<bool>(flags.size());
      for (size_t i = 0; i < flags.size(); ++i) attr.bools[i] = flags[i] != 0;
      break;
    }
    case AttrKind::KeyValues:  // decides itself whether to keep the spelling
      return ScanKeyValues(arena, attr, text, KeyValueInput::kBlock).status();
    case AttrKind::Int:
    case AttrKind::Bool:
    case AttrKind::Float:
    case AttrKind::String:
    case AttrKind::Ident:
    case AttrKind::IntList:
    case AttrKind::Computation:
    case AttrKind::ComputationList:
    case AttrKind::InstructionList:
    case AttrKind::Shape:
    case AttrKind::ShapeList:  // read token by token by the parser
    case AttrKind::Raw:
    case AttrKind::Config:
    case AttrKind::Literal: return OkStatus();
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
