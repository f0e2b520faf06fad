// SPDX-License-Identifier: Apache-2.0
// fft: FFT and IFFT (complex to complex), RFFT (real to complex, the n/2+1 non-negative
// frequencies of the last axis) and IRFFT (complex to real, the last axis extended by Hermitian
// symmetry) over the last 1-3 dimensions, as XLA's operation semantics and numpy.fft.*n define
// them; the inverses divide by the product of the lengths. Each 1-D transform is Eigen's FFT
// (unsupported/Eigen/FFT, the KISS FFT mixed-radix algorithm) in double precision, and c64/f32
// results are rounded once at the end: closer to the exact DFT than a float FFT, so XLA's
// backends, which transform in the element type, can differ in the last bits.
#include <complex>
#include <cstring>
#include <unsupported/Eigen/FFT>
#include <vector>

#include "interp/element_traits.h"
#include "interp/kernels.h"
#include "support/checked_math.h"

namespace nhlo {
namespace {

using Cd = std::complex<double>;

// The fft's element types, checked when the program is loaded: c64, c128, f32 (rfft's input,
// irfft's output) or f64.
std::complex<double> LoadAny(const Buf& b, int64_t i) {
  const PrimitiveType t = b.type();
  if (t == PrimitiveType::kC64) {
    std::complex<float> v = LoadComplex<float>(b.data, i);
    return {v.real(), v.imag()};
  }
  if (t == PrimitiveType::kC128) return LoadComplex<double>(b.data, i);
  if (t == PrimitiveType::kF32) {
    float v;
    std::memcpy(&v, b.data + 4 * i, 4);
    return {v, 0.0};
  }
  double v;
  std::memcpy(&v, b.data + 8 * i, 8);
  return {v, 0.0};
}

void StoreAny(const Buf& b, int64_t i, Cd v) {
  const PrimitiveType t = b.type();
  if (t == PrimitiveType::kC64) {
    StoreComplex<float>(b.data, i, {static_cast<float>(v.real()), static_cast<float>(v.imag())});
  } else if (t == PrimitiveType::kC128) {
    StoreComplex<double>(b.data, i, v);
  } else if (t == PrimitiveType::kF32) {
    float r = static_cast<float>(v.real());
    std::memcpy(b.data + 4 * i, &r, 4);
  } else {
    double r = v.real();
    std::memcpy(b.data + 8 * i, &r, 8);
  }
}

// Transforms every line of `data` (row-major `dims`) along `axis`.
void TransformAxis(std::vector<Cd>& data, const std::vector<int64_t>& dims, size_t axis, bool inverse,
                   Eigen::FFT<double>& fft) {
  int64_t n = dims[axis], inner = 1, outer = 1;
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  if (n <= 1) return;
  std::vector<Cd> line(static_cast<size_t>(n)), result;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      Cd* base = data.data() + o * n * inner + in;
      for (int64_t k = 0; k < n; ++k) line[static_cast<size_t>(k)] = base[k * inner];
      if (inverse)
        fft.inv(result, line);
      else
        fft.fwd(result, line);
      for (int64_t k = 0; k < n; ++k) base[k * inner] = result[static_cast<size_t>(k)];
    }
  }
}

// FFT and IFFT whose fft_length differs from the operand's last dimensions, as XLA's evaluator
// runs them (HloEvaluator::HandleFft; its shape inference checks lengths for RFFT and IRFFT only):
// each transformed axis reads the operand's first min(L, d) elements and zeros up to L, and the
// result (the operand's shape) holds the transform's first min(L, d) elements and zeros after. A
// zero length gives an all-zero result.
Status PaddedComplexFft(const Buf& in, const Buf& out, const std::vector<int64_t>& length, bool inverse) {
  const std::vector<int64_t>& shape = in.rec->dims;
  const size_t rank = shape.size(), k = length.size(), first = rank - k;
  for (int64_t i = 0; i < out.count(); ++i) StoreAny(out, i, {0, 0});
  for (int64_t l : length)
    if (l <= 0) return OkStatus();
  std::vector<int64_t> work(shape.begin(), shape.end());  // the batch dimensions, then the lengths
  int64_t total = 1;
  for (size_t i = 0; i < k; ++i) work[first + i] = length[i];
  for (int64_t d : work) {
    if (d != 0 && total > (int64_t{1} << 40) / d)
      return Status::Error("fft working set of more than 2^40 elements (fft_length too large)");
    total *= d;
  }
  if (total == 0) return OkStatus();
  std::vector<Cd> data(static_cast<size_t>(total));
  // Walks every index of `work`; `inside` tells whether it lies within the operand's shape.
  std::vector<int64_t> strides = RowMajorStrides(shape), index(rank, 0);
  auto for_each = [&](auto&& f) {
    for (int64_t w = 0; w < total; ++w) {
      int64_t offset = 0;
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        inside &= index[d] < shape[d];
        offset += index[d] * strides[d];
      }
      f(w, inside, offset);
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < work[d]) break;
        index[d] = 0;
      }
    }
  };
  for_each([&](int64_t w, bool inside, int64_t offset) {
    data[static_cast<size_t>(w)] = inside ? LoadAny(in, offset) : Cd(0, 0);
  });
  Eigen::FFT<double> fft;
  for (size_t axis = first; axis < rank; ++axis) TransformAxis(data, work, axis, inverse, fft);
  for_each([&](int64_t w, bool inside, int64_t offset) {
    if (inside) StoreAny(out, offset, data[static_cast<size_t>(w)]);
  });
  return OkStatus();
}

}  // namespace

uint64_t FftScratchBytes(const Step& s, const BufferRecord& in, const BufferRecord& out) {
  const AttrRecord* type_attr = s.Find(AttrId::kFftType);
  const AttrRecord* length_attr = s.Find(AttrId::kFftLength);
  if (!type_attr || !length_attr) return 0;  // the kernel refuses it
  const FftType type = static_cast<FftType>(type_attr->i());
  const std::vector<int64_t>& length = length_attr->ints();
  if (length.empty() || length.size() > in.dims.size()) return 0;
  // The complex values the transforms work on (16 bytes each): the operand's shape (the
  // result's for RFFT) or, for a complex FFT whose lengths differ, the shape with the lengths;
  // plus a line of the longest axis for the row and spectrum buffers.
  std::vector<int64_t> work = type == FftType::kRfft ? out.dims : in.dims;
  const size_t first = work.size() - length.size();
  int64_t longest = 0;
  for (size_t i = 0; i < length.size(); ++i) {
    if (length[i] <= 0) return 0;  // an all-zero result
    if (type == FftType::kFft || type == FftType::kIfft) work[first + i] = length[i];
    longest = std::max(longest, length[i]);
  }
  uint64_t elements = 1;
  for (int64_t d : work)
    if (d < 0 || MulOverflows(elements, static_cast<uint64_t>(d), &elements)) return UINT64_MAX;
  uint64_t bytes = 0;
  if (MulOverflows(elements, uint64_t{16}, &bytes)) return UINT64_MAX;
  return SaturatingAdd(bytes, static_cast<uint64_t>(longest) * 4 * 16);
}

Result<FftPlan> PlanFft(const Step& s, const BufferRecord& in, const BufferRecord& out) {
  const AttrRecord* type_attr = s.Find(AttrId::kFftType);
  const AttrRecord* length_attr = s.Find(AttrId::kFftLength);
  if (!type_attr || !length_attr) return Status::Error("fft needs fft_type and fft_length");
  FftPlan plan;
  plan.type = static_cast<FftType>(type_attr->i());
  plan.length = length_attr->ints();
  const std::vector<int64_t>& length = plan.length;
  const size_t k = length.size(), rank = in.dims.size();
  if (k < 1 || k > 3 || rank < k || out.dims.size() != rank)
    return Status::Error("fft has 1 to 3 fft_length entries and keeps the rank");
  const bool real_in = plan.type == FftType::kRfft, real_out = plan.type == FftType::kIrfft;
  auto is_complex = [](PrimitiveType t) { return t == PrimitiveType::kC64 || t == PrimitiveType::kC128; };
  auto is_real = [](PrimitiveType t) { return t == PrimitiveType::kF32 || t == PrimitiveType::kF64; };
  bool types_ok = (real_in ? is_real(in.type) : is_complex(in.type)) &&
                  (real_out ? is_real(out.type) : is_complex(out.type)) &&
                  ((in.type == PrimitiveType::kF64 || in.type == PrimitiveType::kC128) ==
                   (out.type == PrimitiveType::kF64 || out.type == PrimitiveType::kC128));
  if (!types_ok) return Status::Error("fft types do not fit its fft_type");
  if (!real_in && !real_out) {
    bool lengths_differ = in.dims != out.dims;
    for (size_t i = 0; i < k; ++i) lengths_differ |= in.dims[rank - k + i] != length[i];
    if (lengths_differ) {
      if (in.dims != out.dims) return Status::Error("fft result shape differs from its operand's");
      plan.padded = true;
      return plan;
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    int64_t want_in = in.dims[i], want_out = out.dims[i];
    if (i >= rank - k) {
      int64_t l = length[i - (rank - k)];
      bool last = i == rank - 1;
      want_in = real_out && last ? l / 2 + 1 : l;
      want_out = real_in && last ? l / 2 + 1 : l;
    }
    if (in.dims[i] != want_in || out.dims[i] != want_out || in.dims[i] < 0)
      return Status::Error("fft operand and result shapes do not fit fft_length");
  }
  return plan;
}

Status KernelFft(const Step& s, const Buf& in, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(FftPlan plan, PlanFft(s, *in.rec, *out.rec));
  return RunFft(plan, in, out);
}

Status RunFft(const FftPlan& plan, const Buf& in, const Buf& out) {
  const FftType type = plan.type;
  const std::vector<int64_t>& length = plan.length;
  if (plan.padded) return PaddedComplexFft(in, out, length, type == FftType::kIfft);
  const size_t k = length.size(), rank = in.rank();
  const bool real_in = type == FftType::kRfft, real_out = type == FftType::kIrfft;
  // The complex domain the transforms work in: the input's shape, but the output's for RFFT.
  const std::vector<int64_t>& dims = real_in ? out.rec->dims : in.rec->dims;
  if (out.count() == 0) return OkStatus();
  if (in.count() == 0) {  // a zero-length transform of a non-empty result: zeros
    for (int64_t i = 0; i < out.count(); ++i) StoreAny(out, i, {0, 0});
    return OkStatus();
  }
  Eigen::FFT<double> fft;  // the inverse scales by 1/n
  const bool inverse = type == FftType::kIfft || type == FftType::kIrfft;
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<Cd> data(static_cast<size_t>(total));
  const size_t last = rank - 1;
  if (real_in) {
    // Each row of the last axis: the full DFT of the real signal, its first n/2+1 terms kept.
    int64_t n = length.back(), kept = n / 2 + 1, rows = in.count() / n;
    std::vector<Cd> row(static_cast<size_t>(n)), spectrum;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = LoadAny(in, r * n + j);
      fft.fwd(spectrum, row);
      for (int64_t j = 0; j < kept; ++j) data[static_cast<size_t>(r * kept + j)] = spectrum[static_cast<size_t>(j)];
    }
    for (size_t axis = rank - k; axis < last; ++axis) TransformAxis(data, dims, axis, false, fft);
  } else {
    for (int64_t i = 0; i < in.count(); ++i) data[static_cast<size_t>(i)] = LoadAny(in, i);
    for (size_t axis = rank - k; axis < (real_out ? last : rank); ++axis) TransformAxis(data, dims, axis, inverse, fft);
  }
  if (!real_out) {
    for (int64_t i = 0; i < out.count(); ++i) StoreAny(out, i, data[static_cast<size_t>(i)]);
    return OkStatus();
  }
  // IRFFT's last axis: the n/2+1 terms extended by X[n-j] = conj(X[j]), inverted, real part.
  int64_t n = length.back(), kept = in.rec->dims[last], rows = out.count() / n;
  std::vector<Cd> full(static_cast<size_t>(n)), signal;
  for (int64_t r = 0; r < rows; ++r) {
    const Cd* x = data.data() + r * kept;
    for (int64_t j = 0; j < n; ++j) full[static_cast<size_t>(j)] = j < kept ? x[j] : std::conj(x[n - j]);
    fft.inv(signal, full);
    for (int64_t j = 0; j < n; ++j) StoreAny(out, r * n + j, signal[static_cast<size_t>(j)]);
  }
  return OkStatus();
}

}  // namespace nhlo
