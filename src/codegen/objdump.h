// SPDX-License-Identifier: Apache-2.0
// Text renderings of a decoded bundle file (nhlo-objdump): the default listing (header,
// sections, buffer table and every bundle with its wire tags and attributes), the annotated
// hex dump of `-x` and the arena table of `--arena`. All three read only the BundleProgram that
// ReadBundleFile returns, so they cannot disagree with the interpreter about the format.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "codegen/bundle_format.h"

namespace nhlo {

std::string DumpBundleProgram(const BundleProgram& program, std::string_view file_name);

/// `-x`: every byte of the file exactly once and in order, one line per field (longer runs
/// wrap at 16 bytes a line): offset, bytes, field name and decoded value, under headings for
/// the sections and records. Offsets come from the decoded records; the fields inside a record
/// are walked by the format's layout and each value is checked against its bytes (a mismatch
/// is printed as `DUMP ERROR`). Written to `out` as it goes, so a large file is never held as
/// one string. Returns the number of such mismatches: 0 unless the dumper has a bug.
size_t HexDumpBundleProgram(const BundleProgram& program, std::string_view file_name, std::ostream& out);

/// `--arena`: per computation its frame size and the live-bytes lower bound recorded in the
/// file, their ratio, and a total line with the entry's arena.
std::string ArenaTable(const BundleProgram& program, std::string_view file_name);

/// `name=value` of one decoded attribute, as the default listing prints it.
void AppendAttrText(std::string& out, const BundleProgram& program, const AttrRecord& attr);

}  // namespace nhlo
