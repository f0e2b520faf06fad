// SPDX-License-Identifier: Apache-2.0
// rng-bit-generator as XLA's RngBitGeneratorExpander expands it (xla/hlo/builder/lib/prng.cc):
// Threefry-2x32 with 20 rounds and Philox-4x32 with 10 rounds (Salmon et al., SC 2011; the
// Random123 known-answer vectors in testdata/exec/rng_bit_generator.hlo), the state and counter
// layouts, shape splitting and element order of XLA's builder library, and rng_default mapped to
// PHILOX as XLA's CPU and GPU compilers map it. Also rng (the evaluator's std:: distributions).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

// Threefry-2x32, 20 rounds: five groups of four rounds, a key injection after each.
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (uint32_t group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = RotateLeft(x[1], kRotations[(group % 2) * 4 + r]);
      x[1] ^= x[0];
    }
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + group + 1;
  }
  return x;
}

// Philox-4x32, 10 rounds; the key is raised after each round.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u, p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
    key = {key[0] + 0x9E3779B9u, key[1] + 0xBB67AE85u};
  }
  return x;
}

std::array<uint32_t, 2> Halves(uint64_t v) { return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)}; }

// Stores the low BitWidth(t) bits of `v` as element i of `out` (XLA converts u32 to the narrow
// unsigned type, then the bits are the result's).
void StoreRandom(const Buf& out, int64_t i, uint64_t v) {
  int size = HostByteSize(out.type());
  if (BitWidth(out.type()) < 64) v &= (uint64_t{1} << BitWidth(out.type())) - 1;
  StoreBits(out.type(), out.data + i * size, v);
}

// Threefry: counters are the state's counter word plus the row-major index. 64-bit results use
// both output words of one counter; narrower ones split the shape in halves along its first
// even dimension (else its largest), a counter per element of the half, output word c going to
// index 2h + c of that dimension. Returns how far the counter advanced.
uint64_t ThreeFryBits(uint64_t key, uint64_t counter, const Buf& out) {
  std::array<uint32_t, 2> k = Halves(key);
  const std::vector<int64_t>& dims = Dims(out);
  if (BitWidth(out.type()) == 64) {
    for (int64_t i = 0; i < out.count(); ++i) {
      std::array<uint32_t, 2> x = ThreeFry2x32(Halves(counter + static_cast<uint64_t>(i)), k);
      StoreRandom(out, i, uint64_t{x[0]} | uint64_t{x[1]} << 32);
    }
    return static_cast<uint64_t>(out.count());
  }
  if (dims.empty()) {
    StoreRandom(out, 0, ThreeFry2x32(Halves(counter), k)[0]);
    return 1;
  }
  size_t split = dims.size();
  for (size_t d = 0; d < dims.size() && split == dims.size(); ++d)
    if (dims[d] % 2 == 0) split = d;
  if (split == dims.size()) {
    split = 0;
    for (size_t d = 1; d < dims.size(); ++d)
      if (dims[d] > dims[split]) split = d;
  }
  std::vector<int64_t> half = dims;
  half[split] = (dims[split] + 1) / 2;
  std::vector<int64_t> half_strides = RowMajorStrides(half);
  ForEachIndex(dims, [&](int64_t linear, const std::vector<int64_t>& index) {
    int64_t h = 0;
    for (size_t d = 0; d < dims.size(); ++d) h += (d == split ? index[d] / 2 : index[d]) * half_strides[d];
    std::array<uint32_t, 2> x = ThreeFry2x32(Halves(counter + static_cast<uint64_t>(h)), k);
    StoreRandom(out, linear, x[index[split] % 2]);
  });
  return static_cast<uint64_t>(CheckedElementCount(half));
}

// Philox: 128-bit counters (low, high) plus j for j in [0, ceil(n / 4)); element 4j + i is output
// word i of counter j, for 64-bit results element 2j + i joins words 2i and 2i + 1. Returns the
// advanced counter.
std::array<uint64_t, 2> PhiloxBits(uint64_t key, std::array<uint64_t, 2> counter, const Buf& out) {
  std::array<uint32_t, 2> k = Halves(key);
  bool wide = BitWidth(out.type()) == 64;
  int64_t per_block = wide ? 2 : 4, n = out.count();
  uint64_t blocks = static_cast<uint64_t>((n + per_block - 1) / per_block);
  for (uint64_t j = 0; j < blocks; ++j) {
    uint64_t low = counter[0] + j, high = counter[1] + (low < counter[0] ? 1 : 0);
    std::array<uint32_t, 2> l = Halves(low), h = Halves(high);
    std::array<uint32_t, 4> x = Philox4x32({l[0], l[1], h[0], h[1]}, k);
    for (int64_t i = 0; i < per_block; ++i) {
      int64_t e = static_cast<int64_t>(j) * per_block + i;
      if (e >= n) break;
      StoreRandom(out, e, wide ? uint64_t{x[2 * i]} | uint64_t{x[2 * i + 1]} << 32 : x[i]);
    }
  }
  uint64_t low = counter[0] + blocks;
  return {low, counter[1] + (low < counter[0] ? 1 : 0)};
}

}  // namespace

Result<RngBitsPlan> PlanRngBitGenerator(const Step& bundle, const BufferRecord& state, const BufferRecord* new_state,
                                        const BufferRecord& bits) {
  const AttrRecord* algorithm = bundle.Find(AttrId::kAlgorithm);
  auto a = algorithm ? static_cast<Algorithm>(algorithm->i()) : Algorithm::kRngDefault;
  if (a == Algorithm::kRngDefault) a = Algorithm::kRngPhilox;  // XLA's CPU and GPU compilers
  if (a != Algorithm::kRngThreeFry && a != Algorithm::kRngPhilox)
    return Status::Error("rng-bit-generator has no RNG algorithm");
  if (state.type != PrimitiveType::kU64 || state.dims.size() != 1)
    return Status::Error("rng-bit-generator state must be u64[N]");
  const int64_t n = state.ElementCount();
  // Words past the ones the algorithm reads (THREE_FRY: 2, PHILOX: 3) pass through unchanged;
  // XLA's expander leaves such a state ill-typed (its computation returns the short state).
  if (n < 2) return Status::Error("rng-bit-generator state u64[" + std::to_string(n) + "] has no counter");
  if (new_state && (new_state->type != PrimitiveType::kU64 || new_state->ElementCount() != n))
    return Status::Error("rng-bit-generator new state must have the state's shape");
  const PrimitiveType t = bits.type;
  if (!IsInteger(t) || BitWidth(t) < 8)
    return Status::Error("rng-bit-generator produces integers of 8 to 64 bits, not " +
                         std::string(PrimitiveTypeName(t)));
  return RngBitsPlan{a == Algorithm::kRngThreeFry, n};
}

Status KernelRngBitGenerator(const Step& bundle, const Buf& state, const Buf* new_state, const Buf& bits) {
  NHLO_ASSIGN_OR_RETURN(RngBitsPlan plan,
                        PlanRngBitGenerator(bundle, *state.rec, new_state ? new_state->rec : nullptr, *bits.rec));
  RunRngBitGenerator(plan, state, new_state, bits);
  return OkStatus();
}

void RunRngBitGenerator(const RngBitsPlan& plan, const Buf& state, const Buf* new_state, const Buf& bits) {
  const int64_t n = plan.words;
  std::vector<uint64_t> s(static_cast<size_t>(std::max<int64_t>(n, 3)), 0);
  std::memcpy(s.data(), state.data, static_cast<size_t>(n) * 8);
  std::vector<uint64_t> next = s;
  if (plan.three_fry) {
    next[1] = s[1] + ThreeFryBits(s[0], s[1], bits);
  } else {
    // u64[3] and longer: the counter is (s[1], s[2]); u64[2]: XLA reverses the state, so the
    // counter is (s[1], s[0]) and only its low word is kept.
    std::array<uint64_t, 2> counter = {s[1], n >= 3 ? s[2] : s[0]};
    std::array<uint64_t, 2> advanced = PhiloxBits(s[0], counter, bits);
    next[1] = advanced[0];
    if (n >= 3) next[2] = advanced[1];
  }
  if (new_state) std::memcpy(new_state->data, next.data(), static_cast<size_t>(n) * 8);
}

}  // namespace nhlo

namespace nhlo {

// JAX's threefry2x32 custom call (jax/_src/random/threefry2x32.py; jaxlib's CUDA kernel computes
// the same): the Threefry-2x32 above on each element's key pair and counter pair. A fifth
// operand (the shape-polymorphic form's s64[1] length) is not needed: the shapes give it.
Status CheckThreefry2x32(const std::vector<const BufferRecord*>& in, const std::vector<const BufferRecord*>& out) {
  if ((in.size() != 4 && in.size() != 5) || out.size() != 2)
    return Status::Error("threefry2x32 takes (key0, key1, x0, x1) and gives (out0, out1)");
  for (const BufferRecord* b : {in[0], in[1], in[2], in[3], out[0], out[1]})
    if (b->type != PrimitiveType::kU32 || b->dims != out[0]->dims)
      return Status::Error("threefry2x32's operands and results are u32 arrays of one shape");
  return OkStatus();
}

void RunThreefry2x32(const std::vector<Buf>& in, const std::vector<Buf>& out) {
  auto word = [](const Buf& b, int64_t i) {
    uint32_t v;
    std::memcpy(&v, b.data + i * 4, 4);
    return v;
  };
  for (int64_t i = 0; i < out[0].count(); ++i) {
    std::array<uint32_t, 2> x = ThreeFry2x32({word(in[2], i), word(in[3], i)}, {word(in[0], i), word(in[1], i)});
    std::memcpy(out[0].data + i * 4, &x[0], 4);
    std::memcpy(out[1].data + i * 4, &x[1], 4);
  }
}

Status KernelThreefry2x32(const std::vector<Buf>& in, const std::vector<Buf>& out) {
  NHLO_TRY(CheckThreefry2x32(RecordsOf(in), RecordsOf(out)));
  RunThreefry2x32(in, out);
  return OkStatus();
}

Result<RngPlan> PlanRng(const Step& bundle, const BufferRecord& a, const BufferRecord& b, const BufferRecord& out) {
  const AttrRecord* dist = bundle.Find(AttrId::kDistribution);
  if (!dist) return Status::Error("rng needs distribution=");
  const bool normal = static_cast<Distribution>(dist->i()) == Distribution::kNormal;
  const PrimitiveType t = out.type;
  if (a.ElementCount() != 1 || b.ElementCount() != 1 || a.type != t || b.type != t)
    return Status::Error("rng takes two scalars of its result's type");
  if (!IsFloat(t) && !IsInteger(t))
    return Status::Error("rng produces floats or integers, not " + std::string(PrimitiveTypeName(t)));
  if (!IsFloat(t) && normal)
    return Status::Error("rng: the normal distribution is not defined for integer types (as in XLA)");
  return RngPlan{normal};
}

Status KernelRng(const Step& bundle, const Buf& a, const Buf& b, const Buf& out, std::minstd_rand0& engine) {
  NHLO_ASSIGN_OR_RETURN(RngPlan plan, PlanRng(bundle, *a.rec, *b.rec, *out.rec));
  return RunRng(plan, a, b, out, engine);
}

Status RunRng(const RngPlan& plan, const Buf& a, const Buf& b, const Buf& out, std::minstd_rand0& engine) {
  const bool normal = plan.normal;
  const PrimitiveType t = out.type();
  if (IsFloat(t)) {
    return DispatchType(t, [&](auto tr) -> Status {
      using C = typename decltype(tr)::Compute;
      if constexpr (!std::is_floating_point_v<C>) {
        return Status::Error("rng: not a float type");
      } else {
        C lo = tr.Load(a.data, 0), hi = tr.Load(b.data, 0);
        if (normal) {
          std::normal_distribution<C> gen(lo, hi);
          for (int64_t i = 0; i < out.count(); ++i) tr.Store(out.data, i, gen(engine));
          return OkStatus();
        }
        if (!(lo < hi)) return Status::Error("rng uniform needs low < high");
        std::uniform_real_distribution<C> gen(lo, hi);
        for (int64_t i = 0; i < out.count(); ++i) {
          C v = gen(engine);
          while (v == hi) v = gen(engine);  // [low, high), as XLA's evaluator redraws
          tr.Store(out.data, i, v);
        }
        return OkStatus();
      }
    });
  }
  int64_t lo = LoadIndex(t, a.data), hi = LoadIndex(t, b.data);  // an integer type: the plan checked
  if (!(lo < hi)) return Status::Error("rng uniform needs low < high");
  std::uniform_int_distribution<int64_t> gen(lo, hi - 1);
  for (int64_t i = 0; i < out.count(); ++i) StoreFromInt(t, out.data + i * HostByteSize(t), gen(engine));
  return OkStatus();
}

}  // namespace nhlo

namespace nhlo {

// stochastic-convert(x, random) to a signed integer type, as XLA's StochasticConvertDecomposer:
// |x| is cut into floor and fraction; the fraction times 2^bits(random), converted to the
// random type, rounds the magnitude up when random is below it; the sign is put back; x at or
// beyond the type's min or max (as the operand type holds them) gives min or max. Every step
// is exact in double, so one double computation gives the expansion's result.
Result<StochasticConvertPlan> PlanStochasticConvert(const BufferRecord& x, const BufferRecord& random,
                                                    const BufferRecord& out) {
  const PrimitiveType from = x.type, rt = random.type, to = out.type;
  if (!IsFloat(from) || !IsUnsignedInt(rt) || BitWidth(rt) != BitWidth(from) || random.dims != x.dims ||
      out.dims != x.dims)
    return Status::Error("stochastic-convert takes a float operand and unsigned random bits of its width and shape");
  if (!IsSignedInt(to) || BitWidth(to) < 8)
    return Status::Error("stochastic-convert to " + std::string(PrimitiveTypeName(to)) +
                         " is not implemented (XLA's decomposer converts to signed integers only)");
  const int bits = BitWidth(to);
  auto as_operand = [&](double v) {  // a bound as MakeScalarLike(operand, bound) holds it
    uint8_t tmp[8];
    StoreFromDouble(from, tmp, v);
    return LoadAsDouble(from, tmp);
  };
  StochasticConvertPlan plan;
  plan.min = as_operand(-std::ldexp(1.0, bits - 1));
  plan.max = as_operand(std::ldexp(1.0, bits - 1) - 1);
  plan.type_max = static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1);  // no signed overflow at 64 bits
  plan.type_min = -plan.type_max - 1;
  plan.scale = std::ldexp(1.0, BitWidth(rt));
  return plan;
}

Status KernelStochasticConvert(const Buf& x, const Buf& random, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(StochasticConvertPlan plan, PlanStochasticConvert(*x.rec, *random.rec, *out.rec));
  RunStochasticConvert(plan, x, random, out);
  return OkStatus();
}

void RunStochasticConvert(const StochasticConvertPlan& plan, const Buf& x, const Buf& random, const Buf& out) {
  const PrimitiveType from = x.type(), rt = random.type(), to = out.type();
  const double min = plan.min, max = plan.max;
  const int64_t tmin = plan.type_min, tmax = plan.type_max;
  const int xs = HostByteSize(from), rs = HostByteSize(rt), os = HostByteSize(to);
  for (int64_t i = 0; i < x.count(); ++i) {
    double v = LoadAsDouble(from, x.data + i * xs);
    double magnitude = std::fabs(v), whole = std::floor(magnitude);
    double fixed = (magnitude - whole) * plan.scale;
    uint8_t f64_bits[8], fixed_bits[8], whole_bits[8];
    std::memcpy(f64_bits, &fixed, 8);
    ConvertElement(PrimitiveType::kF64, f64_bits, rt, fixed_bits);  // XLA's convert: NaN -> 0
    std::memcpy(f64_bits, &whole, 8);
    ConvertElement(PrimitiveType::kF64, f64_bits, to, whole_bits);
    int64_t result = LoadAsInt(to, whole_bits);
    if (LoadAsUint(rt, random.data + i * rs) < LoadAsUint(rt, fixed_bits)) ++result;
    if (v < 0) result = -result;  // sign(x) < 0; NaN is not
    uint8_t* o = out.data + i * os;
    StoreFromInt(to, o, result);  // wraps to the type, as the expansion's add and negate do
    if (v <= min) StoreFromInt(to, o, tmin);
    if (v >= max) StoreFromInt(to, o, tmax);
  }
}

}  // namespace nhlo
