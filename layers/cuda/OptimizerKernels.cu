// The optimizer kernels behind OptimizerKernels.hpp: two-pass block reductions (a fixed grid, then
// one block per tensor) so that every sum is bitwise repeatable, and one thread per element for
// the updates (one launch over every parameter, a block per chunk), whose rules are
// OptimizerRules.hpp's.
#include "layers/cuda/OptimizerKernels.hpp"

#include <algorithm>

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

template <bool kAdamW>
__global__ void update_kernel(const UpdateChunk* chunks, optim::UpdateRule<float> decayed,
                              optim::UpdateRule<float> excluded, const float* clip) {
  const UpdateChunk c = chunks[blockIdx.x];
  const optim::UpdateRule<float>& rule = c.excluded ? excluded : decayed;
  const float factor = clip_or_one(clip);
  if constexpr (kAdamW) {
    for (std::int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
      optim::adamw_element(rule, factor, c.param[i], c.grad[i], c.state0[i], c.state1[i]);
    }
  } else {
    const float trust =
        c.squares == nullptr ? 1.0f : optim::trust_ratio(rule, c.squares[0], c.squares[1], factor);
    for (std::int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
      optim::momentum_element(rule, trust, factor, c.param[i], c.grad[i], c.state0[i]);
    }
  }
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

void append_chunks(const UpdateChunk& entry, std::int64_t n, std::vector<UpdateChunk>& chunks) {
  for (std::int64_t begin = 0; begin < n; begin += kUpdateChunk) {
    UpdateChunk& c = chunks.emplace_back(entry);
    c.begin = begin;
    c.end = std::min(n, begin + kUpdateChunk);
  }
}

void update(cudaStream_t stream, bool adamw, const optim::UpdateRule<float>& decayed,
            const optim::UpdateRule<float>& excluded, const UpdateChunk* chunks, int count,
            const float* clip) {
  const auto blocks = static_cast<unsigned int>(count);
  if (adamw) {
    update_kernel<true><<<blocks, kBlockThreads, 0, stream>>>(chunks, decayed, excluded, clip);
  } else {
    update_kernel<false><<<blocks, kBlockThreads, 0, stream>>>(chunks, decayed, excluded, clip);
  }
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
