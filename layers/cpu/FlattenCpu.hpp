// FlattenCpu: Reshape to (N, features) on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Reshape to (N, features). Not thread-safe; see layers/Layer.hpp for the argument contract.
class FlattenCpu final : public Layer {
 public:
  FlattenCpu(const FlattenSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  FlattenSpec spec_;
};

}  // namespace vdnn::layers::cpu
