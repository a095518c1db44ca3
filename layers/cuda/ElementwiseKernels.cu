// The element-wise kernels behind ElementwiseKernels.hpp: grid-stride loops over 64-bit indices,
// so one launch covers any tensor size.
#include "layers/cuda/ElementwiseKernels.hpp"

#include <algorithm>

#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr int kBlock = 256;
// Past this many blocks each thread loops; more only adds scheduling overhead.
constexpr std::int64_t kMaxBlocks = 65536;

unsigned grid_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kBlock - 1) / kBlock, 1, kMaxBlocks));
}

__device__ std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

__device__ void store(float* out, float value, bool accumulate) {
  *out = accumulate ? *out + value : value;
}

__global__ void add_rows_kernel(float* dst, std::int64_t dst_stride, const float* src,
                                std::int64_t src_stride, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = first_index(); i < rows * cols; i += grid_stride()) {
    const std::int64_t r = i / cols;
    const std::int64_t c = i - r * cols;
    dst[r * dst_stride + c] += src[r * src_stride + c];
  }
}

__global__ void add_pair_kernel(const float* a, const float* b, float* y, std::int64_t n) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) y[i] = a[i] + b[i];
}

__global__ void relu_forward_kernel(const float* x, float* y, std::int64_t n) {
  // A select rather than fmaxf, which would turn a NaN input into 0 and hide it from the loss.
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, std::int64_t n,
                                     bool accumulate) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    store(dx + i, y[i] > 0.0f ? dy[i] : 0.0f, accumulate);
  }
}

// DropoutCpu's mask, spelled out again for the device: splitmix64's finaliser (without the
// increment runtime::mix64 adds) and the golden-ratio step.
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

__host__ __device__ constexpr std::uint64_t dropout_mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

__global__ void dropout_kernel(double p, float scale, std::uint64_t state, const float* in,
                               float* out, std::int64_t n, bool accumulate) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const std::uint64_t bits = dropout_mix64(state + (static_cast<std::uint64_t>(i) + 1) * kGolden);
    const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
    store(out + i, in[i] * (u >= p ? scale : 0.0f), accumulate);
  }
}

}  // namespace

void copy_rows(cudaStream_t stream, float* dst, std::int64_t dst_stride, const float* src,
               std::int64_t src_stride, std::int64_t rows, std::int64_t cols, bool accumulate) {
  if (!accumulate) {
    constexpr auto kFloat = static_cast<std::int64_t>(sizeof(float));
    VDNN_CHECK_CUDA(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dst_stride * kFloat), src,
                                      static_cast<std::size_t>(src_stride * kFloat),
                                      static_cast<std::size_t>(cols * kFloat),
                                      static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice,
                                      stream));
    return;
  }
  add_rows_kernel<<<grid_for(rows * cols), kBlock, 0, stream>>>(dst, dst_stride, src, src_stride,
                                                                rows, cols);
  VDNN_CHECK_LAUNCH();
}

void add_pair(cudaStream_t stream, const float* a, const float* b, float* y, std::int64_t n) {
  add_pair_kernel<<<grid_for(n), kBlock, 0, stream>>>(a, b, y, n);
  VDNN_CHECK_LAUNCH();
}

void relu_forward(cudaStream_t stream, const float* x, float* y, std::int64_t n) {
  relu_forward_kernel<<<grid_for(n), kBlock, 0, stream>>>(x, y, n);
  VDNN_CHECK_LAUNCH();
}

void relu_backward(cudaStream_t stream, const float* y, const float* dy, float* dx, std::int64_t n,
                   bool accumulate) {
  relu_backward_kernel<<<grid_for(n), kBlock, 0, stream>>>(y, dy, dx, n, accumulate);
  VDNN_CHECK_LAUNCH();
}

void dropout_apply(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                   const float* in, float* out, std::int64_t n, bool accumulate) {
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  const std::uint64_t state = dropout_mix64(dropout_mix64(seed) ^ step);
  dropout_kernel<<<grid_for(n), kBlock, 0, stream>>>(p, scale, state, in, out, n, accumulate);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
