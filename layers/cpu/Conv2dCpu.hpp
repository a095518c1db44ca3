// Conv2dCpu: 2-D convolution with stride, padding, dilation, groups and optional bias on the CPU
// backend, as im2col + Eigen GEMM per image and group, for F32 and F64 tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/cpu/Window2d.hpp"

namespace vdnn::layers::cpu {

/// 2-D convolution; weight [Cout, Cin / groups, kh, kw] and bias [Cout] as in PyTorch. Backward
/// reads the input (for the weight gradient), the output gradient and the weight; it overwrites
/// grad_params (weight, then bias) and writes or accumulates the input gradient unless its view is
/// empty. Not thread-safe; see layers/Layer.hpp for the argument contract. Throws
/// runtime::InvalidArgument on views that do not match the layer (count, shape, dtype, workspace).
class Conv2dCpu final : public Layer {
 public:
  Conv2dCpu(const Conv2dSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options);

  /// Both passes: the im2col columns of one image and one group at the layer's dtype; 0 for 1x1
  /// convolutions with stride 1 and no padding, which multiply the input directly.
  WorkspaceBytes workspace() const override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_as(const ForwardArgs& args) const;
  template <typename T>
  void backward_as(const BackwardArgs& args) const;
  template <typename T>
  T* column_buffer(const TensorView& workspace) const;
  /// The column matrix of one image and group: the input itself when direct_, else its im2col
  /// unfolding written to `workspace`.
  template <typename T>
  const T* unfold(const T* x_g, T* workspace) const;

  Conv2dSpec spec_;
  std::vector<Shape> param_shapes_;  // weight, then bias when present
  Window2d window_;
  std::int64_t in_per_group_;
  std::int64_t out_per_group_;
  bool direct_;  // 1x1, stride 1, no padding: the input already is the column matrix
};

}  // namespace vdnn::layers::cpu
