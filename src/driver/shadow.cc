// SPDX-License-Identifier: Apache-2.0
#include "driver/shadow.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <unordered_map>
#include <vector>

#include "driver/common.h"
#include "driver/shadow_module.h"
#include "driver/values.h"
#include "types/element.h"

namespace nhlo {
namespace {

// A floating-point format's precision p (significand bits, the implicit one included) and the
// exponent of its smallest normal, for ulps and the unit roundoff 2^-p.
struct FloatFormat {
  PrimitiveType type;
  int precision;
  int min_exponent;
};
constexpr FloatFormat kFloatFormats[] = {
    {PrimitiveType::kF64, 53, -1022},        {PrimitiveType::kF32, 24, -126},      {PrimitiveType::kBF16, 8, -126},
    {PrimitiveType::kF16, 11, -14},          {PrimitiveType::kF8E5M2, 3, -14},     {PrimitiveType::kF8E4M3FN, 4, -6},
    {PrimitiveType::kF8E4M3B11FNUZ, 4, -10}, {PrimitiveType::kF8E5M2FNUZ, 3, -15}, {PrimitiveType::kF8E4M3FNUZ, 4, -7},
    {PrimitiveType::kF8E4M3, 4, -6},         {PrimitiveType::kF8E3M4, 5, -2},      {PrimitiveType::kF4E2M1FN, 2, 0},
    {PrimitiveType::kF8E8M0FNU, 1, -127},    {PrimitiveType::kF6E3M2FN, 3, -2},    {PrimitiveType::kF6E2M3FN, 4, 0},
};

FloatFormat FormatOf(PrimitiveType type) {
  if (type == PrimitiveType::kC64) type = PrimitiveType::kF32;
  if (type == PrimitiveType::kC128) type = PrimitiveType::kF64;
  for (const FloatFormat& f : kFloatFormats)
    if (f.type == type) return f;
  return kFloatFormats[0];
}

// 2^e, from its bits while it is a normal double (ldexp costs more than the rest of a probe).
double Pow2(int e) {
  if (e < -1022 || e > 1023) return std::ldexp(1.0, e);
  uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// floor(log2(a)) for a normal double a > 0; below the normals, less than any format's minimum.
int ExponentOf(double a) {
  uint64_t bits;
  std::memcpy(&bits, &a, sizeof bits);
  int biased = static_cast<int>((bits >> 52) & 0x7ff);
  return biased == 0 ? -1100 : biased - 1023;
}

// The spacing of `format` at magnitude `a` (a >= 0).
double UlpAt(double a, const FloatFormat& format) {
  return Pow2(std::max(format.min_exponent, ExponentOf(a)) - format.precision + 1);
}

// The elements of `array` as doubles into `out` (complex: real and imaginary parts interleaved),
// reusing its storage: probes see arrays of 100M elements, run after run.
void LoadDoubles(const ArrayView& array, std::vector<double>& out) {
  PrimitiveType element = array.type == PrimitiveType::kC64    ? PrimitiveType::kF32
                          : array.type == PrimitiveType::kC128 ? PrimitiveType::kF64
                                                               : array.type;
  const size_t size = static_cast<size_t>(HostByteSize(element));
  out.resize(size ? array.bytes / size : 0);
  if (element == PrimitiveType::kF64) {
    if (!out.empty()) std::memcpy(out.data(), array.data, out.size() * sizeof(double));
  } else if (element == PrimitiveType::kF32) {
    for (size_t i = 0; i < out.size(); ++i) {
      float f;
      std::memcpy(&f, array.data + i * sizeof f, sizeof f);
      out[i] = f;
    }
  } else {
    for (size_t i = 0; i < out.size(); ++i) out[i] = LoadAsDouble(element, array.data + i * size);
  }
}

void LoadIntegers(const ArrayView& array, std::vector<int64_t>& out) {
  const size_t size = static_cast<size_t>(HostByteSize(array.type));
  out.resize(size ? array.bytes / size : 0);
  const bool is_unsigned = IsUnsignedInt(array.type);
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = array.data + i * size;
    out[i] = is_unsigned ? static_cast<int64_t>(LoadAsUint(array.type, p)) : LoadAsInt(array.type, p);
  }
}

struct ErrorFigures {
  double max_rel = 0, sum_rel = 0, max_ulps = 0;
  int64_t elements = 0, nonfinite = 0;
  double mean_rel() const { return elements ? sum_rel / static_cast<double>(elements) : 0; }
};

struct ProbeFigures {
  int64_t runs = 0;
  PrimitiveType type = PrimitiveType::kInvalid;
  ErrorFigures total, local;
  double max_nrel = 0, last_nrel = 0, amplification = 0;
  int64_t wrong = 0, elements = 0;  // integers: elements that differ from the exact value
  int64_t wrapped = 0;              // ... in runs whose operands were exact: its own wrap or saturation
  bool last_exact = true;           // the last run agreed with the shadow everywhere
  double max_int_difference = 0;
};

// Adds one run's errors of `got` against `exact` to `figures`; returns the run's nrel.
double AddErrors(const std::vector<double>& got, const std::vector<double>& exact, bool complex,
                 const FloatFormat& format, ErrorFigures& figures) {
  const double min_normal = std::ldexp(1.0, format.min_exponent);
  double max_diff = 0, max_exact = 0;
  const size_t step = complex ? 2 : 1;
  for (size_t i = 0; i + step <= got.size() && i + step <= exact.size(); i += step) {
    double diff, magnitude;
    bool finite_got, finite_exact;
    if (complex) {
      finite_got = std::isfinite(got[i]) && std::isfinite(got[i + 1]);
      finite_exact = std::isfinite(exact[i]) && std::isfinite(exact[i + 1]);
      diff = std::hypot(got[i] - exact[i], got[i + 1] - exact[i + 1]);
      magnitude = std::hypot(exact[i], exact[i + 1]);
    } else {
      finite_got = std::isfinite(got[i]);
      finite_exact = std::isfinite(exact[i]);
      diff = std::fabs(got[i] - exact[i]);
      magnitude = std::fabs(exact[i]);
    }
    if (finite_got != finite_exact) {
      ++figures.nonfinite;
      continue;
    }
    if (!finite_got) continue;  // both infinite or NaN: the shadow agrees there is no number
    double rel = diff / std::max(magnitude, min_normal);
    figures.max_rel = std::max(figures.max_rel, rel);
    figures.sum_rel += rel;
    figures.max_ulps = std::max(figures.max_ulps, diff / UlpAt(magnitude, format));
    ++figures.elements;
    max_diff = std::max(max_diff, diff);
    max_exact = std::max(max_exact, magnitude);
  }
  return max_diff / std::max(max_exact, min_normal);
}

// One shadowed run: the module (the probes point into it), the plan and each probe's figures.
struct ShadowRun {
  std::unique_ptr<Module> module;
  ShadowPlan plan;
  std::vector<ProbeFigures> figures;
};

class Observer {
 public:
  explicit Observer(ShadowRun& run) : run_(run) {
    run.figures.resize(run.plan.probes.size());
    for (size_t i = 0; i < run.plan.probes.size(); ++i) index_.emplace(run.plan.probes[i].name, i);
  }

  void Observe(std::string_view name, std::span<const ArrayView> values) {
    auto it = index_.find(std::string(name));
    if (it == index_.end() || values.size() < 2) return;
    const ShadowProbe& probe = run_.plan.probes[it->second];
    ProbeFigures& f = run_.figures[it->second];
    ++f.runs;
    f.type = values[0].type;
    if (IsInteger(f.type)) {
      std::vector<int64_t>& got = got_ints_;
      std::vector<int64_t>& exact = exact_ints_;
      LoadIntegers(values[0], got);
      LoadIntegers(values[1], exact);
      int64_t wrong = 0;
      for (size_t i = 0; i < got.size() && i < exact.size(); ++i) {
        if (got[i] == exact[i]) continue;
        ++wrong;
        f.max_int_difference =
            std::max(f.max_int_difference, std::fabs(static_cast<double>(got[i]) - static_cast<double>(exact[i])));
      }
      bool inputs_exact = true;
      for (size_t o : probe.operand_probes) inputs_exact = inputs_exact && run_.figures[o].last_exact;
      f.wrong += wrong;
      if (inputs_exact) f.wrapped += wrong;  // else the difference came in with an operand
      f.elements += static_cast<int64_t>(got.size());
      f.last_nrel = wrong ? 1 : 0;
      f.last_exact = wrong == 0;
      return;
    }
    const bool complex = IsComplex(f.type);
    const FloatFormat format = FormatOf(f.type);
    LoadDoubles(values[1], exact_);
    LoadDoubles(values[0], got_);
    const int64_t nonfinite_before = f.total.nonfinite;
    double nrel = AddErrors(got_, exact_, complex, format, f.total);
    f.last_exact = nrel == 0 && f.total.nonfinite == nonfinite_before;
    if (probe.has_local && values.size() > 2) {
      LoadDoubles(values[2], got_);
      AddErrors(got_, exact_, complex, format, f.local);
    }
    double inflow = std::ldexp(1.0, -format.precision);
    for (size_t o : probe.operand_probes) inflow = std::max(inflow, run_.figures[o].last_nrel);
    f.amplification = std::max(f.amplification, nrel / inflow);
    f.max_nrel = std::max(f.max_nrel, nrel);
    f.last_nrel = nrel;
  }

 private:
  ShadowRun& run_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<double> got_, exact_;  // reused by every probe
  std::vector<int64_t> got_ints_, exact_ints_;
};

// Compiles, shadows and runs `module` on `args`.
Result<ShadowRun> RunShadowed(std::unique_ptr<Module> module, PrimitiveType type, const CodegenOptions& codegen,
                              const ProgramRunner& runner, std::vector<std::vector<Value>> args) {
  ShadowRun run;
  NHLO_ASSIGN_OR_RETURN(run.plan, BuildShadowModule(*module, type));
  run.module = std::move(module);
  NHLO_ASSIGN_OR_RETURN(std::string bundle, EmitBundleFile(*run.module, codegen));
  NHLO_ASSIGN_OR_RETURN(BundleProgram program, runner.load(std::move(bundle), 0));
  std::vector<std::vector<Value>> converted;
  for (std::vector<Value>& device_args : args) converted.push_back(ArgumentsFor(program, std::move(device_args)));
  Observer observer(run);
  *runner.probe = [&observer](std::string_view name, std::span<const ArrayView> values) {
    observer.Observe(name, values);
  };
  Result<Value> result = runner.run(program, std::move(converted), *run.module);
  *runner.probe = nullptr;
  if (!result.ok()) return result.status();
  return run;
}

struct Row {
  size_t probe;
  std::string location;  // file:line, or "-" for an instruction a pass made
};

std::string LocationOf(const Module& module, const Instruction& inst) {
  if (inst.source_offset == Instruction::kNoLocation || inst.source_id >= module.sources.size()) return "-";
  Diagnostic d = module.sources[inst.source_id]->At(inst.source_offset, "", Severity::kNote);
  return d.file + ":" + std::to_string(d.line);
}

double SortKey(const ProbeFigures& f, ShadowFlags::Sort sort) {
  switch (sort) {
    case ShadowFlags::Sort::kTotal: return f.total.max_rel;
    case ShadowFlags::Sort::kLocal: return f.local.max_rel;
    case ShadowFlags::Sort::kAmplification: return f.amplification;
  }
  return 0;
}

const char* SortName(ShadowFlags::Sort sort) {
  switch (sort) {
    case ShadowFlags::Sort::kTotal: return "total";
    case ShadowFlags::Sort::kLocal: return "local";
    case ShadowFlags::Sort::kAmplification: return "amplification";
  }
  return "";
}

// The floating-point instructions that compute, sorted by the flag's figure (largest first; ties
// in program order).
std::vector<Row> SortedRows(const ShadowRun& run, ShadowFlags::Sort sort) {
  std::vector<Row> rows;
  for (size_t i = 0; i < run.plan.probes.size(); ++i) {
    const ProbeFigures& f = run.figures[i];
    if (run.plan.probes[i].moves_data || f.runs == 0 || IsInteger(f.type)) continue;
    rows.push_back({i, LocationOf(*run.module, *run.plan.probes[i].inst)});
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    return SortKey(run.figures[a.probe], sort) > SortKey(run.figures[b.probe], sort);
  });
  return rows;
}

std::string Sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}
std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 1e6 ? "%.2e" : "%.3g", v);
  return buf;
}
std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

void PrintTable(const ShadowRun& run, const ShadowFlags& flags, std::ostream& out) {
  std::vector<Row> rows = SortedRows(run, flags.sort);
  size_t shown = flags.top > 0 ? std::min(rows.size(), static_cast<size_t>(flags.top)) : rows.size();
  out << "shadow: module '" << run.module->name << "' against " << PrimitiveTypeName(run.plan.float_type) << ": "
      << rows.size() << " floating-point instruction" << (rows.size() == 1 ? "" : "s") << ", sorted by "
      << SortName(flags.sort) << (shown < rows.size() ? ", first " + std::to_string(shown) : std::string()) << "\n";
  size_t where = 8, what = 11;
  for (size_t i = 0; i < shown; ++i) {
    where = std::max(where, rows[i].location.size());
    what = std::max(what, run.plan.probes[rows[i].probe].inst->name.size());
  }
  out << Pad("location", where) << "  " << Pad("instruction", what)
      << "  op                    type  runs   total:max-rel mean-rel  max-ulps  local:max-rel max-ulps  "
         "amplification\n";
  for (size_t i = 0; i < shown; ++i) {
    const ShadowProbe& p = run.plan.probes[rows[i].probe];
    const ProbeFigures& f = run.figures[rows[i].probe];
    out << Pad(rows[i].location, where) << "  " << Pad(std::string(p.inst->name), what) << "  " << Pad(p.op, 22)
        << Pad(std::string(PrimitiveTypeName(f.type)), 6) << Pad(std::to_string(f.runs), 7)
        << Pad(Sci(f.total.max_rel), 14) << Pad(Sci(f.total.mean_rel()), 10) << Pad(Short(f.total.max_ulps), 10)
        << Pad(p.has_local ? Sci(f.local.max_rel) : "-", 14) << Pad(p.has_local ? Short(f.local.max_ulps) : "-", 10)
        << Short(f.amplification);
    if (f.total.nonfinite) out << "  (" << f.total.nonfinite << " non-finite)";
    out << "\n";
  }
  for (size_t i = 0; i < run.plan.probes.size(); ++i) {
    const ProbeFigures& f = run.figures[i];
    const ShadowProbe& p = run.plan.probes[i];
    if (!IsInteger(f.type) || f.wrapped == 0 || p.moves_data) continue;
    out << LocationOf(*run.module, *p.inst) << ": note: '" << p.inst->name << "' (" << PrimitiveTypeName(f.type)
        << ") wraps or saturates: " << f.wrapped << " of " << f.elements << " elements differ from the exact value "
        << "(largest difference " << Short(f.max_int_difference) << ")\n";
  }
}

nlohmann::json Figures(const ErrorFigures& e) {
  return {{"max_rel", e.max_rel}, {"mean_rel", e.mean_rel()}, {"max_ulps", e.max_ulps}, {"nonfinite", e.nonfinite}};
}

nlohmann::json InstructionsJson(const ShadowRun& run) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < run.plan.probes.size(); ++i) {
    const ShadowProbe& p = run.plan.probes[i];
    const ProbeFigures& f = run.figures[i];
    if (f.runs == 0) continue;
    nlohmann::json row = {{"computation", p.computation},
                          {"name", std::string(p.inst->name)},
                          {"opcode", p.op},
                          {"type", std::string(PrimitiveTypeName(f.type))},
                          {"moves_data", p.moves_data},
                          {"executions", f.runs}};
    if (p.inst->source_offset != Instruction::kNoLocation && p.inst->source_id < run.module->sources.size()) {
      Diagnostic d = run.module->sources[p.inst->source_id]->At(p.inst->source_offset, "", Severity::kNote);
      row["file"] = d.file;
      row["line"] = d.line;
      row["column"] = d.col;
    }
    if (IsInteger(f.type)) {
      row["wrong_elements"] = f.wrong;
      row["wrapped_elements"] = f.wrapped;
      row["elements"] = f.elements;
    } else {
      row["total"] = Figures(f.total);
      if (p.has_local) row["local"] = Figures(f.local);
      row["amplification"] = f.amplification;
      row["wrong_elements"] = 0;
    }
    list.push_back(std::move(row));
  }
  return list;
}

// --check-passes: each instruction of the pipeline's module beside the same instruction without
// passes (found by computation and name).
void PrintBeforeAfter(const ShadowRun& before, const ShadowRun& after, const ShadowFlags& flags, std::ostream& out) {
  std::vector<Row> rows = SortedRows(before, flags.sort);
  size_t shown = flags.top > 0 ? std::min(rows.size(), static_cast<size_t>(flags.top)) : rows.size();
  std::unordered_map<std::string, size_t> after_by_name;
  for (size_t i = 0; i < after.plan.probes.size(); ++i)
    after_by_name.emplace(after.plan.probes[i].computation + "/" + std::string(after.plan.probes[i].inst->name), i);
  out << "shadow: module '" << before.module->name << "' against " << PrimitiveTypeName(before.plan.float_type)
      << ", without and with the pass pipeline, sorted by " << SortName(flags.sort) << " without it\n";
  size_t where = 8, what = 11;
  for (size_t i = 0; i < shown; ++i) {
    where = std::max(where, rows[i].location.size());
    what = std::max(what, before.plan.probes[rows[i].probe].inst->name.size());
  }
  out << Pad("location", where) << "  " << Pad("instruction", what)
      << "  without: type total:max-rel local:max-rel   with: type total:max-rel local:max-rel\n";
  int less = 0, more = 0, less_local = 0, more_local = 0;
  for (const Row& row : rows) {
    const ShadowProbe& p = before.plan.probes[row.probe];
    auto it = after_by_name.find(p.computation + "/" + std::string(p.inst->name));
    if (it == after_by_name.end() || after.figures[it->second].runs == 0) continue;
    double b = before.figures[row.probe].total.max_rel, a = after.figures[it->second].total.max_rel;
    less += a < b;
    more += a > b;
    if (p.has_local && after.plan.probes[it->second].has_local) {
      double lb = before.figures[row.probe].local.max_rel, la = after.figures[it->second].local.max_rel;
      less_local += la < lb;
      more_local += la > lb;
    }
  }
  for (size_t i = 0; i < shown; ++i) {
    const ShadowProbe& p = before.plan.probes[rows[i].probe];
    const ProbeFigures& b = before.figures[rows[i].probe];
    out << Pad(rows[i].location, where) << "  " << Pad(std::string(p.inst->name), what) << "  "
        << Pad(std::string(PrimitiveTypeName(b.type)), 6) << Pad(Sci(b.total.max_rel), 14)
        << Pad(p.has_local ? Sci(b.local.max_rel) : "-", 16);
    auto it = after_by_name.find(p.computation + "/" + std::string(p.inst->name));
    if (it == after_by_name.end() || after.figures[it->second].runs == 0) {
      out << "(not in the pipeline's module)\n";
      continue;
    }
    const ProbeFigures& a = after.figures[it->second];
    const ShadowProbe& ap = after.plan.probes[it->second];
    out << Pad(std::string(PrimitiveTypeName(a.type)), 6) << Pad(Sci(a.total.max_rel), 14)
        << (ap.has_local ? Sci(a.local.max_rel) : "-") << "\n";
  }
  out << "shadow: with the pipeline " << less << " instruction" << (less == 1 ? " has" : "s have")
      << " less total error, " << more << " more; " << less_local << " less local error, " << more_local << " more\n";
}

}  // namespace

Result<PrimitiveType> ParseShadowType(const std::string& text) {
  if (text == "f64") return PrimitiveType::kF64;
  if (text == "f32") return PrimitiveType::kF32;
  return Status::Error("--shadow takes f64 or f32, not '" + text + "'");
}

Result<ShadowFlags::Sort> ParseShadowSort(const std::string& text) {
  if (text == "total") return ShadowFlags::Sort::kTotal;
  if (text == "local") return ShadowFlags::Sort::kLocal;
  if (text == "amplification") return ShadowFlags::Sort::kAmplification;
  return Status::Error("--shadow-sort takes total, local or amplification, not '" + text + "'");
}

int RunShadow(const std::string& name, const std::string& text, const PipelineOptions& options,
              const CodegenOptions& codegen, const ShadowFlags& flags, const ProgramRunner& runner, std::ostream& out,
              std::ostream& err) {
  auto fail = [&err](const Status& s) {
    PrintStatus(s, err, "nhlo-run");
    return 1;
  };
  // The arguments are made for the module as written, as --check-passes makes them, so runs with
  // different pipelines see the same inputs (a pass that widens the entry's parameters would
  // otherwise draw other random values). A module that only compiles with its pipeline (a custom
  // call that dce removes) gets the arguments a plain run makes.
  Result<ReferenceProgram> reference = CompileReference(name, text, options, codegen, runner);
  if (!reference.ok() && flags.with_and_without_passes) return fail(reference.status());
  std::vector<std::vector<Value>> args;
  std::optional<ShadowRun> before;
  if (reference.ok()) {
    reference->program = BundleProgram{};
    args = std::move(reference->args);
  }
  if (flags.with_and_without_passes) {
    Result<ShadowRun> ran = RunShadowed(std::move(reference->module), flags.type, codegen, runner, args);
    if (!ran.ok()) return fail(ran.status());
    before = std::move(*ran);
  }
  Result<std::unique_ptr<Module>> piped = CompileText(name, text, options, err);
  if (!piped.ok()) return fail(piped.status());
  if (!reference.ok()) {
    Result<std::string> bundle = EmitBundleFile(**piped, codegen);
    if (!bundle.ok()) return fail(bundle.status());
    Result<BundleProgram> program = runner.load(std::move(*bundle), 0);
    if (!program.ok()) return fail(program.status());
    Result<std::vector<std::vector<Value>>> made = runner.make_arguments(*program);
    if (!made.ok()) return fail(made.status());
    args = std::move(*made);
  }
  Result<ShadowRun> after = RunShadowed(std::move(*piped), flags.type, codegen, runner, std::move(args));
  if (!after.ok()) return fail(after.status());

  if (flags.with_and_without_passes)
    PrintBeforeAfter(*before, *after, flags, out);
  else
    PrintTable(*after, flags, out);
  if (!flags.report_file.empty()) {
    nlohmann::json report = {{"module", after->module->name},
                             {"shadow_type", std::string(PrimitiveTypeName(flags.type))},
                             {"instructions", InstructionsJson(*after)}};
    if (flags.with_and_without_passes) report["instructions_without_passes"] = InstructionsJson(*before);
    if (Status written = WriteFileAtomically(flags.report_file, report.dump(1) + "\n"); !written.ok())
      return fail(written);
  }
  return 0;
}

}  // namespace nhlo
