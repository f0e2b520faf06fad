// SPDX-License-Identifier: Apache-2.0
// The kernels of tuple-result steps that need no machine state (call_kernels.h): each runs its
// plan from load (kernel_plans.h), or, for a step without one (a bounded dynamic shape, records
// its planner refused), the kernel that checks and plans as it runs.
#include "interp/call_kernels.h"

namespace nhlo {

Status RunLeafKernel(const Step& s, const std::vector<Buf>& in, const std::vector<Buf>& out) {
  const BundleRecord& b = *s.bundle;
  // LowerBundle checked the operand and leaf counts of every kernel below (CheckKernelLeaves).
  const bool checked = PlanOf<CheckedCallPlan>(s) != nullptr;  // and these kernels' records
  switch (s.custom_call) {
    case CustomCallKind::kTopK: break;  // the machine runs it (RunTopK)
    case CustomCallKind::kNone:
      if (b.opcode == Opcode::kRngBitGenerator) {
        if (const auto* bits = PlanOf<RngBitsPlan>(s)) {
          RunRngBitGenerator(*bits, in[0], out.size() == 2 ? &out[0] : nullptr, out.back());
          return OkStatus();
        }
        return KernelRngBitGenerator(s, in[0], out.size() == 2 ? &out[0] : nullptr, out.back());
      }
      // batch-norm-training, -inference, -grad
      if (const auto* batch_norm = PlanOf<BatchNormPlan>(s)) return RunBatchNorm(*batch_norm, in.data(), out.data());
      return KernelBatchNorm(s, in, out);
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize:
      if (const auto* quant = PlanOf<UniformQuantPlan>(s)) {
        RunUniformQuantize(*quant, s.config->uniform_quant, in[0], out[0]);
        return OkStatus();
      }
      return KernelUniformQuantize(s, in[0], out[0], s.custom_call == CustomCallKind::kUniformQuantize);
    case CustomCallKind::kQuantizeMx:
      if (const auto* mx = PlanOf<QuantizeMxPlan>(s)) {
        RunQuantizeMx(*mx, s.config->quantize_mx, in[0], out[0], out[1]);
        return OkStatus();
      }
      return KernelQuantizeMx(s, in[0], out[0], out[1]);
    case CustomCallKind::kScaledMatmul:
      if (const auto* matmul = PlanOf<ScaledMatmulPlan>(s))
        return RunScaledMatmul(*matmul, s.config->scaled_matmul, in[0], in[1], in[2], in[3], out[0]);
      return KernelScaledMatmul(s, in[0], in[1], in[2], in[3], out[0]);
    case CustomCallKind::kBuilderMath:
      if (!checked) return KernelBuilderMath(s.builder_math, in, out[0]);
      RunBuilderMath(s.builder_math, in, out[0]);
      return OkStatus();
    case CustomCallKind::kEinsum:
      if (const auto* einsum = PlanOf<EinsumPlan>(s)) {
        RunEinsum(*einsum, in[0], in[1], out[0]);
        return OkStatus();
      }
      return KernelEinsum(s.config->einsum, in[0], in[1], out[0]);
    case CustomCallKind::kMatrixDiagonal:
      if (!checked) return KernelMatrixDiagonal(in[0], out[0]);
      RunMatrixDiagonal(in[0], out[0]);
      return OkStatus();
    case CustomCallKind::kScramblePhiloxKey:
      if (!checked) return KernelScramblePhiloxKey(in[0], out[0]);
      RunScramblePhiloxKey(in[0], out[0]);
      return OkStatus();
    case CustomCallKind::kTridiagonalSolve:
      if (!checked) return KernelTridiagonalSolve(in, out[0]);
      RunTridiagonalSolve(in, out[0]);
      return OkStatus();
    case CustomCallKind::kThreefry2x32:
      if (!checked) return KernelThreefry2x32(in, out);
      RunThreefry2x32(in, out);
      return OkStatus();
    case CustomCallKind::kLu:
    case CustomCallKind::kCholesky:
    case CustomCallKind::kQr:
    case CustomCallKind::kQrQ:
    case CustomCallKind::kPivotsToPermutation:
    case CustomCallKind::kTriangularSolve:
    case CustomCallKind::kEigh:
    case CustomCallKind::kSvd:
    case CustomCallKind::kGtsv:
    case CustomCallKind::kEig:
      return checked ? RunSolver(s.config->solver, in, out) : KernelSolver(s.config->solver, in, out);
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin:
      if (const auto* neuron = PlanOf<NeuronPlan>(s)) {
        RunNeuron(*neuron, in.data(), out[0]);
        return OkStatus();
      }
      return KernelNeuron(s.config->neuron_op, s.config->neuron_dim, in, out[0]);
    case CustomCallKind::kIdentity:
    case CustomCallKind::kShardShape:
    case CustomCallKind::kCallComputation:
    case CustomCallKind::kUnknown:
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kShadowProbe:
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kBlockScaledDot:
    case CustomCallKind::kCublasGemm:
    case CustomCallKind::kCudnnConv:
    case CustomCallKind::kCubSort:
    case CustomCallKind::kCudnnFmha:
    case CustomCallKind::kHostCallback:
    case CustomCallKind::kPadToStatic: break;
  }
  return Status::Error("bundle has an unknown custom call kind");
}

}  // namespace nhlo
