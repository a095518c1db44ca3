// Deterministic block-wide reductions for the CUDA layers' own kernels: a fixed shuffle tree in
// each warp, then one warp over the per-warp partials. The same block size always combines the
// same values in the same order, so results are bitwise reproducible (no atomics).
#pragma once

namespace vdnn::layers::cuda {

inline constexpr int kWarpSize = 32;
/// Block size of the kernels that reduce with block_reduce (a multiple of kWarpSize, <= 1024).
inline constexpr int kReduceBlock = 256;

struct Sum {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

/// Combines every thread's `value` with `op` (associative, commutative) and returns the result to
/// every thread. Every thread of the block must call it, with blockDim.x a multiple of kWarpSize.
/// Consecutive calls may reuse the same T: the leading barrier protects the shared partials.
template <typename T, typename Op>
__device__ T block_reduce(T value, Op op) {
  __shared__ T partials[kWarpSize];
  const unsigned lane = threadIdx.x % kWarpSize;
  const unsigned warp = threadIdx.x / kWarpSize;
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = op(value, __shfl_down_sync(0xFFFFFFFFu, value, offset));
  }
  __syncthreads();
  if (lane == 0) partials[warp] = value;
  __syncthreads();
  if (warp == 0) {
    const unsigned warps = blockDim.x / kWarpSize;
    // Lanes past the last warp keep their own value, which the guard below never combines. They
    // must not read partials[0]: lane 0 overwrites it with no barrier in between.
    if (lane < warps) value = partials[lane];
    for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2) {
      const T other = __shfl_down_sync(0xFFFFFFFFu, value, offset);
      if (lane + offset < warps) value = op(value, other);
    }
    if (lane == 0) partials[0] = value;
  }
  __syncthreads();
  return partials[0];
}

}  // namespace vdnn::layers::cuda
