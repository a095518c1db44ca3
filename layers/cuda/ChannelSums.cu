// Per-channel sums. Channels-last: blocks of 32 channels by 8 row lanes over one chunk of rows (a
// warp reads 32 consecutive elements of a row), a fixed-order combine of the lanes in shared
// memory, then one thread per channel adding the chunks in order. Channels-first: a block per
// channel and chunk of its elements (consecutive threads read consecutive elements of a plane), a
// fixed tree in shared memory, then the same combine.
#include "layers/cuda/ChannelSums.hpp"

#include <cuda_bf16.h>

#include <algorithm>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr int kChannelTile = 32;
constexpr int kRowLanes = 8;
constexpr int kPlaneThreads = 256;
constexpr std::int64_t kTargetBlocks = 1024;

__device__ __forceinline__ double load_double(const float* p) { return __ldg(p); }
__device__ __forceinline__ double load_double(const __nv_bfloat16* p) {
  return __bfloat162float(__ldg(p));
}

template <typename T>
__global__ void __launch_bounds__(kChannelTile* kRowLanes)
    chunk_sums_kernel(const T* x, std::int64_t rows, std::int64_t channels, std::int64_t chunk,
                      double* partials) {
  __shared__ double lanes[kRowLanes][kChannelTile];
  const int column = static_cast<int>(threadIdx.x) % kChannelTile;
  const int lane = static_cast<int>(threadIdx.x) / kChannelTile;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kChannelTile + column;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t end = begin + chunk < rows ? begin + chunk : rows;
  double sum = 0.0;
  if (c < channels) {
#pragma unroll 4
    for (std::int64_t r = begin + lane; r < end; r += kRowLanes) {
      sum += load_double(x + r * channels + c);
    }
  }
  lanes[lane][column] = sum;
  __syncthreads();
  if (lane != 0 || c >= channels) return;
  double total = 0.0;
  for (int l = 0; l < kRowLanes; ++l) total += lanes[l][column];
  partials[static_cast<std::int64_t>(blockIdx.y) * channels + c] = total;
}

// Block (c, part) sums elements [part * chunk, (part + 1) * chunk) of channel c's rows * plane.
template <typename T>
__global__ void __launch_bounds__(kPlaneThreads)
    plane_sums_kernel(const T* x, std::int64_t rows, std::int64_t channels, std::int64_t plane,
                      std::int64_t chunk, double* partials) {
  __shared__ double partial[kPlaneThreads];
  const std::int64_t c = blockIdx.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t count = rows * plane;
  const std::int64_t end = begin + chunk < count ? begin + chunk : count;
  double sum = 0.0;
  for (std::int64_t e = begin + threadIdx.x; e < end; e += kPlaneThreads) {
    const std::int64_t r = e / plane;
    sum += load_double(x + (r * channels + c) * plane + (e - r * plane));
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kPlaneThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[static_cast<std::int64_t>(blockIdx.y) * channels + c] = partial[0];
}

__global__ void combine_kernel(const double* partials, std::int64_t parts, std::int64_t channels,
                               float* out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  double total = 0.0;
  for (std::int64_t p = 0; p < parts; ++p) total += partials[p * channels + c];
  out[c] = static_cast<float>(total);
}

}  // namespace

ChannelSums::ChannelSums(std::int64_t rows, std::int64_t channels, std::int64_t plane)
    : rows_(rows), channels_(channels), plane_(plane) {
  VDNN_EXPECTS(rows > 0 && channels > 0 && plane > 0, "ChannelSums: expected positive extents");
  if (plane == 1) {
    const std::int64_t tiles = (channels + kChannelTile - 1) / kChannelTile;
    parts_ = std::clamp<std::int64_t>((kTargetBlocks + tiles - 1) / tiles, 1,
                                      std::min<std::int64_t>(rows, 65535));
  } else {
    const std::int64_t per_channel = (rows * plane + kPlaneThreads - 1) / kPlaneThreads;
    parts_ = std::clamp<std::int64_t>((kTargetBlocks + channels - 1) / channels, 1,
                                      std::min<std::int64_t>(per_channel, 65535));
  }
}

std::size_t ChannelSums::scratch_bytes() const noexcept {
  return static_cast<std::size_t>(parts_ * channels_) * sizeof(double);
}

template <typename T>
void ChannelSums::sums(cudaStream_t stream, const T* x, void* scratch, float* out) const {
  auto* partials = static_cast<double*>(scratch);
  if (plane_ == 1) {
    const std::int64_t chunk = (rows_ + parts_ - 1) / parts_;
    const dim3 grid(static_cast<unsigned>((channels_ + kChannelTile - 1) / kChannelTile),
                    static_cast<unsigned>(parts_));
    chunk_sums_kernel<<<grid, kChannelTile * kRowLanes, 0, stream>>>(x, rows_, channels_, chunk,
                                                                     partials);
  } else {
    const std::int64_t chunk = (rows_ * plane_ + parts_ - 1) / parts_;
    const dim3 grid(static_cast<unsigned>(channels_), static_cast<unsigned>(parts_));
    plane_sums_kernel<<<grid, kPlaneThreads, 0, stream>>>(x, rows_, channels_, plane_, chunk,
                                                          partials);
  }
  VDNN_CHECK_LAUNCH();
  constexpr int kThreads = 256;
  combine_kernel<<<static_cast<unsigned>((channels_ + kThreads - 1) / kThreads), kThreads, 0,
                   stream>>>(partials, parts_, channels_, out);
  VDNN_CHECK_LAUNCH();
}

template void ChannelSums::sums<float>(cudaStream_t, const float*, void*, float*) const;
template void ChannelSums::sums<__nv_bfloat16>(cudaStream_t, const __nv_bfloat16*, void*,
                                               float*) const;

}  // namespace vdnn::layers::cuda
