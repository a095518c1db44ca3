// Creation, stream binding and destruction of cuDNN handles.
#include "runtime/cuda/CudnnHandle.hpp"

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {

void detail::CudnnDeleter::destroy(cudnnHandle_t handle) noexcept {
  VDNN_CHECK_CUDNN_NOTHROW(cudnnDestroy(handle));
}

CudnnHandle::CudnnHandle(cudaStream_t stream) {
  VDNN_EXPECTS(stream != nullptr, "vdnn never enqueues work on the NULL stream");
  cudnnHandle_t handle = nullptr;
  VDNN_CHECK_CUDNN(cudnnCreate(&handle));
  handle_.reset(handle);
  VDNN_CHECK_CUDNN(cudnnSetStream(handle_.get(), stream));
}

}  // namespace vdnn::runtime::cuda
