// AvgPool2dCpu: 2-D average pooling on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// 2-D average pooling. Not thread-safe; see layers/Layer.hpp for the argument contract.
class AvgPool2dCpu final : public Layer {
 public:
  AvgPool2dCpu(const AvgPool2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  AvgPool2dSpec spec_;
};

}  // namespace vdnn::layers::cpu
