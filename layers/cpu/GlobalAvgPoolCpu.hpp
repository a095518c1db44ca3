// GlobalAvgPoolCpu: the mean over H and W of every channel on the CPU backend, for F32 and F64
// tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Mean over H and W per channel: [N, C, H, W] -> [N, C, 1, 1]. Backward reads only the output
/// gradient and writes or accumulates the input gradient unless its view is empty. Not
/// thread-safe; see layers/Layer.hpp for the argument contract. Throws runtime::InvalidArgument on
/// views that do not match the layer.
class GlobalAvgPoolCpu final : public Layer {
 public:
  GlobalAvgPoolCpu(const GlobalAvgPoolSpec& spec, std::vector<Shape> input_shapes,
                   const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_as(const ForwardArgs& args) const;
  template <typename T>
  void backward_as(const BackwardArgs& args) const;
};

}  // namespace vdnn::layers::cpu
