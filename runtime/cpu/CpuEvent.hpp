// CpuEvent: the CPU backend's Event. Each record() is a completion flag that the recording
// CpuStream's worker sets once everything enqueued before it has run. See Note [CPU stream
// emulation] in runtime/cpu/CpuStream.hpp.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/Stream.hpp"

namespace vdnn::runtime::cpu {

class CpuStream;

namespace detail {

/// One record() of a CpuEvent. Completed once by the recording stream's worker; awaited by host
/// threads and by other streams' workers. Shared by the event and the markers that refer to it,
/// so it outlives both the event and the stream. Thread-safe.
class EventRecord {
 public:
  /// Marks the record complete and wakes every waiter. `failed_stream` names the recording stream
  /// when work enqueued there before the record failed or was skipped; empty otherwise.
  void complete(std::string failed_stream);
  bool completed() const;
  /// When complete() ran (steady clock); meaningful once completed().
  std::chrono::steady_clock::time_point completed_at() const;
  /// Blocks until complete() and returns its `failed_stream`.
  std::string wait() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable completed_cv_;
  bool completed_ = false;
  std::chrono::steady_clock::time_point completed_at_;
  std::string failed_stream_;
};

}  // namespace detail

/// An Event for CpuStreams. Every method is thread-safe with respect to the streams' workers and
/// to other host threads. The event may be destroyed while records of it are pending or awaited:
/// the markers own what they need. A record after which the recording stream had failed still
/// completes; streams that wait on it fail (Note [CPU stream emulation]), this event does not
/// throw.
class CpuEvent final : public Event {
 public:
  CpuEvent() = default;

  /// Enqueues a marker on `stream` that completes once all work enqueued there before it has run.
  /// Throws InvalidArgument when `stream` is not a CpuStream.
  void record(Stream& stream) override;
  /// True when the most recent record has completed, or there was none. Never blocks.
  bool query() const override;
  /// Blocks until the most recent record (at the time of the call) has completed. Does not report
  /// failures: the streams' synchronize() does.
  void synchronize() const override;
  /// From the steady clock at the completion of both records.
  double seconds_since(const Event& earlier) const override;

 private:
  friend class CpuStream;

  /// The most recent record, or null when the event was never recorded.
  std::shared_ptr<detail::EventRecord> latest() const;

  mutable std::mutex mutex_;
  std::shared_ptr<detail::EventRecord> latest_;
};

}  // namespace vdnn::runtime::cpu
