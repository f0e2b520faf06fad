// SPDX-License-Identifier: Apache-2.0
#include "driver/values.h"

#include "ir/literal.h"
#include "parser/parser.h"

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

Result<Value> ParseValue(std::string_view text, std::string_view what) {
  Module scratch;
  NHLO_ASSIGN_OR_RETURN(const Literal* lit, ParseStandaloneLiteral(scratch, std::string(what), std::string(text)));
  if (lit->elided) return Status::Error(std::string(what) + ": an elided literal {...} has no values");
  return ValueFromLiteral(*lit);
}

namespace {

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void FillRandom(Value& v, const Shape& shape, uint64_t& state) {
  v.type = shape.type;
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple) {
      v.tuple.emplace_back();
      FillRandom(v.tuple.back(), e, state);
    }
    return;
  }
  v.dims.assign(shape.dims.begin(), shape.dims.end());
  int64_t bytes = HostBytes(shape);
  v.bytes.assign(bytes > 0 ? static_cast<size_t>(bytes) : 0, '\0');
  int size = HostByteSize(shape.type);
  for (int64_t i = 0; size > 0 && i < shape.ElementCount(); ++i) {
    uint64_t r = SplitMix(state);
    uint8_t* p = reinterpret_cast<uint8_t*>(v.bytes.data()) + i * size;
    if (shape.type == PrimitiveType::kPred) {
      p[0] = r & 1;
    } else if (IsInteger(shape.type)) {
      // Small values keep products and sums far from overflow, so runs are comparable.
      int64_t range = BitWidth(shape.type) >= 8 ? 16 : (int64_t(1) << (BitWidth(shape.type) - 1));
      int64_t value = static_cast<int64_t>(r % static_cast<uint64_t>(range));
      if (IsSignedInt(shape.type) && BitWidth(shape.type) >= 8) value -= range / 2;
      StoreFromInt(shape.type, p, value);
    } else if (IsFloat(shape.type) || IsComplex(shape.type)) {
      double unit = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
      StoreFromDouble(shape.type, p, unit * 2.0 - 1.0);
    }
  }
}

}  // namespace

Value RandomValue(const Shape& shape, uint64_t seed) {
  Value v;
  uint64_t state = seed;
  FillRandom(v, shape, state);
  return v;
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

}  // namespace nhlo
