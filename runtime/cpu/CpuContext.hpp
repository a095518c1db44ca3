// CpuContext: the CPU backend's execution context: three emulated streams (worker threads),
// ordinary host memory standing in for device, managed and pinned memory and an emulated peer
// GPU's memory.
#pragma once

#include <cstdint>
#include <limits>

#include "runtime/ExecutionContext.hpp"
#include "runtime/cpu/CpuStream.hpp"
#include "runtime/memory/HostMemoryResource.hpp"

namespace vdnn::runtime::cpu {

/// What the CPU backend reports as free device memory unless told otherwise: no limit.
inline constexpr std::uint64_t kUnlimitedDeviceBytes = std::numeric_limits<std::uint64_t>::max();

/// The CPU backend's emulated neighbour GPU of the peer tier (Note [Peer tier]); the emulated
/// device itself is GPU 0.
struct EmulatedPeer {
  int device = 1;
  std::uint64_t free_bytes = kUnlimitedDeviceBytes;  // what free_peer_bytes() reports
  bool access = true;  // false: peer_upstream() refuses it, as CUDA without peer access
};

/// See runtime/ExecutionContext.hpp. `stress` applies to all three streams (each draws its own
/// delays from the seed and its name). `free_device_bytes` is the figure free_device_bytes()
/// reports, so the managed-memory guard can be tested without a GPU. Managed memory is ordinary
/// host memory here and migrations move nothing.
class CpuContext final : public ExecutionContext {
 public:
  explicit CpuContext(StressOptions stress = {},
                      std::uint64_t free_device_bytes = kUnlimitedDeviceBytes,
                      EmulatedPeer peer = {});

  Stream& compute() override { return compute_; }
  Stream& offload() override { return offload_; }
  Stream& prefetch() override { return prefetch_; }
  /// A CpuStream with the context's stress options.
  std::unique_ptr<Stream> make_stream(const std::string& name) override;
  std::unique_ptr<Event> make_event(bool timing) override;
  MemoryResource& device_upstream() override { return host_; }
  MemoryResource& pinned_upstream() override { return host_; }
  MemoryResource& managed_upstream() override { return host_; }
  MemoryResource& peer_upstream(int peer) override;
  std::uint64_t free_peer_bytes(int peer) override;
  bool managed_memory_is_real() const noexcept override { return false; }
  std::uint64_t free_device_bytes() const override { return free_device_bytes_; }
  void migrate_async(Stream& stream, void* ptr, std::size_t bytes, MigrateTo to) override;
  std::unique_ptr<MigrationCounters> make_migration_counters(std::string& why_not) override;
  void range_begin(const char* /*name*/) noexcept override {}
  void range_end() noexcept override {}
  void fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) override;
  void wait_for_caller(Stream& stream, void* caller) override;

  /// Counters of the copy streams (bytes copied, busy time), for metrics.
  CpuStreamStats offload_stats() const { return offload_.stats(); }
  CpuStreamStats prefetch_stats() const { return prefetch_.stats(); }

 private:
  /// Throws InvalidArgument unless `peer` is the emulated peer and reachable.
  void check_peer(int peer) const;

  HostMemoryResource host_;         // first: the streams' queued work may still touch its memory
  HostMemoryResource peer_memory_;  // the emulated peer's
  StressOptions stress_;            // of every stream
  CpuStream compute_;
  CpuStream offload_;
  CpuStream prefetch_;
  std::uint64_t free_device_bytes_;
  EmulatedPeer peer_;
};

}  // namespace vdnn::runtime::cpu
