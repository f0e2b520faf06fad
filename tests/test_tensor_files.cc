// SPDX-License-Identifier: Apache-2.0
// Tensor files (driver/tensor_files.h): .npy header edge cases, the descr of every element type,
// write -> read round trips for every array type, numpy's exact header bytes, zip archives, and
// damaged inputs (every prefix and many one-byte corruptions) that must fail without crashing.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

#include "driver/tensor_files.h"
#include "driver/values.h"
#include "ir/ir.h"

using namespace nhlo;

namespace {

std::string Npy(std::string_view header, std::string_view data = "", int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  uint32_t n = static_cast<uint32_t>(header.size());
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>(n >> 24);
  }
  out += header;
  out += data;
  return out;
}

std::string HeaderError(std::string_view header, int major = 1) {
  Result<NpyHeader> h = ParseNpyHeader(Npy(header, "", major), "t.npy");
  return h.ok() ? "" : h.status().message();
}

TensorSpec Spec(PrimitiveType t, std::vector<int64_t> dims) { return {"parameter 1 'p'", "p", t, std::move(dims), {}}; }

std::string ReadError(std::string_view bytes, const TensorSpec& spec) {
  Result<Value> v = ReadNpy(bytes, "t.npy", spec);
  return v.ok() ? "" : v.status().message();
}

std::vector<PrimitiveType> ArrayTypes() {
  std::vector<PrimitiveType> types;
#define NHLO_PRIMITIVE_TYPE(Enum, text, code, bits, kind, numpy, ml_dtypes) \
  if (IsArrayType(PrimitiveType::k##Enum)) types.push_back(PrimitiveType::k##Enum);
#include "types/primitive_types.def"
#undef NHLO_PRIMITIVE_TYPE
  return types;
}

}  // namespace

TEST_CASE("npy descr: numpy's own for numpy types, ml_dtypes' void for the rest") {
  CHECK(NpyDescr(PrimitiveType::kPred) == "|b1");
  CHECK(NpyDescr(PrimitiveType::kS8) == "|i1");
  CHECK(NpyDescr(PrimitiveType::kU64) == "<u8");
  CHECK(NpyDescr(PrimitiveType::kF16) == "<f2");
  CHECK(NpyDescr(PrimitiveType::kC128) == "<c16");
  CHECK(NpyDescr(PrimitiveType::kBF16) == "<V2");
  CHECK(NpyDescr(PrimitiveType::kF8E4M3FN) == "<V1");
  CHECK(NpyDescr(PrimitiveType::kS4) == "<V1");
  CHECK(NpyDescr(PrimitiveType::kF4E2M1FN) == "<V1");
  CHECK(NpyDescr(PrimitiveType::kF6E3M2FN) == "<V1");
  CHECK(NpyDescr(PrimitiveType::kTuple).empty());
  CHECK(NpyDescr(PrimitiveType::kToken).empty());
  for (PrimitiveType t : ArrayTypes()) CHECK(!NpyDescr(t).empty());
}

TEST_CASE("npy header: the forms numpy and others write") {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n";
  Result<NpyHeader> h = ParseNpyHeader(Npy(header), "t.npy");
  REQUIRE(h.ok());
  CHECK(h->descr == "<f4");
  CHECK(!h->fortran_order);
  CHECK(h->shape == std::vector<int64_t>{2, 3});
  CHECK(h->data_offset == 10 + header.size());
  // Scalars, one dimension, no trailing comma, double quotes, other key order, Python 2 longs,
  // formats 2.0 and 3.0.
  CHECK(ParseNpyHeader(Npy("{'descr': '|b1', 'fortran_order': True, 'shape': ()}\n"), "t")->shape.empty());
  CHECK(ParseNpyHeader(Npy("{'shape': (7,), 'descr': \"<i8\", 'fortran_order': False}"), "t")->shape ==
        std::vector<int64_t>{7});
  CHECK(ParseNpyHeader(Npy("{'descr':'<i8','fortran_order':False,'shape':(3L, 4L)}"), "t")->shape ==
        std::vector<int64_t>{3, 4});
  CHECK(ParseNpyHeader(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }\n", "", 2), "t")->major == 2);
  CHECK(ParseNpyHeader(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", "", 3), "t")->major == 3);
}

TEST_CASE("npy header: malformed headers are refused with the reason") {
  CHECK(HeaderError("{'descr': '<f4', 'fortran_order': False}").find("lacks 'shape'") != std::string::npos);
  CHECK(HeaderError("{'descr': '<f4', 'shape': (1,)}").find("lacks 'fortran_order'") != std::string::npos);
  CHECK(HeaderError("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3").find("malformed") != std::string::npos);
  CHECK(HeaderError("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}").find("dimension size") !=
        std::string::npos);
  CHECK(
      HeaderError("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}").find("out of range") !=
      std::string::npos);
  CHECK(HeaderError("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}").find("True or False") != std::string::npos);
  CHECK(HeaderError("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}").find("structured") !=
        std::string::npos);
  CHECK(HeaderError("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}").find("unexpected key 'x'") !=
        std::string::npos);
  CHECK(HeaderError("{'descr': '<f4', 'fortran_order': False, 'shape': ()} junk").find("after the dictionary") !=
        std::string::npos);
  CHECK(HeaderError("[1, 2]").find("not a dictionary") != std::string::npos);
  CHECK(HeaderError("{'descr': 'a\\'b'}").find("malformed") != std::string::npos);
  // The magic, the version and the header length.
  CHECK(!ParseNpyHeader("", "t").ok());
  CHECK(ParseNpyHeader(std::string("\x93NUM", 4), "t").status().message().find("truncated") != std::string::npos);
  CHECK(ParseNpyHeader("PK\x03\x04 rest of a zip", "t").status().message().find("not a .npy") != std::string::npos);
  std::string v4 = Npy("{}");
  v4[6] = 4;
  CHECK(ParseNpyHeader(v4, "t").status().message().find("version 4.0") != std::string::npos);
  std::string huge = Npy("{", "", 2);
  huge[8] = huge[9] = huge[10] = '\xff';
  huge[11] = '\x7f';
  CHECK(ParseNpyHeader(huge, "t").status().message().find("at most") != std::string::npos);
  std::string cut = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()}");
  CHECK(ParseNpyHeader(cut.substr(0, cut.size() - 3), "t").status().message().find("truncated") != std::string::npos);
}

TEST_CASE("npy read: descr, shape and size checks name the file, the parameter and both sides") {
  std::string f32x2 = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", std::string(8, '\0'));
  CHECK(ReadError(f32x2, Spec(PrimitiveType::kF32, {2})).empty());
  CHECK(ReadError(f32x2, Spec(PrimitiveType::kBF16, {2})) ==
        "element type f32 (descr '<f4') but parameter 1 'p' is bf16[2]");
  CHECK(ReadError(f32x2, Spec(PrimitiveType::kF32, {3})) == "shape [2] but parameter 1 'p' is f32[3]");
  CHECK(ReadError(f32x2, Spec(PrimitiveType::kF32, {1, 2})) == "shape [2] but parameter 1 'p' is f32[1,2]");
  CHECK(ReadError(f32x2.substr(0, f32x2.size() - 1), Spec(PrimitiveType::kF32, {2})) ==
        "truncated .npy file: f32[2] needs 8 bytes of data but the file holds 7");
  CHECK(ReadError(f32x2 + "x", Spec(PrimitiveType::kF32, {2})) ==
        "the .npy file holds 1 bytes after the 8 bytes of its array");
  std::string v2 = Npy("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }\n", std::string(4, '\0'));
  CHECK(ReadError(v2, Spec(PrimitiveType::kBF16, {2})).empty());
  CHECK(ReadError(v2, Spec(PrimitiveType::kF16, {2})).empty());  // untyped bytes fit any 2-byte type
  CHECK(ReadError(v2, Spec(PrimitiveType::kF32, {2})) ==
        "2-byte void elements (descr '<V2') but parameter 1 'p' is f32[2]");
  CHECK(ReadError(v2, Spec(PrimitiveType::kF8E5M2, {2})) ==
        "2-byte void elements (descr '<V2') but parameter 1 'p' is f8e5m2[2]");
  std::string u1 = Npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }\n", std::string(2, '\0'));
  CHECK(ReadError(u1, Spec(PrimitiveType::kF8E4M3FN, {2})).empty());  // raw bits
  CHECK(ReadError(u1, Spec(PrimitiveType::kS8, {2})) == "element type u8 (descr '|u1') but parameter 1 'p' is s8[2]");
  std::string f1 = Npy("{'descr': '<f1', 'fortran_order': False, 'shape': (2,), }\n", std::string(2, '\0'));
  CHECK(ReadError(f1, Spec(PrimitiveType::kF8E5M2, {2})).empty());  // older ml_dtypes' float8_e5m2
  CHECK(ReadError(f1, Spec(PrimitiveType::kF8E4M3FN, {2})) == "descr '<f1' but parameter 1 'p' is f8e4m3fn[2]");
  std::string named =
      Npy("{'descr': 'float8_e4m3fn', 'fortran_order': False, 'shape': (2,), }\n", std::string(2, '\0'));
  CHECK(ReadError(named, Spec(PrimitiveType::kF8E4M3FN, {2})).empty());
  CHECK(ReadError(named, Spec(PrimitiveType::kF8E5M2, {2})) ==
        "element type f8e4m3fn (descr 'float8_e4m3fn') but parameter 1 'p' is f8e5m2[2]");
  std::string text = Npy("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }\n", std::string(24, '\0'));
  CHECK(ReadError(text, Spec(PrimitiveType::kF32, {2})) == "descr '<U3' but parameter 1 'p' is f32[2]");
  std::string bad = Npy("{'descr': 'what?', 'fortran_order': False, 'shape': (2,), }\n");
  CHECK(ReadError(bad, Spec(PrimitiveType::kF32, {2})) == "descr 'what?' but parameter 1 'p' is f32[2]");
}

TEST_CASE("npy read: big-endian data is swapped, Fortran order transposed, sub-byte values normalised") {
  std::string be("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8);  // 1, -2
  Result<Value> v = ReadNpy(Npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", be), "t",
                            Spec(PrimitiveType::kF32, {2}));
  REQUIRE(v.ok());
  CHECK(PrintValue(*v) == "f32[2] {1, -2}");
  std::string c64("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8);
  v = ReadNpy(Npy("{'descr': '>c8', 'fortran_order': False, 'shape': (), }\n", c64), "t",
              Spec(PrimitiveType::kC64, {}));
  REQUIRE(v.ok());
  CHECK(PrintValue(*v) == "c64[] (1, -2)");
  // A [2,3,2] s8 array in Fortran order: element (i, j, k) at i + 2j + 6k holds 100i + 10j + k.
  std::string f(12, '\0');
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) f[i + 2 * j + 6 * k] = static_cast<char>(100 * i + 10 * j + k);
  v = ReadNpy(Npy("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 3, 2), }\n", f), "t",
              Spec(PrimitiveType::kS8, {2, 3, 2}));
  REQUIRE(v.ok());
  CHECK(PrintValue(*v) == "s8[2,3,2] { { {0, 1}, {10, 11}, {20, 21} }, { {100, 101}, {110, 111}, {120, 121} } }");
  // int4 as ml_dtypes stores it (low bits; the high bits are ignored), pred as any nonzero byte.
  v = ReadNpy(Npy("{'descr': '<V1', 'fortran_order': False, 'shape': (3,), }\n", "\x0f\xf8\x07"), "t",
              Spec(PrimitiveType::kS4, {3}));
  REQUIRE(v.ok());
  CHECK(PrintValue(*v) == "s4[3] {-1, -8, 7}");
  v = ReadNpy(Npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n", std::string("\x00\x05", 2)), "t",
              Spec(PrimitiveType::kPred, {2}));
  REQUIRE(v.ok());
  CHECK(v->bytes == std::string("\x00\x01", 2));
}

TEST_CASE("npy write: numpy's header bytes, and a write -> read round trip for every array type") {
  std::ifstream f("testdata/tensors/x_f32.npy", std::ios::binary);
  std::string numpy_bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(!numpy_bytes.empty());
  Result<Value> x = ParseValue("f32[2,3] {{1, 2, 3}, {-1, 0.5, 2}}", "x");
  REQUIRE(x.ok());
  Result<std::string> written = WriteNpy(*x);
  REQUIRE(written.ok());
  CHECK(*written == numpy_bytes);
  for (PrimitiveType t : ArrayTypes()) {
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{}, {5}, {2, 3}, {0, 4}}) {
      CAPTURE(PrimitiveTypeName(t));
      Module scratch;
      Value v = RandomValue(scratch.MakeArrayShape(t, dims), 42);
      Result<std::string> npy = WriteNpy(v);
      REQUIRE(npy.ok());
      CHECK(npy->size() % 64 == (v.bytes.size() % 64));  // the data starts 64-byte aligned
      Result<NpyHeader> h = ParseNpyHeader(*npy, "t");
      REQUIRE(h.ok());
      CHECK(h->descr == NpyDescr(t));
      Result<Value> back = ReadNpy(*npy, "t", Spec(t, dims));
      REQUIRE(back.ok());
      CHECK(back->bytes == v.bytes);
      CHECK(PrintValue(*back) == PrintValue(v));
    }
  }
  Value tuple;
  tuple.type = PrimitiveType::kTuple;
  CHECK(!WriteNpy(tuple).ok());
}

TEST_CASE("zip: stored archives round-trip; damaged ones fail cleanly") {
  std::vector<ZipEntry> entries = {{"a.npy", "hello"}, {"b.npy", std::string(1000, 'x')}, {"empty.npy", ""}};
  Result<std::string> zip = WriteZip(entries);
  REQUIRE(zip.ok());
  Result<std::string> again = WriteZip(entries);
  CHECK(*again == *zip);  // deterministic
  Result<std::vector<ZipEntry>> back = ReadZip(*zip, "t.npz");
  REQUIRE(back.ok());
  REQUIRE(back->size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK((*back)[i].name == entries[i].name);
    CHECK((*back)[i].bytes == entries[i].bytes);
  }
  CHECK(ReadZip(*WriteZip({}), "t")->empty());
  // Every prefix and many one-byte corruptions: an error or a result, never a crash.
  for (size_t n = 0; n < zip->size(); ++n) CHECK(!ReadZip(zip->substr(0, n), "t").ok());
  for (size_t at = 0; at < zip->size(); ++at) {
    for (char byte : {'\0', '\xff', '\x7f'}) {
      std::string bad = *zip;
      bad[at] = byte;
      (void)ReadZip(bad, "t");
    }
  }
  CHECK(ReadZip("not a zip at all, but long enough to look", "t").status().message().find("not a .npz") !=
        std::string::npos);
}

TEST_CASE("npy read: every prefix and corruption of a file fails cleanly") {
  Module scratch;
  Value v = RandomValue(scratch.MakeArrayShape(PrimitiveType::kF32, {2, 3}), 1);
  std::string npy = *WriteNpy(v);
  TensorSpec spec = Spec(PrimitiveType::kF32, {2, 3});
  for (size_t n = 0; n < npy.size(); ++n) CHECK(!ReadNpy(npy.substr(0, n), "t", spec).ok());
  for (size_t at = 0; at < 128; ++at) {
    for (char byte : {'\0', '\xff', '(', ',', '\'', '9'}) {
      std::string bad = npy;
      bad[at] = byte;
      (void)ReadNpy(bad, "t", spec);
    }
  }
}
