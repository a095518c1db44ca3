// Host-side launchers of the optimizer kernels (layers/Optimizer.hpp on CUDA), F32: deterministic
// sums of squares reduced into device memory, the clip coefficient computed there, and one update
// launch over every parameter that reads both, so that a step never waits on the host. Each
// enqueues on `stream`, checks the launch and returns without waiting; pointers are device memory;
// counts are positive and at most INT_MAX.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

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

/// Elements a block of update() covers at most: a parameter of more is cut into chunks.
inline constexpr std::int64_t kUpdateChunk = 8192;

/// One block's share of update(): elements [begin, end) of one parameter.
struct UpdateChunk {
  float* param = nullptr;
  const float* grad = nullptr;
  float* state0 = nullptr;  // SGD and LARS: momentum_buffer; AdamW: exp_avg
  float* state1 = nullptr;  // AdamW: exp_avg_sq
  /// LARS on a parameter it scales: its [weight, gradient] sums of squares; else null.
  const float* squares = nullptr;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  bool excluded = false;  // updated by `excluded`'s rule instead of `decayed`'s
};

inline bool operator==(const UpdateChunk& a, const UpdateChunk& b) noexcept {
  return a.param == b.param && a.grad == b.grad && a.state0 == b.state0 && a.state1 == b.state1 &&
         a.squares == b.squares && a.begin == b.begin && a.end == b.end && a.excluded == b.excluded;
}

/// The chunks of one parameter (`n` > 0 elements) at `entry`'s pointers: `entry` with [begin, end)
/// set to each range of at most kUpdateChunk elements in turn, appended to `chunks`.
void append_chunks(const UpdateChunk& entry, std::int64_t n, std::vector<UpdateChunk>& chunks);

/// Every chunk of `chunks` (device memory, `count` > 0 of them) updated in one launch, one block
/// per chunk: optim::adamw_element when `adamw`, else optim::momentum_element (SGD, or LARS with
/// the trust ratio from the chunk's squares). `clip` (null: 1) is the clip coefficient. The same
/// element rules as one launch per parameter, so the same bits, without a launch per parameter
/// (thousands in ResNet-1001). Throws runtime::CudaError.
void update(cudaStream_t stream, bool adamw, const optim::UpdateRule<float>& decayed,
            const optim::UpdateRule<float>& excluded, const UpdateChunk* chunks, int count,
            const float* clip);

}  // namespace vdnn::layers::cuda
