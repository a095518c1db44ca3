// Per-channel sums. Channels-last: blocks of 32 channels by 8 row lanes over one chunk of rows (a
// warp reads 32 consecutive elements of a row), or, where rows are whole 16-byte vectors, blocks of
// up to 32 vectors by as many row lanes as fill 256 threads; a fixed-order combine of the lanes in
// shared memory, then one thread per channel adding the chunks in order. Channels-first: a block
// per channel and chunk of its elements (consecutive threads read consecutive elements of a plane),
// a fixed tree in shared memory, then the same combine.
#include "layers/cuda/ChannelSums.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr int kChannelTile = 32;
constexpr int kRowLanes = 8;
constexpr int kPlaneThreads = 256;
constexpr int kVectorThreads = 256;
constexpr int kMaxVectorTile = 32;  // vectors of a row per block
constexpr std::int64_t kTargetBlocks = 1024;

__device__ __forceinline__ double load_double(const float* p) { return __ldg(p); }
__device__ __forceinline__ double load_double(const __nv_bfloat16* p) {
  return __bfloat162float(__ldg(p));
}

// The gradient a pass reads: written (masked in place) only by the kMask passes.
template <bool kMask, typename T>
using GradPtr = std::conditional_t<kMask, T*, const T*>;

// x[i] as a double, first masked by the ReLU output y (kMask): where !(y > 0) the gradient is
// zeroed in place, as relu_mask_in_place does.
template <bool kMask, typename T>
__device__ __forceinline__ double masked_load(const T* y, GradPtr<kMask, T> x, std::int64_t i) {
  if constexpr (kMask) {
    if (!(load_double(y + i) > 0.0)) {
      x[i] = T(0.0f);
      return 0.0;
    }
  }
  return load_double(x + i);
}

template <bool kMask, typename T>
__global__ void __launch_bounds__(kChannelTile* kRowLanes)
    chunk_sums_kernel(const T* y, GradPtr<kMask, T> x, std::int64_t rows, std::int64_t channels,
                      std::int64_t chunk, double* partials) {
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
      sum += masked_load<kMask>(y, x, r * channels + c);
    }
  }
  lanes[lane][column] = sum;
  __syncthreads();
  if (lane != 0 || c >= channels) return;
  double total = 0.0;
  for (int l = 0; l < kRowLanes; ++l) total += lanes[l][column];
  partials[static_cast<std::int64_t>(blockIdx.y) * channels + c] = total;
}

// One 16-byte vector of kVec elements.
template <typename T>
struct alignas(16) Vector16 {
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  T v[kVec];
};

// Channels-last rows of whole vectors: thread (column, lane) sums vector `column` of the block's
// tile over rows begin + lane, begin + lane + lanes, ... of its chunk, kVec channels at once.
template <bool kMask, typename T>
__global__ void __launch_bounds__(kVectorThreads)
    vector_sums_kernel(const T* y, GradPtr<kMask, T> x, std::int64_t rows, std::int64_t channels,
                       std::int64_t chunk, int tile, double* partials) {
  using V = Vector16<T>;
  constexpr int kVec = V::kVec;
  __shared__ double lanes[kVectorThreads * kVec];  // [lane][column * kVec + k]
  const int column = static_cast<int>(threadIdx.x) % tile;
  const int lane = static_cast<int>(threadIdx.x) / tile;
  const int row_lanes = kVectorThreads / tile;
  const std::int64_t vectors = channels / kVec;
  const std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * tile + column;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t end = begin + chunk < rows ? begin + chunk : rows;
  double sum[kVec] = {};
  if (v < vectors && lane < row_lanes) {
    for (std::int64_t r = begin + lane; r < end; r += row_lanes) {
      V g = reinterpret_cast<const V*>(x + r * channels)[v];
      if constexpr (kMask) {
        const V out = reinterpret_cast<const V*>(y + r * channels)[v];
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          if (!(static_cast<float>(out.v[k]) > 0.0f)) g.v[k] = T(0.0f);
        }
        reinterpret_cast<V*>(x + r * channels)[v] = g;
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum[k] += static_cast<double>(static_cast<float>(g.v[k]));
    }
  }
  if (lane < row_lanes) {
#pragma unroll
    for (int k = 0; k < kVec; ++k) lanes[lane * tile * kVec + column * kVec + k] = sum[k];
  }
  __syncthreads();
  if (lane != 0 || v >= vectors) return;
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    double total = 0.0;
    for (int l = 0; l < row_lanes; ++l) total += lanes[l * tile * kVec + column * kVec + k];
    partials[static_cast<std::int64_t>(blockIdx.y) * channels + v * kVec + k] = total;
  }
}

// Block (c, part) sums elements [part * chunk, (part + 1) * chunk) of channel c's rows * plane.
template <bool kMask, typename T>
__global__ void __launch_bounds__(kPlaneThreads)
    plane_sums_kernel(const T* y, GradPtr<kMask, T> x, std::int64_t rows, std::int64_t channels,
                      std::int64_t plane, std::int64_t chunk, double* partials) {
  __shared__ double partial[kPlaneThreads];
  const std::int64_t c = blockIdx.x;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * chunk;
  const std::int64_t count = rows * plane;
  const std::int64_t end = begin + chunk < count ? begin + chunk : count;
  double sum = 0.0;
  for (std::int64_t e = begin + threadIdx.x; e < end; e += kPlaneThreads) {
    const std::int64_t r = e / plane;
    sum += masked_load<kMask>(y, x, (r * channels + c) * plane + (e - r * plane));
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

template <bool kMask, typename T, typename X>
void ChannelSums::launch(cudaStream_t stream, const T* relu_output, X x, void* scratch,
                         float* out) const {
  static_assert(std::is_same_v<X, GradPtr<kMask, T>>, "the gradient is written only when masked");
  auto* partials = static_cast<double*>(scratch);
  constexpr int kVec = Vector16<T>::kVec;
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (plane_ == 1 && channels_ % kVec == 0 && aligned(x) && (!kMask || aligned(relu_output))) {
    const std::int64_t vectors = channels_ / kVec;
    const int tile = static_cast<int>(std::min<std::int64_t>(vectors, kMaxVectorTile));
    const std::int64_t chunk = (rows_ + parts_ - 1) / parts_;
    const dim3 grid(static_cast<unsigned>((vectors + tile - 1) / tile),
                    static_cast<unsigned>(parts_));
    vector_sums_kernel<kMask><<<grid, kVectorThreads, 0, stream>>>(relu_output, x, rows_, channels_,
                                                                   chunk, tile, partials);
  } else if (plane_ == 1) {
    const std::int64_t chunk = (rows_ + parts_ - 1) / parts_;
    const dim3 grid(static_cast<unsigned>((channels_ + kChannelTile - 1) / kChannelTile),
                    static_cast<unsigned>(parts_));
    chunk_sums_kernel<kMask><<<grid, kChannelTile * kRowLanes, 0, stream>>>(
        relu_output, x, rows_, channels_, chunk, partials);
  } else {
    const std::int64_t chunk = (rows_ * plane_ + parts_ - 1) / parts_;
    const dim3 grid(static_cast<unsigned>(channels_), static_cast<unsigned>(parts_));
    plane_sums_kernel<kMask><<<grid, kPlaneThreads, 0, stream>>>(relu_output, x, rows_, channels_,
                                                                 plane_, chunk, partials);
  }
  VDNN_CHECK_LAUNCH();
  constexpr int kThreads = 256;
  combine_kernel<<<static_cast<unsigned>((channels_ + kThreads - 1) / kThreads), kThreads, 0,
                   stream>>>(partials, parts_, channels_, out);
  VDNN_CHECK_LAUNCH();
}

template <typename T>
void ChannelSums::sums(cudaStream_t stream, const T* x, void* scratch, float* out) const {
  launch<false>(stream, static_cast<const T*>(nullptr), x, scratch, out);
}

template <typename T>
void ChannelSums::masked_sums(cudaStream_t stream, const T* relu_output, T* x, void* scratch,
                              float* out) const {
  launch<true>(stream, relu_output, x, scratch, out);
}

template void ChannelSums::sums<float>(cudaStream_t, const float*, void*, float*) const;
template void ChannelSums::sums<__nv_bfloat16>(cudaStream_t, const __nv_bfloat16*, void*,
                                               float*) const;
template void ChannelSums::masked_sums<float>(cudaStream_t, const float*, float*, void*,
                                              float*) const;
template void ChannelSums::masked_sums<__nv_bfloat16>(cudaStream_t, const __nv_bfloat16*,
                                                      __nv_bfloat16*, void*, float*) const;

}  // namespace vdnn::layers::cuda
