// Creation and destruction of CUDA streams.
#include "runtime/cuda/CudaStream.hpp"

#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {

void detail::StreamDeleter::destroy(cudaStream_t stream) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaStreamDestroy(stream));
}

CudaStream::CudaStream() {
  cudaStream_t stream = nullptr;
  VDNN_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stream_.reset(stream);
}

}  // namespace vdnn::runtime::cuda
