// Conv2dCpu: 2-D convolution (im2col + GEMM) with stride, padding, dilation, groups and optional bias on the CPU backend (Eigen), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// 2-D convolution (im2col + GEMM) with stride, padding, dilation, groups and optional bias. Not thread-safe; see layers/Layer.hpp for the argument contract.
class Conv2dCpu final : public Layer {
 public:
  Conv2dCpu(const Conv2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  Conv2dSpec spec_;
};

}  // namespace vdnn::layers::cpu
