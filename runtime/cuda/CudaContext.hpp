// CudaContext: the CUDA backend's execution context: one device's compute, offload and prefetch
// streams (from its DeviceContext), CUDA events, cudaMalloc and cudaHostAlloc upstreams.
#pragma once

#include <cstdint>

#include "runtime/ExecutionContext.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/DeviceContext.hpp"
#include "runtime/cuda/StreamAdapter.hpp"

namespace vdnn::runtime::cuda {

/// See runtime/ExecutionContext.hpp. Owns the DeviceContext of `ordinal` (made current on the
/// constructing thread). Destruction synchronizes the three streams first. Throws CudaError,
/// InvalidArgument (no such device).
class CudaContext final : public ExecutionContext {
 public:
  explicit CudaContext(int ordinal);
  ~CudaContext() override;

  Stream& compute() override { return compute_; }
  Stream& offload() override { return offload_; }
  Stream& prefetch() override { return prefetch_; }
  std::unique_ptr<Event> make_event(bool timing) override;
  MemoryResource& device_upstream() override { return device_memory_; }
  MemoryResource& pinned_upstream() override { return pinned_memory_; }
  void fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) override;

  DeviceContext& device() noexcept { return device_; }
  /// Device memory free now (cudaMemGetInfo), less `reserve` for the CUDA context, cuDNN and
  /// cuBLAS: the default budget, "all the device can give".
  std::uint64_t free_device_bytes(std::uint64_t reserve) const;

 private:
  DeviceContext device_;
  StreamAdapter compute_;
  StreamAdapter offload_;
  StreamAdapter prefetch_;
  DeviceMemoryResource device_memory_;
  PinnedMemoryResource pinned_memory_;
};

}  // namespace vdnn::runtime::cuda
