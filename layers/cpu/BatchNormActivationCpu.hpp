// BatchNormActivationCpu: the fused batchnorm2d -> silu / relu6 / hardswish (any of the smooth
// activations) on the CPU backend, the reference the CUDA kernels are checked against (Note
// [Fusion]).
#pragma once

#include <vector>

#include "layers/Layer.hpp"
#include "layers/cpu/BatchNorm2dCpu.hpp"

namespace vdnn::layers::cpu {

/// y = act(bn(x)): the batch norm of BatchNorm2dCpu (same params, statistics, running updates and
/// recompute rule), then spec.activation's formula (layers/ActivationMath.hpp) on each value, so
/// the forward is bitwise the unfused chain's. Backward reads x only (backward_needs; no
/// pre-activation tensor is kept): z = bn(x) renormalized into the backward workspace as the last
/// forward normalized (BatchNorm2dCpu::normalize_again), g = act'(z) * dy there, then the batch
/// norm's backward from g: bitwise the unfused chain's too (relu6's derivative, which the unfused
/// layer takes from its output, is the same from z: 0 < y < 6 exactly where 0 < z < 6). F32 and
/// F64; BF16 through Bf16EmulationCpu, which rounds y once where the unfused chain rounds bn(x)
/// and y. Not thread-safe; see layers/Layer.hpp for the argument contract.
class BatchNormActivationCpu final : public Layer {
 public:
  BatchNormActivationCpu(const BatchNormActivationSpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options);
  WorkspaceBytes workspace() const override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_typed(const ForwardArgs& args);
  template <typename T>
  void backward_typed(const BackwardArgs& args);

  Activation activation_;
  BatchNorm2dCpu bn_;
};

}  // namespace vdnn::layers::cpu
