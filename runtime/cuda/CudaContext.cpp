// The CUDA execution context: adapters over one DeviceContext's streams, and its upstreams.
#include "runtime/cuda/CudaContext.hpp"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <string>

#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CuptiMigrationCounters.hpp"
#include "runtime/cuda/FillNan.hpp"
#include "runtime/memory/PeerMemoryResource.hpp"

namespace vdnn::runtime::cuda {

CudaContext::CudaContext(int ordinal)
    : device_(ordinal),
      copy_issuer_(ordinal),
      compute_("compute", device_.compute_stream()),
      offload_("offload", device_.offload_stream(), &copy_issuer_),
      prefetch_("prefetch", device_.prefetch_stream(), &copy_issuer_),
      managed_memory_(ordinal, device_.prefetch_stream()) {}

CudaContext::~CudaContext() {
  try {
    copy_issuer_.drain();
  } catch (...) {  // NOLINT(bugprone-empty-catch): the step that failed has reported it
  }
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

StreamAdapter& cuda_stream(Stream& stream, const char* what) {
  auto* adapter = dynamic_cast<StreamAdapter*>(&stream);
  if (adapter == nullptr) throw InvalidArgument(std::string(what) + " needs a CUDA stream");
  return *adapter;
}

}  // namespace

void CudaContext::fill_nan_async(Stream& stream, void* ptr, std::size_t bytes) {
  StreamAdapter& on = cuda_stream(stream, "fill_nan_async");
  on.issue({[raw = on.get(), ptr, bytes] { cuda::fill_nan_async(raw, ptr, bytes); }});
}

void CudaContext::wait_for_caller(Stream& stream, void* caller) {
  if (caller == nullptr)
    throw InvalidArgument("wait_for_caller needs the caller's stream, not null");
  caller_ready_.record(static_cast<cudaStream_t>(caller));
  wait_event(cuda_stream(stream, "wait_for_caller").issue_here(), caller_ready_);
}

void CudaContext::range_begin(const char* name) noexcept { nvtxRangePushA(name); }

void CudaContext::range_end() noexcept { nvtxRangePop(); }

// Note [Peer tier]: a peer is another GPU this one reaches directly; access is enabled once.
MemoryResource& CudaContext::peer_upstream(int peer) {
  const auto found = peer_memory_.find(peer);
  if (found != peer_memory_.end()) return *found->second;
  const int self = device_.ordinal();
  int count = 0;
  VDNN_CHECK_CUDA(cudaGetDeviceCount(&count));
  if (peer == self || peer < 0 || peer >= count) {
    throw InvalidArgument("GPU " + std::to_string(peer) + " cannot be the offload peer of GPU " +
                          std::to_string(self) + ": the peer must be another of the " +
                          std::to_string(count) + " GPUs here");
  }
  int can_access = 0;
  VDNN_CHECK_CUDA(cudaDeviceCanAccessPeer(&can_access, self, peer));
  if (can_access == 0) throw InvalidArgument(peer_access_refusal(self, peer));
  device_.make_current();
  const cudaError_t enabled = cudaDeviceEnablePeerAccess(peer, 0);
  if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
    static_cast<void>(cudaGetLastError());
  } else {
    VDNN_CHECK_CUDA(enabled);
  }
  auto memory = std::make_unique<PeerDeviceMemoryResource>(self, peer);
  return *peer_memory_.emplace(peer, std::move(memory)).first->second;
}

std::uint64_t CudaContext::free_peer_bytes(int peer) {
  peer_upstream(peer);  // the same checks
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  VDNN_CHECK_CUDA(cudaSetDevice(peer));
  const cudaError_t status = cudaMemGetInfo(&free_bytes, &total_bytes);
  device_.make_current();
  VDNN_CHECK_CUDA(status);
  return free_bytes;
}

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
  StreamAdapter& on = cuda_stream(stream, "migrate_async");
  on.issue({[raw = on.get(), ptr, bytes, location] {
    VDNN_CHECK_CUDA(cudaMemPrefetchAsync(ptr, bytes, location, 0, raw));
  }});
}

std::unique_ptr<MigrationCounters> CudaContext::make_migration_counters(std::string& why_not) {
  return make_cupti_migration_counters(device_.ordinal(), &why_not);
}

}  // namespace vdnn::runtime::cuda
