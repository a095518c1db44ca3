// ChannelSums: the per-channel sum of a channels-last tensor, deterministic (the NHWC convolution's
// bias gradient: cuDNN's cudnnConvolutionBackwardBias is several times slower than a pass over the
// gradient there). Internal to layers/cuda/.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace vdnn::layers::cuda {

/// Sums over the rows of a row-major [rows, channels] F32 tensor (NHWC: rows = N * H * W), in two
/// levels with a summation order fixed by the extents (bitwise reproducible, no atomics).
class ChannelSums {
 public:
  /// Throws runtime::InvalidArgument for extents below 1.
  ChannelSums(std::int64_t rows, std::int64_t channels);
  /// Device scratch bytes sums() needs.
  std::size_t scratch_bytes() const noexcept;
  /// out[c] = sum over r of x[r * channels + c], accumulated in double, enqueued on `stream`;
  /// `scratch` holds scratch_bytes() of device memory, 8-byte aligned. Throws runtime::CudaError
  /// when the launch fails.
  void sums(cudaStream_t stream, const float* x, void* scratch, float* out) const;

 private:
  std::int64_t rows_;
  std::int64_t channels_;
  std::int64_t parts_;  // row chunks of the first level
};

}  // namespace vdnn::layers::cuda
