// Synchronized batch norm's kernels and collectives: this rank's per-channel sums combined and
// rounded to float, all-reduced over the ranks, then finished into statistics or coefficients.
#include "layers/cuda/BatchNormRanks.hpp"

#include <cuda_bf16.h>

#include "layers/cuda/BatchNormFinish.cuh"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/StreamAdapter.hpp"

namespace vdnn::layers::cuda {
namespace {

// One warp per channel: this rank's sums about its shift (x[c * shift_stride]), moved to the
// common centre, as floats: sums[c] of x - centre, sums[channels + c] of its squares.
template <typename T>
__global__ void rank_forward_sums_kernel(const double* partials, int parts, double count,
                                         const T* x, std::int64_t shift_stride,
                                         std::int64_t channels, const float* centre, float* sums) {
  const std::int64_t c = bn::combine_channel();
  if (c >= channels) return;  // whole warps leave together
  const unsigned lane = threadIdx.x % kWarpSize;
  bn_moments::CentredSums own;
  bn::combine_parts(partials, c, parts, lane, own.sum, own.squares);
  if (lane != 0) return;
  const double shift = static_cast<double>(to_float(x[c * shift_stride]));
  const bn_moments::CentredSums moved = bn_moments::recentred(own, count, shift, centre[c]);
  sums[c] = static_cast<float>(moved.sum);
  sums[channels + c] = static_cast<float>(moved.squares);
}

// Every rank's sums about the running mean (read before this kernel updates it) -> statistics.
__global__ void finish_rank_stats_kernel(const float* sums, std::int64_t channels, double count,
                                         double eps, double momentum, bn::StatsOut out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const double centre = out.running_mean[c];
  const bn_moments::CentredSums all{sums[c], sums[channels + c]};
  bn::store_stats(c, bn_moments::moments(all, count, centre), count, eps, momentum, out);
}

// One warp per channel: the parameters' gradients from this rank's sums, which go to `sums` as
// floats (of g, then of g * (x - mean)).
__global__ void rank_backward_sums_kernel(const double* partials, int parts, std::int64_t channels,
                                          bn::GradsOut out, float* sums) {
  const std::int64_t c = bn::combine_channel();
  if (c >= channels) return;
  const unsigned lane = threadIdx.x % kWarpSize;
  double sum_g = 0.0;
  double sum_g_centred = 0.0;
  bn::combine_parts(partials, c, parts, lane, sum_g, sum_g_centred);
  if (lane != 0) return;
  bn::store_param_grads(c, sum_g, sum_g_centred, out);
  sums[c] = static_cast<float>(sum_g);
  sums[channels + c] = static_cast<float>(sum_g_centred);
}

// Every rank's sums -> the input gradient's coefficients (batch statistics: the forward's).
__global__ void finish_rank_coefficients_kernel(const float* sums, std::int64_t channels,
                                                double count, bn::GradsOut out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  bn::store_coefficients(c, sums[c], sums[channels + c], count, true, out);
}

}  // namespace

BatchNormRanks::BatchNormRanks(runtime::Communicator& group, std::int64_t channels)
    : group_(&group),
      channels_(channels),
      sums_(2 * sizeof(float) * static_cast<std::size_t>(channels)) {}

template <typename T>
void BatchNormRanks::forward_stats(cudaStream_t stream, const RankPartials& local, const T* x,
                                   std::int64_t shift_stride, double eps, double momentum,
                                   const bn::StatsOut& out) {
  rank_forward_sums_kernel<T><<<bn::combine_blocks(channels_), bn::kCombineBlock, 0, stream>>>(
      local.partials, local.parts, local.count, x, shift_stride, channels_, out.running_mean,
      sums_.as<float>());
  VDNN_CHECK_LAUNCH();
  sum_over_ranks(stream);
  finish_rank_stats_kernel<<<blocks_for(channels_), kBlockThreads, 0, stream>>>(
      sums_.as<float>(), channels_, local.count * group_->size(), eps, momentum, out);
  VDNN_CHECK_LAUNCH();
}

template void BatchNormRanks::forward_stats<float>(cudaStream_t, const RankPartials&, const float*,
                                                   std::int64_t, double, double,
                                                   const bn::StatsOut&);
template void BatchNormRanks::forward_stats<__nv_bfloat16>(cudaStream_t, const RankPartials&,
                                                           const __nv_bfloat16*, std::int64_t,
                                                           double, double, const bn::StatsOut&);

void BatchNormRanks::backward_coefficients(cudaStream_t stream, const RankPartials& local,
                                           const bn::GradsOut& out) {
  rank_backward_sums_kernel<<<bn::combine_blocks(channels_), bn::kCombineBlock, 0, stream>>>(
      local.partials, local.parts, channels_, out, sums_.as<float>());
  VDNN_CHECK_LAUNCH();
  sum_over_ranks(stream);
  finish_rank_coefficients_kernel<<<blocks_for(channels_), kBlockThreads, 0, stream>>>(
      sums_.as<float>(), channels_, local.count * group_->size(), out);
  VDNN_CHECK_LAUNCH();
}

void BatchNormRanks::sum_over_ranks(cudaStream_t stream) {
  runtime::cuda::StreamAdapter on("bn ranks", stream);
  group_->all_reduce(on, sums_.as<float>(), 2 * static_cast<std::size_t>(channels_),
                     runtime::Reduction::Sum);
}

}  // namespace vdnn::layers::cuda
