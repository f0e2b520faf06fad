// SPDX-License-Identifier: Apache-2.0
// C string escapes as HLO text uses them in quoted strings (the parser reads them, the printer
// and nhlo-objdump write them), and XML's for the graph views.
#pragma once

#include <string>
#include <string_view>

namespace nhlo {

/// Undoes C escapes (\n \t \" \\ \ooo \xhh) of a string literal body.
std::string CUnescape(std::string_view body);
/// C-escapes a string for printing inside double quotes.
std::string CEscape(std::string_view text);
/// CEscape(text) appended to `out`, without a temporary (the printer writes every op_name).
void AppendCEscaped(std::string& out, std::string_view text);
/// The length of CEscape(text), and CEscape(text) written at `out` (room for that many bytes),
/// returning the end: for a writer that sizes its output first and fills it in place.
size_t CEscapedSize(std::string_view text);
char* WriteCEscaped(char* out, std::string_view text);
/// `text` appended to `out` with & < > " as XML's entities: HTML pages and Graphviz HTML-like
/// labels (nhlo-compile --emit=html, --emit=dot).
void AppendXmlEscaped(std::string& out, std::string_view text);

}  // namespace nhlo
