// MaxPool2dCpu: 2-D max pooling on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// 2-D max pooling. Not thread-safe; see layers/Layer.hpp for the argument contract.
class MaxPool2dCpu final : public Layer {
 public:
  MaxPool2dCpu(const MaxPool2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  MaxPool2dSpec spec_;
};

}  // namespace vdnn::layers::cpu
