// LinearCpu: the fully connected layer y = x W^T + b over the flattened sample on the CPU backend
// (Eigen GEMM), for F32 and F64 tensors.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Fully connected layer; x is read as [N, sample_numel], weight [out, in] and bias [out] as in
/// PyTorch. Backward reads the input, the output gradient and the weight; it overwrites
/// grad_params (weight, then bias) and writes or accumulates the input gradient unless its view is
/// empty. Not thread-safe; see layers/Layer.hpp for the argument contract. Throws
/// runtime::InvalidArgument on views that do not match the layer.
class LinearCpu final : public Layer {
 public:
  LinearCpu(const LinearSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_as(const ForwardArgs& args) const;
  template <typename T>
  void backward_as(const BackwardArgs& args) const;

  LinearSpec spec_;
  std::vector<Shape> param_shapes_;  // weight, then bias when present
};

}  // namespace vdnn::layers::cpu
