// AvgPool2dCpu: 2-D average pooling on the CPU backend, for F32 and F64 tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/cpu/Window2d.hpp"

namespace vdnn::layers::cpu {

/// 2-D average pooling with PyTorch's count_include_pad semantics (true: divide by the kernel
/// area; false: by the number of input pixels under the window). Backward reads only the output
/// gradient and writes or accumulates the input gradient unless its view is empty. Not
/// thread-safe; see layers/Layer.hpp for the argument contract. Throws runtime::InvalidArgument on
/// views that do not match the layer.
class AvgPool2dCpu final : public Layer {
 public:
  AvgPool2dCpu(const AvgPool2dSpec& spec, std::vector<Shape> input_shapes,
               const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_as(const ForwardArgs& args) const;
  template <typename T>
  void backward_as(const BackwardArgs& args) const;
  double divisor(const WindowAt& at) const noexcept;

  AvgPool2dSpec spec_;
  Window2d window_;
  std::int64_t planes_;  // N * C
};

}  // namespace vdnn::layers::cpu
