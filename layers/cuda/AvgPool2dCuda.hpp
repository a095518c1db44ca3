// AvgPool2dCuda: 2-D average pooling on the CUDA backend in NCHW or NHWC (cuDNN forward in F32, an
// own forward kernel summing in float in BF16; own backward kernel), F32 or BF16.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/cuda/PoolWindow.hpp"

namespace vdnn::layers::cuda {

class CudnnPooling;

/// 2-D average pooling; the divisor is the kernel area with count_include_pad, else the number of
/// input elements under the window. Input and output are in options.layout, NCHW or NHWC, when
/// options.input_layout is the same (else NCHW, which make_layer refuses). Every view is in device
/// memory and all work is enqueued on options.cuda->compute_stream(); no workspace. Backward reads
/// only the output gradient (as backward_needs() declares): each input element gathers its shares
/// in a fixed order, so results are deterministic; it writes or accumulates the input gradient
/// unless its view is empty. Not thread-safe. Throws runtime::InvalidArgument for dtypes other than
/// F32 and BF16 (options.dtype, of every view), a missing context or views that do not match the
/// layer; runtime::CudaError when cuDNN or a launch fails.
class AvgPool2dCuda final : public Layer {
 public:
  AvgPool2dCuda(const AvgPool2dSpec& spec, std::vector<Shape> input_shapes,
                const LayerOptions& options);
  ~AvgPool2dCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
  PoolWindow window_;
  bool count_include_pad_;
  std::unique_ptr<CudnnPooling> pooling_;  // F32 only
};

}  // namespace vdnn::layers::cuda
