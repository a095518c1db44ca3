// Device memory (cudaMalloc), pinned host memory (cudaHostAlloc) and managed memory
// (cudaMallocManaged) as MemoryResources: the upstreams of the CUDA backend's pools, each asked
// once per run.
#pragma once

#include <cuda_runtime_api.h>

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

/// cudaMalloc / cudaFree on GPU `peer`, made current around each call and `device` current again
/// after: the peer tier's memory (Note [Peer tier]), which `device` reaches once peer access is
/// enabled. Throws OutOfMemory when the peer refuses, CudaError. Thread-safe.
class PeerDeviceMemoryResource final : public MemoryResource {
 public:
  PeerDeviceMemoryResource(int device, int peer) : device_(device), peer_(peer) {}
  bool host_accessible() const noexcept override { return false; }
  std::string name() const override { return "cuda-peer"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;

  int device_;
  int peer_;
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

/// cudaMallocManaged (attached globally) / cudaFree: memory the driver migrates page by page
/// between the device and the host (Note [Managed memory]). Each allocation is placed on device
/// `ordinal` once, by a migration on `placement_stream` that allocate() waits for, so the driver
/// backs it with device pages from the start; no advice is given, and later moves are the
/// callers'. It asks the driver whatever it is asked: put an OversubscriptionGuard above it.
/// Throws OutOfMemory when the driver refuses, CudaError. Thread-safe.
class ManagedMemoryResource final : public MemoryResource {
 public:
  ManagedMemoryResource(int ordinal, cudaStream_t placement_stream)
      : ordinal_(ordinal), placement_stream_(placement_stream) {}
  bool host_accessible() const noexcept override { return true; }
  std::string name() const override { return "cuda-managed"; }

 private:
  void* do_allocate(std::size_t bytes) override;
  void do_deallocate(void* ptr, std::size_t bytes) noexcept override;

  int ordinal_;
  cudaStream_t placement_stream_;
};

}  // namespace vdnn::runtime::cuda
