// cudaMalloc and cudaHostAlloc behind MemoryResource, with out-of-memory as a typed error.
#include "runtime/cuda/CudaMemoryResource.hpp"

#include <cuda_runtime_api.h>

#include "runtime/ByteSize.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

[[noreturn]] void out_of_memory(const char* what, std::size_t bytes) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess)
    static_cast<void>(cudaGetLastError());
  throw OutOfMemory(std::string(what) + " of " + format_bytes(bytes) + " failed (" +
                        format_bytes(free_bytes) + " of " + format_bytes(total_bytes) +
                        " free on the device)",
                    bytes, total_bytes - free_bytes, total_bytes);
}

}  // namespace

void* DeviceMemoryResource::do_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    static_cast<void>(cudaGetLastError());
    out_of_memory("cudaMalloc", bytes);
  }
  VDNN_CHECK_CUDA(status);
  return ptr;
}

void DeviceMemoryResource::do_deallocate(void* ptr, std::size_t /*bytes*/) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr));
}

void* PinnedMemoryResource::do_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t status = cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable);
  if (status == cudaErrorMemoryAllocation) {
    static_cast<void>(cudaGetLastError());
    out_of_memory("cudaHostAlloc", bytes);
  }
  VDNN_CHECK_CUDA(status);
  return ptr;
}

void PinnedMemoryResource::do_deallocate(void* ptr, std::size_t /*bytes*/) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFreeHost(ptr));
}

}  // namespace vdnn::runtime::cuda
