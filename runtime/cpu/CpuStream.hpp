// CpuStream: the CPU backend's Stream, one worker thread running an in-order queue, with seeded
// stress delays and busy-time counters. Holds Note [CPU stream emulation].
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/Stream.hpp"
#include "runtime/cpu/StressOptions.hpp"

namespace vdnn::runtime::cpu {

// Note [CPU stream emulation]
// Each CpuStream owns one worker thread that runs its queue in order, so work on two streams
// really overlaps, and really races unless events order it. CpuEvent::record() enqueues a marker
// that completes a fresh EventRecord once the work before it has run; wait() enqueues a marker
// that blocks the worker on the event's latest record at the time of the call (CUDA's
// cudaStreamWaitEvent). Records are separate objects rather than one counter per event because an
// event re-recorded on another stream may see its records complete out of order.
// Errors: once a task throws, the stream skips its later tasks and copies (their inputs may be
// garbage) until synchronize() rethrows the error. Records still complete, so nothing waits
// forever, but they are marked failed, and a stream that waits on a failed record fails in turn:
// a consumer never reads what a failed producer did not write.
// Stress: with StressOptions::enabled, the worker sleeps a seeded random time before every
// operation, so repeated runs with different seeds explore different interleavings.

class CpuEvent;
namespace detail {
class EventRecord;
}  // namespace detail

/// What a CpuStream's worker has done since construction. Tasks and copies skipped after an error
/// are not counted.
struct CpuStreamStats {
  std::uint64_t tasks = 0;  ///< tasks run, including those that threw
  std::uint64_t copies = 0;
  std::uint64_t bytes_copied = 0;
  /// Time spent running tasks and copies; excludes waits on events, stress delays and idle time.
  std::chrono::nanoseconds busy{0};
};

/// A named Stream backed by one worker thread. Tasks and copies run on the worker, in enqueue
/// order. Every method is thread-safe with respect to the worker; as the Stream contract says,
/// one host thread drives the stream (synchronize() reports errors of work enqueued before it).
class CpuStream final : public Stream {
 public:
  /// Starts the worker. Throws InvalidArgument for a negative stress.max_delay, std::system_error
  /// when the thread cannot start.
  explicit CpuStream(std::string name, StressOptions stress = {});
  /// Waits for everything enqueued (tasks after an unreported error stay skipped), then joins the
  /// worker. Never throws: an error that synchronize() did not report is logged to stderr.
  ~CpuStream() override;
  CpuStream(const CpuStream&) = delete;
  CpuStream& operator=(const CpuStream&) = delete;
  CpuStream(CpuStream&&) = delete;
  CpuStream& operator=(CpuStream&&) = delete;

  const std::string& name() const noexcept override { return name_; }
  /// Throws InvalidArgument when `task` is empty.
  void enqueue(std::function<void()> task) override;
  /// std::memcpy on the worker. Throws InvalidArgument when `bytes` > 0 and a pointer is null.
  void copy_async(void* dst, const void* src, std::size_t bytes) override;
  /// Throws InvalidArgument when `event` is not a CpuEvent. Enqueues nothing when it was never
  /// recorded.
  void wait(const Event& event) override;
  /// Rethrows the first exception of a task (the task's own type), or a runtime::Error when this
  /// stream waited on a failed record; the error is then cleared and the stream runs work again.
  void synchronize() override;

  /// A snapshot of the counters; consistent with each other, possibly behind the worker.
  CpuStreamStats stats() const;

 private:
  friend class CpuEvent;

  enum class OpKind { kTask, kCopy, kWait, kRecord };
  struct Op {
    OpKind kind = OpKind::kTask;
    std::function<void()> task;  // kTask
    void* dst = nullptr;         // kCopy
    const void* src = nullptr;
    std::size_t bytes = 0;
    std::shared_ptr<detail::EventRecord> record;  // kWait: awaited; kRecord: completed
  };

  /// Called by CpuEvent::record(): completes `record` after the work enqueued so far.
  void enqueue_record(std::shared_ptr<detail::EventRecord> record);
  void push(Op op);
  void run_worker() noexcept;
  std::exception_ptr run_op(const Op& op, bool skip, CpuStreamStats& done) const;
  std::chrono::microseconds stress_delay(std::uint64_t op_index) const noexcept;

  const std::string name_;
  const StressOptions stress_;
  const std::uint64_t name_hash_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;  // the queue grew, or the stream is stopping
  std::condition_variable done_cv_;  // an operation completed
  std::deque<Op> queue_;
  std::uint64_t enqueued_ = 0;
  std::uint64_t completed_ = 0;
  std::exception_ptr error_;  // first unreported error; later tasks are skipped while set
  bool stopping_ = false;
  CpuStreamStats stats_;

  std::thread worker_;  // last: started once every other member exists
};

}  // namespace vdnn::runtime::cpu
