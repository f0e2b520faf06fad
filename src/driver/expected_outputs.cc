// SPDX-License-Identifier: Apache-2.0
#include "driver/expected_outputs.h"

#include "driver/tensor_files.h"
#include "driver/values.h"
#include "support/checked_math.h"

namespace nhlo {
namespace {

// `like` with its leaves taken, in order, from `leaves`.
Value Rebuild(const Value& like, std::vector<Value>& leaves, size_t& next) {
  if (!like.IsTuple()) return std::move(leaves[next++]);
  Value v;
  v.type = PrimitiveType::kTuple;
  for (const Value& e : like.tuple) v.tuple.push_back(Rebuild(e, leaves, next));
  return v;
}

// A failed read of one member, as its output's FAIL text: the message with the member's name.
std::string ProblemText(const Status& status) {
  std::string text;
  for (const Diagnostic& d : status.diagnostics()) {
    if (!text.empty()) text += "; ";
    text += d.file.empty() ? d.message : d.file + ": " + d.message;
  }
  return text;
}

// The comparison report's label of the output NamedOutputs calls `name`: out0 -> `output 1`,
// out1_0 -> `output 2.1` (each index one more, as the report counts from 1).
std::string ReportLabel(const std::string& name) {
  std::string label = "output ";
  uint64_t index = 0;
  for (size_t at = 3; at <= name.size(); ++at) {  // after "out"
    if (at == name.size() || name[at] == '_') {
      label += std::to_string(index + 1) + (at == name.size() ? "" : ".");
      index = 0;
    } else {
      index = index * 10 + static_cast<uint64_t>(name[at] - '0');
    }
  }
  return label;
}

}  // namespace

Result<ExpectedOutputs> LoadExpectedOutputs(const std::string& path, const Value& result) {
  std::vector<std::pair<std::string, const Value*>> outputs = NamedOutputs(result);
  std::vector<TensorSpec> specs;
  uint64_t data = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& leaf = *outputs[i].second;
    specs.push_back(
        {ReportLabel(outputs[i].first) + " '" + outputs[i].first + "'", outputs[i].first, leaf.type, leaf.dims, {}});
    if (AddOverflows(data, leaf.bytes.size(), &data)) data = UINT64_MAX;
  }
  // The file may hold other types than the result (f64 for f32 is the usual one), so its limit is
  // twice the result's bytes plus a header per member and the zip's structure.
  uint64_t limit = 0;
  if (MulOverflows(data, 2, &limit) || AddOverflows(limit, ArchiveLimit(specs), &limit)) limit = UINT64_MAX;
  NHLO_ASSIGN_OR_RETURN(
      std::string bytes,
      ReadTensorFile(path, limit, "the expected values of " + std::to_string(specs.size()) + " output(s) need"));
  ExpectedOutputs expected;
  expected.problems.assign(specs.size(), "");
  std::vector<Value> leaves(specs.size());
  const bool npy = bytes.starts_with(kNpyMagic);
  if (npy) {
    if (result.IsTuple())
      return Status::FromDiagnostic(Diagnostic{Severity::kError,
                                               path,
                                               0,
                                               0,
                                               "is a .npy file (one array) but the result is a tuple of " +
                                                   std::to_string(specs.size()) + " output(s); use a .npz",
                                               {}});
    Result<Value> leaf = ReadNpyAsWritten(bytes, path, specs[0]);
    if (!leaf.ok()) return leaf.status();
    leaves[0] = std::move(*leaf);
  } else {
    NHLO_ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, ReadZip(bytes, path, limit));
    ArchiveMatch match = MatchArchiveMembers(entries, specs);
    std::string listing;
    for (const ZipEntry& e : entries) listing += (listing.empty() ? "" : ", ") + NpzMemberStem(e);
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!match.chosen[i]) {
        expected.problems[i] = "no member for it in " + path + " (" +
                               (match.by_name ? "matching by name" : "matching in archive order") +
                               "; members: " + (listing.empty() ? "none" : listing) + ")";
        continue;
      }
      Result<Value> leaf = ReadNpyAsWritten(match.chosen[i]->bytes, path + "(" + match.chosen[i]->name + ")", specs[i]);
      if (leaf.ok())
        leaves[i] = std::move(*leaf);
      else
        expected.problems[i] = ProblemText(leaf.status());
    }
    for (const ZipEntry* e : match.unmatched) expected.extra.push_back(NpzMemberStem(*e));
  }
  size_t next = 0;
  expected.value = Rebuild(result, leaves, next);
  return expected;
}

CompareReport CompareWithExpected(const Value& result, const ExpectedOutputs& expected, const Tolerance& tolerance) {
  CompareReport report = CompareValues(result, expected.value, tolerance);
  // The value mirrors the result's tuple structure, so the report has one line per output in
  // NamedOutputs order.
  for (size_t i = 0; i < expected.problems.size() && i < report.outputs.size(); ++i) {
    if (expected.problems[i].empty()) continue;
    OutputReport& o = report.outputs[i];
    std::string label = o.label;
    o = OutputReport{};
    o.label = std::move(label);
    o.error = expected.problems[i];
  }
  for (const std::string& name : expected.extra) {
    OutputReport o;
    o.label = "member '" + name + "'";
    o.error = "no output takes it (the result has " + std::to_string(expected.problems.size()) + " output(s))";
    report.outputs.push_back(std::move(o));
  }
  return report;
}

}  // namespace nhlo
