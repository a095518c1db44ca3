// The allocators behind DeviceBuffer and PinnedBuffer.
#include "layers/cuda/RawBuffer.hpp"

#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {

void* detail::DeviceAllocator::allocate(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaMalloc(&ptr, bytes));
  return ptr;
}

void detail::DeviceAllocator::destroy(void* ptr) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr));
}

void* detail::PinnedAllocator::allocate(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault));
  return ptr;
}

void detail::PinnedAllocator::destroy(void* ptr) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFreeHost(ptr));
}

}  // namespace vdnn::layers::cuda
