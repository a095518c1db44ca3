// Creation, stream binding and destruction of cuBLAS handles.
#include "runtime/cuda/CublasHandle.hpp"

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {

void detail::CublasDeleter::destroy(cublasHandle_t handle) noexcept {
  VDNN_CHECK_CUBLAS_NOTHROW(cublasDestroy(handle));
}

CublasHandle::CublasHandle(cudaStream_t stream) {
  VDNN_EXPECTS(stream != nullptr, "vdnn never enqueues work on the NULL stream");
  cublasHandle_t handle = nullptr;
  VDNN_CHECK_CUBLAS(cublasCreate(&handle));
  handle_.reset(handle);
  VDNN_CHECK_CUBLAS(cublasSetStream(handle_.get(), stream));
}

}  // namespace vdnn::runtime::cuda
