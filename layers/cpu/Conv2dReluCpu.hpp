// Conv2dReluCpu: the fused conv2d -> relu chain on the CPU backend, the reference the CUDA layer is
// checked against (Note [Fusion]).
#pragma once

#include <vector>

#include "layers/Layer.hpp"
#include "layers/cpu/Conv2dCpu.hpp"

namespace vdnn::layers::cpu {

/// y = relu(conv(x) [+ bias]): the convolution of Conv2dCpu (same parameters, workspace and
/// argument checks), then the ReLU of ReluCpu in place on the output (a NaN stays NaN), so results
/// are bitwise the unfused chain's. Backward reads x and y (backward_needs: inputs and output):
/// dz = y > 0 ? dy : 0 in place of dy (BackwardArgs::grad_output), then the convolution's backward
/// from dz (bias, weight and input gradients). F32 and F64. Not thread-safe; see layers/Layer.hpp
/// for the argument contract. Throws runtime::InvalidArgument on views that do not match the layer.
class Conv2dReluCpu final : public Layer {
 public:
  Conv2dReluCpu(const Conv2dReluSpec& spec, std::vector<Shape> input_shapes,
                const LayerOptions& options);
  /// The convolution's.
  WorkspaceBytes workspace() const override { return conv_.workspace(); }
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_typed(const ForwardArgs& args);
  template <typename T>
  void backward_typed(const BackwardArgs& args);

  Conv2dCpu conv_;
};

}  // namespace vdnn::layers::cpu
