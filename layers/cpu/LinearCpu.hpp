// LinearCpu: Fully connected layer y = x W^T + b over the flattened sample on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Fully connected layer y = x W^T + b over the flattened sample. Not thread-safe; see layers/Layer.hpp for the argument contract.
class LinearCpu final : public Layer {
 public:
  LinearCpu(const LinearSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  LinearSpec spec_;
};

}  // namespace vdnn::layers::cpu
