// Creation, destruction and stream-ordering operations of CUDA events.
#include "runtime/cuda/CudaEvent.hpp"

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {

void detail::EventDeleter::destroy(cudaEvent_t event) noexcept {
  VDNN_CHECK_CUDA_NOTHROW(cudaEventDestroy(event));
}

CudaEvent::CudaEvent(EventTiming timing) {
  const unsigned int flags =
      timing == EventTiming::kEnabled ? cudaEventDefault : cudaEventDisableTiming;
  cudaEvent_t event = nullptr;
  VDNN_CHECK_CUDA(cudaEventCreateWithFlags(&event, flags));
  event_.reset(event);
}

void CudaEvent::record(cudaStream_t stream) {
  VDNN_EXPECTS(stream != nullptr, "vdnn never enqueues work on the NULL stream");
  VDNN_CHECK_CUDA(cudaEventRecord(event_.get(), stream));
}

bool CudaEvent::ready() const {
  const cudaError_t status = cudaEventQuery(event_.get());
  if (status == cudaErrorNotReady) return false;
  VDNN_CHECK_CUDA(status);
  return true;
}

void CudaEvent::synchronize() const { VDNN_CHECK_CUDA(cudaEventSynchronize(event_.get())); }

void wait_event(cudaStream_t stream, const CudaEvent& event) {
  VDNN_EXPECTS(stream != nullptr, "vdnn never enqueues work on the NULL stream");
  VDNN_CHECK_CUDA(cudaStreamWaitEvent(stream, event.get(), cudaEventWaitDefault));
}

float elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  float milliseconds = 0.0F;
  VDNN_CHECK_CUDA(cudaEventElapsedTime(&milliseconds, start.get(), end.get()));
  return milliseconds;
}

}  // namespace vdnn::runtime::cuda
