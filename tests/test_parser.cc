// SPDX-License-Identifier: Apache-2.0
// Lexer, parser and printer: token classes, diagnostics with line:col, the round-trip law,
// literals, and hostile input that must produce errors, never crashes.
#include <doctest/doctest.h>

#include <charconv>
#include <cstring>
#include <random>

#include "ir/literal.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "parser/lexer.h"
#include "parser/parser.h"
#include "support/text_scan.h"

using namespace nhlo;

namespace {

std::vector<Tok> Kinds(std::string_view text) {
  Lexer lex(text);
  std::vector<Tok> kinds;
  for (Token t = lex.Next(); t.kind != Tok::kEof; t = lex.Next()) {
    kinds.push_back(t.kind);
    if (t.kind == Tok::kError) break;
  }
  return kinds;
}

std::string PrintOrError(std::string text) {
  auto m = ParseModule("t.hlo", std::move(text));
  if (!m.ok()) return m.status().ToString();
  Status v = VerifyModule(**m);
  if (!v.ok()) return v.ToString();
  return PrintModule(**m);
}

}  // namespace

TEST_CASE("lexer classifies numbers, dim labels, padding and names") {
  CHECK(Kinds("1 -2 1.5 1e+10 nan -nan nan(0x7f) -inf") == std::vector<Tok>{Tok::kInt, Tok::kInt, Tok::kDecimal,
                                                                            Tok::kDecimal, Tok::kDecimal, Tok::kDecimal,
                                                                            Tok::kDecimal, Tok::kNegInf});
  CHECK(Kinds("b01f_01io->b01f 3x3 0_1x1_1 0_0_1") ==
        std::vector<Tok>{Tok::kDimLabels, Tok::kDxD, Tok::kPad, Tok::kPad});
  CHECK(Kinds("%a.1 b: c= get-tuple-element.12 ->") ==
        std::vector<Tok>{Tok::kName, Tok::kName, Tok::kAttrName, Tok::kIdent, Tok::kArrow});
  CHECK(Kinds("/* c */ x // rest\n y") == std::vector<Tok>{Tok::kIdent, Tok::kIdent});
  CHECK(Kinds("x /* open") == std::vector<Tok>{Tok::kIdent, Tok::kError});
  CHECK(Kinds("\"a\\\"b\" 'c'") == std::vector<Tok>{Tok::kString, Tok::kString});
}

TEST_CASE("the printer's lexical questions (support/text_scan.h) answer as the lexer reads") {
  // ScansAsOneIdentifier must agree with a Lexer on every word, hand-picked and random.
  auto lexes_as_one_ident = [](std::string_view text) {
    Lexer lex(text);
    Token t = lex.Next();
    return t.kind == Tok::kIdent && t.text == text && lex.Next().kind == Tok::kEof;
  };
  std::vector<std::string> words = {"jit_f", "a.1", "x-y", "_",      "nan", "nana", "inf",
                                    "-x",    ".a",  "2",   "a b",    "a:",  "a=",   "b01f_01io->b01f",
                                    "bf_io", "f32", "%a",  "a/*b*/", "",    "a\n",  "x\x01"};
  std::mt19937 rng(7);
  const char alphabet[] = "abfn_.-09 :=/*%>\n";
  for (int i = 0; i < 5000; ++i) {
    std::string w;
    for (size_t n = 1 + rng() % 6; n > 0; --n) w += alphabet[rng() % (sizeof(alphabet) - 1)];
    words.push_back(w);
  }
  for (const std::string& w : words) CHECK_MESSAGE(ScansAsOneIdentifier(w) == lexes_as_one_ident(w), w);
  // A raw block is verbatim when the lexer reads it whole and sees nothing to fold.
  CHECK(IsVerbatimRawBlock("{\"a\": {\"b\": \"}\"}}"));
  CHECK(IsVerbatimRawBlock("{a='}' b=1}"));
  CHECK(!IsVerbatimRawBlock("{a=1}}"));
  CHECK(!IsVerbatimRawBlock("{a=1\n}"));
  CHECK(!IsVerbatimRawBlock("{a=1  b=2}"));
  CHECK(!IsVerbatimRawBlock("{a=1 /* c */}"));
  CHECK(!IsVerbatimRawBlock(std::string_view("{\"a\0\"}", 6)));
  CHECK(!IsVerbatimRawBlock("{\"a}"));
}

TEST_CASE("SkipIdentChars stops where a byte-by-byte IsIdentChar scan stops") {
  // Every byte value at every place of a 40-byte run of identifier characters (so the sixteen-
  // byte steps meet it at each lane and in the scalar tail), then random text with bytes >= 0x80.
  std::string base(40, 'a');
  for (size_t k = 0; k < base.size(); ++k) base[k] = "aZ09_.-q"[k % 8];
  auto scalar = [](const std::string& t, size_t i) {
    while (i < t.size() && IsIdentChar(t[i])) ++i;
    return i;
  };
  for (int byte = 0; byte < 256; ++byte)
    for (size_t at = 0; at < base.size(); ++at) {
      std::string t = base;
      t[at] = static_cast<char>(byte);
      for (size_t from : {size_t(0), size_t(3), at})
        CHECK_MESSAGE(SkipIdentChars(t.data(), from, t.size()) == scalar(t, from), "byte ", byte, " at ", at);
    }
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string t(rng() % 70, ' ');
    for (char& c : t) c = rng() % 4 ? "abcXYZ019_.-"[rng() % 12] : static_cast<char>(rng() % 256);
    size_t from = t.empty() ? 0 : rng() % t.size();
    CHECK(SkipIdentChars(t.data(), from, t.size()) == scalar(t, from));
  }
}

TEST_CASE("diagnostics carry 1-based line and column and the source line") {
  auto m = ParseModule("x.hlo", "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p, q)\n}\n");
  REQUIRE(!m.ok());
  const Diagnostic& d = m.status().diagnostics().front();
  CHECK(d.file == "x.hlo");
  CHECK(d.line == 4);
  CHECK(d.col == 26);
  CHECK(d.line_text == "  ROOT r = f32[2] add(p, q)");
  CHECK(m.status().ToString() ==
        "x.hlo:4:26: error: unknown operand 'q'\n    ROOT r = f32[2] add(p, q)\n  " + std::string(25, ' ') + "^\n");
}

TEST_CASE("print(parse(print(m))) == print(m)") {
  const char* text = R"(HloModule rt, entry_computation_layout={(f32[2]{0})->f32[2]{0}}
%sq (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %m = f32[] multiply(x, x)
}
ENTRY e {
  p = f32[2]{0} parameter(0), sharding={devices=[2]0,1}
  c = bf16[2,2] constant({ {1, 2}, {3, 0.1} })
  k = s4[3] constant({-8, 7, 0})
  t = (f32[2], s4[3]) tuple(p, k), metadata={op_name="a/b" source_line=3}
  ROOT g = f32[2] get-tuple-element(t), index=0, backend_config={"x": {"y": "}"}}
})";
  std::string once = PrintOrError(text);
  REQUIRE(once.rfind("HloModule rt", 0) == 0);
  CHECK(PrintOrError(once) == once);
  // XLA's literal form: spaced inner levels, bf16 with its 4 significant digits.
  CHECK(once.find("constant({ { 1, 2 }, { 3, 0.1001 } })") != std::string::npos);
  CHECK(once.find("backend_config={\"x\": {\"y\": \"}\"}}") != std::string::npos);
}

TEST_CASE("standalone literals: layouts, nesting, special values") {
  Module scratch;
  auto lit = ParseStandaloneLiteral(scratch, "arg", "f32[2,2] {{1, 2}, {nan, -inf}}");
  REQUIRE(lit.ok());
  std::string out;
  AppendLiteral(out, **lit);
  CHECK(out == "{ { 1, 2 }, { nan, -inf } }");
  auto with_layout = ParseStandaloneLiteral(scratch, "arg", "f32[2]{0} {3, 4}");
  REQUIRE(with_layout.ok());
  auto tuple = ParseStandaloneLiteral(scratch, "arg", "(s32[], pred[2]) (7, {1, 0})");
  REQUIRE(tuple.ok());
  out.clear();
  AppendLiteral(out, **tuple);
  CHECK(out == "( 7, {1, 0} )");
  CHECK(!ParseStandaloneLiteral(scratch, "arg", "s8[] 128").ok());
  CHECK(!ParseStandaloneLiteral(scratch, "arg", "u8[] -1").ok());
  CHECK(!ParseStandaloneLiteral(scratch, "arg", "f32[3] {1, 2}").ok());
  CHECK(ParseStandaloneLiteral(scratch, "arg", "u64[] 18446744073709551615").ok());
  auto payload = ParseStandaloneLiteral(scratch, "arg", "f32[] nan(0x123)");
  REQUIRE(payload.ok());
  CHECK(LoadBits(PrimitiveType::kF32, (*payload)->data.data()) == 0x7f800123u);
}

TEST_CASE("f32 literals read back exactly what from_chars reads (fast path vs. general path)") {
  std::mt19937 rng(42);
  std::string text = "f32[4000] {";
  std::vector<std::string> numbers;
  for (int i = 0; i < 4000; ++i) {
    std::string n = (rng() % 2) ? "-" : "";
    int int_digits = static_cast<int>(rng() % 6), frac_digits = static_cast<int>(rng() % 11);
    for (int d = 0; d < int_digits; ++d) n += static_cast<char>('0' + rng() % 10);
    if (int_digits == 0) n += "0";
    if (frac_digits) {
      n += '.';
      for (int d = 0; d < frac_digits; ++d) n += static_cast<char>('0' + rng() % 10);
    }
    numbers.push_back(n);
    text += (i ? ", " : "") + n;
  }
  text += "}";
  Module scratch;
  auto lit = ParseStandaloneLiteral(scratch, "arg", text);
  REQUIRE(lit.ok());
  int mismatches = 0;
  for (size_t i = 0; i < numbers.size(); ++i) {
    float want;
    std::from_chars(numbers[i].data(), numbers[i].data() + numbers[i].size(), want);
    uint32_t want_bits, got_bits;
    std::memcpy(&want_bits, &want, 4);
    std::memcpy(&got_bits, (*lit)->data.data() + i * 4, 4);
    if (want_bits != got_bits && ++mismatches < 5)
      MESSAGE(numbers[i] << ": got " << got_bits << ", want " << want_bits);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("split-input-file keeps line numbers and ignores separators inside comments") {
  auto pieces = SplitInputFile("a\n// -----\nb\n/*\n// -----\n*/\n// -----\nc\n");
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[1].first_line == 3);
  CHECK(pieces[1].text == "\n\nb\n/*\n// -----\n*/\n");
  CHECK(pieces[2].text == std::string(7, '\n') + "c\n");
  // An owned text splits the same; without a separator it is the one piece, its buffer kept.
  auto owned = SplitOwnedInput(std::string("a\n// -----\nb\n/*\n// -----\n*/\n// -----\nc\n"));
  REQUIRE(owned.size() == 3);
  CHECK(owned[1].text == pieces[1].text);
  CHECK(owned[2].first_line == 8);
  std::string whole(100, 'x');
  const char* buffer = whole.data();
  auto one = SplitOwnedInput(std::move(whole));
  REQUIRE(one.size() == 1);
  CHECK(one[0].first_line == 1);
  CHECK(one[0].text == std::string(100, 'x'));
  CHECK(one[0].text.data() == buffer);
}

TEST_CASE("hostile input gives diagnostics, never a crash") {
  const char* base =
      "HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n  c = f32[2] constant({1, 2})\n"
      "  t = (f32[2,3], f32[2]) tuple(p, c)\n  ROOT g = f32[2] get-tuple-element(t), index=1\n}\n";
  std::string text = base;
  REQUIRE(PrintOrError(text).rfind("HloModule", 0) == 0);
  // Every prefix (truncated files) and many random byte edits.
  for (size_t n = 0; n < text.size(); ++n) (void)PrintOrError(text.substr(0, n));
  std::mt19937 rng(1234);
  const char alphabet[] = "{}()[],=%:<>-?.0123456789abcfs\"'/*\n \x01\xff";
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = text;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) mutated[rng() % mutated.size()] = alphabet[rng() % (sizeof(alphabet) - 1)];
    std::string out = PrintOrError(mutated);
    if (out.find("error:") != std::string::npos) ++rejected;
  }
  CHECK(rejected > 1000);  // most edits break the module; the point is that none crashed
}

TEST_CASE("comments and quotes inside raw attribute blocks (fuzzer finding)") {
  // A `}` inside a comment or a quoted string must not close the block, and the comment is
  // dropped from the printed text; the printed module must parse to the same text again.
  for (const char* attr : {"sharding={maximal device=0// a comment with } in it\n}",
                           "frontend_attributes={a=\"}\", b='}'}", "backend_config={\"k\": /* } */ 1}"}) {
    std::string text = std::string("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), ") + attr + "\n}\n";
    std::string once = PrintOrError(text);
    REQUIRE_MESSAGE(once.rfind("HloModule", 0) == 0, once);
    CHECK(PrintOrError(once) == once);
  }
}

TEST_CASE("a backend_config string that looks like JSON but spans lines stays a string (fuzzer finding)") {
  std::string text =
      "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=\"{\\\"a\\\": 1,\n  \\\"b\\\": 2}\"\n}\n";
  std::string once = PrintOrError(text);
  REQUIRE_MESSAGE(once.rfind("HloModule", 0) == 0, once);
  CHECK(once.find("backend_config=\"{\\\"a\\\": 1,\\n  \\\"b\\\": 2}\"") != std::string::npos);
  CHECK(PrintOrError(once) == once);
  // One line, no folding needed: printed raw, as XLA does.
  std::string raw =
      PrintOrError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=\"{\\\"a\\\": 1}\"\n}\n");
  CHECK(raw.find("backend_config={\"a\": 1}") != std::string::npos);
}

TEST_CASE("a module name only %name can spell keeps its % (fuzzer finding)") {
  // `HloModule %2` printed as `HloModule 2`, which reads as a number, not a name.
  std::string printed = PrintOrError("HloModule %nan\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  CHECK(printed.rfind("HloModule %nan\n", 0) == 0);
  CHECK(PrintOrError(printed) == printed);
  // A '%' name starts with a letter or '_', as in XLA's grammar (a later fuzzer finding: a
  // parameter '%0r' printed into a signature that could not be read back).
  for (std::string name : {"%2", "%-x", "%.a"}) {
    std::string error = PrintOrError("HloModule " + name + "\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
    CHECK(error.find("expected a name after '%' (a name starts with a letter or '_')") != std::string::npos);
  }
  CHECK(PrintOrError("HloModule %jit_f\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n").rfind("HloModule jit_f\n", 0) ==
        0);
}

TEST_CASE("a JSON-looking backend_config with an escaped NUL stays a string (fuzzer finding)") {
  // It printed raw, with a real NUL byte, which the reader rejects.
  std::string printed = PrintOrError(
      "HloModule m\nENTRY e {\n  ROOT c = f32[] custom-call(), custom_call_target=\"t\", "
      "backend_config=\"{\\\"a\\\": \\\"x\\000y\\\"}\"\n}\n");
  CHECK(printed.find(R"(backend_config="{\"a\": \"x\000y\"}")") != std::string::npos);
  CHECK(PrintOrError(printed) == printed);
}

TEST_CASE("layout tails must be well formed (fuzzer finding)") {
  // An unclosed '(' used to swallow text up to a later '}', which then did not print back.
  std::string bad = PrintOrError("HloModule m\nENTRY e {\n  ROOT a = u4[18]{0:E(ast} parameter(0)\n}\n");
  CHECK(bad.find("error: unbalanced '}' in the layout") != std::string::npos);
  CHECK(PrintOrError("HloModule m\nENTRY e {\n  ROOT a = f32[2]{0:S(\"x\")} parameter(0)\n}\n").find("unexpected") !=
        std::string::npos);
  std::string good =
      PrintOrError("HloModule m\nENTRY e {\n  ROOT a = bf16[8,128]{1,0:T(8,128)(2,1)S(1)} parameter(0)\n}\n");
  CHECK(good.find("bf16[8,128]{1,0:T(8,128)(2,1)S(1)}") != std::string::npos);
  CHECK(PrintOrError(good) == good);
}

TEST_CASE("repeated shape text reuses the parsed shape only where nothing can extend it") {
  // A shape without a layout, then the same text with a layout after a space, a comment or
  // nothing: each must get its own layout, not the remembered one (and a shape written without
  // one prints without one).
  std::string text =
      "HloModule m\nENTRY e {\n"
      "  a = f32[2,3] parameter(0)\n"
      "  b = f32[2,3]{0,1} parameter(1)\n"
      "  c = f32[2,3] {0,1} parameter(2)\n"
      "  d = f32[2,3] /* c */ {0,1} parameter(3)\n"
      "  e = f32[2,3] add(f32[2,3] a, f32[2,3]{0,1} b)\n"
      "  f = f32[2,3]{0,1} add(f32[2,3]{0,1} c, f32[2,3] d)\n"
      "  g = f32[2,30] parameter(4)\n"
      "  ROOT t = (f32[2,3], f32[2,3]{0,1}, f32[2,30]) tuple(e, f, g)\n}\n";
  std::string printed = PrintOrError(text);
  CHECK(printed.find("%a = f32[2,3] parameter(0)") != std::string::npos);
  CHECK(printed.find("%b = f32[2,3]{0,1} parameter(1)") != std::string::npos);
  CHECK(printed.find("%c = f32[2,3]{0,1} parameter(2)") != std::string::npos);
  CHECK(printed.find("%d = f32[2,3]{0,1} parameter(3)") != std::string::npos);
  CHECK(printed.find("%e = f32[2,3] add(") != std::string::npos);
  CHECK(printed.find("%f = f32[2,3]{0,1} add(") != std::string::npos);
  CHECK(printed.find("%g = f32[2,30] parameter(4)") != std::string::npos);
  CHECK(printed.find("(f32[2,3], f32[2,3]{0,1}, f32[2,30]) tuple(") != std::string::npos);
  // A written operand shape that differs from the operand's is still caught.
  std::string mismatch =
      PrintOrError("HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT b = f32[2,3] negate(f32[2,4] a)\n}\n");
  CHECK(mismatch.find("is written as f32[2,4] but has shape f32[2,3]") != std::string::npos);
}

TEST_CASE("shapes beyond the ring's eight are found again in the hashed table, each with its own layout") {
  // Twenty distinct shapes, each written again after the other nineteen (so the 8-entry ring has
  // long forgotten it), with and without layouts: every reuse must give the shape its text says.
  std::string text = "HloModule m\nENTRY e {\n";
  for (int i = 0; i < 20; ++i) {
    std::string n = std::to_string(i + 1);
    text += "  p" + std::to_string(i) + " = f32[" + n + ",2] parameter(" + std::to_string(2 * i) + ")\n";
    text += "  q" + std::to_string(i) + " = f32[" + n + ",2]{0,1} parameter(" + std::to_string(2 * i + 1) + ")\n";
  }
  for (int i = 0; i < 20; ++i) {
    std::string n = std::to_string(i + 1), k = std::to_string(i);
    text += "  a" + k + " = f32[" + n + ",2] negate(f32[" + n + ",2] p" + k + ")\n";
    text += "  b" + k + " = f32[" + n + ",2]{0,1} negate(f32[" + n + ",2]{0,1} q" + k + ")\n";
    text += "  c" + k + " = f32[" + n + ",2] {0,1} negate(q" + k + ")\n";  // layout after a space
  }
  text += "  ROOT r = f32[1,2] add(a0, b0)\n}\n";
  std::string printed = PrintOrError(text);
  REQUIRE(printed.find("error") == std::string::npos);
  for (int i = 0; i < 20; ++i) {
    std::string n = std::to_string(i + 1), k = std::to_string(i);
    CHECK(printed.find("%a" + k + " = f32[" + n + ",2] negate(") != std::string::npos);
    CHECK(printed.find("%b" + k + " = f32[" + n + ",2]{0,1} negate(") != std::string::npos);
    CHECK(printed.find("%c" + k + " = f32[" + n + ",2]{0,1} negate(") != std::string::npos);
  }
  // A written operand shape that differs from the operand's is still caught after a table hit
  // (layouts aside, as in XLA: operand shapes are compared without them).
  std::string mismatch = text;
  mismatch.replace(mismatch.find("negate(f32[12,2] p11)"), 21, "negate(f32[13,2] p11)");
  CHECK(PrintOrError(mismatch).find("is written as f32[13,2] but has shape f32[12,2]") != std::string::npos);
}

TEST_CASE("text read without tokens falls back to tokens at anything unusual") {
  // Operand lists, '=' after a name, flat integer lists and raw blocks written in every way the
  // token path accepts must parse to the same module as the plain spelling.
  std::string plain =
      "HloModule m\nENTRY e {\n"
      "  a = f32[2,3] parameter(0)\n"
      "  b = f32[2,3] parameter(1)\n"
      "  c = f32[2,3] add(a, b), metadata={op_name=\"x\"}\n"
      "  d = f32[3,2] transpose(c), dimensions={1,0}\n"
      "  ROOT r = f32[3,2] negate(d)\n}\n";
  std::string odd =
      "HloModule m\nENTRY e {\n"
      "  %a = f32[2,3] parameter(0)\n"
      "  %b =f32[2,3] parameter(1)\n"
      "  %c\t= f32[2,3] add( %a ,\n %b /* b */ ), metadata=\n{op_name=\"x\"}\n"
      "  %d = f32[3,2] transpose(%c), dimensions={ 1 , /* one */ 0 }\n"
      "  ROOT %r = f32[3,2] negate(%d )\n}\n";
  std::string expected = PrintOrError(plain);
  REQUIRE(expected.find("error") == std::string::npos);
  CHECK(PrintOrError(odd) == expected);
  // Errors found on the fast path's ground still point at the right place.
  std::string unknown =
      PrintOrError("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] add(%a, %zz)\n}\n");
  CHECK(unknown.find("t.hlo:4:27: error: unknown operand 'zz'") != std::string::npos);
  std::string big = PrintOrError(
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] transpose(a), "
      "dimensions={99999999999999999999}\n}\n");
  CHECK(big.find("out of range") != std::string::npos);
  std::string negative = PrintOrError(
      "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT b = f32[3,2] transpose(a), dimensions={-1,0}\n}\n");
  CHECK(negative.find("dimensions={-1,0}") != std::string::npos);  // parsed, then rejected by the verifier
  CHECK(negative.find("error") != std::string::npos);
  CHECK(PrintOrError("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), metadata={op_name=\"}\"\n}\n")
            .find("error: expected '}' to close computation 'e', got end of file") != std::string::npos);
  // f32 rows: spaces, line breaks and comments between elements, and values the fast path hands
  // to from_chars, all read as the token path reads them.
  std::string row = PrintOrError(
      "HloModule m\nENTRY e {\n  ROOT c = f32[6] constant({1.5,  -2 ,\n 3e2, /* x */ 0.1, 123456789, -0})\n}\n");
  CHECK(row.find("constant({1.5, -2, 300, 0.1, 123456792, -0})") != std::string::npos);
  CHECK(PrintOrError("HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1, 2, 3})\n}\n").find("too many elements") !=
        std::string::npos);
}

TEST_CASE("parameter numbers read straight from the text parse and fail as the token path") {
  auto second = [](const std::string& call) {
    return PrintOrError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] " + call +
                        "\n  ROOT t = (f32[], f32[]) tuple(a, b)\n}\n");
  };
  std::string expected = second("parameter(1)");
  REQUIRE(expected.find("error") == std::string::npos);
  CHECK(second("parameter( 1 )") == expected);  // spaces: the token path
  CHECK(second("parameter(01)") == expected);   // leading zeros read as the lexer's integer does
  CHECK(second("parameter(0)").find("t.hlo:4:23: error: parameter number 0 is used twice") != std::string::npos);
  CHECK(second("parameter( 0)").find("t.hlo:4:24: error: parameter number 0 is used twice") != std::string::npos);
  CHECK(second("parameter(-1)").find("parameter number must be >= 0") != std::string::npos);
  CHECK(second("parameter(99999999999999999999)").find("is out of range") != std::string::npos);
  CHECK(second("parameter(123456789012345678)").find("has no parameter(1) but has higher-numbered ones") !=
        std::string::npos);
  CHECK(second("parameter(1").find("expected ')'") != std::string::npos);
}

TEST_CASE("the nesting limit is reported at the shape also where the shape cache would step over it") {
  // f32[] is in the shape cache long before the limit; the error points where the token path
  // points (4:4236 is the shape of the instruction at depth 257, as 557851e reports it).
  std::string body = "ROOT r = f32[] constant(0)";
  for (int i = 0; i < 128; ++i) body = "ROOT r = f32[] call(), to_apply={" + body + "}";
  std::string error = PrintOrError("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  " + body + "\n}\n");
  CHECK(error.find("t.hlo:4:4236: error: instructions nested deeper than 256") != std::string::npos);
}

TEST_CASE("operand lists of plain names and index comments read as the token path reads them") {
  // XLA's dumps write operands without '%' and put `/*index=5*/` before every fifth one; the
  // operand fast path reads both, and hands words the token path treats otherwise back to it.
  auto module = [](std::string operands) {
    return "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
           "  c = f32[] parameter(2)\n  d = f32[] parameter(3)\n  e = f32[] parameter(4)\n"
           "  f = f32[] parameter(5)\n  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(" +
           operands + ")\n}\n";
  };
  std::string expected = PrintOrError(module("a, b, c, d, e, f"));
  REQUIRE(expected.find("error") == std::string::npos);
  CHECK(PrintOrError(module("a, b, c, d, e, /*index=5*/f")) == expected);
  CHECK(PrintOrError(module("%a, %b, %c, %d, %e, /*index=5*/%f")) == expected);
  CHECK(PrintOrError(module("/*index=0*/a,b ,c, d,  e, /*index=5*/ f")) == expected);
  CHECK(PrintOrError(module("a, b, c, d, e, /*index=*/f")) == expected);  // other comments: tokens
  CHECK(PrintOrError(module("a, b, c, d, e, /*index=5 */f")) == expected);
  CHECK(PrintOrError(module("a, b, c, d, e,\n f")) == expected);
  CHECK(PrintOrError(module("a, b, c, d, e, /*index=5*/g")).find("t.hlo:9:98: error: unknown operand 'g'") !=
        std::string::npos);
  CHECK(PrintOrError(module("a, b, c, d, e, /*index=5")).find("unterminated /* comment") != std::string::npos);
  // Words that are not names to the token path stay errors, found where it finds them.
  for (const char* word : {"nan", "true", "f32", "ROOT"}) {
    std::string text = std::string("HloModule m\nENTRY e {\n  ") + word +
                       " = f32[] parameter(0)\n  ROOT r = f32[] add(" + word + ", " + word + ")\n}\n";
    CHECK_MESSAGE(PrintOrError(text).find("error") != std::string::npos, word);
  }
}

TEST_CASE("deep nesting and huge shapes are errors") {
  std::string deep = "HloModule m\nENTRY e {\n  ROOT p = " + std::string(1000, '(') + "f32[]" + std::string(1000, ')') +
                     " parameter(0)\n}\n";
  CHECK(PrintOrError(deep).find("nesting deeper than") != std::string::npos);
  std::string deep_literal =
      "HloModule m\nENTRY e {\n  ROOT c = f32[" + std::string(300 * 2 - 1, ' ') + "] constant(1)\n}\n";
  (void)PrintOrError(deep_literal);
  CHECK(PrintOrError("HloModule m\nENTRY e {\n  ROOT p = f32[9223372036854775807,2] parameter(0)\n}\n").find("2^63") !=
        std::string::npos);
  CHECK(PrintOrError("HloModule m\nENTRY e {\n  ROOT p = f32[99999999999999999999] parameter(0)\n}\n")
            .find("out of range") != std::string::npos);
}

TEST_CASE("the verifier reports every problem") {
  std::string out = PrintOrError(
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = s32[2] parameter(1)\n"
      "  x = f32[2] add(a, a)\n  y = f32[3] negate(a)\n  z = f32[2] broadcast(b), dimensions={0}\n  ROOT r = f32[2] "
      "copy(x)\n}\n");
  CHECK(out.find("t.hlo:6:3: error: 'negate' result shape is f32[3] but its operands give f32[2]") !=
        std::string::npos);
  CHECK(out.find("t.hlo:7:3: error: broadcast changes the element type from s32 to f32") != std::string::npos);
}

TEST_CASE("metadata and frontend_attributes are typed key/value lists that print back byte for byte") {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0), metadata={op_type="add" op_name="jit(f)/a\'b\\c" source_file="f.py" source_line=12 stack_frame_id=-3}
  b = f32[2] negate(a), frontend_attributes={_xla_compute_type="host", sdy={mesh = #sdy.mesh<[]>}, n="7"}
  ROOT c = f32[2] abs(b), metadata={op_name='odd'  ,source_line=007 preserve_layout=true}
})";
  auto m = ParseModule("t.hlo", text);
  REQUIRE(m.ok());
  const Computation& e = *(*m)->entry;
  const Attribute* md = e.instructions[0]->FindAttr(AttrId::kMetadata);
  REQUIRE(md);
  CHECK(md->kind == AttrKind::KeyValues);
  CHECK(md->text.empty());  // written as the printer writes it: nothing kept
  REQUIRE(md->entries.size() == 5);
  CHECK(md->entries[0].key == "op_type");
  CHECK(md->entries[0].kind == KeyValueKind::kString);
  CHECK(md->entries[0].text == "add");
  CHECK(md->entries[1].text == "jit(f)/a'b\\c");  // unescaped
  CHECK(md->entries[3].key == "source_line");
  CHECK(md->entries[3].kind == KeyValueKind::kInt);
  CHECK(md->entries[3].i == 12);
  CHECK(md->entries[4].i == -3);

  const Attribute* fa = e.instructions[1]->FindAttr(AttrId::kFrontendAttributes);
  REQUIRE(fa);
  CHECK(fa->kind == AttrKind::KeyValues);
  REQUIRE(fa->entries.size() == 3);
  CHECK(fa->entries[1].key == "sdy");
  CHECK(fa->entries[1].kind == KeyValueKind::kBare);
  CHECK(fa->entries[1].text == "{mesh = #sdy.mesh<[]>}");
  CHECK(fa->entries[2].text == "7");
  CHECK(fa->entries[2].kind == KeyValueKind::kString);

  // Spelled otherwise than the printer writes it (quotes, separators, leading zeros): the
  // entries are typed all the same and the spelling is kept for printing.
  const Attribute* odd = e.root->FindAttr(AttrId::kMetadata);
  REQUIRE(odd);
  CHECK(!odd->text.empty());
  REQUIRE(odd->entries.size() == 3);
  CHECK(odd->entries[0].text == "odd");
  CHECK(odd->entries[1].kind == KeyValueKind::kInt);
  CHECK(odd->entries[1].i == 7);
  CHECK(odd->entries[2].kind == KeyValueKind::kBare);
  CHECK(odd->entries[2].text == "true");

  std::string printed = PrintModule(**m);
  CHECK(
      printed.find(
          R"(metadata={op_type="add" op_name="jit(f)/a\'b\\c" source_file="f.py" source_line=12 stack_frame_id=-3})") !=
      std::string::npos);
  CHECK(printed.find(R"(frontend_attributes={_xla_compute_type="host", sdy={mesh = #sdy.mesh<[]>}, n="7"})") !=
        std::string::npos);
  CHECK(printed.find(R"(metadata={op_name='odd',source_line=007 preserve_layout=true})") !=
        std::string::npos);  // folded
  CHECK(PrintOrError(printed) == printed);

  // A value written across lines or with comments goes the general way and reads the same.
  std::string wrapped = PrintOrError(
      "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), metadata={op_type=\"add\"\n   /* c */ "
      "op_name=\"x\"}\n}\n");
  CHECK(wrapped.find(R"(metadata={op_type="add" op_name="x"})") != std::string::npos);

  // Changing the entries and clearing the spelling prints the typed value as XLA writes it.
  Attribute copy = *odd;
  copy.text = {};
  std::string out;
  AppendAttributeValue(out, copy);
  CHECK(out == R"({op_name="odd" source_line=7 preserve_layout=true})");
}

TEST_CASE("malformed metadata is an error at the value") {
  for (const char* bad : {"metadata={op_name}", "metadata={op_name=}", "metadata={=\"x\"}", "metadata=op_name",
                          "metadata={a=\"x\"\"y\"}", "frontend_attributes={a={b}c}"}) {
    std::string out =
        PrintOrError(std::string("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), ") + bad + "\n}\n");
    CHECK_MESSAGE(out.find("t.hlo:3:") != std::string::npos, bad);
    CHECK_MESSAGE(out.find("is not a") != std::string::npos, out);
  }
}

TEST_CASE("metadata read straight from the source reads as the folded general way does") {
  // `metadata={...}` takes the one-pass reader; `metadata=\n{...}` the token path (capture,
  // fold, decode). Both must accept the same values and print them the same.
  std::mt19937 rng(99);
  const char* pieces[] = {"op_name", "=",      "\"a/b\"", "'q'",      " ",         "  ",        ",",       "12",
                          "-0",      "007",    "x.y",     "{",        "}",         "{k=\"}\"}", "\"\\n\"", "\n",
                          "/* c */", "// c\n", "/",       "\"\\\\\"", "\"\\x41\"", "true"};
  int accepted = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string value = "{";
    for (int n = static_cast<int>(rng() % 8); n > 0; --n) value += pieces[rng() % std::size(pieces)];
    value += "}";
    auto print = [&](const std::string& sep) {
      return PrintOrError("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), metadata=" + sep + value + "\n}\n");
    };
    std::string fast = print(""), general = print("\n");
    bool fast_ok = fast.rfind("HloModule", 0) == 0, general_ok = general.rfind("HloModule", 0) == 0;
    CHECK_MESSAGE(fast_ok == general_ok, value << "\n" << fast << "\n" << general);
    if (fast_ok && general_ok) {
      ++accepted;
      CHECK_MESSAGE(fast == general, value);
      CHECK_MESSAGE(PrintOrError(fast) == fast, value);
    }
  }
  CHECK(accepted > 100);
}

// The plain-signature shortcut (SkipPlainSignatureParameters) must accept and refuse exactly
// what the token path does: the second computation's signature repeats cached shapes.
TEST_CASE("signatures written plainly after cached shapes parse and fail as the token path") {
  auto module_with = [](const std::string& signature) {
    return "HloModule m\n\n%f (x: f32[2], y: s32[]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
           "  %y = s32[] parameter(1)\n  ROOT %n = f32[2] negate(%x)\n}\n\n%g " +
           signature +
           " -> f32[2] {\n  %a = f32[2] parameter(0)\n  ROOT %b = f32[2] negate(%a)\n}\n\n"
           "ENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n  ROOT %c = f32[2] call(%p), "
           "to_apply=%g\n}\n";
  };
  std::string good = PrintOrError(module_with("(a: f32[2])"));
  CHECK(good.rfind("HloModule", 0) == 0);
  CHECK(PrintOrError(module_with("(a: f32[2], z: s32[])")).rfind("HloModule", 0) == 0);
  // Spacing the shortcut does not take goes the token path, with the same result.
  CHECK(PrintOrError(module_with("( a:f32[2] )")) == good);
  CHECK(PrintOrError(module_with("(a: f32[2],\n    z: s32[])")).rfind("HloModule", 0) == 0);
  // Errors point where the token path points.
  std::string missing_colon = PrintOrError(module_with("(a: f32[2], z s32[])"));
  CHECK(missing_colon.find("t.hlo:9:16: error: expected parameter") != std::string::npos);
  CHECK(missing_colon.find("expected") != std::string::npos);
  std::string bad_shape = PrintOrError(module_with("(a: f32[2], z: f32[2)"));
  CHECK(bad_shape.find("t.hlo:9:") != std::string::npos);
  std::string no_arrow = PrintOrError(module_with("(a: f32[2]) f32[2] {"));
  CHECK(no_arrow.find("'->'") != std::string::npos);
  // The shortcut reads raw bytes: every truncation and many byte edits inside the second
  // signature must end in a diagnostic or a module, never past the text (ASan in tools/check).
  std::string text = module_with("(a: f32[2], z: s32[])");
  size_t from = text.find("%g (");
  size_t to = text.find('{', from);
  for (size_t n = from; n <= to + 1; ++n) (void)PrintOrError(text.substr(0, n));
  std::mt19937 rng(99);
  const char alphabet[] = "(),:%[] \nfs23{}-/*";
  for (int i = 0; i < 2000; ++i) {
    std::string mutated = text;
    for (int e = 0; e < 2; ++e) mutated[from + rng() % (to - from)] = alphabet[rng() % (sizeof(alphabet) - 1)];
    (void)PrintOrError(mutated);
  }
}

TEST_CASE("generated names: .anon and compact get-tuple-elements, unique across the module") {
  // A written name that a generated one would take pushes the generated one to `.N`, whatever
  // the order they come in (XLA's name uniquer after the whole module is read).
  std::string printed = PrintOrError(R"(HloModule m
c {
  p = (f32[2], s32[]) parameter(0)
  ROOT n = f32[2] negate(f32[2] negate(p#0))
}
ENTRY e {
  q = (f32[2], s32[]) parameter(0)
  a = f32[2] call(q), to_apply=c
  b = f32[2] add(p#0, a)
  ROOT negate.anon = f32[2] negate(negate(b))
})");
  CHECK(printed.find("unknown operand 'p'") != std::string::npos);  // a compact GTE needs a defined base
  printed = PrintOrError(R"(HloModule m
c {
  p = (f32[2], s32[]) parameter(0)
  ROOT n = f32[2] negate(f32[2] negate(p#0))
}
ENTRY e {
  q = (f32[2], s32[]) parameter(0)
  q_0 = f32[2] get-tuple-element(q), index=0
  a = f32[2] call(q), to_apply=c
  b = f32[2] add(q#0, a)
  ROOT negate.anon = f32[2] negate(negate(b))
})");
  CHECK(printed.find("%p_0 = f32[2] get-tuple-element(%p), index=0") != std::string::npos);
  CHECK(printed.find("%negate.anon.1 = f32[2] negate(%p_0)") != std::string::npos);
  CHECK(printed.find("%q_0.1 = f32[2] get-tuple-element(%q), index=0") != std::string::npos);
  CHECK(printed.find("%negate.anon.2 = f32[2] negate(%b)") != std::string::npos);
  CHECK(printed.find("ROOT %negate.anon = f32[2] negate(%negate.anon.2)") != std::string::npos);
  CHECK(PrintOrError(printed) == printed);
}

TEST_CASE("old forms are read as today's forms and noted once per form") {
  auto m = ParseModule("t.hlo", R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  c = f32[2,2] constant(f32[2,2] { { 1, 2 }, { 3, 4 } })
  d = f32[2,2] constant(f32[2,2] { { 5, 6 }, { 7, 8 } })
  g = pred[2] greater-than(a, a)
  l = pred[2] less-than(a, a)
  ROOT t = (pred[2], pred[2], f32[2,2], f32[2,2]) tuple(g, l, c, d)
})");
  REQUIRE(m.ok());
  REQUIRE((*m)->old_forms.size() == 3);
  CHECK((*m)->old_forms[0].first.line == 4);
  CHECK((*m)->old_forms[0].first.message.find("def8f96bee") != std::string::npos);
  CHECK((*m)->old_forms[0].more == 1);
  CHECK((*m)->old_forms[1].first.message.find("'greater-than'") != std::string::npos);
  CHECK((*m)->old_forms[2].first.message.find("direction=LT") != std::string::npos);
  CHECK(VerifyModule(**m).ok());
  std::string printed = PrintModule(**m);
  CHECK(printed.find("compare(%a, %a), direction=GT") != std::string::npos);
  CHECK(printed.find("constant({ { 1, 2 }, { 3, 4 } })") != std::string::npos);
  // Today's text has no old form.
  auto again = ParseModule("t.hlo", printed);
  REQUIRE(again.ok());
  CHECK((*again)->old_forms.empty());
}
