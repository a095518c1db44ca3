// StreamAdapter and EventAdapter: CUDA streams and events behind the backend-neutral
// runtime::Stream and runtime::Event interfaces (Note [Stream choreography]).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <string>

#include "runtime/Stream.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaStream.hpp"
#include "runtime/cuda/IssueThread.hpp"

namespace vdnn::runtime::cuda {

/// A non-owning view of a cudaStream_t (the DeviceContext owns it) as a runtime::Stream.
/// copy_async() is cudaMemcpyAsync; wait() is cudaStreamWaitEvent; synchronize() is
/// cudaStreamSynchronize. Without an issue thread, enqueue() runs the task at once on the calling
/// thread (the task enqueues device work on this stream) and methods throw CudaError. With one
/// (Note [Issue thread]), the task, the copy, the wait and every record of an EventAdapter on this
/// stream are posted to it and made there in order; synchronize() drains it first and rethrows
/// what a posted call threw. The streams of one context that post share its one issue thread.
class StreamAdapter final : public Stream {
 public:
  StreamAdapter(std::string name, cudaStream_t stream, IssueThread* issuer = nullptr)
      : name_(std::move(name)), stream_(stream), issuer_(issuer) {}
  /// Owns `stream` (a stream of its own: CudaContext::make_stream).
  StreamAdapter(std::string name, std::unique_ptr<CudaStream> stream)
      : name_(std::move(name)), owned_(std::move(stream)), stream_(owned_->get()) {}

  const std::string& name() const noexcept override { return name_; }
  void enqueue(std::function<void()> task) override;
  void copy_async(void* dst, const void* src, std::size_t bytes) override;
  /// With an issue thread: one posted call that makes the waits, records and the copy.
  void timed_copy(const TimedCopy& copy) override;
  void wait(const Event& event) override;
  void synchronize() override;
  /// The raw stream, for work the caller enqueues on it directly: the issue thread, if any, is
  /// drained first so that work follows everything enqueued so far. Throws CudaError.
  cudaStream_t issue_here();
  /// The raw stream without draining: only for work no posted call is ordered against.
  cudaStream_t get() const noexcept { return stream_; }
  /// True when calls on this stream are posted to an issue thread.
  bool posts() const noexcept { return issuer_ != nullptr; }
  /// Posts `posted` to the issue thread, or makes the call now when there is none.
  void issue(PostedCall posted);

 private:
  std::string name_;
  std::unique_ptr<CudaStream> owned_;  // null when the DeviceContext owns the stream
  cudaStream_t stream_;
  IssueThread* issuer_ = nullptr;  // not owned; null: calls are made on the caller's thread
};

/// A CUDA event as a runtime::Event; records only on StreamAdapters (else InvalidArgument).
/// Counts the records and waits of it posted to an issue thread and not yet made: anything done
/// with it on the caller's thread first waits for that count to reach zero, so a record, wait or
/// query sees the event as the program order left it (Note [Issue thread]). Methods throw
/// CudaError.
class EventAdapter final : public Event {
 public:
  explicit EventAdapter(EventTiming timing) : event_(timing) {}
  EventAdapter(const EventAdapter&) = delete;
  EventAdapter& operator=(const EventAdapter&) = delete;
  EventAdapter(EventAdapter&&) = delete;
  EventAdapter& operator=(EventAdapter&&) = delete;
  /// Waits until no posted call of it is left to make (they refer to it).
  ~EventAdapter() override { settle(unissued_); }
  void record(Stream& stream) override;
  bool query() const override;
  void synchronize() const override;
  double seconds_since(const Event& earlier) const override;
  /// The event, once no posted call of it is left to make (blocks until then).
  const CudaEvent& settled() const noexcept;
  /// The event without settling: only inside a call posted with unissued() as its counter.
  const CudaEvent& event() const noexcept { return event_; }
  CudaEvent& event() noexcept { return event_; }
  std::atomic<int>* unissued() const noexcept { return &unissued_; }

 private:
  CudaEvent event_;
  mutable std::atomic<int> unissued_{0};
};

}  // namespace vdnn::runtime::cuda
