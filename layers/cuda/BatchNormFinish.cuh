// BatchNormFinish: the per-channel second level of the CUDA batch norm's reductions (the partial
// pairs of a channel combined in a fixed order) and what its finish kernels store from the totals,
// shared by the kernels of one rank (BatchNormKernels.cuh) and of a synchronized batch norm's
// ranks (BatchNormRanks.cu). Device code only; every helper is inline.
#pragma once

#include <cstdint>

#include "layers/BatchNormMoments.hpp"
#include "layers/cuda/BlockReduce.cuh"

namespace vdnn::layers::cuda::bn {

// The block of the combine kernels (one warp per channel).
inline constexpr int kCombineBlock = 256;

// Second level: one warp sums a channel's `parts` partial pairs, lanes strided, then a fixed
// shuffle tree. Returns the two totals to lane 0 (other lanes get partial values).
__device__ __forceinline__ void combine_parts(const double* partials, std::int64_t c, int parts,
                                              unsigned lane, double& t0, double& t1) {
  t0 = 0.0;
  t1 = 0.0;
  for (int p = static_cast<int>(lane); p < parts; p += kWarpSize) {
    t0 += partials[2 * (c * parts + p)];
    t1 += partials[2 * (c * parts + p) + 1];
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    t0 += __shfl_down_sync(0xFFFFFFFFu, t0, offset);
    t1 += __shfl_down_sync(0xFFFFFFFFu, t1, offset);
  }
}

// Blocks of kCombineBlock for `channels` channels, a warp each.
inline unsigned combine_blocks(std::int64_t channels) {
  constexpr std::int64_t kWarps = kCombineBlock / kWarpSize;
  return static_cast<unsigned>((channels + kWarps - 1) / kWarps);
}

__device__ __forceinline__ std::int64_t combine_channel() {
  return static_cast<std::int64_t>(blockIdx.x) * (kCombineBlock / kWarpSize) +
         threadIdx.x / kWarpSize;
}

// Where a training forward's statistics go: the saved mean and inv_std, scale = weight * inv_std
// for the normalize pass, and the running buffers (PyTorch's momentum, unbiased variance).
struct StatsOut {
  const float* weight;
  float* running_mean;
  float* running_var;
  float* mean;
  float* inv_std;
  float* scale;
};

// Channel c's statistics from its moments over `count` values.
__device__ __forceinline__ void store_stats(std::int64_t c, bn_moments::Moments m, double count,
                                            double eps, double momentum, const StatsOut& out) {
  const double s = 1.0 / sqrt(m.var + eps);
  out.mean[c] = static_cast<float>(m.mean);
  out.inv_std[c] = static_cast<float>(s);
  out.scale[c] = static_cast<float>(out.weight[c] * s);
  out.running_mean[c] =
      static_cast<float>((1.0 - momentum) * out.running_mean[c] + momentum * m.mean);
  out.running_var[c] = static_cast<float>((1.0 - momentum) * out.running_var[c] +
                                          momentum * m.var * count / (count - 1.0));
}

// Where a backward's per-channel results go: the parameters' gradients (each null when not asked
// for) and dx = a * g + b * (x - mean) + k's coefficients.
struct GradsOut {
  const float* weight;
  const float* inv_std;
  float* grad_weight;
  float* grad_bias;
  float* a;
  float* b;
  float* k;
};

// Channel c's parameter gradients from its sums of g and g * (x - mean).
__device__ __forceinline__ void store_param_grads(std::int64_t c, double sum_g,
                                                  double sum_g_centred, const GradsOut& out) {
  const double s = out.inv_std[c];
  if (out.grad_weight != nullptr) out.grad_weight[c] = static_cast<float>(sum_g_centred * s);
  if (out.grad_bias != nullptr) out.grad_bias[c] = static_cast<float>(sum_g);
}

// Channel c's input-gradient coefficients from the sums over `count` values: with batch statistics
// mean and inv_std depend on x (b, k); with running statistics only a remains.
__device__ __forceinline__ void store_coefficients(std::int64_t c, double sum_g,
                                                   double sum_g_centred, double count,
                                                   bool batch_stats, const GradsOut& out) {
  const double s = out.inv_std[c];
  const double a = out.weight[c] * s;
  out.a[c] = static_cast<float>(a);
  out.b[c] = static_cast<float>(batch_stats ? -a * s * s * sum_g_centred / count : 0.0);
  out.k[c] = static_cast<float>(batch_stats ? -a * sum_g / count : 0.0);
}

}  // namespace vdnn::layers::cuda::bn
