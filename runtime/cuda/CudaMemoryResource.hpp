// Device memory (cudaMalloc) and pinned host memory (cudaHostAlloc) as MemoryResources: the
// upstreams of the CUDA backend's pools, each asked once per run.
#pragma once

#include "runtime/MemoryResource.hpp"

namespace vdnn::runtime::cuda {

/// cudaMalloc / cudaFree on the current device. Throws OutOfMemory when the device refuses,
/// CudaError for other failures. Thread-safe.
class DeviceMemoryResource final : public MemoryResource {
 public:
  bool host_accessible() const noexcept override { return false; }
  std::string name() const override { return "cuda-device"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;
};

/// cudaHostAlloc (page-locked, portable) / cudaFreeHost: the memory copy engines read and write
/// at full speed. Throws OutOfMemory when the system refuses. Thread-safe.
class PinnedMemoryResource final : public MemoryResource {
 public:
  bool host_accessible() const noexcept override { return true; }
  std::string name() const override { return "cuda-pinned"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;
};

}  // namespace vdnn::runtime::cuda
