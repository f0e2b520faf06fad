// SPDX-License-Identifier: Apache-2.0
// HLO text to the program the interpreter runs, as nhlo-compile and nhlo-run make it: parsed,
// verified, emitted as a bundle file and read back. Every step is REQUIREd to succeed.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/custom_call_expansions.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "ir/verifier.h"
#include "parser/parser.h"

namespace nhlo::testing {

/// `stem` names the module in messages (stem.hlo, stem.bin).
inline BundleProgram LoadProgram(const std::string& text, const std::string& stem,
                                 const CodegenOptions& options = CodegenOptions{}) {
  auto m = ParseModule(stem + ".hlo", text);
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  auto bytes = EmitBundleFile(**m, options);
  REQUIRE(bytes.ok());
  auto program = ReadBundleFile(std::move(*bytes), stem + ".bin");
  REQUIRE(program.ok());
  return std::move(*program);
}

/// As LoadProgram, with the custom calls nhlo runs as HLO expanded first (as nhlo-compile does).
inline BundleProgram LoadExpandedProgram(const std::string& text, const std::string& stem) {
  auto m = ParseModule(stem + ".hlo", text);
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  Status bound = BindCustomCallExpansions(**m, {});
  REQUIRE_MESSAGE(bound.ok(), bound.ToString());
  REQUIRE(VerifyModule(**m).ok());
  auto bytes = EmitBundleFile(**m, CodegenOptions{});
  REQUIRE(bytes.ok());
  auto program = ReadBundleFile(std::move(*bytes), stem + ".bin");
  REQUIRE(program.ok());
  return std::move(*program);
}

/// A verified module (custom calls expanded) emitted as a bundle, read back and run on arguments
/// RandomValue draws from `seed`; emitting and reading are REQUIREd, the run's status returned.
inline Result<Value> RunOnRandomArgs(Module& m, uint64_t seed) {
  REQUIRE(VerifyModule(m).ok());
  auto bytes = EmitBundleFile(m, CodegenOptions{});
  REQUIRE(bytes.ok());
  auto program = ReadBundleFile(std::move(*bytes), "fuzz.bin");
  REQUIRE(program.ok());
  std::vector<Value> values;
  for (const Instruction* p : m.entry->Parameters()) values.push_back(RandomValue(p->shape, seed));
  return Execute(*program, std::move(values));
}

}  // namespace nhlo::testing
