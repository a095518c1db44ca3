// BatchNorm2dCpu: Batch normalization over N, H, W per channel (batch statistics in training, running statistics in inference) on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Batch normalization over N, H, W per channel (batch statistics in training, running statistics in inference). Not thread-safe; see layers/Layer.hpp for the argument contract.
class BatchNorm2dCpu final : public Layer {
 public:
  BatchNorm2dCpu(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  BatchNorm2dSpec spec_;
};

}  // namespace vdnn::layers::cpu
