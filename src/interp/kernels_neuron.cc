// SPDX-License-Identifier: Apache-2.0
// torch-neuronx's native custom calls (softmax and its gradient, RMS norm, argmax / argmin). Each
// computes the lines along its dimension in double and rounds each result once to its type:
// Neuron's own arithmetic is not public, so nhlo gives the closest value it can [inferred];
// docs/custom-calls.md cites the sources for the formulas.
#include <cmath>
#include <vector>

#include "interp/kernels.h"

namespace nhlo {
namespace {

// Element (o, i, j) of the plan's lines is at o * len * inner + i * inner + j.
int64_t At(const NeuronPlan& p, int64_t line, int64_t i) {
  return (line / p.inner) * p.len * p.inner + i * p.inner + line % p.inner;
}

double Get(const Buf& b, int64_t i) { return LoadAsDouble(b.type(), b.data + i * HostByteSize(b.type())); }
void Put(const Buf& b, int64_t i, double v) { StoreFromDouble(b.type(), b.data + i * HostByteSize(b.type()), v); }

Status SameFloatShape(const BufferRecord& a, const BufferRecord& b, const char* what) {
  if (!IsFloat(a.type) || !IsFloat(b.type) || a.dims != b.dims)
    return Status::Error(std::string(what) + " takes and gives floats of one shape");
  return OkStatus();
}

void Softmax(const NeuronPlan& p, const Buf& x, const Buf& out) {
  for (int64_t l = 0; l < p.lines; ++l) {
    double max = -INFINITY;
    for (int64_t i = 0; i < p.len; ++i) {
      double v = Get(x, At(p, l, i));
      if (std::isnan(v) || v > max) max = v;
      if (std::isnan(v)) break;
    }
    double sum = 0;
    for (int64_t i = 0; i < p.len; ++i) sum += std::exp(Get(x, At(p, l, i)) - max);
    for (int64_t i = 0; i < p.len; ++i) Put(out, At(p, l, i), std::exp(Get(x, At(p, l, i)) - max) / sum);
  }
}

void SoftmaxBackward(const NeuronPlan& p, const Buf& grad, const Buf& output, const Buf& out) {
  for (int64_t l = 0; l < p.lines; ++l) {
    double dot = 0;
    for (int64_t i = 0; i < p.len; ++i) dot += Get(grad, At(p, l, i)) * Get(output, At(p, l, i));
    for (int64_t i = 0; i < p.len; ++i) {
      int64_t at = At(p, l, i);
      Put(out, at, Get(output, at) * (Get(grad, at) - dot));
    }
  }
}

void RmsNorm(const NeuronPlan& p, const Buf& x, const Buf& weight, const Buf& eps, const Buf& out) {
  const double epsilon = Get(eps, 0);
  for (int64_t l = 0; l < p.lines; ++l) {
    double squares = 0;
    for (int64_t i = 0; i < p.len; ++i) {
      double v = Get(x, At(p, l, i));
      squares += v * v;
    }
    double scale = 1 / std::sqrt(squares / static_cast<double>(p.len) + epsilon);
    for (int64_t i = 0; i < p.len; ++i) {
      int64_t at = At(p, l, i);
      Put(out, at, Get(x, at) * scale * Get(weight, i));
    }
  }
}

void ArgReduce(const NeuronPlan& p, bool largest, const Buf& x, const Buf& out) {
  const int size = HostByteSize(out.type());
  for (int64_t l = 0; l < p.lines; ++l) {
    int64_t best = 0;
    double best_value = p.len > 0 ? Get(x, At(p, l, 0)) : 0;
    for (int64_t i = 1; i < p.len && !std::isnan(best_value); ++i) {
      double v = Get(x, At(p, l, i));
      if (std::isnan(v) || (largest ? v > best_value : v < best_value)) best = i, best_value = v;
    }
    StoreFromInt(out.type(), out.data + l * size, best);
  }
}

}  // namespace

Result<NeuronPlan> PlanNeuron(NeuronOp op, int64_t dim, const std::vector<const BufferRecord*>& in,
                              const BufferRecord& out) {
  const BufferRecord& x = *in[0];
  const std::vector<int64_t>& dims = x.dims;
  switch (op) {
    case NeuronOp::kSoftmax: NHLO_TRY(SameFloatShape(x, out, "AwsNeuronSoftmax")); break;
    case NeuronOp::kSoftmaxBackward:
      NHLO_TRY(SameFloatShape(x, out, "AwsNeuronSoftmaxBackward"));
      NHLO_TRY(SameFloatShape(*in[1], out, "AwsNeuronSoftmaxBackward"));
      break;
    case NeuronOp::kRmsNorm: {
      NHLO_TRY(SameFloatShape(x, out, "AwsNeuronRmsNorm"));
      const BufferRecord &weight = *in[1], &eps = *in[2];
      if (!IsFloat(weight.type) || weight.dims.size() != 1 || weight.dims[0] != dims[static_cast<size_t>(dim)] ||
          !IsFloat(eps.type) || eps.ElementCount() != 1)
        return Status::Error("AwsNeuronRmsNorm takes (x, weight of x's extent along the dimension, a scalar eps)");
      break;
    }
    case NeuronOp::kArgMax:
    case NeuronOp::kArgMin: {
      std::vector<int64_t> want = dims;
      if (want.empty()) return Status::Error("AwsNeuronArgMax and AwsNeuronArgMin need an operand of rank 1 or more");
      want.erase(want.begin() + dim);
      if (out.dims != want || !(IsSignedInt(out.type) || IsUnsignedInt(out.type)) || IsComplex(x.type))
        return Status::Error(
            "AwsNeuronArgMax and AwsNeuronArgMin give integer indices of the operand's shape without "
            "the dimension");
      break;
    }
  }
  NeuronPlan plan;
  plan.op = op;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t e = dims[d];
    if (static_cast<int64_t>(d) < dim)
      plan.outer *= e;
    else if (static_cast<int64_t>(d) == dim)
      plan.len = e;
    else
      plan.inner *= e;
  }
  // The operand holds outer * len * inner elements, so outer * inner fits when len > 0. Lines of
  // no elements leave nothing to compute, except argmax/argmin's index 0 for each.
  const bool arg = plan.op == NeuronOp::kArgMax || plan.op == NeuronOp::kArgMin;
  plan.lines = plan.len > 0 ? plan.outer * plan.inner : arg ? out.ElementCount() : 0;
  return plan;
}

void RunNeuron(const NeuronPlan& plan, const Buf* in, const Buf& out) {
  switch (plan.op) {
    case NeuronOp::kSoftmax: return Softmax(plan, in[0], out);
    case NeuronOp::kSoftmaxBackward: return SoftmaxBackward(plan, in[0], in[1], out);
    case NeuronOp::kRmsNorm: return RmsNorm(plan, in[0], in[1], in[2], out);
    case NeuronOp::kArgMax: return ArgReduce(plan, true, in[0], out);
    case NeuronOp::kArgMin: return ArgReduce(plan, false, in[0], out);
  }
}

Status KernelNeuron(NeuronOp op, int64_t dim, const std::vector<Buf>& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(NeuronPlan plan, PlanNeuron(op, dim, RecordsOf(in), *out.rec));
  RunNeuron(plan, in.data(), out);
  return OkStatus();
}

}  // namespace nhlo
