// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for sort and TopK under comparators that need not be strict weak orders
// (docs/reliability.md, "Comparators"). The fuzzer's bytes give K key values, a K x K table of
// answers (the comparator looks its answer up: pred[K,K] dynamic-slice at (a, b)), the keys, the
// form (sort of the keys, sort of keys and an iota payload, the TopK custom call with k < n),
// the operand's rank and sort dimension, and is_stable. The module is compiled, lowered and run.
// Findings (each aborts): an error, a sanitizer report, or a result that breaks the guarantee:
//   - always: the result is a permutation of the operand along the sorted dimension (the
//     payload says which element went where, and the keys match it); TopK's indices are
//     distinct, in range, and its values are the operand's at those indices;
//   - when the table is a strict weak order on the keys present: the order is sorted (no
//     element before a neighbour the comparator puts first), ties in operand order when the
//     sort is stable (and with the payload, which nhlo sorts stably always: docs); TopK's first
//     k are the k first of that order.
// Build and run: tools/fuzz-sort [SECONDS]
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/common.h"
#include "interp/interp.h"

namespace {

struct Case {
  int keys = 2;                  // K: keys are 0..K-1
  std::vector<uint8_t> table;    // table[a*K+b]: comparator(a, b)
  std::vector<int32_t> operand;  // row-major, dims below
  std::vector<int64_t> dims;     // rank 1 or 2
  int dimension = 0;             // the sorted dimension (TopK: the last)
  enum Form { kSort, kSortWithPayload, kTopK } form = kSort;
  bool stable = false;
  int64_t k = 1;  // TopK
};

std::string List(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::string Shape(const char* type, const std::vector<int64_t>& dims) {
  return std::string(type) + "[" + List(dims) + "]";
}

std::string Module(const Case& c) {
  std::ostringstream m;
  m << "HloModule fuzz_sort\n\ncmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n";
  if (c.form == Case::kSortWithPayload) m << "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n";
  m << "  t = pred[" << c.keys << "," << c.keys << "] constant({";
  for (int a = 0; a < c.keys; ++a) {
    m << (a ? ", {" : "{");
    for (int b = 0; b < c.keys; ++b) m << (b ? ", " : "") << (c.table[a * c.keys + b] ? "true" : "false");
    m << "}";
  }
  m << "})\n  s = pred[1,1] dynamic-slice(t, a, b), dynamic_slice_sizes={1,1}\n  ROOT r = pred[] reshape(s)\n}\n\n";
  m << "ENTRY e {\n  x = " << Shape("s32", c.dims) << " constant({";
  const int64_t cols = c.dims.size() == 2 ? c.dims[1] : c.dims[0];
  for (size_t i = 0; i < c.operand.size(); ++i) {
    if (c.dims.size() == 2 && i % cols == 0)
      m << (i ? "}, {" : "{");
    else if (i)
      m << ", ";
    m << c.operand[i];
  }
  m << (c.dims.size() == 2 ? "}" : "") << "})\n";
  const std::string stable = c.stable ? ", is_stable=true" : "";
  const std::string dim = "dimensions={" + std::to_string(c.dimension) + "}";
  switch (c.form) {
    case Case::kSort:
      m << "  ROOT s = " << Shape("s32", c.dims) << " sort(x), " << dim << stable << ", to_apply=cmp\n";
      break;
    case Case::kSortWithPayload:
      m << "  i = " << Shape("s32", c.dims) << " iota(), iota_dimension=" << c.dimension << "\n";
      m << "  ROOT s = (" << Shape("s32", c.dims) << ", " << Shape("s32", c.dims) << ") sort(x, i), " << dim << stable
        << ", to_apply=cmp\n";
      break;
    case Case::kTopK: {
      std::vector<int64_t> out = c.dims;
      out.back() = c.k;
      m << "  ROOT s = (" << Shape("s32", out) << ", " << Shape("s32", out)
        << ") custom-call(x), custom_call_target=\"TopK\", called_computations={cmp}\n";
      break;
    }
  }
  m << "}\n";
  return m.str();
}

[[noreturn]] void Finding(const std::string& what, const std::string& text, const nhlo::Status* status = nullptr) {
  std::fprintf(stderr, "fuzz-sort: %s\n%s%s\n", what.c_str(), status ? status->ToString().c_str() : "", text.c_str());
  std::abort();
}

// Whether the table is a strict weak order on the keys in `present`: irreflexive, transitive,
// and incomparability transitive.
bool StrictWeakOrder(const Case& c, const std::vector<int>& present) {
  auto less = [&](int a, int b) { return c.table[a * c.keys + b] != 0; };
  for (int a : present) {
    if (less(a, a)) return false;
    for (int b : present)
      for (int d : present) {
        if (less(a, b) && less(b, d) && !less(a, d)) return false;
        bool ab = !less(a, b) && !less(b, a), bd = !less(b, d) && !less(d, b), ad = !less(a, d) && !less(d, a);
        if (ab && bd && !ad) return false;
      }
  }
  return true;
}

std::vector<int32_t> Ints(const nhlo::Value& v) {
  std::vector<int32_t> out(v.bytes.size() / 4);
  if (!out.empty()) std::memcpy(out.data(), v.bytes.data(), out.size() * 4);
  return out;
}

void Check(const Case& c, const std::string& text, const nhlo::Value& result) {
  auto less = [&](int32_t a, int32_t b) { return c.table[a * c.keys + b] != 0; };
  std::set<int> present_set(c.operand.begin(), c.operand.end());
  const bool ordered = StrictWeakOrder(c, std::vector<int>(present_set.begin(), present_set.end()));
  // Lines along the sorted dimension: (start, stride, length) in the operand; results use the
  // same layout except TopK's, whose last dimension is k.
  const int64_t rows = c.dims.size() == 2 ? c.dims[0] : 1, cols = c.dims.back();
  const bool along_rows = c.dims.size() == 2 && c.dimension == 0;
  const int64_t lines = along_rows ? cols : rows, length = along_rows ? rows : cols;
  auto at = [&](int64_t line, int64_t i, int64_t width) { return along_rows ? i * width + line : line * width + i; };
  if (c.form == Case::kTopK) {
    if (!result.IsTuple() || result.tuple.size() != 2) Finding("TopK result is not a pair", text);
    std::vector<int32_t> values = Ints(result.tuple[0]), indices = Ints(result.tuple[1]);
    for (int64_t line = 0; line < lines; ++line) {
      std::set<int32_t> seen;
      for (int64_t j = 0; j < c.k; ++j) {
        int32_t index = indices[at(line, j, c.k)], value = values[at(line, j, c.k)];
        if (index < 0 || index >= length || !seen.insert(index).second)
          Finding("TopK index repeated or out of range", text);
        if (value != c.operand[at(line, index, cols)]) Finding("TopK value is not the operand's at its index", text);
        if (ordered && j > 0 && less(value, values[at(line, j - 1, c.k)])) Finding("TopK values out of order", text);
      }
      if (!ordered || c.k == 0) continue;
      int32_t last = values[at(line, c.k - 1, c.k)];
      for (int64_t i = 0; i < length; ++i)
        if (!seen.count(static_cast<int32_t>(i)) && less(c.operand[at(line, i, cols)], last))
          Finding("TopK left out an element that comes before its last", text);
    }
    return;
  }
  const nhlo::Value& keys_value = c.form == Case::kSort ? result : result.tuple.at(0);
  std::vector<int32_t> keys = Ints(keys_value);
  if (keys.size() != c.operand.size()) Finding("sort result has the wrong size", text);
  std::vector<int32_t> payload;
  if (c.form == Case::kSortWithPayload) payload = Ints(result.tuple.at(1));
  for (int64_t line = 0; line < lines; ++line) {
    std::multiset<int32_t> in, out;
    std::vector<bool> used(static_cast<size_t>(length), false);
    for (int64_t i = 0; i < length; ++i) {
      in.insert(c.operand[at(line, i, cols)]);
      int32_t key = keys[at(line, i, cols)];
      out.insert(key);
      if (!payload.empty()) {
        int32_t from = payload[at(line, i, cols)];
        if (from < 0 || from >= length || used[from]) Finding("sort payload is not a permutation", text);
        used[from] = true;
        if (c.operand[at(line, from, cols)] != key) Finding("sort moved a key without its payload", text);
      }
      if (!ordered || i == 0) continue;
      int32_t before = keys[at(line, i - 1, cols)];
      if (less(key, before)) Finding("sort result out of order under a strict weak order", text);
      // Ties are told apart only by the payload (equal keys are equal values otherwise).
      if (!payload.empty() && !less(before, key) && payload[at(line, i, cols)] < payload[at(line, i - 1, cols)])
        Finding("stable sort reordered equivalent keys", text);
    }
    if (in != out) Finding("sort result is not a permutation of the operand", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Case c;
  c.keys = in.ConsumeIntegralInRange(1, 8);
  c.form = static_cast<Case::Form>(in.ConsumeIntegralInRange(0, 2));
  c.stable = in.ConsumeBool();
  const bool two_d = in.ConsumeBool();
  // A table drawn from a strict weak order half the time (keys ranked, ties allowed), so the
  // ordered checks run; otherwise any answers.
  c.table.assign(static_cast<size_t>(c.keys * c.keys), 0);
  if (in.ConsumeBool()) {
    std::vector<int> rank(static_cast<size_t>(c.keys));
    for (int& r : rank) r = in.ConsumeIntegralInRange(0, 3);
    for (int a = 0; a < c.keys; ++a)
      for (int b = 0; b < c.keys; ++b) c.table[a * c.keys + b] = rank[a] < rank[b];
  } else {
    for (uint8_t& t : c.table) t = in.ConsumeBool();
  }
  if (two_d)
    c.dims = {in.ConsumeIntegralInRange<int64_t>(1, 12), in.ConsumeIntegralInRange<int64_t>(1, 40)};
  else
    c.dims = {in.ConsumeIntegralInRange<int64_t>(1, 600)};
  c.dimension = two_d && c.form != Case::kTopK ? in.ConsumeIntegralInRange(0, 1) : static_cast<int>(c.dims.size()) - 1;
  c.k = in.ConsumeIntegralInRange<int64_t>(0, c.dims.back());
  const int64_t count = c.dims.size() == 2 ? c.dims[0] * c.dims[1] : c.dims[0];
  for (int64_t i = 0; i < count; ++i) c.operand.push_back(in.ConsumeIntegralInRange(0, c.keys - 1));
  const std::string text = Module(c);
  if (std::getenv("NHLO_FUZZ_PRINT")) std::fprintf(stderr, "%s\n", text.c_str());

  nhlo::PipelineOptions options;
  options.passes = std::vector<std::string>{"none"};
  std::ostringstream log;
  auto module = nhlo::CompileText("fuzz_sort.hlo", text, options, log);
  if (!module.ok()) Finding("generated module rejected", text, &module.status());
  auto bundle = nhlo::EmitBundleFile(**module, nhlo::CodegenOptions{});
  if (!bundle.ok()) Finding("codegen failed", text, &bundle.status());
  auto program = nhlo::ReadBundleFile(*bundle, "fuzz_sort.bin");
  if (!program.ok()) Finding("the reader rejects a bundle the writer made", text, &program.status());
  nhlo::Result<nhlo::Value> result = nhlo::Execute(*program, {});
  if (!result.ok()) Finding("run failed", text, &result.status());
  Check(c, text, *result);
  return 0;
}
