// SPDX-License-Identifier: Apache-2.0
// torch-neuronx's native custom calls (softmax and its gradient, RMS norm, argmax / argmin) and
// JAX's GPU threefry kernel. The Neuron ones compute each line along their dimension in double
// and round each result once to its type: Neuron's own arithmetic is not public, so nhlo gives
// the closest value it can [inferred]; docs/custom-calls.md cites the sources for the formulas.
#include <cmath>
#include <cstring>
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

// JAX's threefry2x32 (jax/_src/random/threefry2x32.py; jaxlib's CUDA kernel computes the same):
// Threefry-2x32 with 20 rounds on each element's key pair and counter pair.
Status KernelThreefry2x32(const std::vector<Buf>& in, const std::vector<Buf>& out) {
  if ((in.size() != 4 && in.size() != 5) || out.size() != 2)
    return Status::Error("threefry2x32 takes (key0, key1, x0, x1) and gives (out0, out1)");
  for (const Buf* b : {&in[0], &in[1], &in[2], &in[3], &out[0], &out[1]})
    if (b->type() != PrimitiveType::kU32 || Dims(*b) != Dims(out[0]))
      return Status::Error("threefry2x32's operands and results are u32 arrays of one shape");
  auto word = [](const Buf& b, int64_t i) {
    uint32_t v;
    std::memcpy(&v, b.data + i * 4, 4);
    return v;
  };
  auto rotl = [](uint32_t v, int d) { return (v << d) | (v >> (32 - d)); };
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  for (int64_t i = 0; i < out[0].count(); ++i) {
    const uint32_t ks[3] = {word(in[0], i), word(in[1], i), word(in[0], i) ^ word(in[1], i) ^ 0x1BD11BDAu};
    uint32_t x0 = word(in[2], i) + ks[0], x1 = word(in[3], i) + ks[1];
    for (uint32_t s = 1; s <= 5; ++s) {
      const int* r = kRotations + ((s - 1) % 2) * 4;
      for (int j = 0; j < 4; ++j) {
        x0 += x1;
        x1 = rotl(x1, r[j]);
        x1 ^= x0;
      }
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
    std::memcpy(out[0].data + i * 4, &x0, 4);
    std::memcpy(out[1].data + i * 4, &x1, 4);
  }
  return OkStatus();
}

}  // namespace nhlo
