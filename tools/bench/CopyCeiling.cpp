// bench_copy_ceiling: the pinned-memory copy ceiling of this machine, measured with CUDA events:
// device->host, host->device, and both at once on two streams. Prints one JSON object.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>

#include "runtime/Device.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace {

using vdnn::runtime::cuda::CudaEvent;
using vdnn::runtime::cuda::EventTiming;

constexpr std::size_t kBytes = std::size_t{1} << 30;
constexpr int kRepeats = 5;

// Best GB/s of kRepeats copies of kBytes on `stream`.
double copy_gbps(cudaStream_t stream, void* dst, const void* src) {
  double best = 0.0;
  for (int r = 0; r < kRepeats; ++r) {
    CudaEvent start(EventTiming::kEnabled);
    CudaEvent end(EventTiming::kEnabled);
    start.record(stream);
    VDNN_CHECK_CUDA(cudaMemcpyAsync(dst, src, kBytes, cudaMemcpyDefault, stream));
    end.record(stream);
    end.synchronize();
    best = std::max(
        best, static_cast<double>(kBytes) / (vdnn::runtime::cuda::elapsed_ms(start, end) * 1e6));
  }
  return best;
}

}  // namespace

int main() {
  if (vdnn::runtime::cuda_device_count() == 0) {
    std::fprintf(stderr, "bench_copy_ceiling: no CUDA device\n");
    return 1;
  }
  try {
    vdnn::runtime::cuda::DeviceContext context(0);
    vdnn::runtime::cuda::DeviceMemoryResource device;
    vdnn::runtime::cuda::PinnedMemoryResource pinned;
    vdnn::runtime::Buffer d1(device, kBytes), d2(device, kBytes);
    vdnn::runtime::Buffer h1(pinned, kBytes), h2(pinned, kBytes);
    const double d2h = copy_gbps(context.offload_stream(), h1.data(), d1.data());
    const double h2d = copy_gbps(context.prefetch_stream(), d2.data(), h2.data());
    // Both directions at once: the two copy engines.
    CudaEvent start(EventTiming::kEnabled);
    CudaEvent end_d2h(EventTiming::kEnabled);
    CudaEvent end_h2d(EventTiming::kEnabled);
    start.record(context.offload_stream());
    vdnn::runtime::cuda::wait_event(context.prefetch_stream(), start);
    VDNN_CHECK_CUDA(
        cudaMemcpyAsync(h1.data(), d1.data(), kBytes, cudaMemcpyDefault, context.offload_stream()));
    VDNN_CHECK_CUDA(cudaMemcpyAsync(d2.data(), h2.data(), kBytes, cudaMemcpyDefault,
                                    context.prefetch_stream()));
    end_d2h.record(context.offload_stream());
    end_h2d.record(context.prefetch_stream());
    end_d2h.synchronize();
    end_h2d.synchronize();
    const double ms = std::max(vdnn::runtime::cuda::elapsed_ms(start, end_d2h),
                               vdnn::runtime::cuda::elapsed_ms(start, end_h2d));
    const double both = 2.0 * static_cast<double>(kBytes) / (ms * 1e6);
    std::printf("{\"d2h_gbps\": %.2f, \"h2d_gbps\": %.2f, \"both_gbps\": %.2f}\n", d2h, h2d, both);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_copy_ceiling: %s\n", e.what());
    return 1;
  }
  return 0;
}
