// AddCpu: element-wise sum of two or more inputs (residual joins) on the CPU backend, for F32 and
// F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// y = x_0 + x_1 + ... Backward passes grad_output to every non-empty input gradient, honouring
/// GradTarget::accumulate; it reads no activations. Not thread-safe; see layers/Layer.hpp.
class AddCpu final : public Layer {
 public:
  AddCpu(const AddSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
};

}  // namespace vdnn::layers::cpu
