// MaxPool2dCpu: 2-D max pooling on the CPU backend, for F32 and F64 tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/cpu/Window2d.hpp"

namespace vdnn::layers::cpu {

/// 2-D max pooling; padding counts as -inf and NaN propagates. Backward routes each output
/// gradient to the first maximum of its window in row-major scan order (deterministic), found
/// again from the input, and writes or accumulates the input gradient unless its view is empty.
/// Not thread-safe; see layers/Layer.hpp for the argument contract. Throws
/// runtime::InvalidArgument on views that do not match the layer.
class MaxPool2dCpu final : public Layer {
 public:
  MaxPool2dCpu(const MaxPool2dSpec& spec, std::vector<Shape> input_shapes,
               const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_as(const ForwardArgs& args) const;
  template <typename T>
  void backward_as(const BackwardArgs& args) const;

  MaxPool2dSpec spec_;
  Window2d window_;
  std::int64_t planes_;  // N * C
};

}  // namespace vdnn::layers::cpu
