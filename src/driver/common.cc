// SPDX-License-Identifier: Apache-2.0
#include "driver/common.h"

#include <re2/re2.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "driver/custom_call_expansions.h"
#include "driver/driver.h"
#include "driver/version.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "parser/parser.h"
#include "support/large_alloc.h"
#include "support/suggest.h"

namespace nhlo {

namespace {

// `limit` names what set max_bytes, for the message (empty: --max-input-size).
Status InputTooLarge(const std::string& what, uint64_t max_bytes, std::string_view limit) {
  if (!limit.empty())
    return Status::Error(what + " is larger than " + std::to_string(max_bytes) + " bytes (" + std::string(limit) + ")");
  return Status::Error(what + " is larger than " + std::to_string(max_bytes) + " bytes (--max-input-size; at most " +
                       std::to_string(kMaxInputBytes) + ")");
}

// Reads `in` in blocks up to `max_bytes`, so an endless source (/dev/zero, a FIFO, a pipe) ends
// with a message instead of exhausting memory.
// A regular file's size, when known, is read in one piece into a string of that size: growing
// the string by doubling would copy the text several times and touch twice its memory.
Result<std::string> ReadBounded(std::istream& in, const std::string& what, uint64_t max_bytes, uint64_t size_hint,
                                std::string_view limit) {
  std::string text;
  if (size_hint > 0 && size_hint <= max_bytes) {
    text.reserve(static_cast<size_t>(size_hint) + 1);  // + the terminating NUL the parser reads up to
    // A big dump's text is faulted in as it is read: huge pages make that 512 faults fewer per
    // 2 MiB (and the parser's pass over it cheaper in TLB misses).
    if (size_hint >= kLargeAllocBytes) AdviseHugePages(text.data(), text.capacity());
    text.resize(static_cast<size_t>(size_hint));
    in.read(text.data(), static_cast<std::streamsize>(size_hint));
    text.resize(static_cast<size_t>(in.gcount()));
    if (in.bad()) return Status::Error("cannot read " + what);
    if (!in) return text;  // the whole file (or less, if it shrank)
  }
  char block[1 << 16];
  while (in.read(block, sizeof(block)) || in.gcount() > 0) {
    if (text.size() + static_cast<uint64_t>(in.gcount()) > max_bytes) return InputTooLarge(what, max_bytes, limit);
    text.append(block, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status::Error("cannot read " + what);
  return text;
}

}  // namespace

Result<std::string> ReadInput(const std::string& path, std::istream& in, uint64_t max_bytes, std::string_view limit) {
  max_bytes = std::min<uint64_t>(max_bytes, kMaxInputBytes);
  if (path == "-") return ReadBounded(in, "standard input", max_bytes, 0, limit);
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st)) return Status::Error("'" + path + "' is a directory");
  // A regular file too large is refused from its size, before a byte is read.
  uint64_t size_hint = 0;
  if (std::filesystem::is_regular_file(st)) {
    uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes) return InputTooLarge("'" + path + "'", max_bytes, limit);
    if (!ec) size_hint = size;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::Error("cannot open '" + path + "': " + std::strerror(errno));
  return ReadBounded(f, "'" + path + "'", max_bytes, size_hint, limit);
}

Result<uint64_t> ParseSize(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    return Status::Error(flag + ": '" + text + "' is not a size (e.g. 16G, 512MiB, 1000000)");
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix.empty() || suffix == "B")
    scale = 1;
  else if (suffix == "K" || suffix == "KiB" || suffix == "k")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "MiB")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "TiB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return Status::Error(flag + ": unknown unit '" + suffix + "' (use K, M, G or T)");
  if (!(value >= 0) || value * scale > 1.8e19) return Status::Error(flag + ": '" + text + "' is out of range");
  return static_cast<uint64_t>(value * scale);
}

void AddInputSizeFlag(CLI::App& app, std::string& size) {
  app.add_option("--max-input-size", size,
                 "refuse an input larger than SIZE bytes (K, M, G, T suffixes; default and most: 4G)");
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec) && std::filesystem::equivalent(a, b, ec);
}

namespace {

// Whether `input` would be overwritten by `out`: the same file, or (a directory output) a file
// of that directory whose name the directory's writer uses.
bool Overwrites(const OutputPath& out, const std::string& input) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (out.dir_files.empty()) {
    if (SameFile(out.path, input)) return true;
    // Neither exists yet, or one is a path through a link: the same place once written.
    return fs::weakly_canonical(out.path, ec) == fs::weakly_canonical(input, ec);
  }
  fs::path in = fs::weakly_canonical(input, ec);
  if (!fs::exists(out.path, ec) || !fs::equivalent(out.path, in.parent_path(), ec)) return false;
  return RE2::FullMatch(in.filename().string(), out.dir_files);
}

}  // namespace

std::string OutputConflict(const std::vector<std::string>& inputs, const std::vector<OutputPath>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputPath& out = outputs[i];
    if (out.path.empty() || out.path == "-") continue;
    for (const std::string& input : inputs)
      if (!input.empty() && input != "-" && Overwrites(out, input))
        return out.flag + " " + out.path + " would replace the input " + input + " (outputs never overwrite inputs)";
    for (size_t j = 0; j < i; ++j) {
      const OutputPath& other = outputs[j];
      if (other.path.empty() || other.path == "-") continue;
      // Two directories clash as directories; otherwise the plain file against the other output.
      bool same = !out.dir_files.empty() && !other.dir_files.empty() ? SameFile(out.path, other.path)
                  : other.dir_files.empty()                          ? Overwrites(out, other.path)
                                                                     : Overwrites(other, out.path);
      if (same) return other.flag + " and " + out.flag + " name the same file " + out.path;
    }
  }
  return "";
}

Status CheckOutputPlace(const OutputPath& out) {
  namespace fs = std::filesystem;
  if (out.path.empty() || out.path == "-" || !out.dir_files.empty()) return OkStatus();
  std::error_code ec;
  const fs::path path(out.path);
  const fs::file_status st = fs::status(path, ec);  // follows symlinks
  auto refuse = [&](const std::string& why) {
    return Status::Error(out.flag + ": cannot write '" + out.path + "': " + why + " (checked before any work)");
  };
  if (fs::is_directory(st)) return refuse("it is a folder");
  if (fs::exists(st) && !fs::is_regular_file(st))  // a FIFO or device: written in place
    return ::access(out.path.c_str(), W_OK) == 0 ? OkStatus() : refuse(std::strerror(errno));
  fs::path folder = fs::is_symlink(fs::symlink_status(path, ec)) ? fs::weakly_canonical(path, ec) : path;
  folder = folder.parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::exists(folder, ec)) return refuse("the folder '" + folder.string() + "' does not exist");
  if (!fs::is_directory(folder, ec)) return refuse("'" + folder.string() + "' is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    return refuse("the folder '" + folder.string() + "' does not take new files (" + std::strerror(errno) + ")");
  return OkStatus();
}

Status WriteFileAtomically(const std::string& given, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::status(given, ec);  // follows symlinks
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    // A FIFO, a device or /dev/stdout: written to directly, never replaced by a regular file.
    std::ofstream f(given, std::ios::binary);
    if (!f) return Status::Error("cannot write '" + given + "': " + std::strerror(errno));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f) return Status::Error("cannot write '" + given + "'");
    return OkStatus();
  }
  // A symlink to a regular file: the file it names is replaced, the link stays.
  std::string path = given;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(given, ec))) {
    std::filesystem::path target = std::filesystem::canonical(given, ec);
    if (!ec) path = target.string();
  }
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return Status::Error("cannot write '" + path + "': " + std::strerror(errno));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      return Status::Error("cannot write '" + path + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    return Status::Error("cannot write '" + path + "': " + std::strerror(e));
  }
  return OkStatus();
}

void PrintStatus(const Status& status, std::ostream& err, std::string_view program) { err << status.ToString(program); }

void AddPipelineFlags(CLI::App& app, PipelineFlags& f) {
  const size_t before = app.get_options().size();
  app.add_option("--passes", f.passes,
                 "run exactly these passes, in this order (comma-separated, repeats allowed; 'none' for no passes)")
      ->each([&f](const std::string&) { f.passes_given = true; });
  app.add_option("--enable-pass", f.enable, "add passes to the pipeline (comma-separated, repeatable)");
  app.add_option("--disable-pass", f.disable, "remove passes from the pipeline (comma-separated, repeatable)");
  app.add_flag("--list-passes", f.list_passes, "list the registered passes in pipeline order and exit");
  app.add_option("--print-style", f.print_style,
                 "how modules print in dumps and --emit=hlo: long (default: XLA's HloModule::ToString()), "
                 "long-shapes (with operand shapes, XLA before 2025), short (XLA's dump text of 2023-2025), "
                 "short-parsable (HloPrintOptions::ShortParsable()), as-read (the form the input is written in)")
      ->check(CLI::IsMember({"long", "long-shapes", "short", "short-parsable", "as-read"}));
  app.add_flag("--print-before-all", f.print_before_all, "print the module before every pass (to stderr)");
  app.add_flag("--print-after-all", f.print_after_all, "print the module after every pass (to stderr)");
  app.add_option("--print-before", f.print_before, "print the module before passes whose name matches REGEX");
  app.add_option("--print-after", f.print_after, "print the module after passes whose name matches REGEX");
  app.add_option("--print-changed", f.print_changed,
                 "print the initial module, then only passes that changed it (=diff: unified diffs; =cdiff: in "
                 "colour; =quiet, =diff-quiet, =cdiff-quiet: without the initial module and unchanged banners)")
      ->check(CLI::IsMember({"text", "quiet", "diff", "diff-quiet", "cdiff", "cdiff-quiet"}));
  app.add_option("--print-computation", f.print_computation,
                 "dumps show only the computations whose name matches REGEX (full match; repeatable)");
  app.add_option("--filter-print-funcs", f.filter_print_funcs,
                 "dumps show only the computations named (comma-separated; LLVM opt's spelling)")
      ->delimiter(',');
  app.add_option("--print-metadata", f.print_metadata,
                 "=false: print instructions without metadata={...} (dumps and --emit=hlo; default true)");
  app.add_option("--remarks", f.remarks,
                 "print the remarks (applied, missed, analysis) of passes whose name matches REGEX, as clang's "
                 "-Rpass; passes' warnings print without it");
  app.add_option("--remarks-file", f.remarks_file,
                 "write every remark of the pipeline to FILE as YAML (LLVM's optimization-record form)");
  app.add_option("--dump-dir", f.dump_dir, "write dumps as numbered files into DIR instead of stderr");
  app.add_option("--time-passes", f.time_passes, "report the time of each pass on stderr (=json: as JSON)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--verify-each", f.verify_each, "verify the module after every pass and name the pass that broke it");
  app.add_option("--opt-bisect-limit", f.bisect_limit, "run only the first N pass executions");
  app.add_option("--arch", f.arch, "target architecture for wire tags (v3 or v4)")->check(CLI::IsMember({"v3", "v4"}));
  app.add_flag("--device-only", f.device_only, "reject element types that have no device dtype");
  app.add_option("--buffer-aliasing", f.buffer_aliasing,
                 "on (default): get-tuple-elements, tuples, reshapes, bitcasts and while-loop state share the "
                 "bytes they copy, parameters' and constants' too, as XLA's buffer assignment has it; off: each "
                 "gets bytes of its own and a copy (to bisect a suspected aliasing problem)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_flag("--split-input-file", f.split_input_file, "treat '// -----' lines as separators between modules");
  app.add_option("--custom-call", f.custom_calls,
                 "TARGET=@FILE: run FILE's HLO for custom calls of TARGET that nhlo has no kernel for (repeatable; "
                 "docs/custom-calls.md)");
  app.add_flag("--strict", f.strict,
               "refuse forms of HLO text that today's XLA no longer writes (accepted with a warning otherwise; "
               "docs/old-forms.md)");
  // One group: --help lists them together, and GivenPipelineFlags finds them without a second list.
  std::vector<CLI::Option*> options = app.get_options();
  for (size_t i = before; i < options.size(); ++i) options[i]->group(kPipelineFlagGroup);
}

namespace {

// The exact count: `HloModule ` starting a line (after blanks) outside comments and strings.
int CountHloModulesExactly(std::string_view text) {
  int count = 0;
  bool line_start = true;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      line_start = true;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.find('\n', i), text.size());
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
      line_start = false;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\') ++i;
      ++i;
      line_start = false;
    } else {
      if (line_start && text.compare(i, 10, "HloModule ") == 0) ++count;
      line_start = false;
      ++i;
    }
  }
  return count;
}

}  // namespace

// How many modules the text holds (lines starting with `HloModule`), for the hint after a
// failed parse of a multi-module file.
int CountHloModules(std::string_view text) {
  // Found by the word, then checked to start its line: 'H' is rare in HLO text, so this is one
  // memchr-speed pass where a scan line by line cost 2% of a parse-only compile. Only when it
  // finds several (a hint will be printed) is the text scanned exactly, skipping the comments
  // and strings that may hold the word at a line start.
  int count = 0;
  for (size_t at = text.find("HloModule "); at != std::string_view::npos; at = text.find("HloModule ", at + 1)) {
    size_t line = at;
    while (line > 0 && (text[line - 1] == ' ' || text[line - 1] == '\t')) --line;
    if (line == 0 || text[line - 1] == '\n') ++count;
  }
  return count > 1 ? CountHloModulesExactly(text) : count;
}

std::string SeveralModulesHint(std::string_view text, int modules, std::string_view verb) {
  const bool separated = text.starts_with("// -----") || text.find("\n// -----") != std::string_view::npos;
  return "holds " + std::to_string(modules) + " modules; " +
         (separated ? "" : "put a `// -----` line between them and ") + "use --split-input-file to " +
         std::string(verb) + " each on its own";
}

std::vector<std::string> PipelineFlagWarnings(const PipelineFlags& f, bool prints_module) {
  std::vector<std::string> warnings;
  bool prints = f.print_before_all || f.print_after_all || !f.print_before.empty() || !f.print_after.empty() ||
                !f.print_changed.empty();
  bool dumps = prints || !f.time_passes.empty();
  if (!f.dump_dir.empty() && !dumps)
    warnings.push_back(
        "--dump-dir has no effect without --print-before/after(-all), --print-changed or "
        "--time-passes (nothing is dumped)");
  if ((!f.print_computation.empty() || !f.filter_print_funcs.empty()) && !prints)
    warnings.push_back(std::string(f.print_computation.empty() ? "--filter-print-funcs" : "--print-computation") +
                       " has no effect without --print-before/after(-all) or --print-changed (it filters dumps)");
  if (!f.print_metadata && !prints && !prints_module)
    warnings.push_back(
        "--print-metadata has no effect: nothing prints a module (add --print-after-all, "
        "--print-changed or, in nhlo-compile, --emit=hlo)");
  return warnings;
}

std::vector<std::string> GivenPipelineFlags(const CLI::App& app) {
  std::vector<std::string> given;
  for (const CLI::Option* opt : app.get_options())
    if (opt->get_group() == kPipelineFlagGroup && opt->count() > 0) given.push_back(opt->get_name());
  return given;
}

Result<PipelineOptions> PipelineFlags::ToOptions() const {
  PipelineOptions o;
  if (passes_given) o.passes = std::vector<std::string>{passes};
  o.enable = enable;
  o.disable = disable;
  o.print_before_all = print_before_all;
  o.print_after_all = print_after_all;
  o.print_before_regex = print_before;
  if (std::optional<PrintStyleName> style = PrintStyleFromName(print_style)) o.print_style = *style;
  o.print_after_regex = print_after;
  o.print_computation_regexes = print_computation;
  for (const std::string& name : filter_print_funcs)
    if (!name.empty()) o.print_computation_regexes.push_back(RE2::QuoteMeta(name));
  o.print_metadata = print_metadata;
  o.remarks_regex = remarks;
  // opt's spellings: text|quiet, diff|diff-quiet, cdiff|cdiff-quiet.
  if (print_changed == "text" || print_changed == "quiet") o.print_changed = PipelineOptions::PrintChanged::kText;
  if (print_changed.find("diff") != std::string::npos) o.print_changed = PipelineOptions::PrintChanged::kDiff;
  o.print_changed_quiet = print_changed.ends_with("quiet");
  o.print_changed_color = print_changed.starts_with("cdiff");
  if (time_passes == "text") o.time_passes = PipelineOptions::TimePasses::kText;
  if (time_passes == "json") o.time_passes = PipelineOptions::TimePasses::kJson;
  o.dump_dir = dump_dir;
  o.dump_names = std::make_shared<std::map<std::string, int>>();
  o.verify_each = verify_each;
  o.bisect_limit = bisect_limit;
  o.strict = strict;
  for (const std::string& value : custom_calls) {
    NHLO_ASSIGN_OR_RETURN(CustomCallExpansion expansion, ReadCustomCallFlag(value));
    o.custom_calls.push_back(std::move(expansion));
  }
  NHLO_TRY(SelectPasses(o).status());
  for (const auto& [pattern, flag] :
       {std::pair{&print_before, "--print-before"}, std::pair{&print_after, "--print-after"}}) {
    if (pattern->empty()) continue;
    RE2 re(*pattern, RE2::Quiet);
    if (!re.ok()) return Status::Error(std::string("invalid regular expression for ") + flag + ": " + re.error());
  }
  for (const std::string& pattern : print_computation) {
    RE2 re(pattern, RE2::Quiet);
    if (!re.ok()) return Status::Error("invalid regular expression for --print-computation: " + re.error());
  }
  if (!remarks.empty()) {
    RE2 re(remarks, RE2::Quiet);
    if (!re.ok()) return Status::Error("invalid regular expression for --remarks: " + re.error());
  }
  return o;
}

Status WriteRemarksFile(const PipelineFlags& flags, const std::vector<Remark>& remarks) {
  if (flags.remarks_file.empty()) return OkStatus();
  return WriteFileAtomically(flags.remarks_file, RemarksYaml(remarks));
}

Result<CodegenOptions> PipelineFlags::ToCodegenOptions() const {
  CodegenOptions o;
  o.arch = arch == "v3" ? TargetArch::kV3 : TargetArch::kV4;
  o.device_only = device_only;
  o.buffer_aliasing = buffer_aliasing == "on";
  return o;
}

std::vector<std::string> ExpandOptionalValues(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    if (a == "--print-changed")
      out.push_back("--print-changed=text");
    else if (a == "--time-passes")
      out.push_back("--time-passes=text");
    else
      out.push_back(a);
  }
  return out;
}

namespace {

// The option of `app` closest to the unknown `word` (`--print-after-al` -> `--print-after-all`),
// or empty when none is close: at most a third of the word's letters differ.
std::string ClosestOption(const CLI::App& app, const std::string& word) {
  std::vector<std::string> options;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& name : opt->get_lnames()) options.push_back("--" + name);
  return ClosestName(word.substr(0, word.find('=')), options);
}

}  // namespace

int ParseCommandLine(CLI::App& app, const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> expanded = ExpandOptionalValues(args);
  std::vector<const char*> argv;
  argv.push_back(app.get_name().c_str());
  for (const std::string& a : expanded) argv.push_back(a.c_str());
  app.set_version_flag("--version", VersionText(app.get_name()));
  // Words CLI11 does not know are collected and reported here, with a suggestion.
  app.allow_extras();
  // A repeatable option takes one value per occurrence: CLI11 would let `--arg X m.hlo` take
  // the input file as a second --arg.
  for (CLI::Option* opt : app.get_options())
    if (opt->nonpositional() && opt->get_items_expected_max() > 1) opt->allow_extra_args(false);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << app.get_name() << ": error: " << e.what() << "\n"
        << "Run with --help for more information.\n";
    return kExitUsage;
  }
  std::vector<std::string> extras = app.remaining();
  if (extras.empty()) return -1;
  for (const std::string& word : extras) {
    err << app.get_name() << ": error: ";
    if (word.size() > 1 && word[0] == '-') {
      err << "unknown option '" << word << "'";
      if (std::string hint = ClosestOption(app, word); !hint.empty()) err << "; did you mean '" << hint << "'?";
    } else {
      err << "unexpected argument '" << word << "' (one input file is read)";
    }
    err << "\n";
  }
  err << "Run with --help for more information.\n";
  return kExitUsage;
}

int GuardedMain(const char* program, ProgramMain program_main, int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  try {
    return program_main(std::vector<std::string>(argv + 1, argv + argc), std::cin, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "\n"
              << program << ": error: out of memory (an allocation failed; --max-memory, --max-input-size "
              << "and --print-values=summary bound what a run allocates)\n";
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "\n"
              << program << ": internal error: uncaught exception: " << e.what()
              << "\nThis is a bug in nhlo, not in your input; please report it.\n";
  }
  return kExitInputRejected;
}

namespace {

// `file:line:col: warning: message (and N more)`: one line for a warning that holds for `more`
// other places too (a dump may hold thousands of the same form).
void PrintWarningLine(const Diagnostic& d, size_t more, std::ostream& log) {
  if (!d.file.empty()) log << d.file << ":" << d.line << ":" << d.col << ": ";
  log << "warning: " << d.message;
  if (more > 0) log << " (and " << more << " more)";
  log << "\n";
}

// The first instruction of `module` that `matches`, with the count of the others in `more`.
const Instruction* FirstMatching(const Module& module, const std::function<bool(const Instruction&)>& matches,
                                 size_t& more) {
  const Instruction* first = nullptr;
  more = 0;
  for (const auto& comp : module.computations)
    for (const Instruction* inst : comp->instructions) {
      if (!matches(*inst)) continue;
      if (first)
        ++more;
      else
        first = inst;
    }
  return first;
}

}  // namespace

Status ReportOldForms(const Module& module, bool strict, std::ostream& log) {
  if (strict && !module.old_forms.empty()) {
    Status refused;
    for (const Module::OldForm& form : module.old_forms) {
      Diagnostic d = form.first;
      d.severity = Severity::kError;
      d.message += " (refused by --strict";
      if (form.more > 0) d.message += "; " + std::to_string(form.more) + " more in the module";
      d.message += ")";
      refused.diagnostics().push_back(std::move(d));
    }
    return refused;
  }
  // One line each: a dump may hold thousands of the same old form.
  for (const Module::OldForm& form : module.old_forms) PrintWarningLine(form.first, form.more, log);
  return OkStatus();
}

namespace {

// JAX's Python callbacks that return only tokens run as nothing (ir/host_callbacks.h): one warning,
// at the first, with the count of the others.
void ReportSkippedCallbacks(const Module& module, std::ostream& log) {
  size_t more = 0;
  const Instruction* first = FirstMatching(
      module, [](const Instruction& inst) { return CustomCallKindOf(inst) == CustomCallKind::kHostCallback; }, more);
  if (!first) return;
  PrintWarningLine(DiagnosticFor(module, *first,
                                 "a Python host callback ('" + std::string(CustomCallTarget(*first)) +
                                     "', as jax.debug.print writes): nhlo runs no Python, so its side effect is "
                                     "skipped; it returns nothing the program reads"),
                   more, log);
}

// Whether `lit` or a tuple element of it has elements whose data the text elides (an empty array
// printed `{...}` has none to lose).
bool HoldsElidedData(const Literal& lit) {
  if (lit.elided) return !lit.shape.IsArray() || lit.shape.ElementCount() > 0;
  for (const Literal* element : lit.tuple)
    if (element && HoldsElidedData(*element)) return true;
  return false;
}

}  // namespace

// XLA's parser (HloParserImpl::ParseDenseLiteral, fill_shortform_constants_with_random_values,
// on by default) fills an elided constant with a counter that runs on across every constant it
// parses, "deterministic (garbage) values"; with the option off the literal stays zeros, as nhlo
// reads it. Neither is the program's data, so a run says so once.
void ReportElidedConstants(const Module& module, std::ostream& log) {
  size_t more = 0;
  const Instruction* first = FirstMatching(
      module,
      [](const Instruction& inst) {
        return inst.opcode == Opcode::kConstant && inst.literal && HoldsElidedData(*inst.literal);
      },
      more);
  if (!first) return;
  PrintWarningLine(DiagnosticFor(module, *first,
                                 "constant '" + std::string(first->name) +
                                     "' has its data elided ({...}, as XLA dumps large constants): it runs as "
                                     "zeros, so results that depend on it are not the program's (XLA's parser "
                                     "would fill it with counter values)"),
                   more, log);
}

Result<std::unique_ptr<Module>> CompileText(std::string name, std::string text, const PipelineOptions& options,
                                            std::ostream& log) {
  NHLO_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModule(std::move(name), std::move(text)));
  module->print_style = NamedPrintStyle(options.print_style, *module);
  module->print_style.metadata = options.print_metadata;
  NHLO_TRY(VerifyModule(*module));
  NHLO_TRY(ReportOldForms(*module, options.strict, log));
  NHLO_ASSIGN_OR_RETURN(size_t passes_run, RunPipeline(*module, options, log));
  // With no pass run (--passes=none) the module is the one just verified: a second run would
  // double the verifier's share of a parse-only compile.
  if (passes_run > 0) {
    Status after = VerifyModule(*module);
    if (!after.ok()) {
      Status s = Status::Error(
          "the module is invalid after the pass pipeline (a pass bug; rerun with --verify-each to find it)");
      s.Append(after);
      return s;
    }
  }
  ReportSkippedCallbacks(*module, log);
  NHLO_TRY(BindCustomCallExpansions(*module, options.custom_calls));
  return module;
}

}  // namespace nhlo
