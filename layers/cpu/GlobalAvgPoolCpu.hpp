// GlobalAvgPoolCpu: Mean over H and W per channel on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Mean over H and W per channel. Not thread-safe; see layers/Layer.hpp for the argument contract.
class GlobalAvgPoolCpu final : public Layer {
 public:
  GlobalAvgPoolCpu(const GlobalAvgPoolSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  GlobalAvgPoolSpec spec_;
};

}  // namespace vdnn::layers::cpu
