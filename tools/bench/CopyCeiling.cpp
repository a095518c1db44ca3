// bench_copy_ceiling: the copy ceilings of this machine, measured with CUDA events: pinned memory
// device->host, host->device and both at once on two streams; managed memory prefetched each way
// and read from the device by demand faults; with a second GPU that GPU 0 reaches directly, the
// peer tier's link each way (cudaMemcpyPeerAsync). Prints one JSON object.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/Device.hpp"
#include "runtime/UniqueHandle.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/CudaContext.hpp"
#include "runtime/cuda/CudaEvent.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/CudaStream.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace {

using vdnn::runtime::cuda::CudaEvent;
using vdnn::runtime::cuda::EventTiming;

constexpr std::size_t kBytes = std::size_t{1} << 30;
constexpr int kRepeats = 5;
constexpr int kFaultRepeats = 3;  // each demand-fault read takes ~0.15 s

// Best GB/s over `repeats` runs of `enqueue` (work on `stream` that moves kBytes), timed with
// events around it alone; `prepare` runs untimed before each run and leaves `stream` idle.
template <typename Prepare, typename Enqueue>
double best_gbps(cudaStream_t stream, int repeats, Prepare&& prepare, Enqueue&& enqueue) {
  double best = 0.0;
  for (int r = 0; r < repeats; ++r) {
    prepare();
    CudaEvent start(EventTiming::kEnabled);
    CudaEvent end(EventTiming::kEnabled);
    start.record(stream);
    enqueue();
    end.record(stream);
    end.synchronize();
    best = std::max(
        best, static_cast<double>(kBytes) / (vdnn::runtime::cuda::elapsed_ms(start, end) * 1e6));
  }
  return best;
}

// Best GB/s of kRepeats copies of kBytes on `stream`.
double copy_gbps(cudaStream_t stream, void* dst, const void* src) {
  return best_gbps(
      stream, kRepeats, [] {},
      [&] { VDNN_CHECK_CUDA(cudaMemcpyAsync(dst, src, kBytes, cudaMemcpyDefault, stream)); });
}

// GB/s of both directions at once: the two copy engines.
double both_directions_gbps(const vdnn::runtime::cuda::DeviceContext& context, void* d1, void* h1,
                            void* d2, const void* h2) {
  CudaEvent start(EventTiming::kEnabled);
  CudaEvent end_d2h(EventTiming::kEnabled);
  CudaEvent end_h2d(EventTiming::kEnabled);
  start.record(context.offload_stream());
  vdnn::runtime::cuda::wait_event(context.prefetch_stream(), start);
  VDNN_CHECK_CUDA(cudaMemcpyAsync(h1, d1, kBytes, cudaMemcpyDefault, context.offload_stream()));
  VDNN_CHECK_CUDA(cudaMemcpyAsync(d2, h2, kBytes, cudaMemcpyDefault, context.prefetch_stream()));
  end_d2h.record(context.offload_stream());
  end_h2d.record(context.prefetch_stream());
  end_d2h.synchronize();
  end_h2d.synchronize();
  const double ms = std::max(vdnn::runtime::cuda::elapsed_ms(start, end_d2h),
                             vdnn::runtime::cuda::elapsed_ms(start, end_h2d));
  return 2.0 * static_cast<double>(kBytes) / (ms * 1e6);
}

struct ManagedFree {
  static void destroy(void* ptr) noexcept { VDNN_CHECK_CUDA_NOTHROW(cudaFree(ptr)); }
};
using ManagedBytes = vdnn::runtime::UniqueHandle<void*, ManagedFree>;

// Ways to move kBytes of managed memory to the host: in one call, or in kPieces pieces spread over
// `lanes` streams (round robin), or in one batched call.
struct EvictionWays {
  double whole = 0.0;
  double pieces_1_lane = 0.0;
  double pieces_2_lanes = 0.0;
  double pieces_4_lanes = 0.0;
  double batched = 0.0;
  double best() const {
    return std::max({whole, pieces_1_lane, pieces_2_lanes, pieces_4_lanes, batched});
  }
};

constexpr std::size_t kPieces = 16;

struct ManagedCeilings {
  EvictionWays to_host;
  double to_device_gbps = 0.0;
  double fault_gbps = 0.0;   // a kernel (cuBLAS's copy) reads pages that live on the host
  double memcpy_gbps = 0.0;  // cudaMemcpyAsync from pages that live on the host
};

// The managed-memory ceilings on kBytes of cudaMallocManaged memory, read into `device_target`.
// The caller has checked that kBytes of managed memory fit in what the device has free.
ManagedCeilings measure_managed(const vdnn::runtime::cuda::DeviceContext& context,
                                void* device_target) {
  void* ptr = nullptr;
  VDNN_CHECK_CUDA(cudaMallocManaged(&ptr, kBytes, cudaMemAttachGlobal));
  const ManagedBytes managed(ptr);
  std::memset(managed.get(), 1, kBytes);  // populated, on the host

  const cudaStream_t stream = context.compute_stream();
  const auto move_to = [&](cudaMemLocation where) {
    VDNN_CHECK_CUDA(cudaMemPrefetchAsync(managed.get(), kBytes, where, 0, stream));
  };
  const cudaMemLocation host{cudaMemLocationTypeHost, 0};
  const cudaMemLocation device{cudaMemLocationTypeDevice, context.ordinal()};
  const auto resident_on = [&](cudaMemLocation where) {
    return [&move_to, &stream, where] {
      move_to(where);
      VDNN_CHECK_CUDA(cudaStreamSynchronize(stream));
    };
  };

  ManagedCeilings c;
  c.to_host.whole = best_gbps(stream, kRepeats, resident_on(device), [&] { move_to(host); });
  const vdnn::runtime::cuda::CudaStream lanes[3];
  const auto in_pieces = [&](std::size_t lane_count) {
    return best_gbps(stream, kRepeats, resident_on(device), [&] {
      // Every lane starts after `stream`'s start event and `stream` ends after every lane.
      CudaEvent fork;
      fork.record(stream);
      for (std::size_t l = 1; l < lane_count; ++l) {
        vdnn::runtime::cuda::wait_event(lanes[l - 1].get(), fork);
      }
      const std::size_t piece = kBytes / kPieces;
      for (std::size_t i = 0; i < kPieces; ++i) {
        const cudaStream_t lane = i % lane_count == 0 ? stream : lanes[i % lane_count - 1].get();
        VDNN_CHECK_CUDA(
            cudaMemPrefetchAsync(static_cast<char*>(ptr) + i * piece, piece, host, 0, lane));
      }
      for (std::size_t l = 1; l < lane_count; ++l) {
        CudaEvent join;
        join.record(lanes[l - 1].get());
        vdnn::runtime::cuda::wait_event(stream, join);
      }
    });
  };
  c.to_host.pieces_1_lane = in_pieces(1);
  c.to_host.pieces_2_lanes = in_pieces(2);
  c.to_host.pieces_4_lanes = in_pieces(4);
  c.to_host.batched = best_gbps(stream, kRepeats, resident_on(device), [&] {
    void* pointers[kPieces];
    std::size_t sizes[kPieces];
    for (std::size_t i = 0; i < kPieces; ++i) {
      pointers[i] = static_cast<char*>(ptr) + i * (kBytes / kPieces);
      sizes[i] = kBytes / kPieces;
    }
    cudaMemLocation where = host;
    std::size_t first = 0;
    VDNN_CHECK_CUDA(
        cudaMemPrefetchBatchAsync(pointers, sizes, kPieces, &where, &first, 1, 0, stream));
  });
  c.to_device_gbps = best_gbps(stream, kRepeats, resident_on(host), [&] { move_to(device); });
  const int floats = static_cast<int>(kBytes / sizeof(float));
  c.fault_gbps = best_gbps(stream, kFaultRepeats, resident_on(host), [&] {
    VDNN_CHECK_CUBLAS(cublasScopy(context.cublas(), floats, static_cast<const float*>(ptr), 1,
                                  static_cast<float*>(device_target), 1));
  });
  c.memcpy_gbps = best_gbps(stream, kFaultRepeats, resident_on(host), [&] {
    VDNN_CHECK_CUDA(cudaMemcpyAsync(device_target, ptr, kBytes, cudaMemcpyDefault, stream));
  });
  return c;
}

// GB/s of kBytes from GPU 0 to GPU 1 and back over the peer link (Note [Peer tier]).
struct PeerCeilings {
  bool measured = false;  // there is a GPU 1 and GPU 0 reaches it directly
  double to_peer_gbps = 0.0;
  double from_peer_gbps = 0.0;
};

PeerCeilings measure_peer(vdnn::runtime::cuda::CudaContext& context, void* local) {
  constexpr int kPeer = 1;
  if (vdnn::runtime::cuda_device_count() < 2 || !vdnn::runtime::cuda_peer_link(0, kPeer).access) {
    return {};
  }
  // The peer tier's own memory: access enabled as the executor enables it (Note [Peer tier]).
  vdnn::runtime::Buffer remote(context.peer_upstream(kPeer), kBytes);
  const cudaStream_t stream = context.device().offload_stream();
  PeerCeilings c;
  c.measured = true;
  c.to_peer_gbps = best_gbps(
      stream, kRepeats, [] {},
      [&] {
        VDNN_CHECK_CUDA(cudaMemcpyPeerAsync(remote.data(), kPeer, local, 0, kBytes, stream));
      });
  c.from_peer_gbps = best_gbps(
      stream, kRepeats, [] {},
      [&] {
        VDNN_CHECK_CUDA(cudaMemcpyPeerAsync(local, 0, remote.data(), kPeer, kBytes, stream));
      });
  return c;
}

// A JSON number, or null when not measured.
std::string json_number(double value, bool measured) {
  if (!measured) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  return text;
}

}  // namespace

int main() {
  if (vdnn::runtime::cuda_device_count() == 0) {
    std::fprintf(stderr, "bench_copy_ceiling: no CUDA device\n");
    return 1;
  }
  try {
    vdnn::runtime::cuda::CudaContext cuda(0);
    const vdnn::runtime::cuda::DeviceContext& context = cuda.device();
    vdnn::runtime::cuda::DeviceMemoryResource device;
    vdnn::runtime::cuda::PinnedMemoryResource pinned;
    vdnn::runtime::Buffer d1(device, kBytes), d2(device, kBytes);
    vdnn::runtime::Buffer h1(pinned, kBytes), h2(pinned, kBytes);
    const double d2h = copy_gbps(context.offload_stream(), h1.data(), d1.data());
    const double h2d = copy_gbps(context.prefetch_stream(), d2.data(), h2.data());
    const double both = both_directions_gbps(context, d1.data(), h1.data(), d2.data(), h2.data());

    // Never ask for more managed memory than the device has free (shared/GPU-MACHINE.md); keep a
    // quarter of it spare as well.
    std::size_t free = 0;
    std::size_t total = 0;
    VDNN_CHECK_CUDA(cudaMemGetInfo(&free, &total));
    const bool managed_fits = kBytes < free - free / 4;
    ManagedCeilings managed;
    if (managed_fits) {
      managed = measure_managed(context, d1.data());
    } else {
      std::fprintf(stderr,
                   "bench_copy_ceiling: %zu B of managed memory would not fit in the %zu B free: "
                   "managed ceilings not measured\n",
                   kBytes, free);
    }
    const PeerCeilings peer = measure_peer(cuda, d1.data());
    std::printf(
        "{\"d2h_gbps\": %.2f, \"h2d_gbps\": %.2f, \"both_gbps\": %.2f, "
        "\"peer_to_gbps\": %s, \"peer_from_gbps\": %s, "
        "\"managed_to_host_gbps\": %s, \"managed_to_device_gbps\": %s, "
        "\"managed_fault_gbps\": %s, \"managed_memcpy_gbps\": %s, "
        "\"managed_to_host_ways\": {\"whole\": %s, \"pieces_1_lane\": %s, "
        "\"pieces_2_lanes\": %s, \"pieces_4_lanes\": %s, \"batched\": %s}}\n",
        d2h, h2d, both, json_number(peer.to_peer_gbps, peer.measured).c_str(),
        json_number(peer.from_peer_gbps, peer.measured).c_str(),
        json_number(managed.to_host.best(), managed_fits).c_str(),
        json_number(managed.to_device_gbps, managed_fits).c_str(),
        json_number(managed.fault_gbps, managed_fits).c_str(),
        json_number(managed.memcpy_gbps, managed_fits).c_str(),
        json_number(managed.to_host.whole, managed_fits).c_str(),
        json_number(managed.to_host.pieces_1_lane, managed_fits).c_str(),
        json_number(managed.to_host.pieces_2_lanes, managed_fits).c_str(),
        json_number(managed.to_host.pieces_4_lanes, managed_fits).c_str(),
        json_number(managed.to_host.batched, managed_fits).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_copy_ceiling: %s\n", e.what());
    return 1;
  }
  return 0;
}
