// cudaMalloc, cudaHostAlloc and cudaMallocManaged behind MemoryResource, with out-of-memory as a
// typed error.
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

// The status of an allocation call: out of memory becomes OutOfMemory, other failures CudaError.
void check_allocation(cudaError_t status, const char* what, std::size_t bytes) {
  if (status == cudaErrorMemoryAllocation) {
    static_cast<void>(cudaGetLastError());
    out_of_memory(what, bytes);
  }
  if (status != cudaSuccess) detail::throw_error(status, what, __FILE__, __LINE__);
}

}  // namespace

void* DeviceMemoryResource::do_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  check_allocation(cudaMalloc(&ptr, bytes), "cudaMalloc", bytes);
  return ptr;
}

void DeviceMemoryResource::do_deallocate(void* ptr, std::size_t /*bytes*/) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr));
}

void* PeerDeviceMemoryResource::do_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaSetDevice(peer_));
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  VDNN_CHECK_CUDA(cudaSetDevice(device_));
  check_allocation(status, "cudaMalloc on the peer", bytes);
  return ptr;
}

void PeerDeviceMemoryResource::do_deallocate(void* ptr, std::size_t /*bytes*/) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaSetDevice(peer_));
  VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr));
  VDNN_CHECK_CUDA_NOTHROW(cudaSetDevice(device_));
}

void* PinnedMemoryResource::do_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  check_allocation(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable), "cudaHostAlloc", bytes);
  return ptr;
}

void PinnedMemoryResource::do_deallocate(void* ptr, std::size_t /*bytes*/) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFreeHost(ptr));
}

void* ManagedMemoryResource::do_allocate(std::size_t bytes) {
  void* ptr = nullptr;
  check_allocation(cudaMallocManaged(&ptr, bytes, cudaMemAttachGlobal), "cudaMallocManaged", bytes);
  // First touch by kernels would also land the pages on the device, fault by fault and in small
  // pieces; one migration of the whole block maps it like device memory.
  cudaMemLocation device{};
  device.type = cudaMemLocationTypeDevice;
  device.id = ordinal_;
  const cudaError_t placed = cudaMemPrefetchAsync(ptr, bytes, device, 0, placement_stream_);
  const cudaError_t synced =
      placed == cudaSuccess ? cudaStreamSynchronize(placement_stream_) : placed;
  if (synced != cudaSuccess) {
    VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr));
    detail::throw_error(synced, "placing managed memory on the device", __FILE__, __LINE__);
  }
  return ptr;
}

void ManagedMemoryResource::do_deallocate(void* ptr, std::size_t /*bytes*/) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr));
}

}  // namespace vdnn::runtime::cuda
