// DropoutCpu: Inverted dropout with a stateless mask from (seed, step, element) on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Inverted dropout with a stateless mask from (seed, step, element). Not thread-safe; see layers/Layer.hpp for the argument contract.
class DropoutCpu final : public Layer {
 public:
  DropoutCpu(const DropoutSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  DropoutSpec spec_;
};

}  // namespace vdnn::layers::cpu
