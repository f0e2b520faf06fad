// SPDX-License-Identifier: Apache-2.0
// Pieces the three programs share: reading inputs, writing outputs without leaving partial
// files, the pass-pipeline flags, and turning HLO text into a verified, optimised module.
#pragma once

#include <CLI/CLI.hpp>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "ir/ir.h"
#include "passes/pass_manager.h"
#include "support/status.h"

namespace nhlo {

/// The most bytes of input a program reads (source offsets are 32-bit).
inline constexpr size_t kMaxInputBytes = (size_t(1) << 32) - 1;
/// Reads a path, or standard input for "-": at most `max_bytes` (and never more than
/// kMaxInputBytes).
Result<std::string> ReadInput(const std::string& path, std::istream& in, uint64_t max_bytes = kMaxInputBytes,
                              std::string_view limit = {});
/// `16G`, `512MiB`, `1000000`: a byte count with an optional binary suffix (K, M, G, T; KiB...).
/// `flag` names the option in messages.
Result<uint64_t> ParseSize(const std::string& text, const std::string& flag);
/// Adds `--max-input-size=SIZE` to a program's options.
void AddInputSizeFlag(CLI::App& app, std::string& size);
/// True when both paths exist and name the same file.
bool SameFile(const std::string& a, const std::string& b);

/// A file a program writes: the flag that names it, the path, and for a directory of outputs the
/// pattern of the files it writes there (a regex on the base name; empty for a plain file).
struct OutputPath {
  std::string flag;
  std::string path;
  std::string dir_files;
};

/// The output-safety rule of every program (docs/reliability.md): no output may be one of the
/// run's inputs (compared by device and inode, links resolved; an output directory by the names
/// it writes), and no two outputs may be the same file. Returns the reason to refuse, naming the
/// flags, or "" when the paths are safe. `-` (standard input or output) is never a file here.
std::string OutputConflict(const std::vector<std::string>& inputs, const std::vector<OutputPath>& outputs);
/// Whether `out` can be written where it points, checked before any work so that a long run
/// does not end in "cannot write": the folder of a file output must exist and take new files
/// (WriteFileAtomically writes a temporary file beside it), an existing FIFO or device must be
/// writable, and a file output must not be a folder. Directory outputs are created when written.
Status CheckOutputPlace(const OutputPath& out);
/// Writes a regular file via a temporary file and a rename, so a failure never leaves a partial
/// file (through a symlink, the file it names); a FIFO or device is written to directly.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);
/// Prints every diagnostic; those without a file get the `program: ` prefix, so each line a
/// program prints is `program: error: ...` or `file:line:col: error: ...`.
void PrintStatus(const Status& status, std::ostream& err, std::string_view program);

/// Flags that drive the pass pipeline, as parsed from the command line.
struct PipelineFlags {
  std::string passes;
  bool passes_given = false;
  std::vector<std::string> enable, disable;
  bool list_passes = false;
  bool print_before_all = false, print_after_all = false;
  std::string print_before, print_after, print_changed, time_passes, dump_dir;
  std::string print_style = "long";
  std::vector<std::string> print_computation;   ///< --print-computation=REGEX, repeatable
  std::vector<std::string> filter_print_funcs;  ///< --filter-print-funcs=NAME,... (LLVM's spelling)
  bool print_metadata = true;
  std::string remarks, remarks_file;  ///< --remarks=REGEX, --remarks-file=FILE
  bool verify_each = false;
  int64_t bisect_limit = -1;
  std::string arch = "v4";
  bool device_only = false;
  std::string buffer_aliasing = "on";  ///< --buffer-aliasing=on|off (CodegenOptions::buffer_aliasing)
  bool split_input_file = false;
  bool strict = false;
  std::vector<std::string> custom_calls;  ///< --custom-call=TARGET=@FILE, repeatable

  Result<PipelineOptions> ToOptions() const;
  Result<CodegenOptions> ToCodegenOptions() const;
};

void AddPipelineFlags(CLI::App& app, PipelineFlags& flags);
/// How many modules `text` holds (lines starting with `HloModule`, outside comments and strings),
/// for the --split-input-file hint after a failed parse.
int CountHloModules(std::string_view text);
/// The hint itself: "holds N modules; use --split-input-file to VERB each on its own", telling
/// to put `// -----` lines between them first when the text has none (splitting needs them).
std::string SeveralModulesHint(std::string_view text, int modules, std::string_view verb);
/// Writes the collected remarks to --remarks-file as YAML (atomically); nothing without the flag.
Status WriteRemarksFile(const PipelineFlags& flags, const std::vector<Remark>& remarks);
/// Warnings for pipeline flags that do nothing in the combination given (e.g. --dump-dir alone).
/// `prints_module`: the program prints the module itself (nhlo-compile --emit=hlo).
std::vector<std::string> PipelineFlagWarnings(const PipelineFlags& flags, bool prints_module);
/// The --help heading of the pipeline flags, which AddPipelineFlags puts in one group.
inline constexpr const char* kPipelineFlagGroup = "Pass pipeline";
/// The pipeline flags given on the command line (for "has no effect" warnings).
std::vector<std::string> GivenPipelineFlags(const CLI::App& app);

/// `--flag` alone becomes `--flag=<value>` for flags whose value is optional.
std::vector<std::string> ExpandOptionalValues(const std::vector<std::string>& args);

/// Runs CLI11 over `args`; returns -1 to continue, or the exit code to stop with (help: 0,
/// misuse: 2 with the message on `err`).
int ParseCommandLine(CLI::App& app, const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The module's old forms (Module::old_forms): with `strict` an error per form, else one warning
/// line per form on `log`.
Status ReportOldForms(const Module& module, bool strict, std::ostream& log);

/// Warns, at the first and with the count of the others, of constants whose data the text elides
/// (`{...}`): a run reads them as zeros, where XLA's parser fills them with counter values.
void ReportElidedConstants(const Module& module, std::ostream& log);

/// Parse + verify + old forms (ReportOldForms) + run the pipeline + verify. Dumps and warnings go
/// to `log`.
Result<std::unique_ptr<Module>> CompileText(std::string name, std::string text, const PipelineOptions& options,
                                            std::ostream& log);

}  // namespace nhlo
