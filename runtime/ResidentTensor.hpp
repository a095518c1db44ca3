// ResidentTensor: a feature map's device and pinned-host copies and the residency state machine
// between them (Absent, Device, Offloading, Host, Prefetching, and Evicted for managed memory).
// Every transition is enqueued on a named stream and gated by events; see Note [Offload lifetime]
// and Note [Managed memory] in docs/ARCHITECTURE.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/ExecutionContext.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/TensorView.hpp"

namespace vdnn::runtime {

enum class Residency : std::uint8_t {
  Absent,       // no device memory
  Device,       // on the device only
  Offloading,   // on the device; a copy to pinned host memory is queued on the offload stream
  Host,         // in pinned host memory only
  Prefetching,  // device memory holds a queued copy (or migration) from the host; not readable
                // until awaited
  Evicted,      // managed memory whose pages are migrated (or migrating) to the host; the range
                // stays allocated
};
const char* residency_name(Residency residency) noexcept;

/// Owns the device and pinned buffers of one tensor and the events of its transitions (made at
/// construction, so no step creates any). Methods are called from the executor's host thread in
/// plan order; each throws InvalidArgument when called from the wrong state, and OutOfMemory
/// (naming the tensor) when a pool cannot give memory. The memory resources must outlive it.
class ResidentTensor {
 public:
  /// `layout`: how the feature map lies in memory (Note [Layout]); `dtype`: its elements (Note
  /// [Precision]); copies move its bytes as they are.
  ResidentTensor(std::string name, Shape shape, ExecutionContext& context,
                 Layout layout = Layout::Nchw, DType dtype = DType::F32);
  ResidentTensor(const ResidentTensor&) = delete;
  ResidentTensor& operator=(const ResidentTensor&) = delete;
  ResidentTensor(ResidentTensor&&) = delete;
  ResidentTensor& operator=(ResidentTensor&&) = delete;
  ~ResidentTensor() = default;

  /// Absent -> Device.
  void allocate(MemoryResource& device);
  /// Device -> Device: until the tensor is freed or released, its data is `data` (memory the
  /// caller owns, bytes() of it, valid and unchanged until then; read only) instead of its own
  /// device memory, which stays allocated and unread, so that the pool sees every allocation
  /// as before. No copy. Throws InvalidArgument unless Device or for null `data`; evict() refuses
  /// an aliased tensor (the caller's memory does not migrate).
  void alias(const void* data);
  /// Device -> Offloading: the offload stream waits for the compute work enqueued so far (which
  /// produced the tensor), then copies it into a new pinned buffer.
  void offload(MemoryResource& pinned);
  /// Offloading -> Host: the device memory goes back behind the copy's event (deallocate_after);
  /// whatever takes it next is ordered after the compute work enqueued so far (the last forward
  /// reader). With `poison`, NaN-filled first on the offload stream after that work.
  void release(bool poison);
  /// Host -> Prefetching: new device memory, filled from the pinned buffer on the prefetch stream
  /// once the compute work enqueued so far (which freed what the memory held) is done.
  void prefetch(MemoryResource& device);
  /// Absent -> Prefetching: new device memory, filled from `host` (pinned memory the caller
  /// leaves unchanged until the copy is done) on `stream` once the compute work enqueued so far
  /// (which freed what the memory held) is done. await_prefetch() completes it.
  void upload(MemoryResource& device, const void* host, Stream& stream);
  /// Prefetching -> Device: compute work enqueued from now on waits for the copy; the pinned
  /// buffer, if any, goes back once the copy is done.
  void await_prefetch();
  /// Device -> Absent, after the compute work enqueued so far (NaN-filled first when `poison`).
  void free(bool poison);

  // Managed memory (the device memory came from a managed pool): the range stays allocated from
  // allocate() to free(); only its pages move.
  /// Device -> Evicted: once the compute work enqueued so far (the last forward reader) is done,
  /// the offload stream migrates the pages to the host.
  void evict();
  /// Evicted -> Prefetching: once the compute work enqueued so far and the eviction are done, the
  /// prefetch stream migrates the pages back to the device. await_prefetch() completes it.
  void migrate_back();
  /// Evicted -> Device: compute work enqueued from now on waits for the eviction and then reads
  /// the pages where they are, so the driver faults them back on demand.
  void fault_in();
  /// Work enqueued on `stream` from now on waits for the latest eviction to complete.
  void wait_for_eviction(Stream& stream) const { stream.wait(*offloaded_); }

  /// Any state -> Absent, dropping both copies at once. Only once no queued work uses them (after
  /// the streams were synchronized), e.g. to abandon a step that failed.
  void drop() noexcept;

  /// The device data, for work enqueued on the compute stream. Throws InvalidArgument unless the
  /// tensor is Device or Offloading: reading never moves data.
  TensorView view() const;
  /// Whether the copies and migrations enqueued from now on are timed (the default): timing events
  /// around each cost the copy engine a few microseconds (see TimedCopy), so an executor times the
  /// copies of some steps only.
  void time_copies(bool on) noexcept { time_copies_ = on; }
  /// The timing events around the latest timed offload copy or eviction, and prefetch copy or
  /// migration back (completed once the streams synchronized).
  const Event& offload_started() const noexcept { return *offload_started_; }
  const Event& offload_ended() const noexcept { return *offload_ended_; }
  const Event& prefetch_started() const noexcept { return *prefetch_started_; }
  const Event& prefetch_ended() const noexcept { return *prefetch_ended_; }
  /// Device seconds of the latest timed offload and prefetch copies or migrations (after the
  /// streams synchronized).
  double offload_seconds() const { return offload_ended_->seconds_since(*offload_started_); }
  double prefetch_seconds() const { return prefetch_ended_->seconds_since(*prefetch_started_); }

  Residency residency() const noexcept { return residency_; }
  const std::string& name() const noexcept { return name_; }
  std::size_t bytes() const noexcept { return shape_.bytes(dtype_); }

 private:
  void expect(Residency state, const char* transition) const;
  Buffer take(MemoryResource& resource, const char* what) const;
  /// What the tensor's data is on the device: alias_ when set, else device_.
  void* device_data() const noexcept;
  /// -> Prefetching: the device memory is filled from `host` on `stream`, after the compute work
  /// enqueued so far.
  void fill(const void* host, Stream& stream, const Event* after);
  /// Enqueues `move(stream)` between records of the timing events `started` and `ended` (where
  /// not null), then records `done`.
  template <typename Move>
  static void timed(Stream& stream, Event* started, Event* ended, Event& done, Move move);
  /// `event` where copies are timed, else null.
  Event* timing(const std::unique_ptr<Event>& event) const noexcept;

  std::string name_;
  Shape shape_;
  Layout layout_;
  DType dtype_;
  ExecutionContext& context_;
  Residency residency_ = Residency::Absent;
  Buffer device_;
  const void* alias_ = nullptr;  // alias()'s, read instead of device_ while set
  Buffer pinned_;
  std::unique_ptr<Event> produced_;          // compute, before the offload copy (or eviction)
  std::unique_ptr<Event> offload_started_;   // offload stream, timing: the copy starts
  std::unique_ptr<Event> offload_ended_;     // offload stream, timing: the copy ends
  std::unique_ptr<Event> offloaded_;         // offload stream: the copy (or eviction) is done
  std::unique_ptr<Event> released_;          // offload stream, after the copy and the last read
  std::unique_ptr<Event> gate_;              // compute, before the prefetch copy (or migration)
  std::unique_ptr<Event> prefetch_started_;  // prefetch stream, timing: the copy starts
  std::unique_ptr<Event> prefetch_ended_;    // prefetch stream, timing: the copy ends
  std::unique_ptr<Event> prefetched_;        // prefetch stream: the copy is done
  bool time_copies_ = true;
};

}  // namespace vdnn::runtime
