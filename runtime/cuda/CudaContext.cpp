// The CUDA execution context: adapters over one DeviceContext's streams, and its upstreams.
#include "runtime/cuda/CudaContext.hpp"

#include <cuda_runtime_api.h>

#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/FillNan.hpp"

namespace vdnn::runtime::cuda {

CudaContext::CudaContext(int ordinal)
    : device_(ordinal),
      compute_("compute", device_.compute_stream()),
      offload_("offload", device_.offload_stream()),
      prefetch_("prefetch", device_.prefetch_stream()) {}

CudaContext::~CudaContext() {
  for (cudaStream_t s :
       {device_.compute_stream(), device_.offload_stream(), device_.prefetch_stream()}) {
    VDNN_CHECK_CUDA_NOTHROW(cudaStreamSynchronize(s));
  }
}

std::unique_ptr<Event> CudaContext::make_event(bool timing) {
  return std::make_unique<EventAdapter>(timing ? EventTiming::kEnabled : EventTiming::kDisabled);
}

void CudaContext::fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) {
  auto* adapter = dynamic_cast<StreamAdapter*>(&stream);
  if (adapter == nullptr) throw InvalidArgument("fill_nan_async needs a CUDA stream");
  cuda::fill_nan_async(adapter->get(), ptr, bytes);
}

std::uint64_t CudaContext::free_device_bytes(std::uint64_t reserve) const {
  device_.make_current();
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  VDNN_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes > reserve ? free_bytes - reserve : 0;
}

}  // namespace vdnn::runtime::cuda
