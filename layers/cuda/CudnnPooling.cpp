// The cuDNN pooling forward pass shared by MaxPool2dCuda and AvgPool2dCuda.
#include "layers/cuda/CudnnPooling.hpp"

#include <string>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {

CudnnPooling::CudnnPooling(cudnnPoolingMode_t mode, const PoolWindow& window, const Shape& input,
                           const Shape& output, runtime::Layout layout)
    : pooling_(mode, Pair{window.kernel_h, window.kernel_w}, Pair{window.stride_h, window.stride_w},
               Pair{window.pad_h, window.pad_w}),
      x_(input, layout),
      y_(output, layout) {
  int n = 0, c = 0, h = 0, w = 0;
  VDNN_CHECK_CUDNN(cudnnGetPooling2dForwardOutputDim(pooling_.get(), x_.get(), &n, &c, &h, &w));
  if (Shape::nchw(n, c, h, w) != output) {
    throw runtime::ShapeError("CudnnPooling: cuDNN pools " + input.to_string() + " to [" +
                              std::to_string(n) + ", " + std::to_string(c) + ", " +
                              std::to_string(h) + ", " + std::to_string(w) + "], not " +
                              output.to_string());
  }
}

void CudnnPooling::forward(cudnnHandle_t handle, const void* x, void* y) const {
  const float one = 1.0f;
  const float zero = 0.0f;
  VDNN_CHECK_CUDNN(
      cudnnPoolingForward(handle, pooling_.get(), &one, x_.get(), x, &zero, y_.get(), y));
}

}  // namespace vdnn::layers::cuda
