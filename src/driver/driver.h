// SPDX-License-Identifier: Apache-2.0
// The three programs as library functions: argument vector in, exit code out, every byte of
// output through the given streams. The mains in tools/ are one line each; the golden-test
// runner calls these in-process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace nhlo {

/// Exit codes shared by every program.
enum ExitCode : int { kExitOk = 0, kExitInputRejected = 1, kExitUsage = 2 };

/// `args` excludes the program name.
int CompileMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);
int ObjdumpMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

using ProgramMain = int (*)(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                            std::ostream& err);
/// A program's `main`: runs `program_main` on the command line with the standard streams, and
/// turns what escapes it into a diagnostic and exit code 1 instead of an abort: running out of
/// memory (`std::bad_alloc`, which no size check can rule out for every allocation) and, as a
/// compiler bug, any other exception.
int GuardedMain(const char* program, ProgramMain program_main, int argc, char** argv);

}  // namespace nhlo
