// AddCpu: Element-wise sum of two or more inputs (residual joins) on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Element-wise sum of two or more inputs (residual joins). Not thread-safe; see layers/Layer.hpp for the argument contract.
class AddCpu final : public Layer {
 public:
  AddCpu(const AddSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  AddSpec spec_;
};

}  // namespace vdnn::layers::cpu
