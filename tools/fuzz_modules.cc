// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the whole pipeline on valid input: the fuzzer's bytes drive a generator of
// small well-typed HLO modules over every opcode the interpreter executes and every array element
// type. Each module is printed as HLO text, compiled twice (default pipeline, --passes=none),
// lowered to bundles and both bundles run on the same deterministic random arguments with a step
// limit: the default one with the fused executor and aliased get-tuple-elements, the
// --passes=none one op by op with every value in its own bytes (--fusion=off
// --buffer-aliasing=off).
// Findings (each aborts): the verifier rejecting a generated module (a generator bug), a compile
// or codegen error, an interpreter error other than the step limit, a sanitizer report, or the
// two runs' results differing in any bit.
//
// Why bit-for-bit: the default pipeline is the identity on what the generator emits except for
// passes that are exact on it. dce cannot change a result; the custom-call expansions and MX
// legalizations give the interpreter's own kernels' bits (docs/passes.md); the int-matmul
// downcast routes integer dots through f32, which is exact when every product and partial sum is
// below 2^24 and fits the result type, so the operands of every integer dot are clamped to a
// range that guarantees it.
// batch-norm-training is generated for f16/f32 only (batchnorm-training-upcast rewrites bf16
// ones and changes their rounding on purpose); upcast-all-to-fp32 is off by default.
// Build and run: tools/fuzz-modules [SECONDS]
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/common.h"
#include "driver/values.h"
#include "interp/interp.h"

namespace {

using nhlo::PrimitiveType;
using PT = nhlo::PrimitiveType;

constexpr int64_t kMaxElements = 256;
constexpr uint64_t kMaxSteps = 20000;

constexpr PT kTypes[] = {
    PT::kPred,          PT::kS1,         PT::kS2,         PT::kS4,     PT::kS8,     PT::kS16,       PT::kS32,
    PT::kS64,           PT::kU1,         PT::kU2,         PT::kU4,     PT::kU8,     PT::kU16,       PT::kU32,
    PT::kU64,           PT::kF16,        PT::kBF16,       PT::kF32,    PT::kF64,    PT::kF8E5M2,    PT::kF8E4M3FN,
    PT::kF8E4M3B11FNUZ, PT::kF8E5M2FNUZ, PT::kF8E4M3FNUZ, PT::kF8E4M3, PT::kF8E3M4, PT::kF8E8M0FNU, PT::kF4E2M1FN,
    PT::kF6E3M2FN,      PT::kF6E2M3FN,
};
// Not generated: c64 and c128 (the interpreter's complex kernels cover only some ops; the rest
// answer "does not implement"), f64 batch-norm-training and uniform quantization (refused), and
// gather/scatter batching dimensions (not implemented).
// Types an index operand may have (dynamic-slice starts, gather/scatter indices, branch index).
constexpr PT kIndexTypes[] = {PT::kS8, PT::kS16, PT::kS32, PT::kS64, PT::kU8, PT::kU16, PT::kU32, PT::kU64};

bool IsFp(PT t) { return nhlo::IsFloat(t); }
bool IsCx(PT t) { return nhlo::IsComplex(t); }
bool IsInt(PT t) { return nhlo::IsInteger(t); }
bool IsSigned(PT t) { return nhlo::IsSignedInt(t); }
int Bits(PT t) { return nhlo::BitWidth(t); }
std::string TypeName(PT t) { return std::string(nhlo::PrimitiveTypeName(t)); }

// An array shape, or a tuple of them.
struct Sh {
  PT type = PT::kF32;
  std::vector<int64_t> dims;
  std::vector<Sh> tuple;

  bool IsTuple() const { return type == PT::kTuple; }
  int64_t Count() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  size_t rank() const { return dims.size(); }
  bool operator==(const Sh& o) const { return type == o.type && dims == o.dims && tuple == o.tuple; }
};

Sh Arr(PT t, std::vector<int64_t> dims) { return Sh{t, std::move(dims), {}}; }
Sh Tup(std::vector<Sh> elements) { return Sh{PT::kTuple, {}, std::move(elements)}; }

std::string Join(const std::vector<int64_t>& v, const char* sep = ",") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out;
}
std::string List(const std::vector<int64_t>& v) { return "{" + Join(v) + "}"; }

std::string ShapeText(const Sh& s) {
  if (s.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < s.tuple.size(); ++i) out += (i ? ", " : "") + ShapeText(s.tuple[i]);
    return out + ")";
  }
  return TypeName(s.type) + "[" + Join(s.dims) + "]";
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

struct Val {
  std::string name;
  Sh shape;
};

// One computation under construction: its instruction lines and the arrays it has made.
struct Body {
  std::string name;
  bool entry = false;
  int depth = 0;
  std::vector<std::string> lines;
  std::vector<Val> values;
  std::vector<Sh> params;
  bool params_open = false;  // the entry grows parameters on demand
};

class Generator {
 public:
  explicit Generator(FuzzedDataProvider& in) : in_(in) {}

  std::string Module() {
    Body entry;
    entry.name = "main";
    entry.entry = true;
    entry.params_open = true;
    b_ = &entry;
    int ops = in_.ConsumeIntegralInRange(1, 24);
    for (int i = 0; i < ops && in_.remaining_bytes() > 0; ++i) RandomOp();
    if (entry.values.empty()) Leaf(RandomShape(PickType()));
    // The root: the last value and a few others; the rest is left for dce.
    std::vector<Val> outs{entry.values.back()};
    for (const Val& v : entry.values)
      if (&v != &entry.values.back() && in_.ConsumeBool()) outs.push_back(v);
    std::string root;
    if (outs.size() == 1 && in_.ConsumeBool()) {
      root = outs[0].name;
    } else {
      std::vector<Sh> shapes;
      std::string names;
      for (const Val& v : outs) {
        shapes.push_back(v.shape);
        names += (names.empty() ? "" : ", ") + v.name;
      }
      root = Emit(Tup(shapes), "tuple(" + names + ")");
    }
    std::string text = "HloModule fuzz\n\n";
    for (const std::string& h : helpers_) text += h + "\n";
    text += Finish(entry, root);
    return text;
  }

 private:
  // ---- basic choices ----------------------------------------------------------------------

  int Int(int lo, int hi) { return in_.ConsumeIntegralInRange(lo, hi); }
  bool Coin(int percent = 50) { return Int(0, 99) < percent; }
  PT PickType() { return in_.PickValueInArray(kTypes); }
  PT PickIndexType() { return in_.PickValueInArray(kIndexTypes); }

  std::vector<int64_t> RandomDims(int max_rank = 3) {
    std::vector<int64_t> dims(Int(0, max_rank));
    int64_t count = 1;
    for (int64_t& d : dims) {
      d = Coin(4) ? 0 : Int(1, 5);
      if (count * std::max<int64_t>(d, 1) > kMaxElements) d = 1;
      count *= std::max<int64_t>(d, 1);
    }
    return dims;
  }
  Sh RandomShape(PT t) { return Arr(t, RandomDims()); }

  std::string Name() { return "v" + std::to_string(names_++); }
  std::string CompName() { return "c" + std::to_string(comps_++); }

  // Adds `name = shape rest` to the current body; arrays become available as operands.
  std::string Emit(const Sh& shape, const std::string& rest) {
    std::string name = Name();
    b_->lines.push_back(name + " = " + ShapeText(shape) + " " + rest);
    if (!shape.IsTuple()) b_->values.push_back({name, shape});
    return name;
  }

  std::string Finish(const Body& body, const std::string& root) {
    std::string text = (body.entry ? "ENTRY " : "") + body.name + " {\n";
    for (const std::string& line : body.lines)
      text += (line.compare(0, root.size() + 3, root + " = ") == 0 ? "  ROOT " : "  ") + line + "\n";
    return text + "}\n";
  }

  // ---- literals ---------------------------------------------------------------------------

  std::string Scalar(PT t) {
    if (t == PT::kPred) return Coin() ? "true" : "false";
    if (IsInt(t)) {
      int b = Bits(t);
      if (IsSigned(t)) {
        int64_t lo = b == 64 ? INT64_MIN : -(int64_t{1} << (b - 1)),
                hi = b == 64 ? INT64_MAX : (int64_t{1} << (b - 1)) - 1;
        if (Coin(70)) return std::to_string(std::clamp<int64_t>(Int(-8, 8), lo, hi));
        return std::to_string(Coin() ? lo : hi);
      }
      uint64_t hi = b == 64 ? UINT64_MAX : (uint64_t{1} << b) - 1;
      if (Coin(70)) return std::to_string(std::min<uint64_t>(Int(0, 9), hi));
      return std::to_string(hi);
    }
    static const char* const kFloats[] = {"0", "-0", "1", "-1", "0.5", "-2.5", "3", "0.125", "7", "-0.3"};
    static const char* const kSpecial[] = {"nan", "-nan", "inf", "-inf", "-1e-30", "1e+30"};
    if (IsCx(t)) return std::string("(") + in_.PickValueInArray(kFloats) + ", " + in_.PickValueInArray(kFloats) + ")";
    // Types without inf or nan (f4, f6, fnuz, e8m0) round or saturate the special values; the
    // parser decides what they become, the same for both runs.
    if (t == PT::kF8E8M0FNU) return Coin() ? "1" : Coin() ? "0.5" : "4";
    // The parser refuses finite values beyond a type's range (1e+30 fits f32, f64 and bf16 only).
    bool wide = t == PT::kF32 || t == PT::kF64 || t == PT::kBF16;
    if (Coin(15) && t != PT::kF4E2M1FN && t != PT::kF6E2M3FN && t != PT::kF6E3M2FN)
      return kSpecial[Int(0, wide ? 5 : 4)];
    return in_.PickValueInArray(kFloats);
  }

  void LiteralBody(const Sh& s, size_t dim, std::string& out) {
    if (dim == s.rank()) {
      out += Scalar(s.type);
      return;
    }
    out += "{";
    for (int64_t i = 0; i < s.dims[dim]; ++i) {
      if (i) out += ", ";
      LiteralBody(s, dim + 1, out);
    }
    out += "}";
  }

  std::string Constant(const Sh& s) {
    std::string lit;
    LiteralBody(s, 0, lit);
    return Emit(s, "constant(" + lit + ")");
  }

  std::string ScalarConstant(PT t, const std::string& text) { return Emit(Arr(t, {}), "constant(" + text + ")"); }

  // ---- operands -----------------------------------------------------------------------------

  // A new array of shape `s` from nothing: a parameter (entry only), a constant or an iota.
  std::string Leaf(const Sh& s) {
    int kind = Int(0, 9);
    if (b_->params_open && b_->params.size() < 8 && kind < 5) {
      b_->params.push_back(s);
      return Emit(s, "parameter(" + std::to_string(b_->params.size() - 1) + ")");
    }
    if (kind < 7 && s.rank() > 0 && s.type != PT::kPred && !IsCx(s.type) && s.type != PT::kF8E8M0FNU)
      return Emit(s, "iota(), iota_dimension=" + std::to_string(Int(0, static_cast<int>(s.rank()) - 1)));
    if (s.Count() <= 64 || s.rank() == 0) return Constant(s);
    std::string scalar = Constant(Arr(s.type, {}));
    return Emit(s, "broadcast(" + scalar + "), dimensions={}");
  }

  // Any array of the current body (making one when there is none), recent ones more often.
  Val Pick() {
    if (b_->values.empty()) Leaf(RandomShape(PickType()));
    size_t n = b_->values.size();
    size_t back = Coin(60) ? static_cast<size_t>(Int(0, static_cast<int>(std::min<size_t>(n, 4)) - 1))
                           : static_cast<size_t>(Int(0, static_cast<int>(n) - 1));
    return b_->values[n - 1 - back];
  }

  // An array of exactly shape `s`: an existing one, or one derived from an existing array
  // (convert, reshape, broadcast of a scalar), or a new leaf.
  std::string Need(const Sh& s) {
    std::vector<Val> same, same_dims, same_count, scalar;
    for (const Val& v : b_->values) {
      if (v.shape == s)
        same.push_back(v);
      else if (v.shape.dims == s.dims)
        same_dims.push_back(v);
      else if (v.shape.type == s.type && v.shape.Count() == s.Count())
        same_count.push_back(v);
      else if (v.shape.type == s.type && v.shape.rank() == 0)
        scalar.push_back(v);
    }
    int how = Int(0, 9);
    if (!same.empty() && how < 7) return same[Int(0, static_cast<int>(same.size()) - 1)].name;
    if (!same_dims.empty() && how < 8)
      return Emit(s, "convert(" + same_dims[Int(0, static_cast<int>(same_dims.size()) - 1)].name + ")");
    if (!same_count.empty() && how < 9)
      return Emit(s, "reshape(" + same_count[Int(0, static_cast<int>(same_count.size()) - 1)].name + ")");
    if (!scalar.empty() && s.rank() > 0)
      return Emit(s, "broadcast(" + scalar[Int(0, static_cast<int>(scalar.size()) - 1)].name + "), dimensions={}");
    return Leaf(s);
  }

  std::vector<int64_t> Permutation(size_t n) {
    std::vector<int64_t> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(i);
    for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[Int(0, static_cast<int>(i) - 1)]);
    return p;
  }
  // A sorted random subset of 0..n-1.
  std::vector<int64_t> Subset(size_t n) {
    std::vector<int64_t> s;
    for (size_t i = 0; i < n; ++i)
      if (Coin()) s.push_back(static_cast<int64_t>(i));
    return s;
  }

  // ---- called computations -----------------------------------------------------------------

  // Builds a computation taking `params` (tuple parameters are taken apart with
  // get-tuple-element) and returning `result`, with a few random instructions in between.
  std::string Computation(const std::vector<Sh>& params, const Sh& result, int ops) {
    Body body;
    body.name = CompName();
    body.depth = b_->depth + 1;
    body.params = params;
    Body* outer = b_;
    b_ = &body;
    for (size_t i = 0; i < params.size(); ++i) {
      std::string p = Emit(params[i], "parameter(" + std::to_string(i) + ")");
      if (params[i].IsTuple())
        for (size_t k = 0; k < params[i].tuple.size(); ++k)
          Emit(params[i].tuple[k], "get-tuple-element(" + p + "), index=" + std::to_string(k));
    }
    for (int i = 0; i < ops && in_.remaining_bytes() > 0; ++i) RandomOp();
    std::string root;
    if (result.IsTuple()) {
      std::string names;
      for (const Sh& e : result.tuple) names += (names.empty() ? "" : ", ") + Need(e);
      root = Emit(result, "tuple(" + names + ")");
    } else {
      root = Need(result);
    }
    std::string name = body.name;
    helpers_.push_back(Finish(body, root));
    b_ = outer;
    return name;
  }

  // A scalar function of `n` groups of `types` (reducers: (accumulators..., values...)).
  std::string ScalarComputation(const std::vector<PT>& types, int groups, bool tuple_result) {
    std::vector<Sh> params;
    for (int g = 0; g < groups; ++g)
      for (PT t : types) params.push_back(Arr(t, {}));
    std::vector<Sh> results;
    for (PT t : types) results.push_back(Arr(t, {}));
    return Computation(params, tuple_result ? Tup(results) : results[0], Int(0, b_->depth > 0 ? 2 : 4));
  }

  // ---- the instructions ----------------------------------------------------------------------

  void RandomOp() {
    bool nested = b_->depth < 2;
    switch (Int(0, 33)) {
      case 0:
      case 1:
      case 2: Unary(); break;
      case 3:
      case 4:
      case 5: Binary(); break;
      case 6: Compare(); break;
      case 7: Select(); break;
      case 8: Clamp(); break;
      case 9: Convert(); break;
      case 10: BitcastConvert(); break;
      case 11: Broadcast(); break;
      case 12: Reshape(); break;
      case 13: Transpose(); break;
      case 14: Slice(); break;
      case 15: DynamicSlice(); break;
      case 16: DynamicUpdateSlice(); break;
      case 17: Concatenate(); break;
      case 18: Pad(); break;
      case 19: Reverse(); break;
      case 20: Leaf(RandomShape(PickType())); break;
      case 21: Dot(); break;
      case 22: Convolution(); break;
      case 23: Gather(); break;
      case 24:
        if (nested) Scatter();
        break;
      case 25:
        if (nested) Reduce();
        break;
      case 26:
        if (nested) ReduceWindow();
        break;
      case 27:
        if (nested) Coin() ? Map() : Sort();
        break;
      case 28:
        if (nested) Coin() ? While() : Conditional();
        break;
      case 29:
        if (nested) CallOrFusion();
        break;
      case 30: TupleOps(); break;
      case 31: Coin() ? BatchNormTraining() : CopyLike(); break;
      case 32: UniformQuantize(); break;
      case 33: MxDot(); break;
    }
  }

  void Unary() {
    Val x = Pick();
    PT t = x.shape.type;
    std::vector<std::string> ops;
    if (IsFp(t) || IsCx(t)) {
      for (const char* op : {"acos",
                             "acosh",
                             "asin",
                             "asinh",
                             "atanh",
                             "cbrt",
                             "cosh",
                             "cosine",
                             "erf",
                             "exponential",
                             "exponential-minus-one",
                             "log",
                             "log-plus-one",
                             "logistic",
                             "rsqrt",
                             "sine",
                             "sinh",
                             "sqrt",
                             "tan",
                             "tanh",
                             "negate",
                             "sign",
                             "abs",
                             "real",
                             "imag"})
        ops.push_back(op);
    }
    if (IsFp(t))
      for (const char* op : {"ceil", "floor", "round-nearest-afz", "round-nearest-even", "is-finite"})
        ops.push_back(op);
    if (IsInt(t))
      for (const char* op : {"negate", "not", "popcnt", "count-leading-zeros"}) ops.push_back(op);
    if (IsSigned(t))
      for (const char* op : {"abs", "sign"}) ops.push_back(op);
    if (t == PT::kPred) ops.push_back("not");
    if (ops.empty()) return;
    std::string op = ops[Int(0, static_cast<int>(ops.size()) - 1)];
    Sh out = x.shape;
    if (op == "is-finite") out.type = PT::kPred;
    if (IsCx(t) && (op == "abs" || op == "real" || op == "imag")) out.type = t == PT::kC64 ? PT::kF32 : PT::kF64;
    Emit(out, op + "(" + x.name + ")");
  }

  void Binary() {
    Val x = Pick();
    PT t = x.shape.type;
    std::vector<std::string> ops{"add", "multiply", "maximum", "minimum"};
    if (t != PT::kPred)
      for (const char* op : {"subtract", "divide", "remainder", "power"}) ops.push_back(op);
    if (IsFp(t)) ops.push_back("atan2");
    if (IsInt(t))
      for (const char* op : {"shift-left", "shift-right-arithmetic", "shift-right-logical", "mulhi"}) ops.push_back(op);
    if (!IsFp(t) && !IsCx(t))
      for (const char* op : {"and", "or", "xor"}) ops.push_back(op);
    std::string op = ops[Int(0, static_cast<int>(ops.size()) - 1)];
    std::string y = Need(x.shape);
    Sh out = x.shape;
    Emit(out, op + "(" + x.name + ", " + y + ")");
  }

  void Compare() {
    Val x = Pick();
    std::string y = Need(x.shape);
    static const char* const kDirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    std::string dir = IsCx(x.shape.type) ? (Coin() ? "EQ" : "NE") : in_.PickValueInArray(kDirs);
    std::string extra;
    if (IsFp(x.shape.type) && Coin(30)) extra = Coin() ? ", type=TOTALORDER" : ", type=FLOAT";
    Emit(Arr(PT::kPred, x.shape.dims), "compare(" + x.name + ", " + y + "), direction=" + dir + extra);
  }

  void Select() {
    Val x = Pick();
    std::string p = Need(Arr(PT::kPred, Coin(20) ? std::vector<int64_t>{} : x.shape.dims));
    std::string y = Need(x.shape);
    Emit(x.shape, "select(" + p + ", " + x.name + ", " + y + ")");
  }

  void Clamp() {
    Val x = Pick();
    std::string lo = Need(Coin() ? Arr(x.shape.type, {}) : x.shape);
    std::string hi = Need(Coin() ? Arr(x.shape.type, {}) : x.shape);
    Emit(x.shape, "clamp(" + lo + ", " + x.name + ", " + hi + ")");
  }

  void Convert() {
    Val x = Pick();
    Emit(Arr(PickType(), x.shape.dims), "convert(" + x.name + ")");
  }

  void BitcastConvert() {
    Val x = Pick();
    PT from = x.shape.type;
    std::vector<PT> options;
    for (PT t : kTypes)
      if (IsCx(t) == IsCx(from)) options.push_back(t);
    PT to = options[Int(0, static_cast<int>(options.size()) - 1)];
    int in_bits = Bits(from), out_bits = Bits(to);
    std::vector<int64_t> dims = x.shape.dims;
    if (in_bits > out_bits) {
      if (in_bits % out_bits != 0) return;
      dims.push_back(in_bits / out_bits);
      if (Product(dims) > kMaxElements) return;
    } else if (in_bits < out_bits) {
      if (out_bits % in_bits != 0 || dims.empty() || dims.back() != out_bits / in_bits) {
        // Make an operand whose minor dimension holds one result element.
        if (out_bits % in_bits != 0) return;
        std::vector<int64_t> wide = dims;
        wide.push_back(out_bits / in_bits);
        if (Product(wide) > kMaxElements) return;
        std::string y = Need(Arr(from, wide));
        Emit(Arr(to, dims), "bitcast-convert(" + y + ")");
        return;
      }
      dims.pop_back();
    }
    Emit(Arr(to, dims), "bitcast-convert(" + x.name + ")");
  }

  void Broadcast() {
    Val x = Pick();
    // Result dimensions: the operand's, in order, with new ones inserted.
    std::vector<int64_t> out, map;
    size_t next = 0;
    while (next < x.shape.rank() || (out.size() < 4 && Coin(40))) {
      if (next < x.shape.rank() && (Coin(60) || out.size() >= 4)) {
        map.push_back(static_cast<int64_t>(out.size()));
        int64_t d = x.shape.dims[next++];
        out.push_back(d == 1 && Coin(30) ? Int(0, 3) : d);
      } else {
        out.push_back(Int(0, 4));
      }
      if (Product(out) > kMaxElements) return;
    }
    Emit(Arr(x.shape.type, out), "broadcast(" + x.name + "), dimensions=" + List(map));
  }

  void Reshape() {
    Val x = Pick();
    int64_t n = x.shape.Count();
    std::vector<int64_t> dims;
    if (n == 0) {
      dims = RandomDims();
      if (Product(dims) != 0) dims.push_back(0);
    } else {
      int64_t left = n;
      while (left > 1 && dims.size() < 4) {
        std::vector<int64_t> divisors;
        for (int64_t d = 1; d <= left; ++d)
          if (left % d == 0) divisors.push_back(d);
        int64_t d = divisors[Int(0, static_cast<int>(divisors.size()) - 1)];
        dims.push_back(d);
        left /= d;
      }
      if (left > 1) dims.push_back(left);
      if (Coin(20)) dims.insert(dims.begin() + Int(0, static_cast<int>(dims.size())), 1);
    }
    Emit(Arr(x.shape.type, dims), (Coin(20) ? "bitcast(" : "reshape(") + x.name + ")");
  }

  void Transpose() {
    Val x = Pick();
    std::vector<int64_t> perm = Permutation(x.shape.rank());
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(x.shape.dims[p]);
    Emit(Arr(x.shape.type, dims), "transpose(" + x.name + "), dimensions=" + List(perm));
  }

  void Slice() {
    Val x = Pick();
    std::string ranges;
    std::vector<int64_t> dims;
    for (size_t i = 0; i < x.shape.rank(); ++i) {
      int64_t size = x.shape.dims[i];
      int64_t start = Int(0, static_cast<int>(size)), limit = Int(static_cast<int>(start), static_cast<int>(size));
      int64_t stride = Coin(70) ? 1 : Int(1, 4);
      dims.push_back((limit - start + stride - 1) / stride);
      ranges += std::string(i ? ", " : "") + "[" + std::to_string(start) + ":" + std::to_string(limit) +
                (stride != 1 || Coin(10) ? ":" + std::to_string(stride) : "") + "]";
    }
    Emit(Arr(x.shape.type, dims), "slice(" + x.name + "), slice={" + ranges + "}");
  }

  // Scalar start indices of one random index type, existing or new.
  std::string StartIndices(size_t rank) {
    PT t = PickIndexType();
    std::string out;
    for (size_t i = 0; i < rank; ++i) out += ", " + Need(Arr(t, {}));
    return out;
  }

  // Both need at least one start index (rank 0 has none).
  void DynamicSlice() {
    Val x = Pick();
    if (x.shape.rank() == 0) return;
    std::vector<int64_t> sizes;
    for (int64_t d : x.shape.dims) sizes.push_back(Int(0, static_cast<int>(d)));
    Emit(Arr(x.shape.type, sizes),
         "dynamic-slice(" + x.name + StartIndices(x.shape.rank()) + "), dynamic_slice_sizes=" + List(sizes));
  }

  void DynamicUpdateSlice() {
    Val x = Pick();
    if (x.shape.rank() == 0) return;
    std::vector<int64_t> sizes;
    for (int64_t d : x.shape.dims) sizes.push_back(Int(0, static_cast<int>(d)));
    std::string u = Need(Arr(x.shape.type, sizes));
    Emit(x.shape, "dynamic-update-slice(" + x.name + ", " + u + StartIndices(x.shape.rank()) + ")");
  }

  void Concatenate() {
    Val x = Pick();
    if (x.shape.rank() == 0) return;
    int dim = Int(0, static_cast<int>(x.shape.rank()) - 1);
    std::vector<int64_t> out = x.shape.dims;
    std::string names = x.name;
    for (int k = Int(0, 2); k > 0; --k) {
      std::vector<int64_t> dims = x.shape.dims;
      dims[dim] = Int(0, 3);
      out[dim] += dims[dim];
      if (Product(out) > kMaxElements) return;
      names += ", " + Need(Arr(x.shape.type, dims));
    }
    Emit(Arr(x.shape.type, out), "concatenate(" + names + "), dimensions={" + std::to_string(dim) + "}");
  }

  void Pad() {
    Val x = Pick();
    if (x.shape.rank() == 0) return;
    std::string v = Need(Arr(x.shape.type, {}));
    std::string config;
    std::vector<int64_t> dims;
    for (size_t i = 0; i < x.shape.rank(); ++i) {
      int64_t size = x.shape.dims[i];
      int64_t interior = Coin(70) ? 0 : Int(0, 2);
      int64_t grown = size == 0 ? 0 : size + (size - 1) * interior;
      int64_t low = Int(-static_cast<int>(std::min<int64_t>(grown, 3)), 3);
      int64_t high = Int(-static_cast<int>(std::min<int64_t>(grown + low, 3)), 3);
      dims.push_back(grown + low + high);
      config += (i ? "x" : "") + std::to_string(low) + "_" + std::to_string(high) +
                (interior || Coin(10) ? "_" + std::to_string(interior) : "");
    }
    if (Product(dims) > kMaxElements) return;
    Emit(Arr(x.shape.type, dims), "pad(" + x.name + ", " + v + "), padding=" + config);
  }

  void Reverse() {
    Val x = Pick();
    Emit(x.shape, "reverse(" + x.name + "), dimensions=" + List(Subset(x.shape.rank())));
  }

  // The operands of an integer dot clamped so that the f32 route of neuron-int-matmul-downcast
  // is exact: |sum of products| <= the result type's largest value and < 2^24.
  std::string ClampForIntDot(const std::string& x, const Sh& s, int64_t contracted) {
    int b = Bits(s.type);
    double top = IsSigned(s.type) ? std::ldexp(1.0, b - 1) - 1 : std::ldexp(1.0, b) - 1;
    top = std::min(top, std::ldexp(1.0, 24) - 1);
    int64_t bound =
        static_cast<int64_t>(std::floor(std::sqrt(top / static_cast<double>(std::max<int64_t>(contracted, 1)))));
    if (IsSigned(s.type) && bound * bound * std::max<int64_t>(contracted, 1) > top) --bound;
    std::string lo = ScalarConstant(s.type, IsSigned(s.type) ? std::to_string(-bound) : "0");
    std::string hi = ScalarConstant(s.type, std::to_string(bound));
    return Emit(s, "clamp(" + lo + ", " + x + ", " + hi + ")");
  }

  void Dot() {
    PT t = PickType();
    if (t == PT::kPred) t = PT::kF32;
    int nb = Int(0, 1), nc = Int(0, 2), nl = Int(0, 1), nr = Int(0, 1);
    std::vector<int64_t> batch(nb), contract(nc), lfree(nl), rfree(nr);
    for (auto* v : {&batch, &contract, &lfree, &rfree})
      for (int64_t& d : *v) d = Coin(5) ? 0 : Int(1, 4);
    // Lhs and rhs dimension orders: a permutation of (batch, contracting, free).
    auto layout = [&](const std::vector<int64_t>& free, std::vector<int64_t>& dims, std::vector<int64_t>& bdims,
                      std::vector<int64_t>& cdims) {
      size_t rank = batch.size() + contract.size() + free.size();
      std::vector<int64_t> perm = Permutation(rank);  // perm[k]: where logical dim k goes
      dims.assign(rank, 0);
      for (size_t k = 0; k < rank; ++k) {
        int64_t size = k < batch.size()                     ? batch[k]
                       : k < batch.size() + contract.size() ? contract[k - batch.size()]
                                                            : free[k - batch.size() - contract.size()];
        dims[perm[k]] = size;
        if (k < batch.size())
          bdims.push_back(perm[k]);
        else if (k < batch.size() + contract.size())
          cdims.push_back(perm[k]);
      }
      // Free dimensions appear in the result in the operand's order.
      std::vector<int64_t> free_pos;
      for (size_t k = batch.size() + contract.size(); k < rank; ++k) free_pos.push_back(perm[k]);
      return free_pos;
    };
    std::vector<int64_t> ld, lb, lc, rd, rb, rc;
    std::vector<int64_t> lfp = layout(lfree, ld, lb, lc), rfp = layout(rfree, rd, rb, rc);
    std::sort(lfp.begin(), lfp.end());
    std::sort(rfp.begin(), rfp.end());
    std::vector<int64_t> out = batch;
    for (int64_t p : lfp) out.push_back(ld[p]);
    for (int64_t p : rfp) out.push_back(rd[p]);
    if (Product(ld) > kMaxElements || Product(rd) > kMaxElements || Product(out) > kMaxElements) return;
    std::string lhs = Need(Arr(t, ld)), rhs = Need(Arr(t, rd));
    PT result = t;
    if (IsInt(t)) {
      lhs = ClampForIntDot(lhs, Arr(t, ld), Product(contract));
      rhs = ClampForIntDot(rhs, Arr(t, rd), Product(contract));
    } else if (IsFp(t) && Coin(30)) {
      result = Coin() ? PT::kF32 : PT::kF64;  // a preferred element type
    }
    std::string attrs;
    if (!lb.empty()) attrs += ", lhs_batch_dims=" + List(lb) + ", rhs_batch_dims=" + List(rb);
    if (!lc.empty() || Coin(30)) attrs += ", lhs_contracting_dims=" + List(lc) + ", rhs_contracting_dims=" + List(rc);
    Emit(Arr(result, out), "dot(" + lhs + ", " + rhs + ")" + attrs);
  }

  // A window over `base` dimensions: sizes given; returns the window text and the output dims.
  std::string Window(const std::vector<int64_t>& base, const std::vector<int64_t>& sizes, std::vector<int64_t>& out,
                     bool allow_base_dilation) {
    std::vector<int64_t> stride, low, high, lhs_dil, rhs_dil;
    out.clear();
    for (size_t i = 0; i < base.size(); ++i) {
      int64_t s = Coin(70) ? 1 : Int(1, 3);
      int64_t ld = allow_base_dilation && Coin(20) ? Int(1, 3) : 1;
      int64_t rd = Coin(20) ? Int(1, 3) : 1;
      int64_t dilated = base[i] == 0 ? 0 : (base[i] - 1) * ld + 1;
      int64_t lo = Coin(70) ? 0 : Int(-static_cast<int>(std::min<int64_t>(dilated, 2)), 2);
      int64_t hi = Coin(70) ? 0 : Int(-static_cast<int>(std::min<int64_t>(dilated + lo, 2)), 2);
      int64_t padded = lo + dilated + hi;
      int64_t span = sizes[i] == 0 ? 0 : (sizes[i] - 1) * rd + 1;
      out.push_back(span > padded ? 0 : (padded - span) / s + 1);
      stride.push_back(s);
      low.push_back(lo);
      high.push_back(hi);
      lhs_dil.push_back(ld);
      rhs_dil.push_back(rd);
    }
    if (base.empty()) return "{}";
    std::string text = "{size=" + Join(sizes, "x");
    auto all_one = [](const std::vector<int64_t>& v, int64_t one) {
      return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == one; });
    };
    if (!all_one(stride, 1)) text += " stride=" + Join(stride, "x");
    if (!all_one(low, 0) || !all_one(high, 0)) {
      text += " pad=";
      for (size_t i = 0; i < low.size(); ++i)
        text += (i ? "x" : "") + std::to_string(low[i]) + "_" + std::to_string(high[i]);
    }
    if (!all_one(lhs_dil, 1)) text += " lhs_dilate=" + Join(lhs_dil, "x");
    if (!all_one(rhs_dil, 1)) text += " rhs_dilate=" + Join(rhs_dil, "x");
    return text + "}";
  }

  void Convolution() {
    PT t = PickType();
    if (t == PT::kPred || IsCx(t)) t = PT::kF32;
    size_t spatial = static_cast<size_t>(Int(0, 2));
    int64_t fgc = 1, bgc = 1;
    if (Coin(20))
      fgc = Int(1, 3);
    else if (Coin(20))
      bgc = Int(1, 3);
    // Groups of 4 or 8 output features sometimes: 16 or 32 bytes of f32, what the direct grouped
    // kernel takes (kernels_conv_grouped.cc).
    int64_t batch = bgc * Int(Coin(10) ? 0 : 1, 2), in_per_group = Int(1, 3);
    int64_t out_per_group = fgc > 1 && Coin(30) ? 4 * Int(1, 2) : Int(1, 2);
    int64_t in_features = in_per_group * fgc, out_features = out_per_group * fgc * bgc;
    std::vector<int64_t> base(spatial), kernel(spatial);
    for (size_t i = 0; i < spatial; ++i) {
      base[i] = Int(1, 5);
      kernel[i] = Int(1, 3);
    }
    std::vector<int64_t> window_out;
    std::string window = Window(base, kernel, window_out, true);
    // Labels: position of each logical dimension in each shape.
    auto labels = [&](char a, char b, std::vector<int64_t>& perm) {
      perm = Permutation(spatial + 2);
      std::string text(spatial + 2, ' ');
      text[perm[0]] = a;
      text[perm[1]] = b;
      for (size_t i = 0; i < spatial; ++i) text[perm[i + 2]] = static_cast<char>('0' + i);
      return text;
    };
    std::vector<int64_t> ip, kp, op;
    std::string il = labels('b', 'f', ip), kl = labels('i', 'o', kp), ol = labels('b', 'f', op);
    std::vector<int64_t> in_dims(spatial + 2), k_dims(spatial + 2), out_dims(spatial + 2);
    in_dims[ip[0]] = batch;
    in_dims[ip[1]] = in_features;
    k_dims[kp[0]] = in_per_group;
    k_dims[kp[1]] = out_features;
    out_dims[op[0]] = batch / bgc;
    out_dims[op[1]] = out_features;
    for (size_t i = 0; i < spatial; ++i) {
      in_dims[ip[i + 2]] = base[i];
      k_dims[kp[i + 2]] = kernel[i];
      out_dims[op[i + 2]] = window_out[i];
    }
    if (Product(in_dims) > kMaxElements || Product(k_dims) > kMaxElements || Product(out_dims) > kMaxElements) return;
    std::string lhs = Need(Arr(t, in_dims)), rhs = Need(Arr(t, k_dims));
    std::string attrs = spatial ? ", window=" + window : "";
    attrs += ", dim_labels=" + il + "_" + kl + "->" + ol;
    if (fgc > 1) attrs += ", feature_group_count=" + std::to_string(fgc);
    if (bgc > 1) attrs += ", batch_group_count=" + std::to_string(bgc);
    Emit(Arr(t, out_dims), "convolution(" + lhs + ", " + rhs + ")" + attrs);
  }

  // Index arrays of gather and scatter: `batch` dims with the index vector (size k) inserted at
  // index_vector_dim; with k == 1 the vector may be implicit (index_vector_dim == rank).
  std::string Indices(const std::vector<int64_t>& batch, size_t k, int64_t& ivd) {
    std::vector<int64_t> dims = batch;
    if (k == 1 && Coin(30)) {
      ivd = static_cast<int64_t>(batch.size());
    } else {
      ivd = Int(0, static_cast<int>(batch.size()));
      dims.insert(dims.begin() + ivd, static_cast<int64_t>(k));
    }
    return Need(Arr(PickIndexType(), dims));
  }

  void Gather() {
    Val x = Pick();
    size_t r = x.shape.rank();
    std::vector<int64_t> start_map = Permutation(r);
    start_map.resize(Int(0, static_cast<int>(r)));
    std::vector<int64_t> slice_sizes, collapsed, offset_sizes;
    for (size_t d = 0; d < r; ++d) {
      int64_t size = Int(0, static_cast<int>(x.shape.dims[d]));
      if (x.shape.dims[d] >= 1 && Coin(40)) {
        collapsed.push_back(static_cast<int64_t>(d));
        size = 1;
      } else {
        offset_sizes.push_back(size);
      }
      slice_sizes.push_back(size);
    }
    std::vector<int64_t> batch(Int(0, 2));
    for (int64_t& b : batch) b = Int(0, 3);
    int64_t ivd;
    std::string idx = Indices(batch, start_map.size(), ivd);
    // Result: offset dims at sorted random positions, batch dims in the others.
    std::vector<int64_t> pos;
    std::vector<int64_t> out = InterleaveWindowDims(batch, offset_sizes, pos);
    if (Product(out) > kMaxElements) return;
    Emit(Arr(x.shape.type, out),
         "gather(" + x.name + ", " + idx + "), offset_dims=" + List(pos) + ", collapsed_slice_dims=" + List(collapsed) +
             ", start_index_map=" + List(start_map) + ", index_vector_dim=" + std::to_string(ivd) +
             ", slice_sizes=" + List(slice_sizes) + (Coin(20) ? ", indices_are_sorted=true" : ""));
  }

  // Gather's result and scatter's updates: the window dimensions at sorted random positions
  // (`pos`, their offset_dims / update_window_dims), the batch dimensions in the others, in order.
  std::vector<int64_t> InterleaveWindowDims(const std::vector<int64_t>& batch, const std::vector<int64_t>& window,
                                            std::vector<int64_t>& pos) {
    size_t rank = batch.size() + window.size();
    pos = Permutation(rank);
    pos.resize(window.size());
    std::sort(pos.begin(), pos.end());
    std::vector<int64_t> dims(rank, -1);
    for (size_t i = 0; i < pos.size(); ++i) dims[pos[i]] = window[i];
    size_t next_batch = 0;
    for (int64_t& d : dims)
      if (d < 0) d = batch[next_batch++];
    return dims;
  }

  void Scatter() {
    Val x = Pick();
    size_t r = x.shape.rank();
    int n = Coin(80) ? 1 : 2;
    std::vector<int64_t> to_operand = Permutation(r);
    to_operand.resize(Int(0, static_cast<int>(r)));
    std::vector<int64_t> inserted, window_sizes;
    for (size_t d = 0; d < r; ++d) {
      if (x.shape.dims[d] >= 1 && Coin(40))
        inserted.push_back(static_cast<int64_t>(d));
      else
        window_sizes.push_back(Int(0, static_cast<int>(x.shape.dims[d])));
    }
    std::vector<int64_t> batch(Int(0, 2));
    for (int64_t& b : batch) b = Int(0, 3);
    int64_t ivd;
    std::string idx = Indices(batch, to_operand.size(), ivd);
    std::vector<int64_t> pos;
    std::vector<int64_t> u_dims = InterleaveWindowDims(batch, window_sizes, pos);
    if (Product(u_dims) > kMaxElements) return;
    std::vector<PT> types{x.shape.type};
    std::string operands = x.name, updates = Need(Arr(x.shape.type, u_dims));
    if (n == 2) {
      PT t2 = PickType();
      types.push_back(t2);
      operands += ", " + Need(Arr(t2, x.shape.dims));
      updates += ", " + Need(Arr(t2, u_dims));
    }
    std::string f = ScalarComputation(types, 2, n > 1);
    Sh out = n == 1 ? x.shape : Tup({x.shape, Arr(types[1], x.shape.dims)});
    std::string s = Emit(out, "scatter(" + operands + ", " + idx + ", " + updates +
                                  "), update_window_dims=" + List(pos) + ", inserted_window_dims=" + List(inserted) +
                                  ", scatter_dims_to_operand_dims=" + List(to_operand) +
                                  ", index_vector_dim=" + std::to_string(ivd) + ", to_apply=" + f);
    if (n > 1) Unpack(s, out);
  }

  // get-tuple-element of every element of a tuple-shaped instruction.
  void Unpack(const std::string& tuple, const Sh& s) {
    for (size_t i = 0; i < s.tuple.size(); ++i)
      Emit(s.tuple[i], "get-tuple-element(" + tuple + "), index=" + std::to_string(i));
  }

  void Reduce() {
    Val x = Pick();
    int n = Coin(75) ? 1 : 2;
    std::vector<PT> types{x.shape.type};
    std::string inputs = x.name;
    if (n == 2) {
      types.push_back(PickType());
      inputs += ", " + Need(Arr(types[1], x.shape.dims));
    }
    std::string inits;
    for (PT t : types) inits += ", " + Need(Arr(t, {}));
    std::vector<int64_t> dims = Subset(x.shape.rank()), out;
    for (size_t i = 0; i < x.shape.rank(); ++i)
      if (!std::binary_search(dims.begin(), dims.end(), static_cast<int64_t>(i))) out.push_back(x.shape.dims[i]);
    std::string f = ScalarComputation(types, 2, n > 1);
    Sh shape = Arr(types[0], out);
    if (n > 1) shape = Tup({Arr(types[0], out), Arr(types[1], out)});
    std::string r = Emit(shape, "reduce(" + inputs + inits + "), dimensions=" + List(dims) + ", to_apply=" + f);
    if (n > 1) Unpack(r, shape);
  }

  void ReduceWindow() {
    Val x = Pick();
    if (x.shape.rank() == 0) return;
    int n = Coin(75) ? 1 : 2;
    std::vector<PT> types{x.shape.type};
    std::string inputs = x.name;
    if (n == 2) {
      types.push_back(PickType());
      inputs += ", " + Need(Arr(types[1], x.shape.dims));
    }
    std::string inits;
    for (PT t : types) inits += ", " + Need(Arr(t, {}));
    std::vector<int64_t> sizes, out;
    for (int64_t d : x.shape.dims) sizes.push_back(Int(1, static_cast<int>(std::max<int64_t>(d, 1)) + 1));
    std::string window = Window(x.shape.dims, sizes, out, true);
    if (Product(out) > kMaxElements) return;
    std::string f = ScalarComputation(types, 2, n > 1);
    Sh shape = Arr(types[0], out);
    if (n > 1) shape = Tup({Arr(types[0], out), Arr(types[1], out)});
    std::string r = Emit(shape, "reduce-window(" + inputs + inits + "), window=" + window + ", to_apply=" + f);
    if (n > 1) Unpack(r, shape);
  }

  void Map() {
    Val x = Pick();
    int n = Int(1, 3);
    std::vector<PT> types{x.shape.type};
    std::string names = x.name;
    for (int i = 1; i < n; ++i) {
      types.push_back(PickType());
      names += ", " + Need(Arr(types.back(), x.shape.dims));
    }
    std::vector<Sh> params;
    for (PT t : types) params.push_back(Arr(t, {}));
    PT result = PickType();
    std::string f = Computation(params, Arr(result, {}), Int(0, 4));
    std::string dims;
    if (Coin()) {
      std::vector<int64_t> all;
      for (size_t i = 0; i < x.shape.rank(); ++i) all.push_back(static_cast<int64_t>(i));
      dims = ", dimensions=" + List(all);
    }
    Emit(Arr(result, x.shape.dims), "map(" + names + ")" + dims + ", to_apply=" + f);
  }

  void Sort() {
    Val x = Pick();
    if (x.shape.rank() == 0) return;
    int n = Int(1, 2);
    std::vector<Sh> shapes{x.shape};
    std::string names = x.name;
    for (int i = 1; i < n; ++i) {
      shapes.push_back(Arr(PickType(), x.shape.dims));
      names += ", " + Need(shapes.back());
    }
    std::vector<Sh> params;
    for (const Sh& s : shapes) {
      params.push_back(Arr(s.type, {}));
      params.push_back(Arr(s.type, {}));
    }
    // Mostly a plain comparison of the first keys (a strict weak order but for NaN); sometimes
    // an arbitrary predicate, which the interpreter must survive too.
    std::string f;
    if (Coin(75)) {
      Body body;
      body.name = CompName();
      body.depth = b_->depth + 1;
      Body* outer = b_;
      b_ = &body;
      std::vector<std::string> p;
      for (size_t i = 0; i < params.size(); ++i) p.push_back(Emit(params[i], "parameter(" + std::to_string(i) + ")"));
      static const char* const kDirs[] = {"LT", "GT"};
      std::string dir = IsCx(shapes[0].type) ? "NE" : in_.PickValueInArray(kDirs);
      std::string type = IsFp(shapes[0].type) && Coin() ? ", type=TOTALORDER" : "";
      std::string root = Emit(Arr(PT::kPred, {}), "compare(" + p[0] + ", " + p[1] + "), direction=" + dir + type);
      helpers_.push_back(Finish(body, root));
      b_ = outer;
      f = body.name;
    } else {
      f = Computation(params, Arr(PT::kPred, {}), Int(0, 3));
    }
    Sh out = n == 1 ? x.shape : Tup(shapes);
    std::string s =
        Emit(out, "sort(" + names + "), dimensions={" + std::to_string(Int(0, static_cast<int>(x.shape.rank()) - 1)) +
                      "}" + (Coin() ? ", is_stable=true" : "") + ", to_apply=" + f);
    if (n > 1) Unpack(s, out);
  }

  // A tuple of some arrays of the body (1 to 3).
  Sh StateOf(std::string& names) {
    std::vector<Sh> elements;
    for (int k = Int(1, 3); k > 0; --k) {
      Val v = Pick();
      elements.push_back(v.shape);
      names += (names.empty() ? "" : ", ") + v.name;
    }
    return Tup(elements);
  }

  void While() {
    // State: (counter, arrays...); the condition is counter < trips, the body adds one.
    std::string names;
    Sh arrays = StateOf(names);
    std::vector<Sh> elements{Arr(PT::kS32, {})};
    for (const Sh& s : arrays.tuple) elements.push_back(s);
    Sh state = Tup(elements);
    int trips = Int(0, 4);
    Body cond;
    cond.name = CompName();
    Body* outer = b_;
    b_ = &cond;
    std::string p = Emit(state, "parameter(0)");
    std::string n = Emit(Arr(PT::kS32, {}), "get-tuple-element(" + p + "), index=0");
    std::string limit = ScalarConstant(PT::kS32, std::to_string(trips));
    std::string lt = Emit(Arr(PT::kPred, {}), "compare(" + n + ", " + limit + "), direction=LT");
    helpers_.push_back(Finish(cond, lt));
    // The body: counter + 1, random instructions over the state, then the state again.
    Body body;
    body.name = CompName();
    body.depth = outer->depth + 1;
    b_ = &body;
    std::string bp = Emit(state, "parameter(0)");
    std::string count = Emit(Arr(PT::kS32, {}), "get-tuple-element(" + bp + "), index=0");
    std::string all = Emit(Arr(PT::kS32, {}), "add(" + count + ", " + ScalarConstant(PT::kS32, "1") + ")");
    for (size_t k = 1; k < elements.size(); ++k)
      Emit(elements[k], "get-tuple-element(" + bp + "), index=" + std::to_string(k));
    for (int i = Int(0, 4); i > 0 && in_.remaining_bytes() > 0; --i) RandomOp();
    for (size_t k = 1; k < elements.size(); ++k) all += ", " + Need(elements[k]);
    std::string root = Emit(state, "tuple(" + all + ")");
    helpers_.push_back(Finish(body, root));
    b_ = outer;
    std::string init =
        Emit(state, "tuple(" + ScalarConstant(PT::kS32, std::to_string(Int(-1, 1))) + ", " + names + ")");
    std::string w = Emit(state, "while(" + init + "), condition=" + cond.name + ", body=" + body.name);
    Unpack(w, state);
  }

  void Conditional() {
    bool by_pred = Coin(30);
    int branches = by_pred ? 2 : Int(1, 3);
    std::string index = Need(Arr(by_pred ? PT::kPred : PT::kS32, {}));
    Sh result = Coin(70) ? RandomShape(PickType()) : Tup({RandomShape(PickType()), RandomShape(PickType())});
    std::vector<std::string> args, comps;
    for (int i = 0; i < branches; ++i) {
      std::string names;
      Sh arg = Coin() ? StateOf(names) : Pick().shape;
      if (!arg.IsTuple())
        names = Need(arg);
      else
        names = Emit(arg, "tuple(" + names + ")");
      args.push_back(names);
      comps.push_back(Computation({arg}, result, Int(0, 4)));
    }
    std::string operands = index;
    for (const std::string& a : args) operands += ", " + a;
    std::string attrs;
    if (by_pred) {
      attrs = ", true_computation=" + comps[0] + ", false_computation=" + comps[1];
    } else {
      attrs = ", branch_computations={";
      for (size_t i = 0; i < comps.size(); ++i) attrs += (i ? ", " : "") + comps[i];
      attrs += "}";
    }
    std::string c = Emit(result, "conditional(" + operands + ")" + attrs);
    if (result.IsTuple()) Unpack(c, result);
  }

  void CallOrFusion() {
    std::vector<Sh> params;
    std::string names;
    for (int k = Int(0, 3); k > 0; --k) {
      Val v = Pick();
      params.push_back(v.shape);
      names += (names.empty() ? "" : ", ") + v.name;
    }
    Sh result = Coin(70) ? RandomShape(PickType()) : Tup({RandomShape(PickType()), RandomShape(PickType())});
    std::string f = Computation(params, result, Int(0, 5));
    std::string c = Coin(70) ? Emit(result, "call(" + names + "), to_apply=" + f)
                             : Emit(result, "fusion(" + names + "), kind=kLoop, calls=" + f);
    if (result.IsTuple()) Unpack(c, result);
  }

  void TupleOps() {
    std::string names;
    Sh t = StateOf(names);
    std::string tuple = Emit(t, "tuple(" + names + ")");
    if (Coin()) {
      Sh nested = Tup({t, t.tuple[0]});
      std::string outer = Emit(nested, "tuple(" + tuple + ", " + names.substr(0, names.find(',')) + ")");
      tuple = Emit(t, "get-tuple-element(" + outer + "), index=0");
    }
    size_t i = static_cast<size_t>(Int(0, static_cast<int>(t.tuple.size()) - 1));
    Emit(t.tuple[i], "get-tuple-element(" + tuple + "), index=" + std::to_string(i));
  }

  void BatchNormTraining() {
    static const PT kBnTypes[] = {PT::kF16, PT::kF32};  // the interpreter refuses f64 ones
    PT t = in_.PickValueInArray(kBnTypes);
    std::vector<int64_t> dims = RandomDims(3);
    if (dims.empty()) dims.push_back(Int(1, 4));
    int64_t feature = Int(0, static_cast<int>(dims.size()) - 1);
    std::string x = Need(Arr(t, dims));
    std::string scale = Need(Arr(t, {dims[feature]})), offset = Need(Arr(t, {dims[feature]}));
    Sh out = Tup({Arr(t, dims), Arr(t, {dims[feature]}), Arr(t, {dims[feature]})});
    std::string bn =
        Emit(out, "batch-norm-training(" + x + ", " + scale + ", " + offset + "), epsilon=" + (Coin() ? "0.001" : "1") +
                      ", feature_index=" + std::to_string(feature));
    Unpack(bn, out);
  }

  // uniform_quantize / uniform_dequantize custom calls (expand-uniform-quantize rewrites them into
  // plain HLO; the interpreter also runs them directly), per-tensor or per-axis.
  void UniformQuantize() {
    static const PT kStorage[] = {PT::kS4, PT::kS8, PT::kS16, PT::kS32, PT::kU4, PT::kU8, PT::kU16};
    static const PT kExpressed[] = {PT::kF32, PT::kBF16, PT::kF16};  // f64: refused by the interpreter
    static const char* const kScales[] = {"0.5", "0.25", "1", "2", "0.1", "3.7", "0.001"};
    PT st = in_.PickValueInArray(kStorage), et = in_.PickValueInArray(kExpressed);
    std::vector<int64_t> dims = RandomDims();
    int64_t axis = -1;
    if (!dims.empty() && Coin()) {
      axis = Int(0, static_cast<int>(dims.size()) - 1);
      if (dims[axis] == 0) dims[axis] = 1;
    }
    int b = Bits(st);
    int64_t lo = IsSigned(st) ? -(int64_t{1} << (b - 1)) : 0,
            hi = IsSigned(st) ? (int64_t{1} << (b - 1)) - 1 : (int64_t{1} << b) - 1;
    int64_t smin = Coin(70) ? lo : Int(static_cast<int>(std::max<int64_t>(lo, -100)), 0);
    int64_t smax =
        Coin(70) ? hi : Int(static_cast<int>(std::max<int64_t>(smin, 0)), static_cast<int>(std::min<int64_t>(hi, 100)));
    std::string scales, zeros;
    for (int64_t i = 0; i < (axis < 0 ? 1 : dims[axis]); ++i) {
      scales += std::string(i ? ", " : "") + in_.PickValueInArray(kScales);
      zeros += (i ? ", " : "") +
               std::to_string(Int(static_cast<int>(smin), static_cast<int>(std::min<int64_t>(smax, smin + 20))));
    }
    std::string config = "backend_config={\"scale\": [" + scales + "], \"zero_point\": [" + zeros +
                         "], \"quantization_dimension\": " + std::to_string(axis) +
                         ", \"storage_min\": " + std::to_string(smin) + ", \"storage_max\": " + std::to_string(smax) +
                         ", \"storage_type\": \"" + TypeName(st) + "\", \"expressed_type\": \"" + TypeName(et) + "\"}";
    if (Coin()) {
      std::string x = Need(Arr(et, dims));
      Emit(Arr(st, dims), "custom-call(" + x + "), custom_call_target=\"uniform_quantize\", " + config);
    } else {
      std::string q = Need(Arr(st, dims));
      Emit(Arr(et, dims), "custom-call(" + q + "), custom_call_target=\"uniform_dequantize\", " + config);
    }
  }

  // QuantizeMX of an f32/bf16 operand along a dimension of 32 or 64 elements, and sometimes a
  // scaled-dot of two such results (legalize-quantize-mx and legalize-scaled-matmul rewrite
  // both into the packed device form).
  std::string QuantizeMx(PT t, const std::vector<int64_t>& dims, int64_t dim, PT f8, std::string& scales) {
    std::vector<int64_t> sdims = dims;
    sdims[dim] /= 32;
    Sh out = Tup({Arr(f8, dims), Arr(PT::kF8E8M0FNU, sdims)});
    std::string x = Need(Arr(t, dims));
    std::string q =
        Emit(out, "custom-call(" + x + "), custom_call_target=\"QuantizeMX\", backend_config={\"dtype\": \"" +
                      std::string(f8 == PT::kF8E4M3FN ? "float8_e4m3fn" : "float8_e5m2") +
                      "\", \"dim\": " + std::to_string(dim) + ", \"block_size\": 32, \"scale_method\": \"EMAX\"}");
    std::string data = Emit(out.tuple[0], "get-tuple-element(" + q + "), index=0");
    scales = Emit(out.tuple[1], "get-tuple-element(" + q + "), index=1");
    return data;
  }

  void MxDot() {
    PT t = Coin() ? PT::kF32 : PT::kBF16;
    int64_t k = 32 * Int(1, 2), m = Int(1, 3), n = Int(1, 3);
    PT fa = Coin() ? PT::kF8E4M3FN : PT::kF8E5M2, fb = Coin() ? PT::kF8E4M3FN : PT::kF8E5M2;
    std::string sa, sb;
    std::string a = QuantizeMx(t, {m, k}, 1, fa, sa);
    if (Coin(25)) return;  // QuantizeMX alone
    std::string b = QuantizeMx(t, {n, k}, 1, fb, sb);
    Emit(Arr(Coin() ? PT::kF32 : PT::kBF16, {m, n}), "scaled-dot(" + a + ", " + b + ", " + sa + ", " + sb +
                                                         "), lhs_contracting_dims={1}, rhs_contracting_dims={1}");
  }

  void CopyLike() {
    Val x = Pick();
    Emit(x.shape, (Coin() ? "copy(" : "opt-barrier(") + x.name + ")");
  }

  FuzzedDataProvider& in_;
  std::vector<std::string> helpers_;
  int comps_ = 0;
  int names_ = 0;
  Body* b_ = nullptr;
};

[[noreturn]] void Finding(const std::string& what, const std::string& text, const nhlo::Status* status = nullptr) {
  std::fprintf(stderr, "fuzz-modules: %s\n%s%s\n", what.c_str(), status ? status->ToString().c_str() : "",
               text.c_str());
  std::abort();
}

bool SameValue(const nhlo::Value& a, const nhlo::Value& b) {
  if (a.type != b.type || a.dims != b.dims || a.bytes != b.bytes || a.tuple.size() != b.tuple.size()) return false;
  for (size_t i = 0; i < a.tuple.size(); ++i)
    if (!SameValue(a.tuple[i], b.tuple[i])) return false;
  return true;
}

bool IsStepLimit(const nhlo::Status& s) { return s.ToString().find("(--max-steps)") != std::string::npos; }

// Compiles `text` with `passes` (nullopt: the default pipeline) into a bundle.
std::string Compile(const std::string& text, std::optional<std::vector<std::string>> passes) {
  nhlo::CodegenOptions codegen;
  codegen.buffer_aliasing = passes == std::nullopt;  // the reference: every value its own bytes
  nhlo::PipelineOptions options;
  options.passes = std::move(passes);
  std::ostringstream log;
  auto module = nhlo::CompileText("fuzz.hlo", text, options, log);
  if (!module.ok()) Finding("generated module rejected", text, &module.status());
  auto bundle = nhlo::EmitBundleFile(**module, codegen);
  if (!bundle.ok()) Finding("codegen failed", text, &bundle.status());
  return *bundle;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  uint64_t seed = in.ConsumeIntegral<uint16_t>();
  std::string text = Generator(in).Module();
  if (std::getenv("NHLO_FUZZ_PRINT")) std::fprintf(stderr, "%s\n", text.c_str());
  std::string bundles[2] = {Compile(text, std::nullopt), Compile(text, std::vector<std::string>{"none"})};
  nhlo::Result<nhlo::Value> results[2] = {nhlo::Status::Error(""), nhlo::Status::Error("")};
  for (int i = 0; i < 2; ++i) {
    auto program = nhlo::ReadBundleFile(bundles[i], "fuzz.bin");
    if (!program.ok()) Finding("the reader rejects a bundle the writer made", text, &program.status());
    const nhlo::ComputationRecord& entry = program->computations[program->entry];
    std::vector<nhlo::Value> args;
    nhlo::Module scratch;
    for (size_t p = 0; p < entry.params.size(); ++p) {
      const nhlo::BufferRecord& b = entry.buffers[entry.params[p]];
      args.push_back(nhlo::RandomValue(scratch.MakeArrayShape(b.type, b.dims), seed * 1000003 + p));
    }
    nhlo::ExecuteOptions options;
    options.max_steps = kMaxSteps;
    options.fusion = i == 0;  // the unfused program op by op: the fused executor is checked too
    results[i] = nhlo::Execute(*program, std::move(args), options);
    if (!results[i].ok() && !IsStepLimit(results[i].status()))
      Finding(i == 0 ? "run failed (default pipeline)" : "run failed (--passes=none)", text, &results[i].status());
  }
  if (results[0].ok() && results[1].ok() && !SameValue(*results[0], *results[1])) {
    Finding("results differ:\n  default pipeline: " + nhlo::PrintValue(*results[0]) +
                "\n  --passes=none --fusion=off --buffer-aliasing=off: " + nhlo::PrintValue(*results[1]),
            text);
  }
  return 0;
}
