// SPDX-License-Identifier: Apache-2.0
#include "driver/values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/literal.h"
#include "parser/parser.h"
#include "support/large_alloc.h"
#include "support/parallel.h"
#include "types/element.h"
#include "types/float_cast.h"

namespace nhlo {

Value ValueFromLiteral(const Literal& literal) {
  Value v;
  v.type = literal.shape.type;
  if (literal.shape.IsTuple()) {
    for (const Literal* e : literal.tuple) v.tuple.push_back(ValueFromLiteral(*e));
    return v;
  }
  v.dims.assign(literal.shape.dims.begin(), literal.shape.dims.end());
  if (literal.elided) {
    int64_t bytes = HostBytes(literal.shape);
    v.bytes.assign(bytes > 0 ? static_cast<size_t>(bytes) : 0, '\0');  // elided data reads as zeros
  } else {
    v.bytes.assign(reinterpret_cast<const char*>(literal.data.data()), literal.data.size());
  }
  return v;
}

namespace {

void AppendNamedLeaves(const Value& v, const std::string& name,
                       std::vector<std::pair<std::string, const Value*>>& out) {
  if (!v.IsTuple()) {
    out.push_back({name, &v});
    return;
  }
  for (size_t i = 0; i < v.tuple.size(); ++i)
    AppendNamedLeaves(v.tuple[i], name == "out" ? name + std::to_string(i) : name + "_" + std::to_string(i), out);
}

}  // namespace

std::vector<std::pair<std::string, const Value*>> NamedOutputs(const Value& result) {
  std::vector<std::pair<std::string, const Value*>> outputs;
  AppendNamedLeaves(result, "out", outputs);
  if (!result.IsTuple()) outputs[0].first = "out0";
  return outputs;
}

Result<Value> ParseValue(std::string_view text, std::string_view what) {
  Module scratch;
  NHLO_ASSIGN_OR_RETURN(const Literal* lit, ParseStandaloneLiteral(scratch, std::string(what), std::string(text)));
  if (lit->elided) return Status::Error(std::string(what) + ": an elided literal {...} has no values");
  return ValueFromLiteral(*lit);
}

namespace {

constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

// Draw `index` (from 0) of the SplitMix64 sequence whose state is `base`.
inline uint64_t SplitMixAt(uint64_t base, int64_t index) {
  uint64_t z = base + (static_cast<uint64_t>(index) + 1) * kSplitMixGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// An integer uniform in [lo, hi] (inclusive) from one draw.
int64_t UniformInt(uint64_t r, int64_t lo, int64_t hi) {
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;  // 0: all of int64
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + (span == 0 ? r : r % span));
}

// The integer bounds `range` gives type `t`: [ceil(lo), floor(hi)] clamped to the type (and to
// int64); a range holding no integer gives the one nearest its middle.
std::pair<int64_t, int64_t> IntegerBounds(PrimitiveType t, const RandomRange& range) {
  int bits = BitWidth(t);
  double type_min = IsSignedInt(t) ? -std::ldexp(1.0, bits - 1) : 0.0;
  // 2^63 itself does not fit int64_t; the largest double below it does.
  double type_max = std::min(std::ldexp(1.0, IsSignedInt(t) ? bits - 1 : bits) - 1, 9223372036854774784.0);
  double lo = std::clamp(std::ceil(range.lo), type_min, type_max);
  double hi = std::clamp(std::floor(range.hi), type_min, type_max);
  if (lo > hi) lo = hi = std::clamp(std::round((range.lo + range.hi) / 2), type_min, type_max);
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

// The exponents k of the powers of two 2^k that f8e8m0fnu can hold (k in [-127, 127]) inside
// `range`; a range holding none gives the power of two nearest above its low end.
std::pair<int64_t, int64_t> ScaleExponentBounds(const RandomRange& range) {
  double lo = range.lo > 0 ? std::ceil(std::log2(range.lo)) : -127.0;
  double hi = range.hi > 0 ? std::floor(std::log2(range.hi)) : -127.0;
  lo = std::clamp(lo, -127.0, 127.0);
  hi = std::clamp(hi, -127.0, 127.0);
  if (lo > hi) hi = lo;
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

void FillRandom(Value& v, const Shape& shape, uint64_t& state, const std::optional<RandomRange>& range) {
  v.type = shape.type;
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple) {
      v.tuple.emplace_back();
      FillRandom(v.tuple.back(), e, state, range);
    }
    return;
  }
  v.dims.assign(shape.dims.begin(), shape.dims.end());
  int64_t bytes = HostBytes(shape);
  AssignZeros(v.bytes, bytes > 0 ? static_cast<size_t>(bytes) : 0);
  int size = HostByteSize(shape.type);
  // Each element takes exactly one draw whatever its type, so a type's distribution never
  // shifts the values of the arguments after it.
  std::pair<int64_t, int64_t> int_bounds{0, 0}, scale_bounds{-4, 4};
  if (IsInteger(shape.type)) {
    // Small values keep products and sums far from overflow, so runs are comparable.
    int64_t count = BitWidth(shape.type) >= 8 ? 16 : (int64_t(1) << (BitWidth(shape.type) - 1));
    int_bounds = IsSignedInt(shape.type) && BitWidth(shape.type) >= 8 ? std::pair<int64_t, int64_t>{-8, 7}
                                                                      : std::pair<int64_t, int64_t>{0, count - 1};
    if (range) int_bounds = IntegerBounds(shape.type, *range);
  }
  if (range) scale_bounds = ScaleExponentBounds(*range);
  double lo = range ? range->lo : -1.0, hi = range ? range->hi : 1.0;
  const int64_t count = size > 0 ? shape.ElementCount() : 0;
  // Element i takes draw i after `base`: computed from its index, so chunks fill in parallel
  // (and vectorize) with the values a sequential SplitMix walk gives.
  const uint64_t base = state;
  state += static_cast<uint64_t>(count) * kSplitMixGamma;
  uint8_t* data = reinterpret_cast<uint8_t*>(v.bytes.data());
  auto fill = [&](auto store) {
    ParallelFor(count, 1 << 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) store(i, SplitMixAt(base, i));
    });
  };
  auto unit = [](uint64_t r) { return static_cast<double>(r >> 11) * 0x1.0p-53; };  // [0, 1)
  auto fill_native = [&](auto zero) {
    using T = decltype(zero);
    T* out = reinterpret_cast<T*>(data);
    if constexpr (std::is_floating_point_v<T>) {
      fill([&](int64_t i, uint64_t r) { out[i] = static_cast<T>(lo + unit(r) * (hi - lo)); });
    } else {
      int64_t first = int_bounds.first, last = int_bounds.second;
      fill([&](int64_t i, uint64_t r) { out[i] = static_cast<T>(UniformInt(r, first, last)); });
    }
  };
  switch (shape.type) {
    case PrimitiveType::kF32: return fill_native(float{});
    case PrimitiveType::kF64: return fill_native(double{});
    case PrimitiveType::kS8: return fill_native(int8_t{});
    case PrimitiveType::kS16: return fill_native(int16_t{});
    case PrimitiveType::kS32: return fill_native(int32_t{});
    case PrimitiveType::kS64: return fill_native(int64_t{});
    case PrimitiveType::kU8: return fill_native(uint8_t{});
    case PrimitiveType::kU16: return fill_native(uint16_t{});
    case PrimitiveType::kU32: return fill_native(uint32_t{});
    case PrimitiveType::kU64: return fill_native(uint64_t{});
    case PrimitiveType::kPred: return fill([&](int64_t i, uint64_t r) { data[i] = r & 1; });
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16: {
      // StoreFromDouble's rounding for these (through f32, as Eigen's types construct), inline.
      PrimitiveType t = shape.type;
      return fill([&](int64_t i, uint64_t r) {
        uint16_t code = static_cast<uint16_t>(EncodeFromF32(t, static_cast<float>(lo + unit(r) * (hi - lo))));
        std::memcpy(data + 2 * i, &code, 2);
      });
    }
    case PrimitiveType::kF8E8M0FNU:
      // A scale is a power of two; uniform floats would make half of them NaN (negative) and
      // most of the rest tiny.
      return fill([&](int64_t i, uint64_t r) {
        StoreBits(shape.type, data + i,
                  static_cast<uint64_t>(127 + UniformInt(r, scale_bounds.first, scale_bounds.second)));
      });
    // The other element types: one generic store each, below.
    case PrimitiveType::kInvalid:
    case PrimitiveType::kTuple:
    case PrimitiveType::kOpaque:
    case PrimitiveType::kC64:
    case PrimitiveType::kToken:
    case PrimitiveType::kC128:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kS2:
    case PrimitiveType::kU2:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kS1:
    case PrimitiveType::kU1:
    case PrimitiveType::kF4E2M1FN:
    case PrimitiveType::kBuffer:
    case PrimitiveType::kF6E3M2FN:
    case PrimitiveType::kF6E2M3FN: break;
  }
  PrimitiveType t = shape.type;
  if (IsInteger(t)) {
    fill([&](int64_t i, uint64_t r) {
      StoreFromInt(t, data + i * size, UniformInt(r, int_bounds.first, int_bounds.second));
    });
  } else if (IsFloat(t) || IsComplex(t)) {
    fill([&](int64_t i, uint64_t r) { StoreFromDouble(t, data + i * size, lo + unit(r) * (hi - lo)); });
  }
}

}  // namespace

Value RandomValue(const Shape& shape, uint64_t seed, const std::optional<RandomRange>& range) {
  Value v;
  uint64_t state = seed;
  FillRandom(v, shape, state, range);
  return v;
}

Result<RandomRange> ParseRandomRange(std::string_view text) {
  auto bad = [&] {
    return Status::Error("--random-range: '" + std::string(text) + "' is not LO,HI (two finite numbers, LO <= HI)");
  };
  size_t comma = text.find(',');
  if (comma == std::string_view::npos) return bad();
  RandomRange range;
  for (auto [part, out] : {std::pair{text.substr(0, comma), &range.lo}, std::pair{text.substr(comma + 1), &range.hi}}) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), *out);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || !std::isfinite(*out)) return bad();
  }
  if (range.lo > range.hi) return bad();
  return range;
}

namespace {

void AppendValueBody(std::string& out, const Value& v) {
  if (v.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < v.tuple.size(); ++i) {
      if (i) out += ", ";
      AppendValueBody(out, v.tuple[i]);
    }
    out += ')';
    return;
  }
  if (!IsArrayType(v.type)) {  // a token has no elements; XLA's literal text is `token`
    out += PrimitiveTypeName(v.type);
    return;
  }
  Shape s;
  s.type = v.type;
  s.dims = Span<int64_t>(const_cast<int64_t*>(v.dims.data()), v.dims.size());
  AppendArrayLiteral(out, s, reinterpret_cast<const uint8_t*>(v.bytes.data()));
}

void AppendValueShape(std::string& out, const Value& v) {
  if (v.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < v.tuple.size(); ++i) {
      if (i) out += ", ";
      AppendValueShape(out, v.tuple[i]);
    }
    out += ')';
    return;
  }
  if (!v.bounds.empty()) {
    out += ValueShapeText(v);
    return;
  }
  Shape s;
  s.type = v.type;
  s.dims = Span<int64_t>(const_cast<int64_t*>(v.dims.data()), v.dims.size());
  AppendShape(out, s, /*print_layout=*/false);
}

}  // namespace

std::string PrintValue(const Value& value) {
  std::string out;
  AppendValueShape(out, value);
  out += ' ';
  AppendValueBody(out, value);
  return out;
}

void ConvertElementsTo(Value& value, PrimitiveType type) {
  if (value.IsTuple() || value.type == type || !IsArrayType(value.type) || !IsArrayType(type)) return;
  const int from = HostByteSize(value.type), to = HostByteSize(type);
  const int64_t count = value.ElementCount();
  if (count < 0 || static_cast<int64_t>(value.bytes.size()) < count * from) return;
  Value out;
  out.type = type;
  out.dims = value.dims;
  out.bytes.assign(static_cast<size_t>(count * to), '\0');
  for (int64_t i = 0; i < count; ++i)
    ConvertElement(value.type, reinterpret_cast<const uint8_t*>(value.bytes.data()) + i * from, type,
                   reinterpret_cast<uint8_t*>(out.bytes.data()) + i * to);
  value = std::move(out);
}

}  // namespace nhlo
