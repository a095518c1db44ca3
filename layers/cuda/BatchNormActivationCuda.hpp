// BatchNormActivationCuda: the fused batchnorm2d -> silu / relu6 / hardswish on the CUDA backend
// (own kernels, F32 or BF16 feature maps, NCHW or NHWC), see Note [Fusion].
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// y = act(bn(x)) with BatchNorm2dCuda's statistics, running updates, recompute rule and
/// reductions, in one pass over x after the statistics; act is spec.activation, silu, relu6 or
/// hardswish (layers/ActivationMath.hpp's formulas). Backward reads x only (backward_needs; no
/// pre-activation tensor is kept): the reductions over g = act'(z) * dy, z = bn(x) renormalized
/// with the forward's statistics in registers, then one pass writing dx, honouring
/// GradTarget::accumulate (BatchNormCore::backward). F32: y and every gradient are the unfused
/// CUDA chain's operations on the same values, in float, and match the CPU reference
/// (cpu::BatchNormActivationCpu) within float rounding (the device's expf against the host's).
/// BF16 as BatchNorm2dCuda (x, y and their gradients BF16, the rest F32): bn(x) stays float, y is
/// rounded once after the activation and act' is taken at the float z, where the unfused BF16
/// chain rounds bn(x) and y and the activation's gradient; so the fused BF16 layer is not bitwise
/// that chain, but it is the F32 layer's results rounded once (statistics, running buffers and
/// parameter gradients bit for bit), as the CPU's BF16 emulation of this layer is. Results are
/// bitwise reproducible. Throws runtime::InvalidArgument for another activation, a dtype other
/// than F32 or BF16 or a missing options.cuda. Runs in options.layout (input_layout must be the
/// same). Enqueues on options.cuda's compute stream and never waits. Not thread-safe; see
/// layers/Layer.hpp for the argument contract.
class BatchNormActivationCuda final : public Layer {
 public:
  BatchNormActivationCuda(const BatchNormActivationSpec& spec, std::vector<Shape> input_shapes,
                          const LayerOptions& options);
  BatchNormActivationCuda(const BatchNormActivationCuda&) = delete;
  BatchNormActivationCuda& operator=(const BatchNormActivationCuda&) = delete;
  BatchNormActivationCuda(BatchNormActivationCuda&&) = delete;
  BatchNormActivationCuda& operator=(BatchNormActivationCuda&&) = delete;
  ~BatchNormActivationCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  struct State;  // the batch-norm core and its epilogue (BatchNormCore.hpp)

  runtime::cuda::DeviceContext* context_;
  std::unique_ptr<State> state_;
};

}  // namespace vdnn::layers::cuda
