// ExecutionContext: what the executor drives on one backend: the compute, offload and prefetch
// streams, events, the upstream memory of the device, managed and pinned-host pools, migrations of
// managed memory and their counters, and a NaN fill for poisoning freed memory. See Note [Stream
// choreography] and Note [Managed memory] in docs/ARCHITECTURE.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/MemoryResource.hpp"
#include "runtime/MigrationCounters.hpp"
#include "runtime/Stream.hpp"

namespace vdnn::runtime {

/// Where a migration of managed memory sends the pages.
enum class MigrateTo : std::uint8_t { Device, Host };

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
  /// A further stream of this backend, owned by the caller, who destroys it before the context
  /// (made at setup: the collectives of data parallelism, Note [Data parallelism]).
  virtual std::unique_ptr<Stream> make_stream(const std::string& name) = 0;
  /// A new event for this backend's streams (made at setup, never inside a step). `timing`:
  /// usable with Event::seconds_since (CUDA events without it synchronize faster).
  virtual std::unique_ptr<Event> make_event(bool timing = false) = 0;
  /// Where the device pool takes its one block (the budget).
  virtual MemoryResource& device_upstream() = 0;
  /// Where the pinned-host pool takes its one block (sized by the plan).
  virtual MemoryResource& pinned_upstream() = 0;
  /// Where the device pool takes its one block when the plan keeps it in managed memory (the UVM
  /// policies): cudaMallocManaged on CUDA; ordinary host memory standing in on the CPU.
  virtual MemoryResource& managed_upstream() = 0;
  /// Where the peer tier's pool takes its one block (Note [Peer tier]): memory on GPU `peer` that
  /// this device's offload and prefetch streams copy to and from directly. CUDA: peer access
  /// enabled once, then cudaMalloc with `peer` current (this device current again after); CPU: the
  /// emulated peer's memory (ordinary host memory). Throws InvalidArgument naming both GPUs when
  /// `peer` is this device, does not exist or cannot be reached directly; CudaError.
  virtual MemoryResource& peer_upstream(int peer) = 0;
  /// Free memory on GPU `peer` (CUDA: cudaMemGetInfo there; CPU: the emulated peer's figure).
  /// Throws as peer_upstream().
  virtual std::uint64_t free_peer_bytes(int peer) = 0;
  /// True when managed memory is real (pages the driver migrates); false when ordinary memory
  /// stands in for it and migrations move nothing (the CPU backend).
  virtual bool managed_memory_is_real() const noexcept = 0;
  /// Device memory free now, as the managed-memory guard sees it (CUDA: cudaMemGetInfo; CPU: the
  /// figure the context was given). Throws CudaError.
  virtual std::uint64_t free_device_bytes() const = 0;
  /// Enqueues on `stream` a migration of the managed range [ptr, ptr + bytes) to `to` (CUDA:
  /// cudaMemPrefetchAsync). The range stays valid and readable wherever its pages are.
  virtual void migrate_async(Stream& stream, void* ptr, std::size_t bytes, MigrateTo to) = 0;
  /// Counters of managed-memory migrations on this device, or nullptr when this backend or driver
  /// cannot count them, with the reason in `why_not`. Made at setup, never inside a step.
  virtual std::unique_ptr<MigrationCounters> make_migration_counters(std::string& why_not) = 0;
  /// Opens a named range on the calling host thread for profilers (NVTX on CUDA, which Nsight
  /// shows over the work enqueued inside it; nothing on the CPU). Ranges nest; close each with
  /// range_end(). Never throws.
  virtual void range_begin(const char* name) noexcept = 0;
  virtual void range_end() noexcept = 0;
  /// Makes `stream` wait, without blocking the host, for the work enqueued so far on `caller`, a
  /// stream of the caller's rather than the context's (CUDA: a cudaStream_t of this device, not
  /// null), through an event the context owns. Throws InvalidArgument for a null `caller` or on a
  /// backend without such streams (the CPU); CudaError.
  virtual void wait_for_caller(Stream& stream, void* caller) = 0;
  /// Enqueues, on `stream`, filling `bytes` of device memory at `ptr` with quiet NaNs (float).
  virtual void fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) = 0;
};

}  // namespace vdnn::runtime
