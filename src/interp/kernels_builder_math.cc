// SPDX-License-Identifier: Apache-2.0
// XLA builder-library math functions for custom calls that name no computation
// (src/types/builder_math.def). NextAfter follows XLA's expansion step for step on the type's
// encoding (the bits match). The others are computed in double precision and rounded once to
// the element type (bf16/f16/f8 through f32, as the evaluator computes them): the inverse
// trigonometric and hyperbolic functions with the C++ library (complex ones included), the
// special functions with Eigen's SpecialFunctions module, whose algorithms XLA's math library
// ports. XLA's expansions compute in the element type, so their last bits can differ.
#include <cmath>
#include <complex>
#include <limits>
#include <unsupported/Eigen/SpecialFunctions>

#include "interp/element_traits.h"
#include "interp/kernels.h"

namespace nhlo {
namespace {

// f64 and f32 directly; the narrower floats through f32 (Eigen's types compute in f32 too).
double LoadReal(const Buf& b, int64_t i) {
  const PrimitiveType t = b.type();
  if (t == PrimitiveType::kF64) {
    double v;
    std::memcpy(&v, b.data + 8 * i, 8);
    return v;
  }
  if (t == PrimitiveType::kF32) {
    float v;
    std::memcpy(&v, b.data + 4 * i, 4);
    return v;
  }
  return DecodeToF32(t, static_cast<uint32_t>(LoadBits(t, b.data + i * HostByteSize(t))));
}

void StoreReal(const Buf& b, int64_t i, double v) {
  const PrimitiveType t = b.type();
  if (t == PrimitiveType::kF64) {
    std::memcpy(b.data + 8 * i, &v, 8);
  } else if (t == PrimitiveType::kF32) {
    float f = static_cast<float>(v);
    std::memcpy(b.data + 4 * i, &f, 4);
  } else {
    StoreBits(t, b.data + i * HostByteSize(t), EncodeFromF32(t, static_cast<float>(v)));
  }
}

uint64_t LoadCode(const Buf& b, int64_t i) {
  uint64_t code = 0;
  std::memcpy(&code, b.data + i * HostByteSize(b.type()), static_cast<size_t>(HostByteSize(b.type())));
  return code;
}

void StoreCode(const Buf& b, int64_t i, uint64_t code) {
  std::memcpy(b.data + i * HostByteSize(b.type()), &code, static_cast<size_t>(HostByteSize(b.type())));
}

// XLA's NextAfter on the codes of `t` (width bits, the sign in the top one); CheckBuilderMath
// checked the type.
void NextAfter(const Buf& from, const Buf& to, const Buf& out) {
  const PrimitiveType t = out.type();
  const int width = BitWidth(t);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t nan = t == PrimitiveType::kF64   ? std::bit_cast<uint64_t>(std::numeric_limits<double>::quiet_NaN())
                       : t == PrimitiveType::kF32 ? std::bit_cast<uint32_t>(std::numeric_limits<float>::quiet_NaN())
                                                  : EncodeFromF32(t, std::numeric_limits<float>::quiet_NaN());
  for (int64_t i = 0; i < out.count(); ++i) {
    const uint64_t x = LoadCode(from, i) & mask, y = LoadCode(to, i) & mask;
    const uint64_t x_abs = x & ~sign, y_abs = y & ~sign, x_sign = x & sign, y_sign = y & sign;
    uint64_t r;
    if (std::isnan(LoadReal(from, i)) || std::isnan(LoadReal(to, i)))
      r = nan;
    else if (x == y)
      r = y;
    else if (x_abs == 0)
      r = y_abs == 0 ? y : (y_sign | 1);
    else
      r = (x_abs > y_abs || x_sign != y_sign) ? x - 1 : x + 1;
    StoreCode(out, i, r & mask);
  }
}

double Real(BuilderMathFn fn, const double* x) {
  switch (fn) {
    case BuilderMathFn::kAcos: return std::acos(x[0]);
    case BuilderMathFn::kAcosh: return std::acosh(x[0]);
    case BuilderMathFn::kAsin: return std::asin(x[0]);
    case BuilderMathFn::kAsinh: return std::asinh(x[0]);
    case BuilderMathFn::kAtan: return std::atan(x[0]);
    case BuilderMathFn::kCosh: return std::cosh(x[0]);
    case BuilderMathFn::kPolygamma: return Eigen::numext::polygamma(x[0], x[1]);
    case BuilderMathFn::kIgammaGradA: return Eigen::numext::igamma_der_a(x[0], x[1]);
    case BuilderMathFn::kRandomGammaGrad: return Eigen::numext::gamma_sample_der_alpha(x[0], x[1]);
    case BuilderMathFn::kRegularizedIncompleteBeta: return Eigen::numext::betainc(x[0], x[1], x[2]);
    case BuilderMathFn::kNextAfter: break;  // on codes, above
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::complex<double> Complex(BuilderMathFn fn, std::complex<double> x) {
  switch (fn) {
    case BuilderMathFn::kAcos: return std::acos(x);
    case BuilderMathFn::kAcosh: return std::acosh(x);
    case BuilderMathFn::kAsin: return std::asin(x);
    case BuilderMathFn::kAsinh: return std::asinh(x);
    case BuilderMathFn::kAtan: return std::atan(x);
    case BuilderMathFn::kCosh: return std::cosh(x);
    case BuilderMathFn::kNextAfter:
    case BuilderMathFn::kPolygamma:
    case BuilderMathFn::kIgammaGradA:
    case BuilderMathFn::kRandomGammaGrad:
    case BuilderMathFn::kRegularizedIncompleteBeta: break;  // real only (the loader checked)
  }
  return {std::numeric_limits<double>::quiet_NaN(), 0};
}

}  // namespace

Status CheckBuilderMath(BuilderMathFn fn, const std::vector<const BufferRecord*>& in, const BufferRecord& out) {
  const PrimitiveType t = out.type;
  for (const BufferRecord* x : in)
    if (x->type != t || x->ElementCount() != out.ElementCount())
      return Status::Error("builder math operands must have the result's shape");
  if (fn == BuilderMathFn::kNextAfter) {
    if (in.size() != 2) return Status::Error("NextAfter takes two operands");
    const int width = BitWidth(t);
    if (t == PrimitiveType::kF8E8M0FNU || width < 2 || width > 64 || !IsFloat(t))
      return Status::Error("NextAfter needs a signed floating-point type, not " + std::string(PrimitiveTypeName(t)));
    return OkStatus();
  }
  if (IsComplex(t)) {
    if (in.size() != 1) return Status::Error("builder math on complex values takes one operand");
    return OkStatus();
  }
  if (!IsFloat(t) || in.empty() || in.size() > 3) return Status::Error("builder math takes 1 to 3 float operands");
  return OkStatus();
}

void RunBuilderMath(BuilderMathFn fn, const std::vector<Buf>& in, const Buf& out) {
  const PrimitiveType t = out.type();
  if (fn == BuilderMathFn::kNextAfter) return NextAfter(in[0], in[1], out);
  if (IsComplex(t)) {
    for (int64_t i = 0; i < out.count(); ++i) {
      if (t == PrimitiveType::kC64) {
        std::complex<float> x = LoadComplex<float>(in[0].data, i);
        std::complex<double> r = Complex(fn, {x.real(), x.imag()});
        StoreComplex<float>(out.data, i, {static_cast<float>(r.real()), static_cast<float>(r.imag())});
      } else {
        StoreComplex<double>(out.data, i, Complex(fn, LoadComplex<double>(in[0].data, i)));
      }
    }
    return;
  }
  double x[3] = {0, 0, 0};
  for (int64_t i = 0; i < out.count(); ++i) {
    for (size_t k = 0; k < in.size(); ++k) x[k] = LoadReal(in[k], i);
    StoreReal(out, i, Real(fn, x));
  }
}

Status KernelBuilderMath(BuilderMathFn fn, const std::vector<Buf>& in, const Buf& out) {
  NHLO_TRY(CheckBuilderMath(fn, RecordsOf(in), *out.rec));
  RunBuilderMath(fn, in, out);
  return OkStatus();
}

}  // namespace nhlo
