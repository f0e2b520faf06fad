// SPDX-License-Identifier: Apache-2.0
#include "ir/gpu_attention_calls.h"

#include <climits>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/expansion_builder.h"
#include "support/checked_math.h"
#include "types/custom_call_configs.h"

namespace nhlo {
namespace {

constexpr size_t kAbsent = static_cast<size_t>(-1);
using Dims = std::vector<int64_t>;

std::string Str(const Shape& s) { return ShapeToString(s, false); }

std::string DoubleText(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Everything the checks work out once and the expansion reads: the sizes, the permutations that
// bring each operand to its canonical order, and where each operand is.
struct FmhaPlan {
  const FmhaConfig* config = nullptr;
  PrimitiveType type = PrimitiveType::kInvalid;     // Q's, K's, V's (and dO's, O's) element type
  PrimitiveType rounded = PrimitiveType::kInvalid;  // the probabilities' type before the second product
  int64_t b = 0, heads = 0, kv_heads = 0, t = 0, s = 0, h = 0, hv = 0;
  // To [B, N, T, H] (Q), [B, Nkv, S, H] (K), [B, Nkv, S, Hv] (V), [B, N, T, Hv] (dO and O).
  Dims q_perm, k_perm, v_perm, dout_perm;
  size_t stats = kAbsent, dout = kAbsent, bias = kAbsent, out = kAbsent, q_len = kAbsent, kv_len = kAbsent;
  bool padding = false, causal = false, has_stats = false;
};

// The permutation that puts a rank-4 operand's batch dimensions first, then its free dimension
// and its contracting one (or the other way round when `contracting_last` is false), as XLA's
// MatmulTensorDescriptor orders a product's operand for cuDNN.
Result<Dims> CanonicalOrder(const Instruction& call, const Shape& x, const FmhaDot& dot, bool lhs,
                            bool contracting_last, const char* what) {
  const Dims& batch = lhs ? dot.lhs_batch : dot.rhs_batch;
  const Dims& contracting = lhs ? dot.lhs_contracting : dot.rhs_contracting;
  if (x.rank() != 4)
    return CustomCallError(call, std::string(what) + " " + Str(x) + " must have rank 4 (batch, heads, sequence, head)");
  if (batch.size() != 2 || contracting.size() != 1)
    return CustomCallError(call, std::string("backend_config gives ") + what + " " + std::to_string(batch.size()) +
                                     " batch and " + std::to_string(contracting.size()) +
                                     " contracting dimensions, not 2 and 1");
  bool used[4] = {};
  Dims order;
  for (int64_t d : {batch[0], batch[1], contracting[0]}) {
    if (d < 0 || d >= 4 || used[d])
      return CustomCallError(call, std::string("backend_config's dimensions for ") + what + " " + Str(x) +
                                       " are out of range or repeated");
    used[d] = true;
  }
  int64_t free = 0;
  while (used[free]) ++free;
  order = {batch[0], batch[1]};
  if (contracting_last) {
    order.push_back(free);
    order.push_back(contracting[0]);
  } else {
    order.push_back(contracting[0]);
    order.push_back(free);
  }
  return order;
}

Dims Permuted(const Shape& x, const Dims& perm) {
  Dims out;
  for (int64_t d : perm) out.push_back(x.dims[static_cast<size_t>(d)]);
  return out;
}

bool IsWorkspace(const Shape& s) {
  return s.IsArray() && s.rank() == 1 && (s.type == PrimitiveType::kU8 || s.type == PrimitiveType::kS8);
}

Status CheckResult(const Instruction& call, const Shape& got, PrimitiveType type, const Dims& want, const char* what) {
  if (got.IsArray() && got.type == type && Dims(got.dims.begin(), got.dims.end()) == want) return OkStatus();
  std::string expect(PrimitiveTypeName(type));
  for (size_t i = 0; i < want.size(); ++i) expect += (i ? "," : "[") + std::to_string(want[i]);
  return CustomCallError(call, std::string("result ") + what + " is " + Str(got) + ", not " + expect + "]");
}

Result<FmhaPlan> PlanFmha(const Instruction& call) {
  NHLO_ASSIGN_OR_RETURN(const FmhaConfig* c, CustomCallConfigOf(call).As<FmhaConfig>());
  FmhaPlan p;
  p.config = c;
  if (c->f8) return CustomCallError(call, "is an FP8 attention call (scale and amax operands); nhlo does not run it");
  if (c->dropout_rate != 0)
    return CustomCallError(call, "has dropout_rate " + DoubleText(c->dropout_rate) +
                                     ": cuDNN's Philox dropout mask cannot be reproduced, so nhlo runs fused "
                                     "attention without dropout only");
  if (c->max_seg_per_batch > 1)
    return CustomCallError(call, "packs " + std::to_string(c->max_seg_per_batch) +
                                     " sequences per batch (max_seg_per_batch); nhlo does not run packed attention");
  if (c->paged) return CustomCallError(call, "uses paged attention (is_paged_attention); nhlo does not run it");
  if (c->sliding_window < 0) return CustomCallError(call, "has a negative sliding_window_length");
  p.padding = c->mask == FmhaMask::kPadding || c->mask == FmhaMask::kPaddingCausal;
  p.causal = c->mask == FmhaMask::kCausal || c->mask == FmhaMask::kPaddingCausal || c->sliding_window > 0;
  const size_t n = call.operands.size();
  size_t want = c->backward ? 6 : 3;
  size_t next = 3;
  if (c->backward) {
    p.stats = next++;
    p.dout = next++;
  }
  if (c->bias) p.bias = next++, ++want;
  if (c->backward) p.out = next++;
  if (p.padding) p.q_len = next++, p.kv_len = next++, want += 2;
  if (n != want)
    return CustomCallError(
        call, "takes " + std::to_string(want) + " operands for its target and mask_type, not " + std::to_string(n));
  for (const Instruction* op : call.operands)
    if (!IsStaticArray(op->shape))
      return CustomCallError(call, "operands must be arrays of static shapes, not " + Str(op->shape));
  const Shape& q = call.operands[0]->shape;
  const Shape& k = call.operands[1]->shape;
  const Shape& v = call.operands[2]->shape;
  p.type = q.type;
  if (!IsFloat(p.type) || BitWidth(p.type) < 16)
    return CustomCallError(call, "Q " + Str(q) + " must be f16, bf16 or f32");
  for (size_t i : {size_t{1}, size_t{2}, p.dout, p.out})
    if (i != kAbsent && call.operands[i]->shape.type != p.type)
      return CustomCallError(
          call, "operand " + std::to_string(i) + " " + Str(call.operands[i]->shape) + " must have Q's element type");
  if (c->backward) {
    NHLO_ASSIGN_OR_RETURN(p.q_perm, CanonicalOrder(call, q, c->bmm1_grad_gemm1, false, false, "Q"));
    NHLO_ASSIGN_OR_RETURN(p.k_perm, CanonicalOrder(call, k, c->bmm1_grad_gemm2, false, false, "K"));
    NHLO_ASSIGN_OR_RETURN(p.v_perm, CanonicalOrder(call, v, c->bmm2_grad_gemm2, false, true, "V"));
    NHLO_ASSIGN_OR_RETURN(p.dout_perm,
                          CanonicalOrder(call, call.operands[p.dout]->shape, c->bmm2_grad_gemm1, false, false, "dO"));
  } else {
    NHLO_ASSIGN_OR_RETURN(p.q_perm, CanonicalOrder(call, q, c->bmm1, true, true, "Q"));
    NHLO_ASSIGN_OR_RETURN(p.k_perm, CanonicalOrder(call, k, c->bmm1, false, true, "K"));
    NHLO_ASSIGN_OR_RETURN(p.v_perm, CanonicalOrder(call, v, c->bmm2, false, false, "V"));
    if (c->bmm2.lhs_batch != Dims{0, 1} || c->bmm2.lhs_contracting != Dims{3})
      return CustomCallError(call,
                             "backend_config's bmm2 must take the probabilities [B, N, T, S] as they are "
                             "(lhs batch dimensions {0,1}, contracting {3})");
  }
  const Dims qd = Permuted(q, p.q_perm), kd = Permuted(k, p.k_perm), vd = Permuted(v, p.v_perm);
  p.b = qd[0], p.heads = qd[1], p.t = qd[2], p.h = qd[3];
  p.kv_heads = kd[1], p.s = kd[2], p.hv = vd[3];
  if (kd[0] != p.b || vd[0] != p.b || vd[1] != p.kv_heads || vd[2] != p.s || kd[3] != p.h)
    return CustomCallError(call, "Q " + Str(q) + ", K " + Str(k) + " and V " + Str(v) +
                                     " do not agree on batch, heads, key length and head size under the config's "
                                     "dimension numbers");
  if (p.kv_heads == 0 || p.heads % p.kv_heads != 0)
    return CustomCallError(call, "Q's " + std::to_string(p.heads) + " heads are not a multiple of K's and V's " +
                                     std::to_string(p.kv_heads));
  // The expansion holds [B, N, T, S] scores and counts rows and keys in s32 iotas.
  int64_t scores = 0;
  if (p.t > INT32_MAX || p.s > INT32_MAX || MulOverflows(p.b, p.heads, &scores) || MulOverflows(scores, p.t, &scores) ||
      MulOverflows(scores, p.s, &scores) || scores > (int64_t{1} << 40))
    return CustomCallError(call, "has " + std::to_string(p.t) + " queries and " + std::to_string(p.s) + " keys over " +
                                     std::to_string(p.b) + " x " + std::to_string(p.heads) +
                                     " heads: more scores than nhlo holds (2^40, and 2^31 per sequence)");
  p.rounded = IsFloat(c->intermediate) ? c->intermediate : p.type;
  if (c->backward) {
    const Dims want_dout{p.b, p.heads, p.t, p.hv};
    if (call.operands[p.out]->shape.rank() != 4)
      return CustomCallError(call, "O " + Str(call.operands[p.out]->shape) + " must have rank 4");
    if (Permuted(call.operands[p.dout]->shape, p.dout_perm) != want_dout ||
        Permuted(call.operands[p.out]->shape, p.dout_perm) != want_dout)
      return CustomCallError(call, "dO " + Str(call.operands[p.dout]->shape) + " and O " +
                                       Str(call.operands[p.out]->shape) + " must be [B, N, T, Hv] in dO's layout");
    const Shape& stats = call.operands[p.stats]->shape;
    const bool rank3 = stats.rank() == 3 && Dims(stats.dims.begin(), stats.dims.end()) == Dims{p.b, p.heads, p.t};
    const bool rank4 = stats.rank() == 4 && Dims(stats.dims.begin(), stats.dims.end()) == Dims{p.b, p.heads, p.t, 1};
    if (stats.type != PrimitiveType::kF32 || !(rank3 || rank4))
      return CustomCallError(call, "stats " + Str(stats) + " must be f32[B, N, T] (or [B, N, T, 1])");
  }
  if (p.bias != kAbsent) {
    const Shape& bias = call.operands[p.bias]->shape;
    const Dims full{p.b, p.heads, p.t, p.s};
    bool fits = bias.rank() == 4 && bias.dims[2] == p.t && bias.dims[3] == p.s;
    for (size_t d = 0; fits && d < 2; ++d) fits = bias.dims[d] == 1 || bias.dims[d] == full[d];
    if (!fits || !IsFloat(bias.type))
      return CustomCallError(call, "bias " + Str(bias) + " must be a float [B or 1, N or 1, T, S] array");
  }
  for (size_t i : {p.q_len, p.kv_len}) {
    if (i == kAbsent) continue;
    const Shape& len = call.operands[i]->shape;
    if (len.type != PrimitiveType::kS32 || len.rank() != 1 || len.dims[0] != p.b)
      return CustomCallError(call,
                             "sequence lengths " + Str(len) + " must be s32[B] (B = " + std::to_string(p.b) + ")");
  }
  // The results, in the current order (JAX since May 2024): outputs, then the workspace.
  const Shape& r = call.shape;
  if (!c->backward && r.IsTuple() && r.tuple.size() == 3 && IsWorkspace(r.tuple[1]) && !IsWorkspace(r.tuple[2]))
    return CustomCallError(call,
                           "returns (O, workspace, activation), the result order of XLA and JAX before May "
                           "2024; nhlo runs the current order (O, stats, workspace)");
  if (!r.IsTuple() || r.tuple.empty() || !IsWorkspace(r.tuple[r.tuple.size() - 1]))
    return CustomCallError(call, "must return a tuple ending in its workspace u8[N], not " + Str(r));
  const size_t results = r.tuple.size() - 1;
  if (c->backward) {
    const size_t with_dbias = c->bias ? 4 : 3;
    if (results != 3 && results != with_dbias)
      return CustomCallError(call, "returns " + std::to_string(results) + " values before its workspace; dQ, dK, dV" +
                                       std::string(c->bias ? " and an optional dbias" : "") + " expected");
    NHLO_TRY(CheckResult(call, r.tuple[0], p.type, {p.b, p.heads, p.t, p.h}, "dQ"));
    NHLO_TRY(CheckResult(call, r.tuple[1], p.type, {p.b, p.kv_heads, p.s, p.h}, "dK"));
    NHLO_TRY(CheckResult(call, r.tuple[2], p.type, {p.b, p.kv_heads, p.s, p.hv}, "dV"));
    if (results == 4) {
      const Shape& bias = call.operands[p.bias]->shape;
      NHLO_TRY(CheckResult(call, r.tuple[3], bias.type, Dims(bias.dims.begin(), bias.dims.end()), "dbias"));
    }
    return p;
  }
  if (results != 1 && results != 2)
    return CustomCallError(call, "returns " + std::to_string(results) +
                                     " values before its workspace; O and optionally the softmax stats expected");
  NHLO_TRY(CheckResult(call, r.tuple[0], p.type, {p.b, p.heads, p.t, p.hv}, "O"));
  if (results == 2) {
    const Shape& stats = r.tuple[1];
    const Dims got(stats.dims.begin(), stats.dims.end());
    if (stats.type != PrimitiveType::kF32 || (got != Dims{p.b, p.heads, p.t} && got != Dims{p.b, p.heads, p.t, 1}))
      return CustomCallError(call, "result stats " + Str(stats) + " must be f32[B, N, T] (or [B, N, T, 1])");
    p.has_stats = true;
  }
  return p;
}

// Builds the attention's pieces in f32 on canonical [B, N, T, *] operands.
class AttentionBuilder {
 public:
  AttentionBuilder(ExpansionBuilder& x, const FmhaPlan& p) : x_(x), p_(p) {}

  // An operand in its canonical order, converted to f32.
  Instruction* Canonical(Instruction* operand, const Dims& perm) {
    if (perm != Dims{0, 1, 2, 3}) operand = MakeTranspose(x_.module(), x_.computation(), operand, perm);
    return x_.Convert(operand, kF32);
  }
  Instruction* Reshape(Instruction* v, const Dims& dims) { return MakeReshape(x_.module(), x_.computation(), v, dims); }

  // [B, N, T, D] -> [B, Nkv, G*T, D]: each key/value head's query heads stacked along the rows.
  Instruction* Grouped(Instruction* v) {
    const Dims d = ExpansionBuilder::Dims(v);
    return Reshape(v, {p_.b, p_.kv_heads, (p_.heads / p_.kv_heads) * p_.t, d[3]});
  }
  Instruction* Ungrouped(Instruction* v) {
    const Dims d = ExpansionBuilder::Dims(v);
    return Reshape(v, {p_.b, p_.heads, p_.t, d[3]});
  }

  // Grouped lhs [B, Nkv, R, K] times rhs [B, Nkv, *, *] contracting lhs dim `lc` and rhs dim `rc`.
  Instruction* Product(Instruction* lhs, Instruction* rhs, int64_t lc, int64_t rc) {
    const Dims l = ExpansionBuilder::Dims(lhs), r = ExpansionBuilder::Dims(rhs);
    const Dims out{l[0], l[1], l[lc == 3 ? 2 : 3], r[rc == 3 ? 2 : 3]};
    return x_.Dot(lhs, rhs, kF32, out, {0, 1}, {lc}, {0, 1}, {rc});
  }

  // fmha_scale * Q.K + bias, masked with -inf: the scores [B, N, T, S].
  Instruction* Scores(Instruction* q, Instruction* k, Instruction* bias, Instruction* kv_len) {
    Instruction* s = Ungrouped(Product(Grouped(q), k, 3, 3));
    s = x_.Elementwise(Opcode::kMultiply, {s, x_.Splat(p_.config->scale, kF32, s)});
    if (bias) s = x_.Elementwise(Opcode::kAdd, {s, x_.Convert(Broadcast(bias), kF32)});
    Instruction* masked = nullptr;
    auto add_mask = [&](Instruction* m) { masked = masked ? x_.Elementwise(Opcode::kOr, {masked, m}) : m; };
    const Dims full = ExpansionBuilder::Dims(s);
    if (p_.causal || kv_len) {
      Instruction* key = x_.Iota(full, 3);
      Instruction* row = x_.Iota(full, 2);
      if (p_.causal) add_mask(x_.Compare(key, row, ComparisonDirection::kGt));
      // Keys t - W < j <= t: t - j >= W is outside (no overflow: 0 <= j, t < 2^31). A window of
      // T or more masks nothing the causal mask leaves.
      if (p_.config->sliding_window > 0 && p_.config->sliding_window < p_.t) {
        Instruction* behind = x_.Elementwise(Opcode::kSubtract, {row, key});
        add_mask(x_.Compare(behind, x_.Splat(double(p_.config->sliding_window), kS32, key), ComparisonDirection::kGe));
      }
      if (kv_len) add_mask(x_.Compare(key, x_.Broadcast(kv_len, full, {0}), ComparisonDirection::kGe));
    }
    if (masked) s = x_.Array(Opcode::kSelect, kF32, full, {masked, x_.Splat(-INFINITY, kF32, s), s});
    return s;
  }

  // The bias broadcast over the batch and heads it has one of.
  Instruction* Broadcast(Instruction* bias) {
    const Dims full{p_.b, p_.heads, p_.t, p_.s};
    Dims kept, mapped;
    for (int64_t d = 0; d < 4; ++d)
      if (bias->shape.dims[static_cast<size_t>(d)] == full[static_cast<size_t>(d)]) {
        kept.push_back(full[static_cast<size_t>(d)]);
        mapped.push_back(d);
      }
    return x_.Broadcast(Reshape(bias, kept), full, mapped);
  }

  // Zeros where row r (dimension 2) of canonical [B, *, rows, *] is at or past len[b] (padding),
  // `v` elsewhere. Applied to the operands too, so that whatever the padding holds (NaN, inf)
  // reaches no product: cuDNN reads no element past the lengths [inferred].
  Instruction* ZeroPaddedRows(Instruction* v, Instruction* q_len) {
    if (!q_len) return v;
    const Dims full = ExpansionBuilder::Dims(v);
    Instruction* past = x_.Compare(x_.Iota(full, 2), x_.Broadcast(q_len, full, {0}), ComparisonDirection::kGe);
    return x_.Array(Opcode::kSelect, kF32, full, {past, x_.Splat(0, kF32, v), v});
  }

  // Sum of `v` over its last dimension.
  Instruction* RowSum(Instruction* v) {
    return x_.Reduce(v, MakeScalarConstant(x_.module(), x_.computation(), kF32, 0), 3,
                     x_.BinaryReducer(Opcode::kAdd, kF32));
  }

  // `v` rounded to the probabilities' type and back, as the products read them.
  Instruction* Rounded(Instruction* v) {
    if (p_.rounded == kF32) return v;
    return x_.Convert(x_.Convert(v, p_.rounded), kF32);
  }

  Instruction* Scaled(Instruction* v) {
    return x_.Elementwise(Opcode::kMultiply, {v, x_.Splat(p_.config->scale, kF32, v)});
  }

  Instruction* Converted(Instruction* v, PrimitiveType type) { return x_.Convert(v, type); }

 private:
  ExpansionBuilder& x_;
  const FmhaPlan& p_;
  static constexpr PrimitiveType kF32 = PrimitiveType::kF32;
  static constexpr PrimitiveType kS32 = PrimitiveType::kS32;
};

Instruction* Lengths(ExpansionBuilder& x, size_t i, const char* name) {
  return i == kAbsent ? nullptr : x.Parameter(i, name);
}

Result<Instruction*> BuildForward(ExpansionBuilder& x, const Instruction& call, const FmhaPlan& p) {
  AttentionBuilder a(x, p);
  Instruction* q = a.Canonical(x.Parameter(0, "q"), p.q_perm);
  Instruction* k = a.Canonical(x.Parameter(1, "k"), p.k_perm);
  Instruction* v = a.Canonical(x.Parameter(2, "v"), p.v_perm);
  Instruction* bias = p.bias == kAbsent ? nullptr : x.Parameter(p.bias, "bias");
  Instruction* q_len = Lengths(x, p.q_len, "q_seqlen");
  Instruction* kv_len = Lengths(x, p.kv_len, "kv_seqlen");
  v = a.ZeroPaddedRows(v, kv_len);
  Instruction* s = a.Scores(q, k, bias, kv_len);
  const Dims rows{p.b, p.heads, p.t};
  // A row with every key masked has max -inf: it counts from 0, so its terms are 0 and its sum 0.
  Instruction* max = x.Reduce(s, MakeScalarConstant(x.module(), x.computation(), PrimitiveType::kF32, -INFINITY), 3,
                              x.BinaryReducer(Opcode::kMaximum, PrimitiveType::kF32));
  Instruction* finite = x.Compare(max, x.Splat(-INFINITY, PrimitiveType::kF32, max), ComparisonDirection::kNe);
  max = x.Array(Opcode::kSelect, PrimitiveType::kF32, rows, {finite, max, x.Splat(0, PrimitiveType::kF32, max)});
  Instruction* e = x.Elementwise(
      Opcode::kExp, {x.Elementwise(Opcode::kSubtract, {s, x.Broadcast(max, ExpansionBuilder::Dims(s), {0, 1, 2})})});
  Instruction* sum = a.RowSum(e);
  Instruction* empty = x.Compare(sum, x.Splat(0, PrimitiveType::kF32, sum), ComparisonDirection::kEq);
  Instruction* divisor =
      x.Array(Opcode::kSelect, PrimitiveType::kF32, rows, {empty, x.Splat(1, PrimitiveType::kF32, sum), sum});
  Instruction* probs = x.Elementwise(Opcode::kDivide, {e, x.Broadcast(divisor, ExpansionBuilder::Dims(e), {0, 1, 2})});
  probs = a.ZeroPaddedRows(probs, q_len);
  Instruction* out = a.Ungrouped(a.Product(a.Grouped(a.Rounded(probs)), v, 3, 2));
  std::vector<Instruction*> results{a.Converted(out, p.type)};
  const Shape& r = call.shape;
  if (p.has_stats) {
    Instruction* stats = x.Elementwise(Opcode::kAdd, {max, x.Elementwise(Opcode::kLog, {sum})});
    const Shape& want = r.tuple[1];
    results.push_back(a.Reshape(stats, Dims(want.dims.begin(), want.dims.end())));
  }
  const Shape& ws = r.tuple[r.tuple.size() - 1];
  results.push_back(x.Broadcast(MakeScalarConstant(x.module(), x.computation(), ws.type, 0), {ws.dims[0]}, {}));
  return MakeTuple(x.module(), x.computation(), results);
}

// The gradients of the forward above given dO (FlashAttention-2's backward): P from the forward's
// stats, dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)), dQ = scale dS K,
// dK = scale dS^T Q, dbias = dS summed over the dimensions the bias broadcasts.
Result<Instruction*> BuildBackward(ExpansionBuilder& x, const Instruction& call, const FmhaPlan& p) {
  AttentionBuilder a(x, p);
  Instruction* q = a.Canonical(x.Parameter(0, "q"), p.q_perm);
  Instruction* k = a.Canonical(x.Parameter(1, "k"), p.k_perm);
  Instruction* v = a.Canonical(x.Parameter(2, "v"), p.v_perm);
  Instruction* stats = a.Reshape(x.Parameter(p.stats, "stats"), {p.b, p.heads, p.t});
  // A row the forward masked whole has stats -inf: +inf makes each of its terms exp(-inf) = 0.
  Instruction* all_masked = x.Compare(stats, x.Splat(-INFINITY, PrimitiveType::kF32, stats), ComparisonDirection::kEq);
  stats = x.Array(Opcode::kSelect, PrimitiveType::kF32, {p.b, p.heads, p.t},
                  {all_masked, x.Splat(INFINITY, PrimitiveType::kF32, stats), stats});
  Instruction* dout = a.Canonical(x.Parameter(p.dout, "d_out"), p.dout_perm);
  Instruction* bias = p.bias == kAbsent ? nullptr : x.Parameter(p.bias, "bias");
  Instruction* out = a.Canonical(x.Parameter(p.out, "out"), p.dout_perm);
  Instruction* q_len = Lengths(x, p.q_len, "q_seqlen");
  Instruction* kv_len = Lengths(x, p.kv_len, "kv_seqlen");
  q = a.ZeroPaddedRows(q, q_len);
  k = a.ZeroPaddedRows(k, kv_len);
  v = a.ZeroPaddedRows(v, kv_len);
  dout = a.ZeroPaddedRows(dout, q_len);
  out = a.ZeroPaddedRows(out, q_len);
  Instruction* s = a.Scores(q, k, bias, kv_len);
  const Dims full = ExpansionBuilder::Dims(s);
  Instruction* probs =
      x.Elementwise(Opcode::kExp, {x.Elementwise(Opcode::kSubtract, {s, x.Broadcast(stats, full, {0, 1, 2})})});
  probs = a.ZeroPaddedRows(probs, q_len);
  Instruction* d_v = a.Product(a.Grouped(a.Rounded(probs)), a.Grouped(dout), 2, 2);
  Instruction* d_probs = a.Ungrouped(a.Product(a.Grouped(dout), v, 3, 3));
  Instruction* row_dot = a.RowSum(x.Elementwise(Opcode::kMultiply, {dout, out}));
  Instruction* d_scores = x.Elementwise(
      Opcode::kMultiply, {probs, x.Elementwise(Opcode::kSubtract, {d_probs, x.Broadcast(row_dot, full, {0, 1, 2})})});
  Instruction* d_scores_rounded = a.Grouped(a.Rounded(d_scores));
  Instruction* d_q = a.Scaled(a.Ungrouped(a.Product(d_scores_rounded, k, 3, 2)));
  Instruction* d_k = a.Scaled(a.Product(d_scores_rounded, a.Grouped(q), 2, 2));
  const Shape& r = call.shape;
  std::vector<Instruction*> results{a.Converted(d_q, p.type), a.Converted(d_k, p.type), a.Converted(d_v, p.type)};
  if (r.tuple.size() == 5) {
    Instruction* d_bias = d_scores;
    const Shape& bias_shape = call.operands[p.bias]->shape;
    for (int64_t d = 1; d >= 0; --d)
      if (bias_shape.dims[static_cast<size_t>(d)] != full[static_cast<size_t>(d)])
        d_bias = x.Reduce(d_bias, MakeScalarConstant(x.module(), x.computation(), PrimitiveType::kF32, 0), d,
                          x.BinaryReducer(Opcode::kAdd, PrimitiveType::kF32));
    d_bias = a.Reshape(d_bias, Dims(bias_shape.dims.begin(), bias_shape.dims.end()));
    results.push_back(a.Converted(d_bias, bias_shape.type));
  }
  const Shape& ws = r.tuple[r.tuple.size() - 1];
  results.push_back(x.Broadcast(MakeScalarConstant(x.module(), x.computation(), ws.type, 0), {ws.dims[0]}, {}));
  return MakeTuple(x.module(), x.computation(), results);
}

}  // namespace

Status CheckFmhaCall(const Instruction& call) { return PlanFmha(call).status(); }

Result<Instruction*> BuildFmhaCall(ExpansionBuilder& x, const Instruction& call) {
  NHLO_ASSIGN_OR_RETURN(FmhaPlan p, PlanFmha(call));
  return p.config->backward ? BuildBackward(x, call, p) : BuildForward(x, call, p);
}

}  // namespace nhlo
