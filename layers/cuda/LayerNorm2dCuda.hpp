// LayerNorm2dCuda: ConvNeXt's layer normalization over the channels of each pixel on the CUDA
// backend (own kernels), F32 or BF16 feature maps, NCHW or NHWC.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Params: weight and bias, both [C] F32 device memory. Same semantics as cpu::LayerNorm2dCpu:
/// each pixel's C values normalized with their mean and biased variance (FP32 statistics, two
/// passes), then weight and bias per channel; forward changes no state, so a recompute gives
/// bitwise the first output. Backward reads the input (backward_needs: inputs), takes the
/// statistics from it again, writes the input gradient honouring GradTarget::accumulate (skipping
/// an empty target) and the weight and bias gradients (per-channel sums in double, fixed order, no
/// atomics) where their views are non-empty. With BF16, x, y, grad_output and the input gradient
/// are BF16, read into float and rounded once on store; params and their gradients stay F32 (Note
/// [Precision]). Runs in options.layout when options.input_layout is the same (else NCHW, which
/// make_layer refuses). Backward needs workspace().backward bytes (the pixels' statistics and the
/// reduction's partial sums). All work is enqueued on options.cuda's compute stream and nothing
/// waits for it. The constructor throws runtime::InvalidArgument for a dtype other than F32 or
/// BF16 or a missing options.cuda; forward and backward throw it for views that do not match the
/// layer. Not thread-safe; see layers/Layer.hpp for the argument contract.
class LayerNorm2dCuda final : public Layer {
 public:
  LayerNorm2dCuda(const LayerNorm2dSpec& spec, std::vector<Shape> input_shapes,
                  const LayerOptions& options);
  WorkspaceBytes workspace() const override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  float eps_;
  runtime::cuda::DeviceContext* context_;
};

}  // namespace vdnn::layers::cuda
