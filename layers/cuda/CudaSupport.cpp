// The options check and the buffer allocators shared by the CUDA layers.
#include "layers/cuda/CudaSupport.hpp"

#include <string>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

runtime::cuda::DeviceContext& checked_context(std::string_view layer, const LayerOptions& options) {
  const std::string name(layer);
  VDNN_EXPECTS(options.dtype == DType::F32, name + ": the CUDA backend supports F32 only");
  VDNN_EXPECTS(options.cuda != nullptr, name + ": the CUDA backend needs LayerOptions::cuda");
  // Constructors allocate: the memory must land on the context's device.
  options.cuda->make_current();
  return *options.cuda;
}

void* detail::DeviceAllocator::allocate(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaMalloc(&ptr, bytes));
  return ptr;
}

void detail::DeviceAllocator::destroy(void* ptr) noexcept { VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr)); }

void* detail::PinnedAllocator::allocate(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault));
  return ptr;
}

void detail::PinnedAllocator::destroy(void* ptr) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFreeHost(ptr));
}

}  // namespace vdnn::layers::cuda
