// BatchNormRanks: synchronized batch norm on CUDA (--sync-bn, Note [Data parallelism]): each
// rank's per-channel moments or sums of BatchNormCore's training passes, exchanged exactly over the
// ranks of a group on the compute stream before they become statistics or input-gradient
// coefficients. Internal to layers/cuda/.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "layers/cuda/RawBuffer.hpp"
#include "runtime/Communicator.hpp"

namespace vdnn::layers::cuda {

namespace bn {
struct StatsOut;
struct GradsOut;
}  // namespace bn

/// This rank's first-level sums of one training pass of a batch norm: `parts` partial pairs per
/// channel in BatchNormKernels.cuh's layout, over `count` values per channel (N * H * W here).
struct RankPartials {
  const double* partials;
  int parts;
  double count;
};

/// One batch norm's reductions over the ranks of `group` (every rank the same shape). Each call
/// enqueues, on the stream given, a clear of the exchange buffer, a kernel that writes this rank's
/// per-channel values into its own slot as float pairs (bn_moments::FloatPair: a double to about
/// 2^-48), the communicator's all-reduce (Reduction::Sum over zeros and one rank's value per
/// element: exact, so an all-gather) and a finish kernel that merges every rank's values in rank
/// order, in double: the same bits on every rank, with no dependence on running statistics. Every
/// rank must make the same calls in the same order (the plan's). Errors of the collective come out
/// of the stream (CommunicatorError). Not thread-safe.
class BatchNormRanks {
 public:
  /// `group` (of several ranks; not owned, outlives this). Allocates 4 * group.size() * channels
  /// floats; throws runtime::CudaError when that fails.
  BatchNormRanks(runtime::Communicator& group, std::int64_t channels);

  /// Training forward: the global batch's statistics. Each rank's mean and sum of squared
  /// deviations come from its sums about its shift, the channel's first value x[c * shift_stride]
  /// (T: float or __nv_bfloat16), as on one GPU; they are merged exactly
  /// (bn_moments::merged). The running variance is unbiased with the global count.
  template <typename T>
  void forward_stats(cudaStream_t stream, const RankPartials& local, const T* x,
                     std::int64_t shift_stride, double eps, double momentum,
                     const bn::StatsOut& out);

  /// Training backward with an input gradient: the parameters' gradients from this rank's sums
  /// (the gradient exchange averages them), the input gradient's coefficients from the sums of g
  /// and g * (x - mean) over every rank, added in rank order and divided by the global count.
  void backward_coefficients(cudaStream_t stream, const RankPartials& local,
                             const bn::GradsOut& out);

 private:
  std::size_t exchange_floats() const;
  // Zeros over the whole exchange buffer on `stream` (the slots of the other ranks stay 0).
  void clear_exchange(cudaStream_t stream);
  // The all-reduce of the exchange buffer on `stream`.
  void exchange(cudaStream_t stream);

  runtime::Communicator* group_;
  std::int64_t channels_;
  DeviceBuffer exchange_;  // [ranks][2][channels] FloatPairs: each rank's own slot, then all
};

}  // namespace vdnn::layers::cuda
