// SPDX-License-Identifier: Apache-2.0
// Kernels for the ops the Neuron passes consume or create: the uniform
// quantize/dequantize custom calls (the same steps expand-uniform-quantize emits), QuantizeMX in
// both forms, scaled-dot and ScaledMatmul (which share one dequantize-then-dot path, so the MX
// legalizations keep results bit-identical).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "interp/element_traits.h"
#include "interp/kernels.h"
#include "interp/mx.h"
#include "types/custom_call_configs.h"

namespace nhlo {
namespace {

// Index along `dim` of linear element `i` of a row-major array.
int64_t IndexAlong(int64_t i, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t dim) {
  return (i / strides[dim]) % dims[dim];
}

// Rounds a float to `t` and back: one HLO op's result in type t.
template <typename Traits>
float Round(const Traits& t, float v) {
  uint8_t tmp[16] = {};
  t.Store(tmp, 0, v);
  return static_cast<float>(t.Load(tmp, 0));
}

}  // namespace

Result<UniformQuantPlan> PlanUniformQuantize(const UniformQuantConfig& c, const BufferRecord& x,
                                             const BufferRecord& out, bool quantize) {
  const BufferRecord& real = quantize ? x : out;
  const BufferRecord& stored = quantize ? out : x;
  if (real.ElementCount() != stored.ElementCount() || real.type != c.expressed_type || stored.type != c.storage_type)
    return Status::Error("uniform quantize custom call does not match its config's types");
  if (c.quantization_dimension >= static_cast<int64_t>(real.dims.size()) ||
      (c.quantization_dimension >= 0 && static_cast<int64_t>(c.scale.size()) != real.dims[c.quantization_dimension]))
    return Status::Error("uniform quantize config does not match the tensor shape");
  if (!HasFloatCompute(real.type) || ComputeByteSize(real.type) != 4)
    return Status::Error("uniform quantize: expressed type must be a float up to f32");
  UniformQuantPlan plan;
  plan.quantize = quantize;
  plan.strides = RowMajorStrides(real.dims);
  return plan;
}

void RunUniformQuantize(const UniformQuantPlan& plan, const UniformQuantConfig& c, const Buf& x, const Buf& out) {
  const bool quantize = plan.quantize;
  const Buf& real = quantize ? x : out;
  const Buf& stored = quantize ? out : x;
  const std::vector<int64_t>& strides = plan.strides;
  const int64_t n = real.count();
  const int stored_size = HostByteSize(stored.type());
  (void)DispatchType(real.type(), [&](auto t) -> Status {
    if constexpr (std::is_same_v<typename decltype(t)::Compute, float>) {  // the plan checked
      for (int64_t i = 0; i < n; ++i) {
        int64_t ch = c.quantization_dimension < 0 ? 0 : IndexAlong(i, Dims(real), strides, c.quantization_dimension);
        float zp = Round(t, static_cast<float>(c.ZeroPointFor(ch)));
        if (quantize) {
          // The exact step sequence expand-uniform-quantize emits, each rounded to the type.
          float inv_scale = Round(t, static_cast<float>(1.0 / c.ScaleFor(ch)));
          float v = Round(t, t.Load(x.data, i) * inv_scale);
          v = Round(t, std::nearbyint(v));
          v = Round(t, v + zp);
          float lo = Round(t, static_cast<float>(c.storage_min)), hi = Round(t, static_cast<float>(c.storage_max));
          if (!std::isnan(v)) v = std::min(std::max(v, lo), hi);
          uint8_t tmp[4];
          std::memcpy(tmp, &v, 4);
          ConvertElement(PrimitiveType::kF32, tmp, stored.type(), out.data + i * stored_size);
        } else {
          float q = Round(t, static_cast<float>(LoadAsInt(stored.type(), x.data + i * stored_size)));
          float centered = Round(t, q - zp);
          t.Store(out.data, i, centered * Round(t, static_cast<float>(c.ScaleFor(ch))));
        }
      }
    }
    return OkStatus();
  });
}

Status KernelUniformQuantize(const Step& bundle, const Buf& x, const Buf& out, bool quantize) {
  const UniformQuantConfig& c = bundle.config->uniform_quant;
  NHLO_ASSIGN_OR_RETURN(UniformQuantPlan plan, PlanUniformQuantize(c, *x.rec, *out.rec, quantize));
  RunUniformQuantize(plan, c, x, out);
  return OkStatus();
}

Result<QuantizeMxPlan> PlanQuantizeMx(const QuantizeMxConfig& c, const BufferRecord& x, const BufferRecord& data,
                                      const BufferRecord& scales) {
  if (c.dim < 0 || c.dim >= static_cast<int64_t>(x.dims.size())) return Status::Error("QuantizeMX dim is out of range");
  if (!IsFloat(x.type))
    return Status::Error(std::string("QuantizeMX is implemented for float types, got ") +
                         std::string(PrimitiveTypeName(x.type)));
  if (x.type == PrimitiveType::kF64)
    return Status::Error("QuantizeMX is implemented for float types up to f32, got f64");
  QuantizeMxPlan plan;
  plan.packed = data.type == PrimitiveType::kU32;
  plan.k = x.dims[static_cast<size_t>(c.dim)];
  const int64_t count = x.ElementCount();
  // Counts compared by division: the records' counts times 4 or 32 could pass 64 bits.
  if (plan.k % 32 != 0 || count % 32 != 0 || data.ElementCount() != (plan.packed ? count / 4 : count) ||
      scales.ElementCount() != count / 32 || (!plan.packed && data.type != c.element) ||
      scales.type != PrimitiveType::kF8E8M0FNU)
    return Status::Error("QuantizeMX custom call does not match its config");
  // Walk blocks: outer = dims before `dim`, inner = dims after it. With k > 0 their product with
  // k is the element count, so they fit; with k == 0 there is no block to walk.
  for (size_t d = 0; d < x.dims.size() && plan.k > 0; ++d) {
    if (static_cast<int64_t>(d) < c.dim) plan.outer *= x.dims[d];
    if (static_cast<int64_t>(d) > c.dim) plan.inner *= x.dims[d];
  }
  if (plan.k == 0) plan.outer = plan.inner = 0;
  return plan;
}

void RunQuantizeMx(const QuantizeMxPlan& plan, const QuantizeMxConfig& c, const Buf& x, const Buf& data,
                   const Buf& scales) {
  const int64_t k = plan.k, outer = plan.outer, inner = plan.inner;
  const bool packed = plan.packed;
  (void)DispatchType(x.type(), [&](auto t) -> Status {
    float block[32];
    uint8_t codes[32];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in)
        for (int64_t b = 0; b < k / 32; ++b) {
          for (int j = 0; j < 32; ++j) block[j] = static_cast<float>(t.Load(x.data, (o * k + b * 32 + j) * inner + in));
          scales.data[(o * (k / 32) + b) * inner + in] = QuantizeMxBlock(c.element, block, 32, codes);
          for (int j = 0; j < 32; ++j) {
            int64_t along = b * 32 + j;
            if (packed) {
              // Four lanes per u32 along `dim`, lane 0 in the low byte.
              data.data[((o * (k / 4) + along / 4) * inner + in) * 4 + along % 4] = codes[j];
            } else {
              data.data[(o * k + along) * inner + in] = codes[j];
            }
          }
        }
    return OkStatus();
  });
}

Status KernelQuantizeMx(const Step& bundle, const Buf& x, const Buf& data, const Buf& scales) {
  const QuantizeMxConfig& c = bundle.config->quantize_mx;
  NHLO_ASSIGN_OR_RETURN(QuantizeMxPlan plan, PlanQuantizeMx(c, *x.rec, *data.rec, *scales.rec));
  RunQuantizeMx(plan, c, x, data, scales);
  return OkStatus();
}

namespace {

// Dequantizes an MX operand to f32 values in its logical shape. `elements` holds one code per
// logical element (unpacked), scales one byte per block of 32 along `contract`.
std::vector<float> DequantizeOperand(PrimitiveType element, const uint8_t* codes, const std::vector<int64_t>& dims,
                                     const uint8_t* scales, int64_t contract, int64_t block) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> scale_dims = dims;
  scale_dims[contract] /= block;
  std::vector<int64_t> scale_strides = RowMajorStrides(scale_dims);
  int64_t n = CheckedElementCount(dims);  // a buffer's dimensions: checked by the reader
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t idx = IndexAlong(i, dims, strides, static_cast<int64_t>(d));
      if (static_cast<int64_t>(d) == contract) idx /= block;
      s += idx * scale_strides[d];
    }
    out[i] = DequantizeMx(element, codes[i], scales[s]);
  }
  return out;
}

// Any float data with any float block scales (or one scalar scale), as XLA's evaluator runs a
// scaled-dot that is no MX pair: each element times its block's scale, in f32. Along every
// dimension the scale's extent divides the operand's (a batch dimension of 1 scales the whole
// batch); the caller checked that.
std::vector<float> ScaleOperand(const Buf& data, const Buf& scale) {
  const std::vector<int64_t>& dims = Dims(data);
  int64_t n = data.count();
  std::vector<float> out(static_cast<size_t>(n));
  int data_size = HostByteSize(data.type()), scale_size = HostByteSize(scale.type());
  auto value = [](PrimitiveType t, const uint8_t* p) { return DecodeToF32(t, static_cast<uint32_t>(LoadBits(t, p))); };
  if (scale.rank() == 0) {
    float s = value(scale.type(), scale.data);
    for (int64_t i = 0; i < n; ++i) out[i] = value(data.type(), data.data + i * data_size) * s;
    return out;
  }
  std::vector<int64_t> strides = RowMajorStrides(dims), scale_strides = RowMajorStrides(Dims(scale));
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t idx = IndexAlong(i, dims, strides, static_cast<int64_t>(d));
      at += idx / (dims[d] / Dims(scale)[d]) * scale_strides[d];
    }
    out[i] = value(data.type(), data.data + i * data_size) * value(scale.type(), scale.data + at * scale_size);
  }
  return out;
}

}  // namespace

// scaled-dot(lhs, rhs, lhs_scale, rhs_scale) (XLA's operand order): each operand dequantized
// with its block scales (block = contracting size / scale contracting size), then an
// f32-accumulated dot. The plan checks every record and plans that dot on the dequantized
// operands' f32 records; the run dequantizes and runs it.
Result<ScaledDotPlan> PlanScaledDot(const Step& bundle, const BufferRecord& lhs, const BufferRecord& rhs,
                                    const BufferRecord& lhs_scale, const BufferRecord& rhs_scale,
                                    const BufferRecord& out) {
  const DotDimensionNumbers& dims = DotDims(bundle);
  if (dims.lhs_contracting.size() != 1 || dims.rhs_contracting.size() != 1)
    return Status::Error("the interpreter implements scaled-dot with exactly one contracting dimension per side");
  ScaledDotPlan plan;
  const BufferRecord* ops[2][2] = {{&lhs, &lhs_scale}, {&rhs, &rhs_scale}};
  for (int side = 0; side < 2; ++side) {
    const BufferRecord& data = *ops[side][0];
    const BufferRecord& scale = *ops[side][1];
    const size_t rank = data.dims.size();
    const int64_t cd = side ? dims.rhs_contracting[0] : dims.lhs_contracting[0];
    if (cd < 0 || cd >= static_cast<int64_t>(rank) || (scale.dims.size() != rank && !scale.dims.empty()) ||
        !IsFloat(data.type) || !IsFloat(scale.type))
      return Status::Error(
          "scaled-dot operands must be float data with float scales of the same rank, or a scalar scale");
    ScaledDotPlan::Side& planned = plan.side[side];
    planned.f32_record.type = PrimitiveType::kF32;
    planned.f32_record.dims = data.dims;
    planned.f32_record.size = static_cast<uint64_t>(data.ElementCount()) * 4;  // the reader bounds the count
    planned.mx = scale.type == PrimitiveType::kF8E8M0FNU && scale.dims.size() == rank &&
                 (data.type == PrimitiveType::kF8E4M3FN || data.type == PrimitiveType::kF8E5M2);
    if (!planned.mx) {
      for (size_t d = 0; d < scale.dims.size(); ++d)
        if (scale.dims[d] == 0 ? data.dims[d] != 0 : data.dims[d] % scale.dims[d] != 0)
          return Status::Error("scaled-dot scale shape does not divide its operand's");
      continue;
    }
    const int64_t scale_k = scale.dims[static_cast<size_t>(cd)];
    if (scale_k == 0 || data.dims[static_cast<size_t>(cd)] % scale_k != 0)
      return Status::Error("scaled-dot scale does not divide the contracting dimension");
    for (size_t d = 0; d < rank; ++d)
      if (static_cast<int64_t>(d) != cd && scale.dims[d] != data.dims[d])
        return Status::Error("scaled-dot scale shape does not match its operand");
    planned.contracting = cd;
    // An empty contracting dimension (0 / scale_k) has no element to find a block for; a block of
    // 1 keeps the run from dividing by zero.
    planned.block = std::max<int64_t>(1, data.dims[static_cast<size_t>(cd)] / scale_k);
  }
  NHLO_ASSIGN_OR_RETURN(plan.dot, PlanDot(dims, plan.side[0].f32_record, plan.side[1].f32_record, out));
  return plan;
}

Status RunScaledDot(const ScaledDotPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& lhs_scale,
                    const Buf& rhs_scale, const Buf& out) {
  std::vector<float> values[2];
  const Buf* ops[2][2] = {{&lhs, &lhs_scale}, {&rhs, &rhs_scale}};
  for (int side = 0; side < 2; ++side) {
    const Buf& data = *ops[side][0];
    const Buf& scale = *ops[side][1];
    const ScaledDotPlan::Side& planned = plan.side[side];
    values[side] = planned.mx ? DequantizeOperand(data.type(), data.data, Dims(data), scale.data, planned.contracting,
                                                  planned.block)
                              : ScaleOperand(data, scale);
  }
  return RunDot(plan.dot, Buf{&plan.side[0].f32_record, reinterpret_cast<uint8_t*>(values[0].data())},
                Buf{&plan.side[1].f32_record, reinterpret_cast<uint8_t*>(values[1].data())}, out);
}

Status KernelScaledDot(const Step& bundle, const Buf& lhs, const Buf& rhs, const Buf& lhs_scale, const Buf& rhs_scale,
                       const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(ScaledDotPlan plan,
                        PlanScaledDot(bundle, *lhs.rec, *rhs.rec, *lhs_scale.rec, *rhs_scale.rec, *out.rec));
  return RunScaledDot(plan, lhs, rhs, lhs_scale, rhs_scale, out);
}

// ScaledMatmul(lhs_u32, rhs_u32, lhs_scale, rhs_scale): unpack four lanes per u32 along the
// contracting dimension, then exactly the scaled-dot computation. The plan checks the records,
// finds each side's logical (unpacked) shape and plans the f32 dot of the dequantized values.
Result<ScaledMatmulPlan> PlanScaledMatmul(const ScaledMatmulConfig& c, const BufferRecord& lhs, const BufferRecord& rhs,
                                          const BufferRecord& lhs_scale, const BufferRecord& rhs_scale,
                                          const BufferRecord& out) {
  if (c.lhs_contracting.size() != 1 || c.rhs_contracting.size() != 1)
    return Status::Error("ScaledMatmul needs one contracting dimension per side");
  if (c.block_size <= 0) return Status::Error("ScaledMatmul block_size must be 32");
  ScaledMatmulPlan plan;
  const BufferRecord* ops[2][2] = {{&lhs, &lhs_scale}, {&rhs, &rhs_scale}};
  for (int side = 0; side < 2; ++side) {
    const BufferRecord& data = *ops[side][0];
    const BufferRecord& scale = *ops[side][1];
    const int64_t cd = side ? c.rhs_contracting[0] : c.lhs_contracting[0];
    const size_t rank = data.dims.size();
    if (data.type != PrimitiveType::kU32 || cd < 0 || cd >= static_cast<int64_t>(rank) || scale.dims.size() != rank ||
        scale.type != PrimitiveType::kF8E8M0FNU)
      return Status::Error("ScaledMatmul operands must be packed u32 data with f8e8m0fnu scales of the same rank");
    std::vector<int64_t> logical = data.dims;
    int64_t codes = 0;
    // The unpacked shape must keep the records' rule: its nonzero dimensions multiply within
    // range (the run's strides and the dot rely on it), not only its element count.
    if (MulOverflows(logical[static_cast<size_t>(cd)], int64_t{4}, &logical[static_cast<size_t>(cd)]) ||
        MulOverflows(data.ElementCount(), int64_t{4}, &codes) || CheckedElementCount(logical) < 0)
      return Status::Error("ScaledMatmul operand is too large");
    for (size_t d = 0; d < rank; ++d) {
      int64_t want = static_cast<int64_t>(d) == cd ? logical[d] / c.block_size : logical[d];
      if (scale.dims[d] != want) return Status::Error("ScaledMatmul scale shape does not match its operand");
    }
    ScaledMatmulPlan::Side& planned = plan.side[side];
    planned.contracting = cd;
    planned.codes = codes;
    planned.f32_record.type = PrimitiveType::kF32;
    planned.f32_record.dims = logical;
    planned.f32_record.size = static_cast<uint64_t>(codes) * 4;  // the reader bounds the data's bytes
    planned.packed_strides = RowMajorStrides(data.dims);
  }
  const DotDimensionNumbers dnums{c.lhs_batch, c.lhs_contracting, c.rhs_batch, c.rhs_contracting};
  NHLO_ASSIGN_OR_RETURN(plan.dot, PlanDot(dnums, plan.side[0].f32_record, plan.side[1].f32_record, out));
  return plan;
}

Status RunScaledMatmul(const ScaledMatmulPlan& plan, const ScaledMatmulConfig& c, const Buf& lhs, const Buf& rhs,
                       const Buf& lhs_scale, const Buf& rhs_scale, const Buf& out) {
  std::vector<float> values[2];
  const Buf* ops[2][2] = {{&lhs, &lhs_scale}, {&rhs, &rhs_scale}};
  for (int side = 0; side < 2; ++side) {
    const Buf& data = *ops[side][0];
    const Buf& scale = *ops[side][1];
    const ScaledMatmulPlan::Side& planned = plan.side[side];
    const std::vector<int64_t>& logical = planned.f32_record.dims;
    const int64_t cd = planned.contracting;
    // Unpack lanes into one code per logical element (row-major in the logical shape).
    std::vector<int64_t> strides = RowMajorStrides(logical);
    std::vector<uint8_t> codes(static_cast<size_t>(planned.codes));
    for (int64_t i = 0; i < planned.codes; ++i) {
      int64_t word = 0;
      for (size_t d = 0; d < logical.size(); ++d) {
        int64_t idx = IndexAlong(i, logical, strides, static_cast<int64_t>(d));
        if (static_cast<int64_t>(d) == cd) idx /= 4;
        word += idx * planned.packed_strides[d];
      }
      int64_t lane = IndexAlong(i, logical, strides, cd) % 4;
      codes[i] = data.data[word * 4 + lane];
    }
    values[side] =
        DequantizeOperand(side ? c.rhs_element : c.lhs_element, codes.data(), logical, scale.data, cd, c.block_size);
  }
  return RunDot(plan.dot, Buf{&plan.side[0].f32_record, reinterpret_cast<uint8_t*>(values[0].data())},
                Buf{&plan.side[1].f32_record, reinterpret_cast<uint8_t*>(values[1].data())}, out);
}

Status KernelScaledMatmul(const Step& bundle, const Buf& lhs, const Buf& rhs, const Buf& lhs_scale,
                          const Buf& rhs_scale, const Buf& out) {
  const ScaledMatmulConfig& c = bundle.config->scaled_matmul;
  NHLO_ASSIGN_OR_RETURN(ScaledMatmulPlan plan,
                        PlanScaledMatmul(c, *lhs.rec, *rhs.rec, *lhs_scale.rec, *rhs_scale.rec, *out.rec));
  return RunScaledMatmul(plan, c, lhs, rhs, lhs_scale, rhs_scale, out);
}

}  // namespace nhlo
