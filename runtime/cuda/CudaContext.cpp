// The CUDA execution context: adapters over one DeviceContext's streams, and its upstreams.
#include "runtime/cuda/CudaContext.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CuptiMigrationCounters.hpp"
#include "runtime/cuda/FillNan.hpp"

namespace vdnn::runtime::cuda {

CudaContext::CudaContext(int ordinal)
    : device_(ordinal),
      compute_("compute", device_.compute_stream()),
      offload_("offload", device_.offload_stream()),
      prefetch_("prefetch", device_.prefetch_stream()),
      managed_memory_(ordinal, device_.prefetch_stream()) {}

CudaContext::~CudaContext() {
  for (cudaStream_t s :
       {device_.compute_stream(), device_.offload_stream(), device_.prefetch_stream()}) {
    VDNN_CHECK_CUDA_NOTHROW(cudaStreamSynchronize(s));
  }
}

std::unique_ptr<Stream> CudaContext::make_stream(const std::string& name) {
  return std::make_unique<StreamAdapter>(name, std::make_unique<CudaStream>());
}

std::unique_ptr<Event> CudaContext::make_event(bool timing) {
  return std::make_unique<EventAdapter>(timing ? EventTiming::kEnabled : EventTiming::kDisabled);
}

namespace {

cudaStream_t cuda_stream(Stream& stream, const char* what) {
  auto* adapter = dynamic_cast<StreamAdapter*>(&stream);
  if (adapter == nullptr) throw InvalidArgument(std::string(what) + " needs a CUDA stream");
  return adapter->get();
}

}  // namespace

void CudaContext::fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) {
  cuda::fill_nan_async(cuda_stream(stream, "fill_nan_async"), ptr, bytes);
}

void CudaContext::wait_for_caller(Stream& stream, void* caller) {
  if (caller == nullptr)
    throw InvalidArgument("wait_for_caller needs the caller's stream, not null");
  caller_ready_.record(static_cast<cudaStream_t>(caller));
  wait_event(cuda_stream(stream, "wait_for_caller"), caller_ready_);
}

void CudaContext::range_begin(const char* name) noexcept { nvtxRangePushA(name); }

void CudaContext::range_end() noexcept { nvtxRangePop(); }

std::uint64_t CudaContext::free_device_bytes() const {
  device_.make_current();
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  VDNN_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

void CudaContext::migrate_async(Stream& stream, void* ptr, std::size_t bytes, MigrateTo to) {
  cudaMemLocation location{};
  location.type = to == MigrateTo::Device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  location.id = to == MigrateTo::Device ? device_.ordinal() : 0;
  VDNN_CHECK_CUDA(
      cudaMemPrefetchAsync(ptr, bytes, location, 0, cuda_stream(stream, "migrate_async")));
}

std::unique_ptr<MigrationCounters> CudaContext::make_migration_counters(std::string& why_not) {
  return make_cupti_migration_counters(device_.ordinal(), &why_not);
}

}  // namespace vdnn::runtime::cuda
