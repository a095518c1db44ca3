// ChannelSums: the per-channel sum of a tensor, deterministic (the NHWC convolution's bias
// gradient: cuDNN's cudnnConvolutionBackwardBias is several times slower than a pass over the
// gradient there; and every bias gradient of a BF16 layer, which cuDNN cannot reduce into an F32
// gradient). Internal to layers/cuda/.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace vdnn::layers::cuda {

/// Sums over the rows and the plane of a row-major [rows, channels, plane] F32 or bf16 tensor
/// (plane 1: channels-last, NHWC with rows = N * H * W; NCHW: rows = N, plane = H * W), in two
/// levels with a summation order fixed by the extents (bitwise reproducible, no atomics).
/// Channels-last tensors whose rows are whole 16-byte vectors (channels % 8 == 0 in bf16,
/// % 4 == 0 in F32, 16-byte aligned) are read a vector per thread.
class ChannelSums {
 public:
  /// Throws runtime::InvalidArgument for extents below 1.
  ChannelSums(std::int64_t rows, std::int64_t channels, std::int64_t plane = 1);
  /// Device scratch bytes sums() needs.
  std::size_t scratch_bytes() const noexcept;
  /// out[c] = sum over r and p of x[(r * channels + c) * plane + p], accumulated in double (bf16
  /// elements read exactly), enqueued on `stream`; `scratch` holds scratch_bytes() of device
  /// memory, 8-byte aligned. T is float or __nv_bfloat16. Throws runtime::CudaError when the
  /// launch fails.
  template <typename T>
  void sums(cudaStream_t stream, const T* x, void* scratch, float* out) const;
  /// The backward of a fused ReLU and the bias gradient in one pass over x (a gradient): first
  /// x = relu_output > 0 ? x : 0 in place (ElementwiseKernels' relu_mask_in_place: a NaN output
  /// masks), then sums() of the masked x, bitwise what the two calls give. Same contract as sums().
  template <typename T>
  void masked_sums(cudaStream_t stream, const T* relu_output, T* x, void* scratch,
                   float* out) const;

 private:
  std::int64_t rows_;
  std::int64_t channels_;
  std::int64_t plane_;
  std::int64_t parts_;  // chunks of the first level (of rows, or of each channel's elements)

  // x is T* for kMask (masked in place), const T* otherwise.
  template <bool kMask, typename T, typename X>
  void launch(cudaStream_t stream, const T* relu_output, X x, void* scratch, float* out) const;
};

}  // namespace vdnn::layers::cuda
