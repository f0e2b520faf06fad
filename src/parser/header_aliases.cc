// SPDX-License-Identifier: Apache-2.0
// The module header's input_output_alias and buffer_donor, judged as XLA's parser and
// HloInputOutputAliasConfig/HloBufferDonorConfig::Verify judge them: the entries' syntax, then,
// against the entry computation, that every parameter number and shape index exists, that
// aliased buffers have the same size, and that nothing is aliased or donated twice. nhlo keeps
// the text as written (it prints it back unchanged); this only decides whether it is valid. The
// same goes for debug_attributes, whose entries XLA's ParseDebugAttributes reads.
#include "parser/header_aliases.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "parser/value_cursor.h"

namespace nhlo {
namespace {

// `{1, 0}` (a shape index; `{}` is the whole value).
bool ReadIndex(ValueCursor& c, std::vector<int64_t>& out) {
  if (!c.Eat('{')) return false;
  if (c.Eat('}')) return true;
  for (;;) {
    int64_t v;
    if (!c.Int(v)) return false;
    out.push_back(v);
    if (c.Eat('}')) return true;
    if (!c.Eat(',')) return false;
  }
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string out = "{";
  for (size_t i = 0; i < index.size(); ++i) out += (i ? ", " : "") + std::to_string(index[i]);
  return out + "}";
}

// The subshape of `shape` at `index`, or null when the index does not exist.
const Shape* Subshape(const Shape& shape, const std::vector<int64_t>& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || static_cast<size_t>(i) >= s->tuple.size()) return nullptr;
    s = &s->tuple[static_cast<size_t>(i)];
  }
  return s;
}

int64_t ByteSize(const Shape& s) {
  if (!s.IsArray()) return -1;
  int64_t n = s.ElementCount(), size = HostByteSize(s.type);
  return n < 0 || size <= 0 ? -1 : n * size;
}

}  // namespace

Result<std::vector<AliasEntry>> ParseInputOutputAlias(std::string_view text) {
  // { {out}: (param, {index}[, may-alias|must-alias]), ... }
  ValueCursor c(text);
  std::vector<AliasEntry> entries;
  auto bad = [&](const char* what) {
    return Status::Error(std::string("input_output_alias: ") + what + " at offset " + std::to_string(c.position()) +
                         " of '" + std::string(text) + "'");
  };
  if (!c.Eat('{')) return bad("expected '{'");
  if (c.Eat('}')) return c.AtEnd() ? Result<std::vector<AliasEntry>>(entries) : bad("text after '}'");
  for (;;) {
    AliasEntry e;
    if (!ReadIndex(c, e.output_index)) return bad("expected an output shape index {...}");
    if (!c.Eat(':')) return bad("expected ':'");
    if (!c.Eat('(')) return bad("expected '('");
    if (!c.Int(e.param) || e.param < 0) return bad("expected a parameter number");
    if (!c.Eat(',')) return bad("expected ','");
    if (!ReadIndex(c, e.param_index)) return bad("expected a parameter shape index {...}");
    if (c.Eat(',')) {
      if (c.Word("must-alias"))
        e.must = true;
      else if (!c.Word("may-alias"))
        return bad("expected may-alias or must-alias");
    }
    if (!c.Eat(')')) return bad("expected ')'");
    entries.push_back(std::move(e));
    if (c.Eat('}')) break;
    if (!c.Eat(',')) return bad("expected ',' or '}'");
  }
  if (!c.AtEnd()) return bad("text after '}'");
  return entries;
}

Result<std::vector<DonorEntry>> ParseBufferDonor(std::string_view text) {
  // { (param, {index}), ... }
  ValueCursor c(text);
  std::vector<DonorEntry> entries;
  auto bad = [&](const char* what) {
    return Status::Error(std::string("buffer_donor: ") + what + " at offset " + std::to_string(c.position()) + " of '" +
                         std::string(text) + "'");
  };
  if (!c.Eat('{')) return bad("expected '{'");
  if (c.Eat('}')) return c.AtEnd() ? Result<std::vector<DonorEntry>>(entries) : bad("text after '}'");
  for (;;) {
    DonorEntry e;
    if (!c.Eat('(')) return bad("expected '('");
    if (!c.Int(e.param) || e.param < 0) return bad("expected a parameter number");
    if (!c.Eat(',')) return bad("expected ','");
    if (!ReadIndex(c, e.param_index)) return bad("expected a parameter shape index {...}");
    if (!c.Eat(')')) return bad("expected ')'");
    entries.push_back(std::move(e));
    if (c.Eat('}')) break;
    if (!c.Eat(',')) return bad("expected ',' or '}'");
  }
  if (!c.AtEnd()) return bad("text after '}'");
  return entries;
}

Status CheckAliases(const std::vector<AliasEntry>& aliases, const std::vector<DonorEntry>& donors,
                    const Computation& entry) {
  std::vector<Instruction*> params = entry.Parameters();
  auto param_shape = [&](int64_t number, const std::vector<int64_t>& index, const char* what) -> Result<const Shape*> {
    if (number < 0 || static_cast<size_t>(number) >= params.size() || !params[static_cast<size_t>(number)])
      return Status::Error(std::string(what) + ": parameter " + std::to_string(number) +
                           " does not exist (the entry '" + std::string(entry.name) + "' takes " +
                           std::to_string(params.size()) + ")");
    const Shape* s = Subshape(params[static_cast<size_t>(number)]->shape, index);
    if (!s)
      return Status::Error(std::string(what) + ": parameter " + std::to_string(number) + " has no shape index " +
                           IndexText(index));
    return s;
  };
  // Ordered sets, not lists searched per entry: a train step aliases every weight (Mixtral's
  // dump, 972 entries, spent 8% of its parse comparing each entry with all before it).
  std::set<std::pair<int64_t, std::vector<int64_t>>> seen_params;
  std::set<std::vector<int64_t>> seen_outputs;
  for (const AliasEntry& a : aliases) {
    NHLO_ASSIGN_OR_RETURN(const Shape* in, param_shape(a.param, a.param_index, "input_output_alias"));
    const Shape* out = Subshape(entry.root->shape, a.output_index);
    if (!out) return Status::Error("input_output_alias: the output has no shape index " + IndexText(a.output_index));
    if (ByteSize(*in) != ByteSize(*out))
      return Status::Error("input_output_alias: output " + IndexText(a.output_index) + " (" +
                           ShapeToString(*out, false) + ") and parameter " + std::to_string(a.param) + " at " +
                           IndexText(a.param_index) + " (" + ShapeToString(*in, false) +
                           ") are not buffers of the same size");
    if (!seen_outputs.insert(a.output_index).second)
      return Status::Error("input_output_alias: output " + IndexText(a.output_index) + " is aliased twice");
    if (!seen_params.emplace(a.param, a.param_index).second)
      return Status::Error("input_output_alias: parameter " + std::to_string(a.param) + " at " +
                           IndexText(a.param_index) + " is aliased twice");
  }
  std::set<std::pair<int64_t, std::vector<int64_t>>> donated;
  for (const DonorEntry& d : donors) {
    NHLO_TRY(param_shape(d.param, d.param_index, "buffer_donor").status());
    if (!donated.emplace(d.param, d.param_index).second)
      return Status::Error("buffer_donor: parameter " + std::to_string(d.param) + " at " + IndexText(d.param_index) +
                           " is donated twice");
  }
  return OkStatus();
}

namespace {

// One `{log_mode=default,callback_id=123,partitioned=true,op_id=4}`.
Status CheckDebugAttributeSet(ValueCursor& c) {
  if (!c.Eat('{')) return Status::Error("expected '{' to open a debug attribute set");
  do {
    std::string key(c.WordChars());
    if (!c.Eat('=')) return Status::Error("expected 'name=' in a debug attribute set");
    std::string value(c.WordChars());
    if (key == "log_mode") {
      if (value != "default" && value != "fusion_debugger")
        return Status::Error("invalid debug_attributes log_mode '" + value + "' (default or fusion_debugger)");
    } else if (key == "partitioned") {
      if (value != "true" && value != "false")
        return Status::Error("debug_attributes partitioned= takes true or false, got '" + value + "'");
    } else if (key == "callback_id" || key == "op_id") {
      int64_t number = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size())
        return Status::Error("debug_attributes " + key + "= takes an integer, got '" + value + "'");
    } else {
      return Status::Error("unknown debug attribute '" + key + "' (log_mode, callback_id, partitioned or op_id)");
    }
  } while (c.Eat(','));
  if (!c.Eat('}')) return Status::Error("expected ',' or '}' in a debug attribute set");
  return OkStatus();
}

}  // namespace

Status CheckDebugAttributes(std::string_view text) {
  ValueCursor c(text);
  if (!c.Eat('{')) return Status::Error("debug_attributes must be a {...} table");
  if (c.Eat('}')) return OkStatus();
  do {
    if (!c.SkipBraceBlock()) return Status::Error("expected an original array ({\"name\"}) in debug_attributes");
    if (!c.Eat(':')) return Status::Error("expected ':' after the original array in debug_attributes");
    if (c.Eat('(')) {
      if (!c.Eat(')')) {
        do {
          NHLO_TRY(CheckDebugAttributeSet(c));
        } while (c.Eat(','));
        if (!c.Eat(')')) return Status::Error("expected ')' after a list of debug attribute sets");
      }
    } else {
      NHLO_TRY(CheckDebugAttributeSet(c));
    }
  } while (c.Eat(','));
  if (!c.Eat('}')) return Status::Error("expected ',' or '}' in debug_attributes");
  return OkStatus();
}

}  // namespace nhlo
