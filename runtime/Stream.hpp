// Stream and Event: the backend-neutral in-order work queue and its completion marker, with CUDA
// semantics. The CPU backend emulates them with worker threads (runtime/cpu/); the CUDA backend
// wraps cudaStream_t and cudaEvent_t (runtime/cuda/). See Note [Stream choreography].
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string>

namespace vdnn::runtime {

class Event;
class Stream;

/// A copy between device and host memory as the offload scheme moves a map: after the most recent
/// records of the events in `after` (null entries skipped) and after the work enqueued on
/// `after_stream` (if any) so far; `done` recorded after it on the copying stream, and where the
/// copy is timed, the timing events `started` and `ended` around it (both or neither: a timing
/// record costs a copy engine a few microseconds, a 4 MiB copy between two H200s ran at 0.69 of the
/// link timed and at 0.80 untimed, so `done` is an event without timing).
struct TimedCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  std::array<const Event*, 2> after{};
  /// Marked by recording `mark` on it: at the call, or later but before the copy is enqueued (the
  /// CUDA backend records it on its issue thread), which only makes the copy wait for more.
  Stream* after_stream = nullptr;
  Event* mark = nullptr;
  Event* started = nullptr;
  Event* ended = nullptr;
  Event* done = nullptr;
};

/// An in-order queue of work. Work enqueued on one stream runs in enqueue order; work on
/// different streams is ordered only through events. Methods are called from one host thread
/// (the executor's); implementations document anything more.
class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&&) = delete;
  Stream& operator=(Stream&&) = delete;
  virtual ~Stream() = default;

  /// "compute", "offload", "prefetch": for traces and messages.
  virtual const std::string& name() const noexcept = 0;

  /// Enqueues `task`. CPU streams run it later on the stream's worker; CUDA streams run it now on
  /// the calling thread, where it enqueues device work on this stream. An exception thrown by a
  /// task is rethrown by the next synchronize() of this stream.
  virtual void enqueue(std::function<void()> task) = 0;

  /// Enqueues a copy of `bytes` from `src` to `dst` (between the backend's device memory and host
  /// memory). Both ranges must stay valid until the copy completes (record an event after it).
  virtual void copy_async(void* dst, const void* src, std::size_t bytes) = 0;

  /// Enqueues `copy`: records `copy.mark` on `copy.after_stream` (if set) and wait()s for it, then
  /// for each event of `copy.after`, then records `copy.started`, the copy and records `copy.done`,
  /// as those calls would one after another (what this does). A backend may make them as one
  /// operation, and the CUDA backend does (Note [Issue thread]).
  virtual void timed_copy(const TimedCopy& copy);

  /// Work enqueued on this stream after this call starts only once `event`'s most recent
  /// record() (at the time of this call) has completed. An event never recorded is complete.
  virtual void wait(const Event& event) = 0;

  /// Blocks until everything enqueued so far has completed; rethrows the first exception a task
  /// threw (throws runtime::Error or the task's own error).
  virtual void synchronize() = 0;
};

/// Marks a point in a stream. record() captures everything enqueued on the stream so far; the
/// event completes when that work has. Recording again moves the marker. Events belong to the
/// backend of the streams they are recorded on (mixing backends throws InvalidArgument).
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&&) = delete;
  Event& operator=(Event&&) = delete;
  virtual ~Event() = default;

  virtual void record(Stream& stream) = 0;
  /// True when the most recent record has completed (or there was none). Never blocks.
  virtual bool query() const = 0;
  /// Blocks the caller until query() would return true.
  virtual void synchronize() const = 0;
  /// Seconds from the completion of `earlier`'s most recent record to this event's; both must
  /// have completed, and both must have been made with timing on (CUDA: the device clock).
  /// Throws InvalidArgument otherwise.
  virtual double seconds_since(const Event& earlier) const = 0;
};

/// An event that is complete from the start and ignores records: for dry runs of the allocator,
/// where no work is queued. seconds_since() is 0.
class CompletedEvent final : public Event {
 public:
  void record(Stream& /*stream*/) override {}
  bool query() const override { return true; }
  void synchronize() const override {}
  double seconds_since(const Event& /*earlier*/) const override { return 0.0; }
};

}  // namespace vdnn::runtime
