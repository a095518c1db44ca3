// CpuContext: the CPU backend's execution context: three emulated streams (worker threads),
// ordinary host memory standing in for both device and pinned memory.
#pragma once

#include "runtime/ExecutionContext.hpp"
#include "runtime/cpu/CpuStream.hpp"
#include "runtime/memory/HostMemoryResource.hpp"

namespace vdnn::runtime::cpu {

/// See runtime/ExecutionContext.hpp. `stress` applies to all three streams (each draws its own
/// delays from the seed and its name).
class CpuContext final : public ExecutionContext {
 public:
  explicit CpuContext(StressOptions stress = {});

  Stream& compute() override { return compute_; }
  Stream& offload() override { return offload_; }
  Stream& prefetch() override { return prefetch_; }
  std::unique_ptr<Event> make_event(bool timing) override;
  MemoryResource& device_upstream() override { return host_; }
  MemoryResource& pinned_upstream() override { return host_; }
  void fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) override;

  /// Counters of the copy streams (bytes copied, busy time), for metrics.
  CpuStreamStats offload_stats() const { return offload_.stats(); }
  CpuStreamStats prefetch_stats() const { return prefetch_.stats(); }

 private:
  HostMemoryResource host_;  // first: the streams' queued work may still touch its memory
  CpuStream compute_;
  CpuStream offload_;
  CpuStream prefetch_;
};

}  // namespace vdnn::runtime::cpu
