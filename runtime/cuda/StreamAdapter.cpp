// CUDA streams and events behind the runtime::Stream / runtime::Event interfaces.
#include "runtime/cuda/StreamAdapter.hpp"

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

template <typename To, typename From>
To& same_backend(From& object, const char* what) {
  auto* cast = dynamic_cast<To*>(&object);
  if (cast == nullptr) {
    throw InvalidArgument(std::string("a CUDA stream cannot use a ") + what +
                          " of another backend");
  }
  return *cast;
}

}  // namespace

void StreamAdapter::copy_async(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  VDNN_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_));
}

void StreamAdapter::wait(const Event& event) {
  wait_event(stream_, same_backend<const EventAdapter>(event, "event").event());
}

void StreamAdapter::synchronize() { VDNN_CHECK_CUDA(cudaStreamSynchronize(stream_)); }

double EventAdapter::seconds_since(const Event& earlier) const {
  return 1e-3 * elapsed_ms(same_backend<const EventAdapter>(earlier, "event").event(), event_);
}

void EventAdapter::record(Stream& stream) {
  event_.record(same_backend<StreamAdapter>(stream, "stream").get());
}

}  // namespace vdnn::runtime::cuda
