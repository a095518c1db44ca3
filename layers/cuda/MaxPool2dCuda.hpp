// MaxPool2dCuda: 2-D max pooling on the CUDA backend in NCHW or NHWC (F32: cuDNN forward in NCHW,
// own kernels in NHWC with C % 4 == 0 and in ceil mode, which cuDNN lacks; BF16: own kernels only;
// own backward kernels), F32 or BF16.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"
#include "layers/cuda/PoolWindow.hpp"

namespace vdnn::layers::cuda {

class CudnnPooling;

/// 2-D max pooling; padding never wins and NaN propagates. Input and output are in options.layout,
/// NCHW or NHWC, when options.input_layout is the same (else NCHW, which make_layer refuses). Every
/// view is in device memory and all work is enqueued on options.cuda->compute_stream(); no
/// workspace. Backward reads the input only (as backward_needs() declares): each output gradient
/// goes to the first maximum of its window in row-major order, found again from the input, as
/// MaxPool2dCpu does; each input element gathers its shares in a fixed order (no atomics), so
/// results are deterministic and bitwise the CPU's. It writes or accumulates the input gradient
/// unless its view is empty. Not thread-safe. Throws runtime::InvalidArgument for dtypes other than
/// F32 and BF16 (options.dtype, of every view), a missing context or views that do not match the
/// layer; runtime::CudaError when cuDNN or a launch fails.
class MaxPool2dCuda final : public Layer {
 public:
  MaxPool2dCuda(const MaxPool2dSpec& spec, std::vector<Shape> input_shapes,
                const LayerOptions& options);
  ~MaxPool2dCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
  PoolWindow window_;
  std::unique_ptr<CudnnPooling> pooling_;  // null in BF16 or when ceil mode adds a window
};

}  // namespace vdnn::layers::cuda
