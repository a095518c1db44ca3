// Synchronized batch norm's kernels and collectives: this rank's per-channel moments or sums into
// its own slot of an exchange buffer as float pairs, the buffer all-reduced over the ranks (an
// exact all-gather), then merged in rank order into statistics or coefficients.
#include "layers/cuda/BatchNormRanks.hpp"

#include <cuda_bf16.h>

#include "layers/cuda/BatchNormFinish.cuh"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/StreamAdapter.hpp"

namespace vdnn::layers::cuda {
namespace {

using bn_moments::FloatPair;
using bn_moments::from_pair;
using bn_moments::to_pair;

// The exchange buffer: per rank, two values per channel (kind 0, then kind 1), each a FloatPair.
struct Slots {
  FloatPair* pairs;
  std::int64_t channels;

  __host__ __device__ FloatPair& at(int rank, int kind, std::int64_t c) const {
    return pairs[(static_cast<std::int64_t>(rank) * 2 + kind) * channels + c];
  }
  __host__ __device__ double value(int rank, int kind, std::int64_t c) const {
    return from_pair(at(rank, kind, c));
  }
};

// Rank r's moments of channel c, as the exchange carried them (bn_moments::merged's reader).
struct SlotMoments {
  Slots slots;
  std::int64_t c;

  __host__ __device__ bn_moments::RankMoments operator()(int rank) const {
    return {slots.value(rank, 0, c), slots.value(rank, 1, c)};
  }
};

// One warp per channel: this rank's mean and m2 from its sums about its shift (x[c *
// shift_stride], the value the first-level sums were centred on), into its slot.
template <typename T>
__global__ void rank_moments_kernel(const double* partials, int parts, double count, const T* x,
                                    std::int64_t shift_stride, int rank, Slots slots) {
  const std::int64_t c = bn::combine_channel();
  if (c >= slots.channels) return;  // whole warps leave together
  const unsigned lane = threadIdx.x % kWarpSize;
  bn_moments::CentredSums own;
  bn::combine_parts(partials, c, parts, lane, own.sum, own.squares);
  if (lane != 0) return;
  const double shift = static_cast<double>(to_float(x[c * shift_stride]));
  const bn_moments::RankMoments m = bn_moments::rank_moments(own, count, shift);
  slots.at(rank, 0, c) = to_pair(m.mean);
  slots.at(rank, 1, c) = to_pair(m.m2);
}

// Every rank's moments, merged in rank order -> statistics over ranks * count values.
__global__ void finish_rank_stats_kernel(Slots slots, int ranks, double count, double eps,
                                         double momentum, bn::StatsOut out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= slots.channels) return;
  const bn_moments::Moments m = bn_moments::merged(ranks, count, SlotMoments{slots, c});
  bn::store_stats(c, m, count * ranks, eps, momentum, out);
}

// One warp per channel: the parameters' gradients from this rank's sums, which go to its slot
// (of g, then of g * (x - mean)).
__global__ void rank_backward_sums_kernel(const double* partials, int parts, int rank,
                                          bn::GradsOut out, Slots slots) {
  const std::int64_t c = bn::combine_channel();
  if (c >= slots.channels) return;
  const unsigned lane = threadIdx.x % kWarpSize;
  double sum_g = 0.0;
  double sum_g_centred = 0.0;
  bn::combine_parts(partials, c, parts, lane, sum_g, sum_g_centred);
  if (lane != 0) return;
  bn::store_param_grads(c, sum_g, sum_g_centred, out);
  slots.at(rank, 0, c) = to_pair(sum_g);
  slots.at(rank, 1, c) = to_pair(sum_g_centred);
}

// Every rank's sums, added in rank order -> the input gradient's coefficients (batch statistics:
// the forward's) over `count` values in all.
__global__ void finish_rank_coefficients_kernel(Slots slots, int ranks, double count,
                                                bn::GradsOut out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= slots.channels) return;
  double sum_g = 0.0;
  double sum_g_centred = 0.0;
  for (int r = 0; r < ranks; ++r) {
    sum_g += slots.value(r, 0, c);
    sum_g_centred += slots.value(r, 1, c);
  }
  bn::store_coefficients(c, sum_g, sum_g_centred, count, true, out);
}

}  // namespace

BatchNormRanks::BatchNormRanks(runtime::Communicator& group, std::int64_t channels)
    : group_(&group), channels_(channels), exchange_(exchange_floats() * sizeof(float)) {}

std::size_t BatchNormRanks::exchange_floats() const {
  // Per rank: two values per channel, two floats each.
  return 4 * static_cast<std::size_t>(group_->size()) * static_cast<std::size_t>(channels_);
}

template <typename T>
void BatchNormRanks::forward_stats(cudaStream_t stream, const RankPartials& local, const T* x,
                                   std::int64_t shift_stride, double eps, double momentum,
                                   const bn::StatsOut& out) {
  const Slots slots{exchange_.as<FloatPair>(), channels_};
  clear_exchange(stream);
  rank_moments_kernel<T><<<bn::combine_blocks(channels_), bn::kCombineBlock, 0, stream>>>(
      local.partials, local.parts, local.count, x, shift_stride, group_->rank(), slots);
  VDNN_CHECK_LAUNCH();
  exchange(stream);
  finish_rank_stats_kernel<<<blocks_for(channels_), kBlockThreads, 0, stream>>>(
      slots, group_->size(), local.count, eps, momentum, out);
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
  const Slots slots{exchange_.as<FloatPair>(), channels_};
  clear_exchange(stream);
  rank_backward_sums_kernel<<<bn::combine_blocks(channels_), bn::kCombineBlock, 0, stream>>>(
      local.partials, local.parts, group_->rank(), out, slots);
  VDNN_CHECK_LAUNCH();
  exchange(stream);
  finish_rank_coefficients_kernel<<<blocks_for(channels_), kBlockThreads, 0, stream>>>(
      slots, group_->size(), local.count * group_->size(), out);
  VDNN_CHECK_LAUNCH();
}

void BatchNormRanks::clear_exchange(cudaStream_t stream) {
  VDNN_CHECK_CUDA(
      cudaMemsetAsync(exchange_.as<void>(), 0, exchange_floats() * sizeof(float), stream));
}

void BatchNormRanks::exchange(cudaStream_t stream) {
  runtime::cuda::StreamAdapter on("bn ranks", stream);
  group_->all_reduce(on, exchange_.as<float>(), exchange_floats(), runtime::Reduction::Sum);
}

}  // namespace vdnn::layers::cuda
