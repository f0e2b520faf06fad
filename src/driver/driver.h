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

}  // namespace nhlo
