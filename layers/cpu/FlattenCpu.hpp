// FlattenCpu: reshape (N, ...) to (N, features) on the CPU backend, for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Copies the input into the (N, features) output; backward copies (or, with
/// GradTarget::accumulate, adds) grad_output into the input gradient and reads no activations.
/// Not thread-safe; see layers/Layer.hpp for the argument contract.
class FlattenCpu final : public Layer {
 public:
  FlattenCpu(const FlattenSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
};

}  // namespace vdnn::layers::cpu
