// Host-side launchers of the optimizer kernels (layers/Optimizer.hpp on CUDA), F32: deterministic
// sums of squares reduced into device memory, the clip coefficient computed there, and the update
// kernels that read both, so that a step never waits on the host. Each enqueues on `stream`,
// checks the launch and returns without waiting; pointers are device memory; counts are positive
// and at most INT_MAX.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "layers/OptimizerRules.hpp"

namespace vdnn::layers::cuda {

/// Blocks of the first pass of a sum of squares: partial sums per tensor.
inline constexpr int kSquareBlocks = 64;

/// partials[b] for b < kSquareBlocks: the sum of squares of the elements of x (n of them) that
/// block b strides over. Throws runtime::CudaError.
void partial_squares(cudaStream_t stream, const float* x, std::int64_t n, float* partials);

/// sums[k] = the kSquareBlocks partials of tensor k (partials[k * kSquareBlocks ...]) added in a
/// fixed order, for k < count. Throws runtime::CudaError.
void finish_squares(cudaStream_t stream, const float* partials, int count, float* sums);

/// *clip = optim::clip_coefficient(max_norm, sqrt(sum of sums[offset + k * stride], k < count)).
/// Throws runtime::CudaError.
void clip_from_squares(cudaStream_t stream, const float* sums, int count, int stride, int offset,
                       double max_norm, float* clip);

/// optim::momentum_element over n elements: SGD, or LARS with the trust ratio from
/// squares[0] (weight) and squares[1] (gradient) when `squares` is not null. `clip` (null: 1) is
/// the clip coefficient. Throws runtime::CudaError.
void momentum_update(cudaStream_t stream, const optim::UpdateRule<float>& rule, float* param,
                     const float* grad, float* buffer, std::int64_t n, const float* clip,
                     const float* squares);

/// optim::adamw_element over n elements; `clip` as momentum_update. Throws runtime::CudaError.
void adamw_update(cudaStream_t stream, const optim::UpdateRule<float>& rule, float* param,
                  const float* grad, float* exp_avg, float* exp_avg_sq, std::int64_t n,
                  const float* clip);

}  // namespace vdnn::layers::cuda
