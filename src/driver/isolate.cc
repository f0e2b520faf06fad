// SPDX-License-Identifier: Apache-2.0
#include "driver/isolate.h"

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <string_view>
#include <vector>

#include "driver/common.h"
#include "ir/builder.h"

namespace nhlo {
namespace {

using ValueMap = std::map<std::string, Value, std::less<>>;

bool HoldsToken(const Shape& shape) {
  if (shape.type == PrimitiveType::kToken) return true;
  for (const Shape& element : shape.tuple)
    if (HoldsToken(element)) return true;
  return false;
}

// Makes the entry's root a tuple of every instruction of the entry computation (parameters and
// tokens aside) and
// returns their names in that order: the run then yields each instruction's value.
std::vector<std::string_view> ProbeEveryInstruction(Module& module) {
  Computation* entry = module.entry;
  std::vector<Instruction*> kept;
  std::vector<std::string_view> names;
  for (Instruction* inst : entry->instructions) {
    // Parameters are the arguments, and tokens hold nothing.
    if (inst->opcode == Opcode::kParameter || HoldsToken(inst->shape)) continue;
    kept.push_back(inst);
    names.push_back(inst->name);
  }
  entry->root = MakeTuple(module, entry, kept);
  // The header's entry layout describes the old root; the probe's root is nhlo's own.
  std::erase_if(module.header_attrs, [](const auto& attr) { return attr.first == "entry_computation_layout"; });
  return names;
}

// Whether `value` can be a parameter of `shape`: the same tuple structure and dimensions (array
// element types are converted).
bool Fits(const Value& value, const Shape& shape) {
  if (shape.IsTuple() != value.IsTuple()) return false;
  if (shape.IsTuple()) {
    if (shape.tuple.size() != value.tuple.size()) return false;
    for (size_t i = 0; i < shape.tuple.size(); ++i)
      if (!Fits(value.tuple[i], shape.tuple[i])) return false;
    return true;
  }
  return shape.IsArray() && IsArrayType(value.type) &&
         std::equal(shape.dims.begin(), shape.dims.end(), value.dims.begin(), value.dims.end());
}

// Feeds every instruction of the entry computation its operands' reference values: each
// instruction the reference run has a value for (of the same dimensions; element types may
// differ, e.g. after upcast-all-to-fp32, and are converted exactly by ArgumentsFor) is replaced,
// for its users, by a new parameter holding that value. Each instruction then computes on what
// the reference computed, as if run alone. Returns the new parameters' reference names in
// parameter order (after the module's own parameters).
std::vector<std::string_view> FeedReferenceOperands(Module& module, const ValueMap& reference, bool devices) {
  Computation* entry = module.entry;
  std::vector<Instruction*> original(entry->instructions.begin(), entry->instructions.end());
  int64_t next_parameter = static_cast<int64_t>(entry->Parameters().size());
  std::map<const Instruction*, Instruction*> fed;
  std::vector<std::string_view> names;
  for (Instruction* inst : original) {
    for (size_t j = 0; j < inst->operands.size(); ++j) {
      Instruction* operand = inst->operands[j];
      if (operand->opcode == Opcode::kParameter || HoldsToken(operand->shape) || !operand->shape.dim_kinds.empty())
        continue;
      auto value = reference.find(operand->name);
      if (value == reference.end() || !Fits(devices ? value->second.tuple[0] : value->second, operand->shape)) continue;
      auto it = fed.find(operand);
      if (it == fed.end()) {
        Instruction* parameter =
            module.NewInstruction(entry, Opcode::kParameter, operand->shape, {}, std::string(operand->name) + ".fed");
        parameter->parameter_number = next_parameter++;
        names.push_back(operand->name);
        it = fed.emplace(operand, parameter).first;
      }
      inst->operands[j] = it->second;
    }
  }
  SortTopologically(entry);
  return names;
}

// `value` in `like`'s element types where a pass changed them (leaf by leaf): an instruction the
// pipeline widened (upcast-all-to-fp32) is judged by the value it would store in the module's own
// type, so a bf16 op computed in f32 counts as differing only when its bf16 result does.
void RoundToTypesOf(Value& value, const Value& like) {
  if (value.IsTuple() || like.IsTuple()) {
    for (size_t i = 0; i < value.tuple.size() && i < like.tuple.size(); ++i)
      RoundToTypesOf(value.tuple[i], like.tuple[i]);
    return;
  }
  if (value.dims == like.dims) ConvertElementsTo(value, like.type);
}

uint64_t ValueBytes(const Value& value) {
  uint64_t bytes = value.bytes.size();
  for (const Value& element : value.tuple) bytes += ValueBytes(element);
  return bytes;
}

// Each probed instruction's value by name: one device's, or a tuple of every device's. `held`:
// the bytes the caller keeps alive meanwhile, for the memory check.
Result<ValueMap> ProbeValues(const Module& module, const std::vector<std::string_view>& names,
                             const CodegenOptions& codegen, const ProgramRunner& runner,
                             std::vector<std::vector<Value>> args, uint64_t held) {
  NHLO_ASSIGN_OR_RETURN(std::string bundle, EmitBundleFile(module, codegen));
  NHLO_ASSIGN_OR_RETURN(BundleProgram program, runner.load(std::move(bundle), held));
  const bool devices = args.size() > 1;
  std::vector<std::vector<Value>> converted;
  for (std::vector<Value>& device_args : args) converted.push_back(ArgumentsFor(program, std::move(device_args)));
  NHLO_ASSIGN_OR_RETURN(Value result, runner.run(program, std::move(converted), module));
  ValueMap values;
  for (size_t i = 0; i < names.size(); ++i) {
    Value v;
    if (devices) {
      v.type = PrimitiveType::kTuple;
      for (Value& device : result.tuple) v.tuple.push_back(std::move(device.tuple[i]));
    } else {
      v = std::move(result.tuple[i]);
    }
    values.emplace(std::string(names[i]), std::move(v));
  }
  return values;
}

// The differing output of a comparison, as the report line gives it: `f32[4]: FAIL: 4 elements,
// 1 over bounds, ...`, or why the values cannot be compared.
std::string Figures(const CompareReport& report) {
  for (const OutputReport& o : report.outputs)
    if (!o.pass()) return FormatOutputReport(o);
  return {};
}

}  // namespace

int Isolate(const std::string& name, const std::string& text, const PipelineOptions& options,
            const CodegenOptions& codegen, Tolerance tolerance, const ProgramRunner& runner, std::ostream& out,
            std::ostream& err) {
  auto fail = [&err](const Status& s) {
    PrintStatus(s, err, "nhlo-run");
    return 1;
  };
  // The arguments are made for the module as written, as a plain run and --check-passes do.
  Result<ReferenceProgram> compiled = CompileReference(name, text, options, codegen, runner);
  if (!compiled.ok()) return fail(compiled.status());
  compiled->program = BundleProgram{};  // its arguments are made; the probe is another program
  Module& reference = *compiled->module;
  std::vector<std::vector<Value>>& args = compiled->args;
  const bool devices = args.size() > 1;

  // The reference's instructions in order (before the probe adds its tuple), and their values.
  std::vector<const Instruction*> rows(reference.entry->instructions.begin(), reference.entry->instructions.end());
  std::vector<std::string_view> reference_names = ProbeEveryInstruction(reference);
  // The arguments stay for the second run: the memory check counts them beside this one's copy.
  uint64_t argument_bytes = 0;
  for (const std::vector<Value>& device_args : args)
    for (const Value& v : device_args) argument_bytes += ValueBytes(v);
  auto expected = ProbeValues(reference, reference_names, codegen, runner, args, argument_bytes);
  if (!expected.ok()) return fail(expected.status());

  // The pipeline as configured (its dumps go to `err` as in a plain run), each instruction fed
  // the reference's values of its operands.
  Result<std::unique_ptr<Module>> piped = CompileText(name, text, options, err);
  if (!piped.ok()) return fail(piped.status());
  std::vector<std::string_view> fed = FeedReferenceOperands(**piped, *expected, devices);
  std::vector<std::string_view> piped_names = ProbeEveryInstruction(**piped);
  uint64_t reference_bytes = 0;
  for (const auto& [value_name, value] : *expected) reference_bytes += ValueBytes(value);
  std::vector<std::vector<Value>> fed_args = std::move(args);
  for (size_t d = 0; d < fed_args.size(); ++d)
    for (std::string_view operand : fed) {
      const Value& value = expected->find(operand)->second;
      fed_args[d].push_back(devices ? value.tuple[d] : value);
    }
  auto actual = ProbeValues(**piped, piped_names, codegen, runner, std::move(fed_args), reference_bytes);
  if (!actual.ok()) return fail(actual.status());

  tolerance.mismatches_shown = 1;
  std::vector<std::pair<const Instruction*, std::string>> differing;
  int compared = 0;
  for (const Instruction* inst : rows) {
    if (inst->opcode == Opcode::kParameter) continue;
    auto ref = expected->find(inst->name);
    auto act = actual->find(inst->name);
    if (ref == expected->end() || act == actual->end()) continue;
    ++compared;
    RoundToTypesOf(act->second, ref->second);
    CompareReport report = CompareValues(act->second, ref->second, tolerance);
    if (!report.pass()) differing.emplace_back(inst, Figures(report));
  }

  const Module& source = reference;
  out << "isolate: module '" << source.name << "': each instruction of the entry computation with the pass "
      << "pipeline, on the values --passes=none gave its operands (" << FormatTolerance(tolerance) << ")\n";
  out << "isolate: " << compared << " instruction" << (compared == 1 ? "" : "s") << " compared, " << differing.size()
      << " differ" << (differing.size() == 1 ? "s" : "") << "\n";
  for (const auto& [inst, figures] : differing) {
    std::string message = "'" + std::string(inst->name) + "' differs on the reference's operands (" + figures + ")";
    if (inst->source_offset != Instruction::kNoLocation && inst->source_id < source.sources.size())
      out << FormatDiagnostic(source.sources[inst->source_id]->At(inst->source_offset, message, Severity::kNote));
    else
      out << "note: " << message << "\n";
  }
  if (!differing.empty()) out << "isolate: first differing instruction: '" << differing.front().first->name << "'\n";
  return differing.empty() ? 0 : 1;
}

}  // namespace nhlo
