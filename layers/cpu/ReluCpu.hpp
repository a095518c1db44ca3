// ReluCpu: rectified linear unit on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// y = max(x, 0). Backward reads only the output (backward_needs: output) and honours
/// GradTarget::accumulate. Not thread-safe; see layers/Layer.hpp for the argument contract.
class ReluCpu final : public Layer {
 public:
  ReluCpu(const ReluSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
};

}  // namespace vdnn::layers::cpu
