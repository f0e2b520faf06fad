// SPDX-License-Identifier: Apache-2.0
// nhlo-objdump: a bundle file as text.
#include <iostream>

#include "codegen/bundle_reader.h"
#include "codegen/objdump.h"
#include "driver/common.h"
#include "driver/driver.h"

namespace nhlo {

int ObjdumpMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app("Show the contents of an nhlo bundle file.", "nhlo-objdump");
  std::string input;
  bool hex = false, arena = false;
  app.add_option("input", input, "bundle file, or - for standard input");
  app.add_flag("-x,--hex", hex,
               "annotated hex dump: every byte of the file, one line per field with its offset and value");
  app.add_flag("--arena", arena,
               "per computation its frame size against the live-bytes lower bound, and the entry's arena");
  if (int code = ParseCommandLine(app, args, out, err); code >= 0) return code;
  if (input.empty()) {
    err << "nhlo-objdump: error: no input file (use - for standard input)\n";
    return kExitUsage;
  }
  std::string name = input == "-" ? "<stdin>" : input;
  Result<std::string> bytes = ReadInput(input, in);
  if (!bytes.ok()) {
    PrintStatus(bytes.status(), err, "nhlo-objdump");
    return kExitInputRejected;
  }
  Result<BundleProgram> program = ReadBundleFile(std::move(*bytes), name);
  if (!program.ok()) {
    PrintStatus(program.status(), err, "nhlo-objdump");
    return kExitInputRejected;
  }
  if (hex) {
    size_t dump_errors = HexDumpBundleProgram(*program, name, out);
    if (dump_errors != 0)
      err << "nhlo-objdump: internal error: " << dump_errors
          << " field(s) of the dump disagree with the reader (DUMP ERROR)\n";
  }
  if (arena) out << ArenaTable(*program, name);
  if (!hex && !arena) out << DumpBundleProgram(*program, name);
  return kExitOk;
}

}  // namespace nhlo
