// ExecutionContext: what the executor drives on one backend: the compute, offload and prefetch
// streams, events, the upstream memory of the device and pinned-host pools, and a NaN fill for
// poisoning freed memory. See Note [Stream choreography] in docs/ARCHITECTURE.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/MemoryResource.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::runtime {

/// One per device and executor run; owns its streams. No global state: several contexts may
/// coexist in a process. Used from one host thread. Destruction waits for queued work.
class ExecutionContext {
 public:
  ExecutionContext() = default;
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;
  ExecutionContext(ExecutionContext&&) = delete;
  ExecutionContext& operator=(ExecutionContext&&) = delete;
  virtual ~ExecutionContext() = default;

  virtual Stream& compute() = 0;
  virtual Stream& offload() = 0;   // device -> pinned host copies
  virtual Stream& prefetch() = 0;  // pinned host -> device copies
  /// A new event for this backend's streams (made at setup, never inside a step). `timing`:
  /// usable with Event::seconds_since (CUDA events without it synchronize faster).
  virtual std::unique_ptr<Event> make_event(bool timing = false) = 0;
  /// Where the device pool takes its one block (the budget).
  virtual MemoryResource& device_upstream() = 0;
  /// Where the pinned-host pool takes its one block (sized by the plan).
  virtual MemoryResource& pinned_upstream() = 0;
  /// Enqueues, on `stream`, filling `bytes` of device memory at `ptr` with quiet NaNs (float).
  virtual void fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) = 0;
};

}  // namespace vdnn::runtime
