// CudaContext: the CUDA backend's execution context: one device's compute, offload and prefetch
// streams (from its DeviceContext), CUDA events, cudaMalloc, cudaHostAlloc and cudaMallocManaged
// upstreams, a neighbour GPU's memory for the peer tier, managed-memory migrations
// (cudaMemPrefetchAsync) and their CUPTI counters.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "runtime/ExecutionContext.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/DeviceContext.hpp"
#include "runtime/cuda/StreamAdapter.hpp"

namespace vdnn::runtime::cuda {

/// See runtime/ExecutionContext.hpp. Owns the DeviceContext of `ordinal` (made current on the
/// constructing thread). The offload and prefetch streams post their calls to an issue thread of
/// this context (Note [Issue thread]); compute's are made on the caller's thread. Destruction
/// drains the issue thread and synchronizes the three streams first. Throws CudaError,
/// InvalidArgument (no such device).
class CudaContext final : public ExecutionContext {
 public:
  explicit CudaContext(int ordinal);
  ~CudaContext() override;

  Stream& compute() override { return compute_; }
  Stream& offload() override { return offload_; }
  Stream& prefetch() override { return prefetch_; }
  /// A StreamAdapter owning a new non-blocking stream of this device.
  std::unique_ptr<Stream> make_stream(const std::string& name) override;
  std::unique_ptr<Event> make_event(bool timing) override;
  MemoryResource& device_upstream() override { return device_memory_; }
  MemoryResource& pinned_upstream() override { return pinned_memory_; }
  MemoryResource& managed_upstream() override { return managed_memory_; }
  MemoryResource& peer_upstream(int peer) override;
  std::uint64_t free_peer_bytes(int peer) override;
  bool managed_memory_is_real() const noexcept override { return true; }
  std::uint64_t free_device_bytes() const override;
  void migrate_async(Stream& stream, void* ptr, std::size_t bytes, MigrateTo to) override;
  std::unique_ptr<MigrationCounters> make_migration_counters(std::string& why_not) override;
  void range_begin(const char* name) noexcept override;
  void range_end() noexcept override;
  void fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) override;
  void wait_for_caller(Stream& stream, void* caller) override;

  DeviceContext& device() noexcept { return device_; }

 private:
  DeviceContext device_;
  IssueThread copy_issuer_;  // makes the offload and prefetch streams' calls (Note [Issue thread])
  StreamAdapter compute_;
  StreamAdapter offload_;
  StreamAdapter prefetch_;
  DeviceMemoryResource device_memory_;
  PinnedMemoryResource pinned_memory_;
  ManagedMemoryResource managed_memory_;
  CudaEvent caller_ready_;  // recorded on a caller's stream (wait_for_caller)
  // Per peer GPU, its memory, made when first asked (peer access enabled then).
  std::map<int, std::unique_ptr<PeerDeviceMemoryResource>> peer_memory_;
};

}  // namespace vdnn::runtime::cuda
