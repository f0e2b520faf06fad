// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the HLO front end: any bytes are split, parsed, verified, printed,
// re-parsed and printed again. Bad input must give diagnostics, never a crash; a module that
// parses must satisfy print(parse(print(m))) == print(m) (a violation aborts: a finding).
// Build and run: tools/fuzz-parser [SECONDS]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "parser/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  // A fill literal up to the default 1 GiB is legitimate work, but filling hundreds of MB under
  // the sanitizers takes longer than the 10 s timeout (a finding that is not a bug): capped here.
  nhlo::ParseOptions options;
  options.max_fill_literal_bytes = int64_t(1) << 24;  // 16 MiB (40 MB were printed and read back in 12 s)
  for (nhlo::InputPiece& piece : nhlo::SplitInputFile(text)) {
    auto m = nhlo::ParseModule("fuzz.hlo", std::move(piece.text), options);
    if (!m.ok()) continue;
    (void)nhlo::VerifyModule(**m);
    // Every print style reads back to a module that prints the same; the three besides the long
    // one only for modules that print under 1 MB (a 10M-element fill constant printed and read
    // eight times runs past the 10 s timeout under the sanitizers: legitimate work, no finding).
    for (nhlo::PrintStyleName style : {nhlo::PrintStyleName::kLong, nhlo::PrintStyleName::kLongShapes,
                                       nhlo::PrintStyleName::kShort, nhlo::PrintStyleName::kShortParsable}) {
      (*m)->print_style = nhlo::NamedPrintStyle(style, **m);
      std::string once = nhlo::PrintModule(**m);
      if (style != nhlo::PrintStyleName::kLong && once.size() > (1u << 20)) break;
      auto again = nhlo::ParseModule("printed.hlo", once);
      if (!again.ok()) {
        std::fprintf(stderr, "printed module does not parse:\n%s\n%s", again.status().ToString().c_str(), once.c_str());
        std::abort();
      }
      (*again)->print_style = (*m)->print_style;
      if (nhlo::PrintModule(**again) != once) {
        std::fprintf(stderr, "round trip changed the text:\n%s", once.c_str());
        std::abort();
      }
    }
  }
  return 0;
}
