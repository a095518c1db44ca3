// LinearCuda: the fully connected layer y = x W^T + b over the flattened sample on the CUDA backend
// (cuBLAS GEMMs, cuDNN bias), F32 only.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Fully connected layer; x is read as [N, sample_numel], weight [out, in] and bias [out] as in
/// PyTorch, every view in device memory. x may be NHWC (options.input_layout) only where its bytes
/// are the NCHW ones (rank 2, or a rank-4 input of one channel or a 1 x 1 plane, as after global
/// pooling); otherwise the layer keeps an NCHW input layout, which make_layer refuses. The output
/// is rank 2, the same in either options.layout. All work is enqueued on
/// options.cuda->compute_stream() through the context's cuBLAS and cuDNN handles; no workspace,
/// nothing allocated after construction. The GEMMs always run in full FP32 (as PyTorch's default
/// for matmuls: TF32 is allowed in convolutions only); every call sets the shared cuBLAS handle's
/// math and pointer mode it relies on. Deterministic.
///
/// Backward reads the input, the output gradient and the weight; it overwrites grad_params
/// (weight, then bias) and writes or accumulates the input gradient unless its view is empty. Not
/// thread-safe. Throws runtime::InvalidArgument for dtypes other than F32, a missing context or
/// views that do not match the layer; runtime::CudaError when cuBLAS or cuDNN fails.
class LinearCuda final : public Layer {
 public:
  LinearCuda(const LinearSpec& spec, const std::vector<Shape>& input_shapes,
             const LayerOptions& options);
  ~LinearCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  struct Impl;

  LinearSpec spec_;
  std::vector<Shape> param_shapes_;  // weight, then bias when present
  int batch_;
  int in_features_;
  int out_features_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vdnn::layers::cuda
