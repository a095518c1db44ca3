// StreamAdapter and EventAdapter: CUDA streams and events behind the backend-neutral
// runtime::Stream and runtime::Event interfaces (Note [Stream choreography]).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "runtime/Stream.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaStream.hpp"

namespace vdnn::runtime::cuda {

/// A non-owning view of a cudaStream_t (the DeviceContext owns it) as a runtime::Stream.
/// enqueue() runs the task at once on the calling thread: the task enqueues device work on this
/// stream. copy_async() is cudaMemcpyAsync; wait() is cudaStreamWaitEvent; synchronize() is
/// cudaStreamSynchronize. Methods throw CudaError.
class StreamAdapter final : public Stream {
 public:
  StreamAdapter(std::string name, cudaStream_t stream) : name_(std::move(name)), stream_(stream) {}
  /// Owns `stream` (a stream of its own: CudaContext::make_stream).
  StreamAdapter(std::string name, std::unique_ptr<CudaStream> stream)
      : name_(std::move(name)), owned_(std::move(stream)), stream_(owned_->get()) {}

  const std::string& name() const noexcept override { return name_; }
  void enqueue(std::function<void()> task) override { task(); }
  void copy_async(void* dst, const void* src, std::size_t bytes) override;
  void wait(const Event& event) override;
  void synchronize() override;
  cudaStream_t get() const noexcept { return stream_; }

 private:
  std::string name_;
  std::unique_ptr<CudaStream> owned_;  // null when the DeviceContext owns the stream
  cudaStream_t stream_;
};

/// A CUDA event as a runtime::Event; records only on StreamAdapters (else InvalidArgument).
/// Methods throw CudaError.
class EventAdapter final : public Event {
 public:
  explicit EventAdapter(EventTiming timing) : event_(timing) {}
  void record(Stream& stream) override;
  bool query() const override { return event_.ready(); }
  void synchronize() const override { event_.synchronize(); }
  double seconds_since(const Event& earlier) const override;
  const CudaEvent& event() const noexcept { return event_; }

 private:
  CudaEvent event_;
};

}  // namespace vdnn::runtime::cuda
