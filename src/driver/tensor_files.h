// SPDX-License-Identifier: Apache-2.0
// Tensors in the files numpy and ml_dtypes users have: `.npy` (one array) and `.npz` (a zip
// archive of `.npy` entries), for every array element type, plus the argument and output files
// of nhlo-run built on them. The descr written for each type, and the rules for reading, are in
// docs/cli.md ("Tensor files"). Every problem is a Status naming the file; nothing here prints
// or exits, and no input (truncated, malformed or hostile) makes it read out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/bundle_format.h"
#include "driver/common.h"
#include "interp/value.h"
#include "support/status.h"

namespace nhlo {

/// What a file must hold: an array of `type` with `dims`. `what` names it in messages
/// ("parameter 2 'w'"); `name` is the parameter's name, for matching `.npz` members.
struct TensorSpec {
  std::string what;
  std::string name;
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  /// Per dimension as BufferRecord::dim_kinds (empty: all static): a bounded one (`<=N`) takes
  /// any size up to its bound, as an argument given inline does.
  std::vector<uint8_t> dim_kinds;
};

/// Whether an array of `dims` fits `spec`: equal static dimensions, bounded ones at most their
/// bound.
bool SpecTakes(const TensorSpec& spec, const std::vector<int64_t>& dims);

/// `bf16[4,8]`, `f32[<=8]`.
std::string SpecShapeText(const TensorSpec& spec);

/// The descr nhlo writes for an array type: numpy's own for the types numpy has (`<f4`, `|b1`),
/// and what `np.save` writes for an ml_dtypes array (`<V2` for bf16, `<V1` for the 1-byte f8,
/// f6, f4 and int4/int2/int1 types); empty for non-array types.
std::string NpyDescr(PrimitiveType type);

/// The magic a `.npy` file starts with; how files holding one array are told from archives.
inline constexpr std::string_view kNpyMagic("\x93NUMPY", 6);

/// A parsed `.npy` header.
struct NpyHeader {
  int major = 0, minor = 0;
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // where the array's bytes start in the file
};

/// Parses the magic, version and header dictionary of `.npy` file bytes; `file` names it in
/// messages. The header may be at most kMaxNpyHeaderBytes long.
inline constexpr size_t kMaxNpyHeaderBytes = size_t(1) << 20;
Result<NpyHeader> ParseNpyHeader(std::string_view bytes, std::string_view file);

/// Reads an array of `spec`'s type and dims from `.npy` file bytes. The descr must be the type's
/// (an ml_dtypes type also accepts a void descr of its size, its ml_dtypes name, and an unsigned
/// integer descr of its size holding the raw bits); big-endian data is byte-swapped and
/// fortran_order data transposed.
Result<Value> ReadNpy(std::string_view bytes, std::string_view file, const TensorSpec& spec);

/// `.npy` bytes for an array value: format 1.0, or 2.0 when the header needs more than 64 KiB.
/// Sub-byte integer elements are written masked to their bits, as ml_dtypes stores them.
Result<std::string> WriteNpy(const Value& value);

/// One member of a zip archive, decompressed.
struct ZipEntry {
  std::string name;
  std::string bytes;
};

/// The members of a zip archive, in archive order: stored and deflate-compressed members are
/// read, each checked against its CRC-32; encrypted, multi-disk and other methods are refused.
/// A member that would take the members' sizes past `max_inflated` is refused before it is inflated.
Result<std::vector<ZipEntry>> ReadZip(std::string_view bytes, std::string_view file,
                                      uint64_t max_inflated = UINT64_MAX);

/// A zip archive of stored (uncompressed) members in the given order, with a fixed timestamp
/// (1980-01-01 00:00) so equal inputs give equal bytes. At most 4 GiB (no zip64).
Result<std::string> WriteZip(const std::vector<ZipEntry>& entries);

/// The entry computation's parameters as specs: "parameter N 'name'" (1-based), tuple
/// parameters with type kTuple.
std::vector<TensorSpec> EntryParameters(const BundleProgram& program);

/// Builds the argument list. Each text of `--arg` is XLA literal text, or `@PATH`: a `.npy` file
/// or a file holding literal text (told apart by content). `args_archive` (from `--args`, with
/// or without its `@`) is a `.npz` holding the whole list, matched to `params` by name, by
/// position (`arg0`/`arr_0`...) or in archive order. At most one of the two is given.
Result<std::vector<Value>> LoadArguments(const std::vector<std::string>& arg_texts, const std::string& args_archive,
                                         const std::vector<TensorSpec>& params);

/// The most bytes a `.npz` of `params` may have, and its members may inflate to: the arrays'
/// bytes, a header each and 64 KiB of zip structure.
uint64_t ArchiveLimit(const std::vector<TensorSpec>& params);
/// The arguments for `params` from the bytes of a `.npz` file named `path` (as `--args=@path`
/// reads them; `noun` names the specs in messages). Refused beyond ArchiveLimit before anything
/// is inflated.
Result<std::vector<Value>> ArgumentsFromArchive(std::string_view bytes, const std::string& path,
                                                const std::vector<TensorSpec>& params,
                                                const std::string& noun = "parameter");

/// How the members of a `.npz` pair with `specs`: by name when any member is named after a spec
/// (`out0`, `w`), else by position (`arg0`/`arr_0`... when the counts agree), else in archive
/// order. `chosen[i]` is spec i's member (null when none); `unmatched` the members left over.
struct ArchiveMatch {
  std::vector<const ZipEntry*> chosen;
  std::vector<const ZipEntry*> unmatched;
  bool by_name = false;
};
ArchiveMatch MatchArchiveMembers(const std::vector<ZipEntry>& entries, const std::vector<TensorSpec>& specs);
/// A member's name without its `.npy`, as np.load(npz) calls it.
std::string NpzMemberStem(const ZipEntry& entry);

/// Reads at most `limit` bytes of `path`, so /dev/zero or a wrong multi-gigabyte file ends with
/// a message ("... more than WHY") instead of exhausting memory.
Result<std::string> ReadTensorFile(const std::string& path, uint64_t limit, const std::string& why);

/// Reads `.npy` bytes as the file describes them: an array of the descr's type and the header's
/// shape when numpy's descr names a type (so a file of f64[3,2] read for `like` f32[2,3] gives
/// f64[3,2] for the comparison to report), else (untyped bytes: ml_dtypes' void descr) of
/// `like`'s type. Refused only when the bytes cannot be an array of any type.
Result<Value> ReadNpyAsWritten(std::string_view bytes, std::string_view file, const TensorSpec& like);

/// Writes `args` to a `.npz` at `path` as `arg0.npy`, `arg1.npy`... (atomically).
Status SaveArguments(const std::string& path, const std::vector<Value>& args);

/// nhlo-run's tensor file flags: `--args=@in.npz`, `--output=PATH`, `--save-args=PATH`.
struct TensorFileFlags {
  std::string args, output, save_args;
};
void AddTensorFileFlags(CLI::App& app, TensorFileFlags& flags);
/// Why the flags cannot be used together (empty when they can): `--args` with other arguments
/// (`other_args`: --arg or --random-args), `--output`/`--save-args` with several modules.
std::string TensorFileFlagMisuse(const TensorFileFlags& flags, bool other_args, bool split_input_file);

/// Writes a run's result: to a directory (`path` ends in `/` or names a directory: one
/// `outN.npy` per output), a single `.npy` (`path` ends in `.npy`, one array output), or a `.npz`
/// of `out0.npy`, `out1.npy`... (anything else). A tuple's elements are the outputs (nested tuples
/// flatten to `out1_0`...); a non-tuple result is `out0`. Files are written atomically.
Status SaveOutputs(const std::string& path, const Value& result);

}  // namespace nhlo
