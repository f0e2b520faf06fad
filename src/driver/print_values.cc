// SPDX-License-Identifier: Apache-2.0
#include "driver/print_values.h"

#include <cmath>

#include "driver/values.h"
#include "types/element.h"

namespace nhlo {

Result<PrintValues> ParsePrintValues(std::string_view text) {
  if (text == "auto") return PrintValues::kAuto;
  if (text == "all") return PrintValues::kAll;
  if (text == "summary") return PrintValues::kSummary;
  if (text == "none") return PrintValues::kNone;
  return Status::Error("--print-values: '" + std::string(text) + "' is not one of auto, all, summary, none");
}

namespace {

int64_t CountElements(const Value& v) {
  if (!v.IsTuple()) return v.ElementCount();
  int64_t n = 0;
  for (const Value& e : v.tuple) n += CountElements(e);
  return n;
}

// The figures are printed with %.9g: enough digits to tell f32 values apart, and the same text
// on every run.
std::string Figure(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", x);
  return buf;
}

}  // namespace

std::string SummarizeArray(const Value& v) {
  std::string out = ValueShapeText(v);
  const int64_t n = v.ElementCount();
  const int size = HostByteSize(v.type);
  if (!IsArrayType(v.type)) return PrintValue(v);  // a token
  if (size <= 0 || static_cast<int64_t>(v.bytes.size()) / size < n) return out + " {...}";
  if (n <= kSummaryFirstElements) {
    // Nothing to summarise: the literal is as short as the summary.
    return PrintValue(v);
  }
  const auto* data = reinterpret_cast<const uint8_t*>(v.bytes.data());
  out += " {...}  // " + std::to_string(n) + " elements: ";
  const bool is_float = IsFloat(v.type);
  if (IsComplex(v.type)) {
    out += "complex";
  } else {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    int64_t nans = 0, infs = 0, finite = 0;
    for (int64_t i = 0; i < n; ++i) {
      double x = LoadAsDouble(v.type, data + i * size);
      if (std::isnan(x)) {
        ++nans;
        continue;
      }
      if (std::isinf(x))
        ++infs;
      else
        sum += x, ++finite;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    if (nans == n)
      out += "all nan";
    else
      out += "min " + Figure(lo) + " max " + Figure(hi) + " mean " + (finite ? Figure(sum / finite) : "nan");
    if (is_float) out += "; nan " + std::to_string(nans) + ", inf " + std::to_string(infs);
  }
  out += "; first {";
  for (int64_t i = 0; i < kSummaryFirstElements; ++i) {
    if (i) out += ", ";
    AppendElement(out, v.type, data + i * size, /*in_array=*/true);
  }
  out += ", ...}";
  return out;
}

std::string FormatResult(const Value& result, PrintValues mode) {
  switch (mode) {
    case PrintValues::kNone: return {};
    case PrintValues::kAll: return PrintValue(result) + "\n";
    case PrintValues::kSummary: break;
    case PrintValues::kAuto:
      if (CountElements(result) <= kAutoPrintLimit) return PrintValue(result) + "\n";
      break;
  }
  if (!result.IsTuple()) return SummarizeArray(result) + "\n";
  // The tuple's shape, then one line per array with the name --output gives it.
  std::string out = ValueShapeText(result) + "\n";
  for (const auto& [name, array] : NamedOutputs(result)) out += name + ": " + SummarizeArray(*array) + "\n";
  return out;
}

}  // namespace nhlo
