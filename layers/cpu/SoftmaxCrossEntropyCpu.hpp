// SoftmaxCrossEntropyCpu: Mean softmax cross-entropy over the batch, with accuracy on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Mean softmax cross-entropy over the batch, with accuracy. Not thread-safe; see layers/Layer.hpp for the argument contract.
class SoftmaxCrossEntropyCpu final : public Layer {
 public:
  SoftmaxCrossEntropyCpu(const SoftmaxCrossEntropySpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  SoftmaxCrossEntropySpec spec_;
};

}  // namespace vdnn::layers::cpu
