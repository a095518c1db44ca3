// The optimizer kernels behind OptimizerKernels.hpp: two-pass block reductions (a fixed grid, then
// one block per tensor) so that every sum is bitwise repeatable, and one thread per element for
// the updates, whose rules are OptimizerRules.hpp's.
#include "layers/cuda/OptimizerKernels.hpp"

#include "layers/cuda/BlockReduce.cuh"
#include "layers/cuda/KernelGrid.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

__global__ void partial_squares_kernel(const float* x, std::int64_t n, float* partials) {
  float sum = 0.0f;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    sum += x[i] * x[i];
  }
  sum = block_reduce(sum, Sum{});
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// One block per tensor k: its partials, one per thread (kSquareBlocks <= kReduceBlock).
__global__ void finish_squares_kernel(const float* partials, float* sums) {
  const float value =
      threadIdx.x < kSquareBlocks ? partials[blockIdx.x * kSquareBlocks + threadIdx.x] : 0.0f;
  const float sum = block_reduce(value, Sum{});
  if (threadIdx.x == 0) sums[blockIdx.x] = sum;
}

__global__ void clip_kernel(const float* sums, int count, int stride, int offset, float max_norm,
                            float* clip) {
  float total = 0.0f;
  for (int k = static_cast<int>(threadIdx.x); k < count; k += blockDim.x) {
    total += sums[offset + k * stride];
  }
  total = block_reduce(total, Sum{});
  if (threadIdx.x == 0) *clip = optim::clip_coefficient(max_norm, sqrtf(total));
}

__device__ float clip_or_one(const float* clip) { return clip == nullptr ? 1.0f : *clip; }

__global__ void momentum_kernel(optim::UpdateRule<float> rule, float* param, const float* grad,
                                float* buffer, std::int64_t n, const float* clip,
                                const float* squares) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float c = clip_or_one(clip);
  const float trust =
      squares == nullptr ? 1.0f : optim::trust_ratio(rule, squares[0], squares[1], c);
  optim::momentum_element(rule, trust, c, param[i], grad[i], buffer[i]);
}

__global__ void adamw_kernel(optim::UpdateRule<float> rule, float* param, const float* grad,
                             float* exp_avg, float* exp_avg_sq, std::int64_t n, const float* clip) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  optim::adamw_element(rule, clip_or_one(clip), param[i], grad[i], exp_avg[i], exp_avg_sq[i]);
}

}  // namespace

void partial_squares(cudaStream_t stream, const float* x, std::int64_t n, float* partials) {
  partial_squares_kernel<<<kSquareBlocks, kReduceBlock, 0, stream>>>(x, n, partials);
  VDNN_CHECK_LAUNCH();
}

void finish_squares(cudaStream_t stream, const float* partials, int count, float* sums) {
  static_assert(kSquareBlocks <= kReduceBlock, "one partial per thread");
  finish_squares_kernel<<<static_cast<unsigned int>(count), kReduceBlock, 0, stream>>>(partials,
                                                                                       sums);
  VDNN_CHECK_LAUNCH();
}

void clip_from_squares(cudaStream_t stream, const float* sums, int count, int stride, int offset,
                       double max_norm, float* clip) {
  clip_kernel<<<1, kReduceBlock, 0, stream>>>(sums, count, stride, offset,
                                              static_cast<float>(max_norm), clip);
  VDNN_CHECK_LAUNCH();
}

void momentum_update(cudaStream_t stream, const optim::UpdateRule<float>& rule, float* param,
                     const float* grad, float* buffer, std::int64_t n, const float* clip,
                     const float* squares) {
  momentum_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(rule, param, grad, buffer, n, clip,
                                                               squares);
  VDNN_CHECK_LAUNCH();
}

void adamw_update(cudaStream_t stream, const optim::UpdateRule<float>& rule, float* param,
                  const float* grad, float* exp_avg, float* exp_avg_sq, std::int64_t n,
                  const float* clip) {
  adamw_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(rule, param, grad, exp_avg, exp_avg_sq,
                                                            n, clip);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
