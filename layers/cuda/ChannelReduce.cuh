// ChannelReduce: per-channel sums over N, H and W of K values a functor gives for each element of
// an NCHW or NHWC feature map (the parameter gradients of layernorm2d and layer_scale), in two
// levels whose order the extents fix: bitwise reproducible, no atomics. Internal to layers/cuda/
// (.cu files only).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "runtime/Shape.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {

/// K values of one element, summed per channel.
template <int K>
struct Terms {
  float v[K];
};

/// K per-channel outputs, [channels] F32 each; a null one is not written.
template <int K>
struct ChannelOutputs {
  float* out[K];
};

/// The extents of a reduction over a rank-4 feature map and the parts of its first level.
struct ChannelGrid {
  static constexpr int kChannelTile = 32;  // channels-last: channels of a block, one per lane
  static constexpr int kRowLanes = 8;      // channels-last: pixel rows of a block
  static constexpr int kPlaneThreads = 256;

  std::int64_t samples = 1;
  std::int64_t channels = 1;
  std::int64_t pixels = 1;  // H * W
  bool channels_last = false;
  std::int64_t parts = 1;

  /// The grid of a rank-4 map of NCHW-logical `shape` (positive extents) stored in `layout`:
  /// about a thousand first-level blocks where the map is large enough.
  static ChannelGrid of(const runtime::Shape& shape, runtime::Layout layout) {
    constexpr std::int64_t kTargetBlocks = 1024;
    const std::int64_t samples = shape.n();
    const std::int64_t channels = shape.c();
    const std::int64_t pixels = shape.h() * shape.w();
    const bool channels_last = layout == runtime::Layout::Nhwc;
    const std::int64_t rows = samples * pixels;
    const std::int64_t per_part = channels_last ? kRowLanes : kPlaneThreads;
    const std::int64_t columns =
        channels_last ? (channels + kChannelTile - 1) / kChannelTile : channels;
    const std::int64_t parts =
        std::clamp<std::int64_t>((kTargetBlocks + columns - 1) / columns, 1,
                                 std::min<std::int64_t>((rows + per_part - 1) / per_part, 65535));
    return {samples, channels, pixels, channels_last, parts};
  }

  /// Device scratch bytes a reduction of k values needs (8-byte aligned).
  std::size_t scratch_bytes(int k) const noexcept {
    return static_cast<std::size_t>(parts * channels * k) * sizeof(double);
  }
};

namespace channel_reduce_detail {

template <int K>
__device__ __forceinline__ void add_terms(double (&sum)[K], const Terms<K>& t) {
#pragma unroll
  for (int k = 0; k < K; ++k) sum[k] += static_cast<double>(t.v[k]);
}

// Channels-last: block (tile, part) of kChannelTile lanes by kRowLanes rows sums its channels over
// rows [begin, end) of its part; partials[(part * K + k) * C + c].
template <int K, typename F>
__global__ void __launch_bounds__(ChannelGrid::kChannelTile* ChannelGrid::kRowLanes)
    rows_kernel(F f, std::int64_t rows, std::int64_t channels, std::int64_t chunk,
                double* partials) {
  constexpr int kTile = ChannelGrid::kChannelTile;
  constexpr int kLanes = ChannelGrid::kRowLanes;
  __shared__ double lanes[kLanes][K][kTile];
  const int column = static_cast<int>(threadIdx.x) % kTile;
  const int lane = static_cast<int>(threadIdx.x) / kTile;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kTile + column;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t end = begin + chunk < rows ? begin + chunk : rows;
  double sum[K] = {};
  if (c < channels) {
    for (std::int64_t r = begin + lane; r < end; r += kLanes) {
      add_terms(sum, f(r * channels + c, r, c));
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) lanes[lane][k][column] = sum[k];
  __syncthreads();
  if (lane != 0 || c >= channels) return;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    double total = 0.0;
    for (int l = 0; l < kLanes; ++l) total += lanes[l][k][column];
    partials[(static_cast<std::int64_t>(blockIdx.y) * K + k) * channels + c] = total;
  }
}

// Channels-first: block (c, part) sums elements [begin, end) of channel c's N * H * W.
template <int K, typename F>
__global__ void __launch_bounds__(ChannelGrid::kPlaneThreads)
    planes_kernel(F f, std::int64_t samples, std::int64_t channels, std::int64_t pixels,
                  std::int64_t chunk, double* partials) {
  constexpr int kThreads = ChannelGrid::kPlaneThreads;
  __shared__ double partial[K][kThreads];
  const std::int64_t c = blockIdx.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t count = samples * pixels;
  const std::int64_t end = begin + chunk < count ? begin + chunk : count;
  double sum[K] = {};
  for (std::int64_t e = begin + threadIdx.x; e < end; e += kThreads) {
    const std::int64_t n = e / pixels;
    const std::int64_t p = e - n * pixels;
    add_terms(sum, f((n * channels + c) * pixels + p, e, c));
  }
#pragma unroll
  for (int k = 0; k < K; ++k) partial[k][threadIdx.x] = sum[k];
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
#pragma unroll
      for (int k = 0; k < K; ++k) partial[k][threadIdx.x] += partial[k][threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    partials[(static_cast<std::int64_t>(blockIdx.y) * K + k) * channels + c] = partial[k][0];
  }
}

// out[k][c] = the parts' partials added in order.
template <int K>
__global__ void combine_kernel(const double* partials, std::int64_t parts, std::int64_t channels,
                               ChannelOutputs<K> outputs) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= K * channels) return;
  const std::int64_t k = i / channels;
  const std::int64_t c = i - k * channels;
  if (outputs.out[k] == nullptr) return;
  double total = 0.0;
  for (std::int64_t part = 0; part < parts; ++part)
    total += partials[(part * K + k) * channels + c];
  outputs.out[k][c] = static_cast<float>(total);
}

}  // namespace channel_reduce_detail

/// outputs.out[k][c] = sum over the elements of channel c of f(element, pixel, c).v[k], summed in
/// double: element is the index in the tensor's memory order, pixel = n * H * W + h * W + w.
/// `scratch` holds grid.scratch_bytes(K) of device memory. Enqueued on `stream`; throws
/// runtime::CudaError when a launch fails.
template <int K, typename F>
void channel_reduce(cudaStream_t stream, const ChannelGrid& grid, F f, void* scratch,
                    ChannelOutputs<K> outputs) {
  auto* partials = static_cast<double*>(scratch);
  const std::int64_t rows = grid.samples * grid.pixels;
  const std::int64_t chunk = (rows + grid.parts - 1) / grid.parts;
  const auto parts = static_cast<unsigned>(grid.parts);
  if (grid.channels_last) {
    constexpr int kTile = ChannelGrid::kChannelTile;
    const dim3 blocks(static_cast<unsigned>((grid.channels + kTile - 1) / kTile), parts);
    channel_reduce_detail::rows_kernel<K><<<blocks, kTile * ChannelGrid::kRowLanes, 0, stream>>>(
        f, rows, grid.channels, chunk, partials);
  } else {
    const dim3 blocks(static_cast<unsigned>(grid.channels), parts);
    channel_reduce_detail::planes_kernel<K><<<blocks, ChannelGrid::kPlaneThreads, 0, stream>>>(
        f, grid.samples, grid.channels, grid.pixels, chunk, partials);
  }
  VDNN_CHECK_LAUNCH();
  constexpr int kCombineThreads = 256;
  const std::int64_t total = K * grid.channels;
  channel_reduce_detail::combine_kernel<K>
      <<<static_cast<unsigned>((total + kCombineThreads - 1) / kCombineThreads), kCombineThreads, 0,
         stream>>>(partials, grid.parts, grid.channels, outputs);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
