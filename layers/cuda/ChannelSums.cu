// Per-channel sums of a channels-last tensor: blocks of 32 channels by 8 row lanes over one chunk
// of rows (a warp reads 128 consecutive bytes of a row), a fixed-order combine of the lanes in
// shared memory, then one thread per channel adding the chunks in order.
#include "layers/cuda/ChannelSums.hpp"

#include <algorithm>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr int kChannelTile = 32;
constexpr int kRowLanes = 8;
constexpr std::int64_t kTargetBlocks = 1024;

__global__ void __launch_bounds__(kChannelTile* kRowLanes)
    chunk_sums_kernel(const float* x, std::int64_t rows, std::int64_t channels, std::int64_t chunk,
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
    for (std::int64_t r = begin + lane; r < end; r += kRowLanes) sum += __ldg(x + r * channels + c);
  }
  lanes[lane][column] = sum;
  __syncthreads();
  if (lane != 0 || c >= channels) return;
  double total = 0.0;
  for (int l = 0; l < kRowLanes; ++l) total += lanes[l][column];
  partials[static_cast<std::int64_t>(blockIdx.y) * channels + c] = total;
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

ChannelSums::ChannelSums(std::int64_t rows, std::int64_t channels)
    : rows_(rows), channels_(channels) {
  VDNN_EXPECTS(rows > 0 && channels > 0, "ChannelSums: expected positive extents");
  const std::int64_t tiles = (channels + kChannelTile - 1) / kChannelTile;
  parts_ = std::clamp<std::int64_t>((kTargetBlocks + tiles - 1) / tiles, 1,
                                    std::min<std::int64_t>(rows, 65535));
}

std::size_t ChannelSums::scratch_bytes() const noexcept {
  return static_cast<std::size_t>(parts_ * channels_) * sizeof(double);
}

void ChannelSums::sums(cudaStream_t stream, const float* x, void* scratch, float* out) const {
  const std::int64_t chunk = (rows_ + parts_ - 1) / parts_;
  const dim3 grid(static_cast<unsigned>((channels_ + kChannelTile - 1) / kChannelTile),
                  static_cast<unsigned>(parts_));
  auto* partials = static_cast<double*>(scratch);
  chunk_sums_kernel<<<grid, kChannelTile * kRowLanes, 0, stream>>>(x, rows_, channels_, chunk,
                                                                   partials);
  VDNN_CHECK_LAUNCH();
  constexpr int kThreads = 256;
  combine_kernel<<<static_cast<unsigned>((channels_ + kThreads - 1) / kThreads), kThreads, 0,
                   stream>>>(partials, parts_, channels_, out);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
