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

// The lines of `dims` along `dim`: element (o, i, j) is at o * len * inner + i * inner + j.
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
  Lines(const std::vector<int64_t>& dims, int64_t dim) {
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t e = dims[d];
      if (static_cast<int64_t>(d) < dim)
        outer *= e;
      else if (static_cast<int64_t>(d) == dim)
        len = e;
      else
        inner *= e;
    }
  }
  int64_t count() const { return outer * inner; }
  int64_t at(int64_t line, int64_t i) const { return (line / inner) * len * inner + i * inner + line % inner; }
};

double Get(const Buf& b, int64_t i) { return LoadAsDouble(b.type(), b.data + i * HostByteSize(b.type())); }
void Put(const Buf& b, int64_t i, double v) { StoreFromDouble(b.type(), b.data + i * HostByteSize(b.type()), v); }

Status SameFloatShape(const Buf& a, const Buf& b, const char* what) {
  if (!IsFloat(a.type()) || !IsFloat(b.type()) || Dims(a) != Dims(b))
    return Status::Error(std::string(what) + " takes and gives floats of one shape");
  return OkStatus();
}

}  // namespace

Status KernelNeuronSoftmax(int64_t dim, const Buf& x, const Buf& out) {
  NHLO_TRY(SameFloatShape(x, out, "AwsNeuronSoftmax"));
  Lines lines(Dims(x), dim);
  for (int64_t l = 0; l < lines.count(); ++l) {
    double max = -INFINITY;
    for (int64_t i = 0; i < lines.len; ++i) {
      double v = Get(x, lines.at(l, i));
      if (std::isnan(v) || v > max) max = v;
      if (std::isnan(v)) break;
    }
    double sum = 0;
    for (int64_t i = 0; i < lines.len; ++i) sum += std::exp(Get(x, lines.at(l, i)) - max);
    for (int64_t i = 0; i < lines.len; ++i) Put(out, lines.at(l, i), std::exp(Get(x, lines.at(l, i)) - max) / sum);
  }
  return OkStatus();
}

Status KernelNeuronSoftmaxBackward(int64_t dim, const Buf& grad, const Buf& output, const Buf& out) {
  NHLO_TRY(SameFloatShape(grad, out, "AwsNeuronSoftmaxBackward"));
  NHLO_TRY(SameFloatShape(output, out, "AwsNeuronSoftmaxBackward"));
  Lines lines(Dims(grad), dim);
  for (int64_t l = 0; l < lines.count(); ++l) {
    double dot = 0;
    for (int64_t i = 0; i < lines.len; ++i) dot += Get(grad, lines.at(l, i)) * Get(output, lines.at(l, i));
    for (int64_t i = 0; i < lines.len; ++i) {
      int64_t at = lines.at(l, i);
      Put(out, at, Get(output, at) * (Get(grad, at) - dot));
    }
  }
  return OkStatus();
}

Status KernelNeuronRmsNorm(int64_t dim, const Buf& x, const Buf& weight, const Buf& eps, const Buf& out) {
  NHLO_TRY(SameFloatShape(x, out, "AwsNeuronRmsNorm"));
  const std::vector<int64_t>& dims = Dims(x);
  if (!IsFloat(weight.type()) || weight.rank() != 1 || Dims(weight)[0] != dims[static_cast<size_t>(dim)] ||
      !IsFloat(eps.type()) || eps.count() != 1)
    return Status::Error("AwsNeuronRmsNorm takes (x, weight of x's extent along the dimension, a scalar eps)");
  Lines lines(dims, dim);
  const double epsilon = Get(eps, 0);
  for (int64_t l = 0; l < lines.count(); ++l) {
    double squares = 0;
    for (int64_t i = 0; i < lines.len; ++i) {
      double v = Get(x, lines.at(l, i));
      squares += v * v;
    }
    double scale = 1 / std::sqrt(squares / static_cast<double>(lines.len) + epsilon);
    for (int64_t i = 0; i < lines.len; ++i) {
      int64_t at = lines.at(l, i);
      Put(out, at, Get(x, at) * scale * Get(weight, i));
    }
  }
  return OkStatus();
}

Status KernelNeuronArgReduce(int64_t dim, bool largest, const Buf& x, const Buf& out) {
  std::vector<int64_t> want = Dims(x);
  if (want.empty()) return Status::Error("AwsNeuronArgMax and AwsNeuronArgMin need an operand of rank 1 or more");
  want.erase(want.begin() + dim);
  if (Dims(out) != want || !(IsSignedInt(out.type()) || IsUnsignedInt(out.type())) || IsComplex(x.type()))
    return Status::Error(
        "AwsNeuronArgMax and AwsNeuronArgMin give integer indices of the operand's shape without "
        "the dimension");
  Lines lines(Dims(x), dim);
  const int size = HostByteSize(out.type());
  for (int64_t l = 0; l < lines.count(); ++l) {
    int64_t best = 0;
    double best_value = lines.len > 0 ? Get(x, lines.at(l, 0)) : 0;
    for (int64_t i = 1; i < lines.len && !std::isnan(best_value); ++i) {
      double v = Get(x, lines.at(l, i));
      if (std::isnan(v) || (largest ? v > best_value : v < best_value)) best = i, best_value = v;
    }
    StoreFromInt(out.type(), out.data + l * size, best);
  }
  return OkStatus();
}

}  // namespace nhlo
