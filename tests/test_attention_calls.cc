// SPDX-License-Identifier: Apache-2.0
// cuDNN's fused attention calls (ir/gpu_attention_calls.h) against a direct evaluation in double:
// the forward's output and log-sum-exp stats for every mask, both layouts JAX emits, grouped
// key/value heads and broadcast biases; the backward's dQ, dK, dV and dbias against central
// differences of that evaluation, so the gradients are checked by a route that shares no formula
// with the expansion.
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "driver/custom_call_expansions.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "ir/verifier.h"
#include "load_program.h"
#include "parser/parser.h"

namespace nhlo {
namespace {

using Dims = std::vector<int64_t>;

// One attention problem in canonical order: q [B,N,T,H], k [B,Nkv,S,H], v [B,Nkv,S,Hv], bias
// [Bb,Nb,T,S] (Bb, Nb each 1 or full), sequence lengths per batch.
struct Problem {
  int64_t b, n, kv, t, s, h, hv, bias_b = 0, bias_n = 0;
  bool causal = false, padding = false, btnh = false;
  int64_t window = 0;
  double scale = 1;
  std::vector<double> q, k, v, bias;
  std::vector<int64_t> q_len, kv_len;

  size_t Q(int64_t bi, int64_t ni, int64_t ti, int64_t hi) const {
    return static_cast<size_t>(((bi * n + ni) * t + ti) * h + hi);
  }
  size_t K(int64_t bi, int64_t ki, int64_t si, int64_t hi) const {
    return static_cast<size_t>(((bi * kv + ki) * s + si) * h + hi);
  }
  size_t V(int64_t bi, int64_t ki, int64_t si, int64_t hi) const {
    return static_cast<size_t>(((bi * kv + ki) * s + si) * hv + hi);
  }
  size_t O(int64_t bi, int64_t ni, int64_t ti, int64_t hi) const {
    return static_cast<size_t>(((bi * n + ni) * t + ti) * hv + hi);
  }
  size_t Bias(int64_t bi, int64_t ni, int64_t ti, int64_t si) const {
    return static_cast<size_t>((((bias_b == 1 ? 0 : bi) * bias_n + (bias_n == 1 ? 0 : ni)) * t + ti) * s + si);
  }
  bool Masked(int64_t bi, int64_t ti, int64_t si) const {
    if ((causal || window > 0) && si > ti) return true;
    if (window > 0 && si <= ti - window) return true;
    return padding && si >= kv_len[static_cast<size_t>(bi)];
  }

  // O [B,N,T,Hv] and stats [B,N,T].
  void Forward(std::vector<double>& out, std::vector<double>& stats) const {
    out.assign(static_cast<size_t>(b * n * t * hv), 0);
    stats.assign(static_cast<size_t>(b * n * t), 0);
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t ni = 0; ni < n; ++ni)
        for (int64_t ti = 0; ti < t; ++ti) {
          const int64_t ki = ni / (n / kv);
          std::vector<double> score(static_cast<size_t>(s), -INFINITY);
          double max = -INFINITY;
          for (int64_t si = 0; si < s; ++si) {
            if (Masked(bi, ti, si)) continue;
            double dot = 0;
            for (int64_t hi = 0; hi < h; ++hi) dot += q[Q(bi, ni, ti, hi)] * k[K(bi, ki, si, hi)];
            double x = scale * dot + (bias.empty() ? 0 : bias[Bias(bi, ni, ti, si)]);
            score[static_cast<size_t>(si)] = x;
            max = std::max(max, x);
          }
          double sum = 0;
          for (double x : score) sum += std::isinf(x) ? 0 : std::exp(x - max);
          stats[static_cast<size_t>((bi * n + ni) * t + ti)] = sum == 0 ? -INFINITY : max + std::log(sum);
          if (sum == 0 || (padding && ti >= q_len[static_cast<size_t>(bi)])) continue;
          for (int64_t si = 0; si < s; ++si) {
            const double x = score[static_cast<size_t>(si)];
            if (std::isinf(x)) continue;
            const double p = std::exp(x - max) / sum;
            for (int64_t hi = 0; hi < hv; ++hi) out[O(bi, ni, ti, hi)] += p * v[V(bi, ki, si, hi)];
          }
        }
  }

  // sum(d_out * O): its gradients are what the backward call gives for d_out.
  double Loss(const std::vector<double>& d_out) const {
    std::vector<double> out, stats;
    Forward(out, stats);
    double loss = 0;
    for (size_t i = 0; i < out.size(); ++i) loss += d_out[i] * out[i];
    return loss;
  }
};

// Element i of canonical [d0,d1,d2,d3] in the physical order BTNH puts it ([d0,d2,d1,d3]).
std::vector<double> Physical(const std::vector<double>& x, const Dims& d, bool btnh) {
  if (!btnh) return x;
  std::vector<double> out(x.size());
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e)
          out[static_cast<size_t>(((a * d[2] + c) * d[1] + b) * d[3] + e)] =
              x[static_cast<size_t>(((a * d[1] + b) * d[2] + c) * d[3] + e)];
  return out;
}

std::string DimsText(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// `name = f32[dims] constant({...})` holding `x` (row-major), with nine significant digits.
std::string Constant(const std::string& name, const std::string& type, const Dims& dims, const std::vector<double>& x) {
  std::ostringstream os;
  os.precision(9);
  size_t at = 0;
  std::function<void(size_t)> nest = [&](size_t d) {
    if (d == dims.size()) {
      const double value = x[at++];
      if (std::isinf(value))
        os << (value < 0 ? "-inf" : "inf");
      else
        os << value;
      return;
    }
    os << "{";
    for (int64_t i = 0; i < dims[d]; ++i) {
      if (i) os << ", ";
      nest(d + 1);
    }
    os << "}";
  };
  nest(0);
  return "  " + name + " = " + type + DimsText(dims) + " constant(" + os.str() + ")\n";
}

std::string DotNumbers(const char* name, Dims lc, Dims rc, Dims lb, Dims rb) {
  auto list = [](const Dims& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ",\"" : "\"") + std::to_string(d[i]) + "\"";
    return s + "]";
  };
  return std::string("\"") + name + "\":{\"lhs_contracting_dimensions\":" + list(lc) +
         ",\"rhs_contracting_dimensions\":" + list(rc) + ",\"lhs_batch_dimensions\":" + list(lb) +
         ",\"rhs_batch_dimensions\":" + list(rb) + "}";
}

// The backend_config JAX writes for `p` (fused_attention_stablehlo.py's dimension numbers).
std::string Config(const Problem& p, bool backward) {
  const char* masks[] = {"NO_MASK", "PADDING", "CAUSAL", "PADDING_CAUSAL"};
  std::ostringstream os;
  os.precision(17);
  os << "{\"operation_queue_id\":\"0\",\"cudnn_fmha_backend_config\":{\"fmha_scale\":" << p.scale
     << ",\"dropout_rate\":0,\"seed\":42,\"mask_type\":\"" << masks[(p.padding ? 1 : 0) + (p.causal ? 2 : 0)]
     << "\",\"sliding_window_length\":" << p.window
     << ",\"intermediate_tensor_shape\":{\"element_type\":\"F32\",\"dimensions\":[\"" << p.b << "\",\"" << p.n
     << "\",\"" << p.t << "\",\"" << p.s << "\"]},";
  const Dims b01{0, 1}, b02{0, 2};
  if (!backward && p.btnh)
    os << DotNumbers("bmm1_dot_dimension_numbers", {3}, {3}, b02, b02) << ","
       << DotNumbers("bmm2_dot_dimension_numbers", {3}, {1}, b01, b02);
  if (!backward && !p.btnh)
    os << DotNumbers("bmm1_dot_dimension_numbers", {3}, {3}, b01, b01) << ","
       << DotNumbers("bmm2_dot_dimension_numbers", {3}, {2}, b01, b01);
  if (backward && p.btnh)
    os << DotNumbers("bmm1_grad_gemm1_dot_dimension_numbers", {2}, {1}, b01, b02) << ","
       << DotNumbers("bmm1_grad_gemm2_dot_dimension_numbers", {3}, {1}, b01, b02) << ","
       << DotNumbers("bmm2_grad_gemm1_dot_dimension_numbers", {2}, {1}, b01, b02) << ","
       << DotNumbers("bmm2_grad_gemm2_dot_dimension_numbers", {3}, {3}, b02, b02);
  if (backward && !p.btnh)
    os << DotNumbers("bmm1_grad_gemm1_dot_dimension_numbers", {2}, {2}, b01, b01) << ","
       << DotNumbers("bmm1_grad_gemm2_dot_dimension_numbers", {3}, {2}, b01, b01) << ","
       << DotNumbers("bmm2_grad_gemm1_dot_dimension_numbers", {2}, {2}, b01, b01) << ","
       << DotNumbers("bmm2_grad_gemm2_dot_dimension_numbers", {3}, {3}, b01, b01);
  os << "}}";
  return os.str();
}

Dims Layout(const Problem& p, int64_t heads, int64_t seq, int64_t head) {
  return p.btnh ? Dims{p.b, seq, heads, head} : Dims{p.b, heads, seq, head};
}

std::vector<float> Floats(const Value& v) {
  std::vector<float> out(v.bytes.size() / 4);
  std::memcpy(out.data(), v.bytes.data(), out.size() * 4);
  return out;
}

void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double tolerance, const char* what) {
  REQUIRE(got.size() == want.size());
  const std::string name = what;
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(name);
    CAPTURE(i);
    if (std::isinf(want[i])) {
      CHECK(got[i] == want[i]);
      continue;
    }
    CHECK(std::abs(got[i] - want[i]) <= tolerance * std::max(1.0, std::abs(want[i])));
  }
}

TEST_CASE("cuDNN fused attention: forward against a direct evaluation, gradients against differences") {
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<double> unit(-1, 1);
  auto fill = [&](std::vector<double>& x, size_t count) {
    x.resize(count);
    for (double& e : x) e = unit(rng);
  };
  for (int trial = 0; trial < 24; ++trial) {
    Problem p;
    p.b = 1 + rng() % 2, p.kv = 1 + rng() % 2, p.n = p.kv * (1 + rng() % 2);
    p.t = 1 + rng() % 4, p.s = 1 + rng() % 5, p.h = 1 + rng() % 3, p.hv = 1 + rng() % 3;
    p.btnh = trial % 2 == 1;
    p.causal = rng() % 2, p.padding = rng() % 2;
    p.window = rng() % 3 == 0 ? 1 + static_cast<int64_t>(rng() % (p.t + 1)) : 0;  // T and more: no effect
    p.scale = 0.25 * (1 + rng() % 4);
    fill(p.q, static_cast<size_t>(p.b * p.n * p.t * p.h));
    fill(p.k, static_cast<size_t>(p.b * p.kv * p.s * p.h));
    fill(p.v, static_cast<size_t>(p.b * p.kv * p.s * p.hv));
    const bool with_bias = rng() % 2;
    if (with_bias) {
      p.bias_b = rng() % 2 ? p.b : 1, p.bias_n = rng() % 2 ? p.n : 1;
      fill(p.bias, static_cast<size_t>(p.bias_b * p.bias_n * p.t * p.s));
    }
    for (int64_t i = 0; i < p.b; ++i) {
      p.q_len.push_back(static_cast<int64_t>(rng() % (p.t + 1)));
      p.kv_len.push_back(static_cast<int64_t>(rng() % (p.s + 1)));
    }
    CAPTURE(trial);
    std::vector<double> out, stats;
    p.Forward(out, stats);

    const Dims qd = Layout(p, p.n, p.t, p.h), kd = Layout(p, p.kv, p.s, p.h), vd = Layout(p, p.kv, p.s, p.hv);
    const Dims od = Layout(p, p.n, p.t, p.hv), bias_dims{p.bias_b, p.bias_n, p.t, p.s};
    std::string operands = Constant("q", "f32", qd, Physical(p.q, {p.b, p.n, p.t, p.h}, p.btnh)) +
                           Constant("k", "f32", kd, Physical(p.k, {p.b, p.kv, p.s, p.h}, p.btnh)) +
                           Constant("v", "f32", vd, Physical(p.v, {p.b, p.kv, p.s, p.hv}, p.btnh));
    if (with_bias) operands += Constant("bias", "f32", bias_dims, p.bias);
    std::vector<double> q_len(p.q_len.begin(), p.q_len.end()), kv_len(p.kv_len.begin(), p.kv_len.end());
    operands += Constant("q_len", "s32", {p.b}, q_len) + Constant("kv_len", "s32", {p.b}, kv_len);
    const std::string bias_arg = with_bias ? ", bias" : "", lens = p.padding ? ", q_len, kv_len" : "";
    const std::string name = with_bias ? "ScaleBiasSoftmax" : "Softmax";

    const std::string forward =
        "HloModule fwd\nENTRY e {\n" + operands + "  ROOT r = (f32" + DimsText({p.b, p.n, p.t, p.hv}) + ", f32" +
        DimsText({p.b, p.n, p.t}) + ", u8[0]) custom-call(q, k, v" + bias_arg + lens +
        "), custom_call_target=\"__cudnn$fmha" + name + "\", backend_config=" + Config(p, false) + "\n}\n";
    CAPTURE(forward);
    auto run = Execute(testing::LoadExpandedProgram(forward, "fwd"), {});
    REQUIRE_MESSAGE(run.ok(), run.status().ToString());
    CheckClose(Floats(run->tuple[0]), out, 1e-5, "O");
    CheckClose(Floats(run->tuple[1]), stats, 1e-5, "stats");

    // The backward, given the forward's O and stats and a random dO.
    std::vector<double> d_out;
    fill(d_out, out.size());
    const std::string backward_operands = operands + Constant("stats", "f32", {p.b, p.n, p.t}, stats) +
                                          Constant("d_out", "f32", od, Physical(d_out, {p.b, p.n, p.t, p.hv}, p.btnh)) +
                                          Constant("out", "f32", od, Physical(out, {p.b, p.n, p.t, p.hv}, p.btnh));
    const std::string backward =
        "HloModule bwd\nENTRY e {\n" + backward_operands + "  ROOT r = (f32" + DimsText({p.b, p.n, p.t, p.h}) +
        ", f32" + DimsText({p.b, p.kv, p.s, p.h}) + ", f32" + DimsText({p.b, p.kv, p.s, p.hv}) +
        (with_bias ? ", f32" + DimsText(bias_dims) : std::string()) + ", u8[0]) custom-call(q, k, v, stats, d_out" +
        bias_arg + ", out" + lens + "), custom_call_target=\"__cudnn$fmha" + name +
        "Backward\", backend_config=" + Config(p, true) + "\n}\n";
    CAPTURE(backward);
    auto grads = Execute(testing::LoadExpandedProgram(backward, "bwd"), {});
    REQUIRE_MESSAGE(grads.ok(), grads.status().ToString());
    constexpr double kStep = 1e-6;
    auto differences = [&](std::vector<double>& x) {
      std::vector<double> grad(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const double keep = x[i];
        x[i] = keep + kStep;
        const double up = p.Loss(d_out);
        x[i] = keep - kStep;
        const double down = p.Loss(d_out);
        x[i] = keep;
        grad[i] = (up - down) / (2 * kStep);
      }
      return grad;
    };
    CheckClose(Floats(grads->tuple[0]), differences(p.q), 1e-4, "dQ");
    CheckClose(Floats(grads->tuple[1]), differences(p.k), 1e-4, "dK");
    CheckClose(Floats(grads->tuple[2]), differences(p.v), 1e-4, "dV");
    if (with_bias) CheckClose(Floats(grads->tuple[3]), differences(p.bias), 1e-4, "dbias");
  }
}

// Calls of random sizes (zeros included), layouts, masks, biases and grouped heads, half of them
// with one thing broken (an operand's or a result's dimension, an operand too many or too few, a
// dimension number, an element type): the verifier or the expansion refuses the call with a
// message, or it expands into a module that verifies, compiles and runs.
TEST_CASE("cuDNN fused attention calls of any shape are refused with a message or expand and run") {
  std::mt19937 rng(20261207);
  auto size = [&] { return static_cast<int64_t>(rng() % 5 == 0 ? 0 : 1 + rng() % 3); };
  int expanded = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Problem p;
    p.b = size(), p.kv = 1 + rng() % 2, p.n = p.kv * (1 + rng() % 2), p.t = size(), p.s = size(), p.h = size();
    p.hv = size(), p.btnh = rng() % 2, p.causal = rng() % 2, p.padding = rng() % 2;
    p.window = rng() % 4 == 0 ? INT32_MAX : rng() % 3;
    const bool backward = rng() % 2, with_bias = rng() % 2;
    p.bias_b = rng() % 2 ? p.b : 1, p.bias_n = rng() % 2 ? p.n : 1;
    std::vector<std::pair<std::string, Dims>> operands = {
        {"f32", Layout(p, p.n, p.t, p.h)}, {"f32", Layout(p, p.kv, p.s, p.h)}, {"f32", Layout(p, p.kv, p.s, p.hv)}};
    const Dims od = Layout(p, p.n, p.t, p.hv);
    if (backward) operands.push_back({"f32", {p.b, p.n, p.t}}), operands.push_back({"f32", od});
    if (with_bias) operands.push_back({"f32", {p.bias_b, p.bias_n, p.t, p.s}});
    if (backward) operands.push_back({"f32", od});
    if (p.padding) operands.push_back({"s32", {p.b}}), operands.push_back({"s32", {p.b}});
    std::vector<std::pair<std::string, Dims>> results;
    if (backward) {
      results = {{"f32", {p.b, p.n, p.t, p.h}}, {"f32", {p.b, p.kv, p.s, p.h}}, {"f32", {p.b, p.kv, p.s, p.hv}}};
      if (with_bias && rng() % 2) results.push_back({"f32", {p.bias_b, p.bias_n, p.t, p.s}});
    } else {
      results = {{"f32", {p.b, p.n, p.t, p.hv}}};
      if (rng() % 2) results.push_back({"f32", {p.b, p.n, p.t}});
    }
    results.push_back({"u8", {static_cast<int64_t>(rng() % 3)}});
    std::string config = Config(p, backward);
    const bool broken = rng() % 2;
    if (broken) {
      switch (rng() % 5) {
        case 0: {  // a dimension of an operand
          auto& o = operands[rng() % operands.size()];
          if (!o.second.empty()) o.second[rng() % o.second.size()] += 1;
          break;
        }
        case 1: {  // a dimension of a result
          auto& r = results[rng() % results.size()];
          r.second[rng() % r.second.size()] += 1;
          break;
        }
        case 2:  // an operand too many or too few
          if (rng() % 2)
            operands.pop_back();
          else
            operands.push_back({"f32", {1, 1, 1, 1}});
          break;
        case 3: {  // a dimension number
          const size_t at = config.find("_dimensions\":[\"");
          if (at != std::string::npos) config[at + 15] = static_cast<char>('0' + rng() % 6);
          break;
        }
        default: operands[rng() % operands.size()].first = rng() % 2 ? "bf16" : "s32"; break;
      }
    }
    std::string text = "HloModule fuzz\nENTRY e {\n", args;
    for (size_t i = 0; i < operands.size(); ++i) {
      text += "  p" + std::to_string(i) + " = " + operands[i].first + DimsText(operands[i].second) + " parameter(" +
              std::to_string(i) + ")\n";
      args += (i ? ", p" : "p") + std::to_string(i);
    }
    std::string result = "(";
    for (size_t i = 0; i < results.size(); ++i)
      result += (i ? ", " : "") + results[i].first + DimsText(results[i].second);
    const std::string target = std::string(with_bias ? "ScaleBiasSoftmax" : "Softmax") + (backward ? "Backward" : "");
    text += "  ROOT r = " + result + ") custom-call(" + args + "), custom_call_target=\"__cudnn$fmha" + target +
            "\", backend_config=" + config + "\n}\n";
    CAPTURE(text);
    auto m = ParseModule("fuzz.hlo", text);
    REQUIRE(m.ok());
    Status checked = VerifyModule(**m);
    if (checked.ok()) checked = BindCustomCallExpansions(**m, {});
    if (!checked.ok()) {
      CHECK_MESSAGE(checked.message().find("nhlo bug") == std::string::npos, checked.ToString());
      CHECK(broken);  // a call as JAX writes it always runs
      ++refused;
      continue;
    }
    auto run = testing::RunOnRandomArgs(**m, static_cast<uint64_t>(trial));
    CHECK_MESSAGE(run.ok(), run.status().ToString());
    ++expanded;
  }
  MESSAGE("expanded and ran ", expanded, ", refused ", refused, " of 300");
  CHECK(expanded > 100);
  CHECK(refused > 50);
}

}  // namespace
}  // namespace nhlo
