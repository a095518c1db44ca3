// CudaEvent: RAII owner of one CUDA event, plus the event operations that order streams.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/UniqueHandle.hpp"

namespace vdnn::runtime::cuda {

namespace detail {
struct EventDeleter {
  static void destroy(cudaEvent_t event) noexcept;
};
}  // namespace detail

/// Whether an event records timestamps. Disabled events are cheaper to record and wait on.
enum class EventTiming { kDisabled, kEnabled };

/// Owns an event created on the calling thread's current device. Move-only. Recording and querying
/// may happen from any thread; moving or destroying the object is not thread-safe.
class CudaEvent {
 public:
  /// Throws CudaError when the event cannot be created.
  explicit CudaEvent(EventTiming timing = EventTiming::kDisabled);

  /// The raw event, a non-owning view valid while this object lives. Null only after a move.
  cudaEvent_t get() const noexcept { return event_.get(); }
  /// Enqueues on `stream` a record of this event: it completes once all work enqueued on `stream`
  /// before it has. Throws InvalidArgument for the NULL stream, CudaError when CUDA refuses.
  void record(cudaStream_t stream);
  /// True when the last record has completed (also when never recorded); never blocks. Throws
  /// CudaError on any status but success or not-ready.
  bool ready() const;
  /// Blocks the calling host thread until the last record has completed. Throws CudaError.
  void synchronize() const;

 private:
  UniqueHandle<cudaEvent_t, detail::EventDeleter> event_;
};

/// Makes `stream` wait, on the device without blocking the host, for the last record of `event`;
/// work enqueued on `stream` afterwards starts only then. Throws InvalidArgument for the NULL
/// stream, CudaError when CUDA refuses.
void wait_event(cudaStream_t stream, const CudaEvent& event);

/// Milliseconds between the completed records of `start` and `end`, both created with
/// EventTiming::kEnabled. Throws CudaError when either lacks timing or has not completed.
float elapsed_ms(const CudaEvent& start, const CudaEvent& end);

}  // namespace vdnn::runtime::cuda
