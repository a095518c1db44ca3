// LinearCuda: the fully connected layer y = x W^T + b over the flattened sample on the CUDA backend
// (cuBLAS GEMMs, cuDNN bias), F32 or BF16 (Note [Precision]).
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
/// options.cuda->compute_stream() through the context's cuBLAS and cuDNN handles; in F32 no
/// workspace, nothing allocated after construction. The F32 GEMMs run in full FP32 (as PyTorch's
/// default for matmuls: TF32 is allowed in convolutions only); every call sets the shared cuBLAS
/// handle's math and pointer mode it relies on. Deterministic.
///
/// BF16 (options.dtype): x, y, dy and dx are bf16, the parameters and their gradients F32. The
/// GEMMs are cublasGemmEx on bf16 operands with FP32 accumulation (CUBLAS_COMPUTE_32F): y and dx
/// rounded once to bf16 (an accumulated dx adds its old value in float first), dW written in F32
/// directly. Each pass that needs the weight converts it to a bf16 copy at the front of its
/// workspace; the bias is added in FP32 and rounded once, its gradient summed in FP32 from the
/// bf16 dy (ChannelSums, its scratch after the weight copy). workspace() counts both.
///
/// Backward reads the input, the output gradient and the weight; it overwrites grad_params
/// (weight, then bias) and writes or accumulates the input gradient unless its view is empty. Not
/// thread-safe. Throws runtime::InvalidArgument for dtypes other than F32 and BF16, a missing
/// context or views that do not match the layer (x, y and their gradients of the layer's dtype,
/// parameters F32); runtime::CudaError when cuBLAS or cuDNN fails.
class LinearCuda final : public Layer {
 public:
  LinearCuda(const LinearSpec& spec, const std::vector<Shape>& input_shapes,
             const LayerOptions& options);
  ~LinearCuda() override;
  /// F32: none. BF16: the bf16 weight copy (forward), and also the bias sums' scratch (backward).
  WorkspaceBytes workspace() const override;
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
