// SPDX-License-Identifier: Apache-2.0
#include "driver/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "types/element.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// Row-major position `linear` as an index per dimension.
std::vector<int64_t> Unflatten(const std::vector<int64_t>& dims, int64_t linear) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] > 0 ? linear % dims[d] : 0;
    linear = dims[d] > 0 ? linear / dims[d] : 0;
  }
  return index;
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) out += (d ? "," : "") + std::to_string(index[d]);
  return out + "]";
}

// The code of one float element, masked to the type's width.
uint64_t Code(PrimitiveType t, const uint8_t* p) {
  int width = BitWidth(t);
  uint64_t bits = LoadBits(t, p);
  return width >= 64 ? bits : bits & ((uint64_t(1) << width) - 1);
}

// `v` rounded to float type `t`, as its code (how an actual value of another float type is
// placed on the expected type's grid).
uint64_t CodeOf(PrimitiveType t, double v) {
  if (t == PrimitiveType::kF64) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return bits;
  }
  return EncodeFromF64(t, v);
}

// Ulps between two codes of float type `t`: the distance along the type's ordered encodings
// (sign-magnitude; +0 and -0 are the same point). E8M0 has no sign bit.
uint64_t UlpDistance(PrimitiveType t, uint64_t a, uint64_t e) {
  if (t == PrimitiveType::kF8E8M0FNU) return a > e ? a - e : e - a;
  int width = BitWidth(t);
  uint64_t sign_bit = uint64_t(1) << (width - 1);
  uint64_t mag_a = a & (sign_bit - 1), mag_e = e & (sign_bit - 1);
  if (((a ^ e) & sign_bit) == 0) return mag_a > mag_e ? mag_a - mag_e : mag_e - mag_a;
  return mag_a + mag_e;  // opposite signs: through zero (at most 2^64 - 2 for f64)
}

// The float part type of a complex type.
PrimitiveType PartType(PrimitiveType t) {
  return t == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

enum class Special { kFinite, kNaN, kInf };

struct Element {
  double re = 0, im = 0;
  Special special = Special::kFinite;
};

Element LoadElement(PrimitiveType t, const uint8_t* p) {
  Element e;
  if (IsComplex(t)) {
    PrimitiveType part = PartType(t);
    e.re = LoadAsDouble(part, p);
    e.im = LoadAsDouble(part, p + HostByteSize(part));
  } else {
    e.re = LoadAsDouble(t, p);
  }
  if (std::isnan(e.re) || std::isnan(e.im))
    e.special = Special::kNaN;
  else if (std::isinf(e.re) || std::isinf(e.im))
    e.special = Special::kInf;
  return e;
}

std::string ElementText(PrimitiveType t, const uint8_t* p) {
  std::string out;
  AppendElement(out, t, p, /*in_array=*/false);
  return out;
}

// Whether the leaves can be compared element by element; otherwise the reason.
std::string StructureError(const Value& a, const Value& e, const Tolerance& tol) {
  bool same_type = a.type == e.type;
  bool float_change = tol.allow_float_type_change && IsFloat(a.type) && IsFloat(e.type);
  if ((!same_type && !float_change) || a.dims != e.dims) {
    const char* what = a.dims != e.dims ? "shape mismatch" : "element type mismatch";
    return std::string(what) + ": actual " + ValueShapeText(a) + ", expected " + ValueShapeText(e);
  }
  int64_t need_a = a.ElementCount() * HostByteSize(a.type), need_e = e.ElementCount() * HostByteSize(e.type);
  if (static_cast<int64_t>(a.bytes.size()) != need_a || static_cast<int64_t>(e.bytes.size()) != need_e)
    return "internal error: a value holds the wrong number of bytes for its shape";
  return {};
}

void CompareArrays(const Value& a, const Value& e, const Tolerance& tol, OutputReport& r) {
  r.error = StructureError(a, e, tol);
  if (!r.error.empty()) return;
  // A token (or any type without data) has nothing to compare: equal types are equal values.
  if (!IsArrayType(e.type) || HostByteSize(e.type) <= 0) return;
  r.elements = e.ElementCount();
  // The bytes must hold every element; anything else is a malformed value, not a difference.
  if (static_cast<int64_t>(a.bytes.size()) < r.elements * HostByteSize(a.type) ||
      static_cast<int64_t>(e.bytes.size()) < r.elements * HostByteSize(e.type)) {
    r.error = "the values hold fewer bytes than their shapes need";
    return;
  }
  bool integral = !IsFloat(e.type) && !IsComplex(e.type);
  bool exact_integers = integral && !tol.integers_use_atol;
  if (IsFloat(e.type) || IsComplex(e.type)) r.max_ulps = 0;
  int size_a = HostByteSize(a.type), size_e = HostByteSize(e.type);
  const uint8_t* base_a = reinterpret_cast<const uint8_t*>(a.bytes.data());
  const uint8_t* base_e = reinterpret_cast<const uint8_t*>(e.bytes.data());
  for (int64_t i = 0; i < r.elements; ++i) {
    const uint8_t* pa = base_a + i * size_a;
    const uint8_t* pe = base_e + i * size_e;
    bool ok;
    if (exact_integers) {
      // Compared as integers: doubles would merge neighbours beyond 2^53.
      bool equal = IsSignedInt(e.type) ? LoadAsInt(a.type, pa) == LoadAsInt(e.type, pe)
                                       : LoadAsUint(a.type, pa) == LoadAsUint(e.type, pe);
      double diff = std::fabs(LoadAsDouble(a.type, pa) - LoadAsDouble(e.type, pe));
      double mag = std::fabs(LoadAsDouble(e.type, pe));
      r.max_abs = std::max(r.max_abs, diff);
      if (diff > 0) r.max_rel = std::max(r.max_rel, mag > 0 ? diff / mag : INFINITY);
      ok = equal;
    } else if (tol.bitwise && a.type == e.type) {
      // Identical encodings, element by element (complex: both parts, as one code each).
      int size = HostByteSize(e.type);
      ok = std::memcmp(pa, pe, static_cast<size_t>(size)) == 0;
      double diff = 0, mag = 0;
      Element va = LoadElement(a.type, pa), ve = LoadElement(e.type, pe);
      if (va.special == Special::kFinite && ve.special == Special::kFinite) {
        diff = std::hypot(va.re - ve.re, va.im - ve.im);
        mag = std::hypot(ve.re, ve.im);
        r.max_abs = std::max(r.max_abs, diff);
        if (diff > 0) r.max_rel = std::max(r.max_rel, mag > 0 ? diff / mag : INFINITY);
      }
      if (IsFloat(e.type) && r.max_ulps)
        r.max_ulps = std::max(*r.max_ulps, UlpDistance(e.type, Code(a.type, pa), Code(e.type, pe)));
    } else {
      Element va = LoadElement(a.type, pa), ve = LoadElement(e.type, pe);
      if (va.special != Special::kFinite || ve.special != Special::kFinite) {
        // NaN and infinity positions are matched, not measured.
        if (va.special == Special::kNaN || ve.special == Special::kNaN)
          ok = tol.nan_equal && va.special == Special::kNaN && ve.special == Special::kNaN;
        else
          ok = va.re == ve.re && va.im == ve.im;
      } else {
        double diff = std::hypot(va.re - ve.re, va.im - ve.im);
        double mag = std::hypot(ve.re, ve.im);
        double rel = diff == 0 ? 0 : (mag > 0 ? diff / mag : INFINITY);
        r.max_abs = std::max(r.max_abs, diff);
        r.max_rel = std::max(r.max_rel, rel);
        std::optional<uint64_t> ulps;
        if (IsFloat(e.type)) {
          ulps = UlpDistance(e.type, a.type == e.type ? Code(a.type, pa) : CodeOf(e.type, va.re), Code(e.type, pe));
        } else if (IsComplex(e.type)) {
          PrimitiveType part = PartType(e.type);
          int half = HostByteSize(part);
          ulps = std::max(UlpDistance(part, Code(part, pa), Code(part, pe)),
                          UlpDistance(part, Code(part, pa + half), Code(part, pe + half)));
        }
        if (ulps) r.max_ulps = std::max(*r.max_ulps, *ulps);
        bool within_allclose =
            tol.allclose && (tol.xla_rule ? diff <= tol.atol || rel <= tol.rtol : diff <= tol.atol + tol.rtol * mag);
        bool within_ulp = tol.ulp && ulps && *ulps <= *tol.ulp;
        if (integral) within_ulp = false;  // --ulp means nothing for integers
        ok = diff == 0 || within_allclose || within_ulp;
      }
    }
    if (ok) continue;
    if (r.over++ < tol.mismatches_shown)
      r.mismatches.push_back({Unflatten(e.dims, i), ElementText(a.type, pa), ElementText(e.type, pe)});
  }
}

// Whether `value` (the expected result) has an output called `name`: out0... for a top-level
// tuple's elements (or out0 for a single array), out1_0... below them. A tuple element counts:
// its bound applies to its leaves.
bool HasOutput(const Value& value, const std::string& name, const std::string& prefix, bool top) {
  if (!value.IsTuple()) return name == (top ? "out0" : prefix);
  for (size_t i = 0; i < value.tuple.size(); ++i) {
    std::string child = top ? prefix + std::to_string(i) : prefix + "_" + std::to_string(i);
    if (name == child || HasOutput(value.tuple[i], name, child, false)) return true;
  }
  return false;
}

// `label` is the report's (`output 2.1`), `name` the output's (`out1_0`), which picks its bounds:
// its own, else those of the tuple holding it (`inherited`).
void CompareInto(const Value& a, const Value& e, const Tolerance& all, const Tolerance& inherited,
                 const std::string& label, const std::string& name, CompareReport& report) {
  const Tolerance* own = all.Find(name);
  const Tolerance& tol = own ? *own : inherited;
  if (e.IsTuple()) {
    if (!a.IsTuple() || a.tuple.size() != e.tuple.size()) {
      OutputReport r;
      r.label = label;
      r.shape = ValueShapeText(e);
      r.error = "tuple mismatch: actual " + ValueShapeText(a) + ", expected " + ValueShapeText(e);
      report.outputs.push_back(std::move(r));
      return;
    }
    for (size_t i = 0; i < e.tuple.size(); ++i)
      CompareInto(a.tuple[i], e.tuple[i], all, tol, label + "." + std::to_string(i + 1), name + "_" + std::to_string(i),
                  report);
    return;
  }
  OutputReport r;
  r.label = label;
  r.shape = ValueShapeText(e);
  if (a.IsTuple())
    r.error = "tuple mismatch: actual " + ValueShapeText(a) + ", expected " + ValueShapeText(e);
  else
    CompareArrays(a, e, tol, r);
  report.outputs.push_back(std::move(r));
}

}  // namespace

Tolerance DefaultTolerance() {
  Tolerance t;
  t.allclose = true;
  t.rtol = 1e-5;
  t.atol = 1e-6;
  return t;
}

std::string FormatTolerance(const Tolerance& tol) {
  if (tol.bitwise) return "bitwise, XLA's LiteralTestUtil::Equal";
  std::string out;
  if (tol.allclose && tol.xla_rule)
    out = "XLA's rule: atol=" + Number(tol.atol) + " or rtol=" + Number(tol.rtol);
  else if (tol.allclose)
    out = "rtol=" + Number(tol.rtol) + ", atol=" + Number(tol.atol);
  if (tol.ulp) out += (out.empty() ? "" : ", ") + std::string("ulp=") + std::to_string(*tol.ulp);
  if (out.empty()) out = "exact";
  out += tol.integers_use_atol ? "; integers within atol" : "; integers exact";
  if (!tol.nan_equal) out += "; NaN never equal";
  for (const OutputTolerance& o : tol.per_output) {
    std::string own = FormatTolerance(o.tolerance);
    for (size_t at = own.find("; "); at != std::string::npos; at = own.find("; ", at)) own.replace(at, 2, ", ");
    out += "; for " + o.name + ": " + own;
  }
  return out;
}

bool CompareReport::pass() const { return failed() == 0 && unknown_outputs.empty(); }

int CompareReport::failed() const {
  int n = 0;
  for (const OutputReport& o : outputs) n += !o.pass();
  return n;
}

const Tolerance* Tolerance::Find(std::string_view name) const {
  for (const OutputTolerance& o : per_output)
    if (o.name == name) return &o.tolerance;
  return nullptr;
}

CompareReport CompareValues(const Value& actual, const Value& expected, const Tolerance& given) {
  CompareReport report;
  // Per-output bounds replace the bounds only: how values compare (a widened float type, NaN,
  // the mismatches listed) is the whole comparison's.
  Tolerance tolerance = given;
  for (OutputTolerance& o : tolerance.per_output) {
    o.tolerance.allow_float_type_change = tolerance.allow_float_type_change;
    o.tolerance.nan_equal = tolerance.nan_equal;
    o.tolerance.mismatches_shown = tolerance.mismatches_shown;
  }
  if (expected.IsTuple() && actual.IsTuple() && actual.tuple.size() == expected.tuple.size()) {
    // The entry's outputs: `output 1`, `output 2`, ...
    for (size_t i = 0; i < expected.tuple.size(); ++i)
      CompareInto(actual.tuple[i], expected.tuple[i], tolerance, tolerance, "output " + std::to_string(i + 1),
                  "out" + std::to_string(i), report);
  } else {
    CompareInto(actual, expected, tolerance, tolerance, "output 1", "out0", report);
  }
  // A bound for an output the result lacks is a mistake the user should hear of, not a no-op.
  for (const OutputTolerance& o : tolerance.per_output)
    if (!HasOutput(expected, o.name, "out", /*top=*/true)) report.unknown_outputs.push_back(o.name);
  return report;
}

std::string FormatOutputReport(const OutputReport& o) {
  if (!o.error.empty()) return "FAIL: " + o.error;
  std::string out = o.shape + ": " + (o.pass() ? "PASS" : "FAIL") + ": " + std::to_string(o.elements) +
                    (o.elements == 1 ? " element, " : " elements, ") + std::to_string(o.over) +
                    " over bounds, max abs error " + Number(o.max_abs) + ", max rel error " + Number(o.max_rel);
  if (o.max_ulps) out += ", max ulps " + std::to_string(*o.max_ulps);
  for (size_t m = 0; m < o.mismatches.size(); ++m) {
    const OutputReport::Mismatch& at = o.mismatches[m];
    out += std::string(m == 0 ? "; first mismatch at " : "\n    mismatch at ") + IndexText(at.index) + ": actual " +
           at.actual + ", expected " + at.expected;
  }
  if (o.over > static_cast<int64_t>(o.mismatches.size()) && o.mismatches.size() > 1)
    out += "\n    (" + std::to_string(o.over - static_cast<int64_t>(o.mismatches.size())) + " more)";
  return out;
}

std::string FormatReport(const CompareReport& report, const Tolerance& tolerance, ReportLines lines) {
  std::string out;
  for (const OutputReport& o : report.outputs) {
    if (lines == ReportLines::kFailures && o.pass()) continue;
    out += o.label + ": " + FormatOutputReport(o) + "\n";
  }
  for (const std::string& name : report.unknown_outputs)
    out += name + ": FAIL: a bound names this output, but the result has no output '" + name + "'\n";
  int failed = report.failed();
  bool one = report.outputs.size() == 1;
  if (failed == 0)
    out += std::string(report.pass() ? "PASS: " : "FAIL: ") + std::to_string(report.outputs.size()) +
           (one ? " output matches" : " outputs match");
  else
    out += "FAIL: " + std::to_string(failed) + " of " + std::to_string(report.outputs.size()) +
           (one ? " output differs" : " outputs differ");
  if (size_t unknown = report.unknown_outputs.size())
    out += std::string(failed == 0 ? " but " : ", and ") + std::to_string(unknown) +
           (unknown == 1 ? " bound names no output" : " bounds name no output");
  return out + " (" + FormatTolerance(tolerance) + ")\n";
}

}  // namespace nhlo
