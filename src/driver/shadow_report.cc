// SPDX-License-Identifier: Apache-2.0
#include "driver/shadow_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace nhlo {
namespace {

using nlohmann::json;

const char* TypeName(const json& value) { return value.type_name(); }

// Reads the report's fields with their paths (`instructions[3].total.max_rel`) for messages.
class FieldReader {
 public:
  explicit FieldReader(std::string_view file) : file_(file) {}

  Status Fail(const std::string& path, const std::string& what) const {
    return Status::FromDiagnostic(Diagnostic{Severity::kError, std::string(file_), 0, 0, path + ": " + what, {}});
  }

  // A string field; `required` makes its absence an error.
  Status String(const json& object, const std::string& path, const char* key, bool required, std::string& out) const {
    auto it = object.find(key);
    if (it == object.end()) return required ? Fail(path + "." + key, "missing") : OkStatus();
    if (!it->is_string()) return Fail(path + "." + key, std::string("expected a string, got ") + TypeName(*it));
    out = it->get<std::string>();
    return OkStatus();
  }

  Status Integer(const json& object, const std::string& path, const char* key, int64_t& out) const {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return OkStatus();
    if (!it->is_number_integer())
      return Fail(path + "." + key, std::string("expected an integer, got ") + TypeName(*it));
    out = it->get<int64_t>();
    return OkStatus();
  }

  // A number, or null for a figure that was not finite.
  Status Number(const json& object, const std::string& path, const char* key, std::optional<double>& out) const {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return OkStatus();
    if (!it->is_number()) return Fail(path + "." + key, std::string("expected a number, got ") + TypeName(*it));
    out = it->get<double>();
    return OkStatus();
  }

  Status Figures(const json& object, const std::string& path, const char* key, bool required,
                 std::optional<ShadowFigures>& out) const {
    auto it = object.find(key);
    if (it == object.end()) return required ? Fail(path + "." + key, "missing") : OkStatus();
    if (!it->is_object()) return Fail(path + "." + key, std::string("expected an object, got ") + TypeName(*it));
    ShadowFigures figures;
    std::string here = path + "." + key;
    for (auto [name, field] : {std::pair{"max_rel", &figures.max_rel}, std::pair{"mean_rel", &figures.mean_rel},
                               std::pair{"max_ulps", &figures.max_ulps}})
      if (Status s = Number(*it, here, name, *field); !s.ok()) return s;
    out = figures;
    return OkStatus();
  }

 private:
  std::string_view file_;
};

// Byte offset from nlohmann's parse error, and its message without the "[json.exception...]"
// prefix, which names nlohmann rather than the problem.
std::string ParseErrorText(const json::parse_error& e) {
  std::string what = e.what();
  constexpr std::string_view kMarker = ": ";
  size_t at = what.find("parse error");
  if (at != std::string::npos) {
    size_t colon = what.find(kMarker, at);
    if (colon != std::string::npos) what = what.substr(colon + kMarker.size());
  }
  return what;
}

}  // namespace

Result<ShadowReport> ParseShadowReport(std::string_view text, std::string_view file) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // nlohmann counts the byte it stopped at from 1; DiagnosticAt wants the 0-based offset.
    size_t offset = e.byte > 0 ? std::min<size_t>(e.byte - 1, text.size()) : 0;
    return Status::FromDiagnostic(DiagnosticAt(
        file, text, offset, "not a valid shadow report (byte " + std::to_string(e.byte) + "): " + ParseErrorText(e)));
  }
  FieldReader read(file);
  if (!root.is_object()) return read.Fail("the report", std::string("expected an object, got ") + TypeName(root));
  ShadowReport report;
  if (Status s = read.String(root, "report", "module", false, report.module); !s.ok()) return s;
  if (Status s = read.String(root, "report", "shadow_type", false, report.shadow_type); !s.ok()) return s;
  auto list = root.find("instructions");
  if (list == root.end()) return read.Fail("instructions", "missing");
  if (!list->is_array()) return read.Fail("instructions", std::string("expected an array, got ") + TypeName(*list));
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    std::string path = "instructions[" + std::to_string(i) + "]";
    if (!item.is_object()) return read.Fail(path, std::string("expected an object, got ") + TypeName(item));
    ShadowInstruction inst;
    std::optional<ShadowFigures> total;
    for (Status s :
         {read.String(item, path, "computation", true, inst.computation),
          read.String(item, path, "name", true, inst.name), read.String(item, path, "opcode", false, inst.opcode),
          read.String(item, path, "type", false, inst.type), read.Integer(item, path, "line", inst.line),
          read.Integer(item, path, "column", inst.column), read.Integer(item, path, "executions", inst.executions),
          read.Figures(item, path, "total", true, total), read.Figures(item, path, "local", false, inst.local),
          read.Number(item, path, "amplification", inst.amplification),
          read.Integer(item, path, "wrong_elements", inst.wrong_elements)})
      if (!s.ok()) return s;
    inst.total = *total;
    report.instructions.push_back(std::move(inst));
  }
  return report;
}

std::string ShadowErrorColor(std::optional<double> max_rel) {
  // Position on the scale: 0 at 2^-24 and below, 1 at 1e-1 and above, linear in log2 between.
  constexpr double kGreenLog2 = -24.0;
  const double red_log2 = std::log2(0.1);
  double t = 1.0;
  if (max_rel && std::isfinite(*max_rel)) {
    double x = *max_rel <= 0 ? kGreenLog2 : std::log2(*max_rel);
    t = std::clamp((x - kGreenLog2) / (red_log2 - kGreenLog2), 0.0, 1.0);
  }
  // Hue 120 (green) through 60 (yellow) to 0 (red), light enough for black text: HSL(h, 80%, 62%).
  double hue = 120.0 * (1.0 - t), saturation = 0.8, lightness = 0.62;
  double chroma = (1 - std::fabs(2 * lightness - 1)) * saturation;
  double x = chroma * (1 - std::fabs(std::fmod(hue / 60.0, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hue < 60) {
    r = chroma;
    g = x;
  } else {
    r = x;
    g = chroma;
  }
  double m = lightness - chroma / 2;
  auto channel = [&](double v) { return static_cast<int>(std::lround((v + m) * 255.0)); };
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", channel(r), channel(g), channel(b));
  return text;
}

}  // namespace nhlo
