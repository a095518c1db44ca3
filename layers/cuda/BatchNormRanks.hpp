// BatchNormRanks: synchronized batch norm on CUDA (--sync-bn, Note [Data parallelism]): the
// per-channel sums of BatchNormCore's training passes, all-reduced over the ranks of a group on
// the compute stream before they become statistics or input-gradient coefficients. Internal to
// layers/cuda/.
#pragma once

#include <cuda_runtime_api.h>

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
/// enqueues, on the stream given, a combine kernel that rounds this rank's per-channel sums to
/// float, the communicator's all-reduce (Reduction::Sum, FP32, the same bits on every rank) and a
/// finish kernel; every rank must make the same calls in the same order (the plan's). Errors of
/// the collective come out of the stream (CommunicatorError). Not thread-safe.
class BatchNormRanks {
 public:
  /// `group` (of several ranks; not owned, outlives this). Allocates 2 * channels floats; throws
  /// runtime::CudaError when that fails.
  BatchNormRanks(runtime::Communicator& group, std::int64_t channels);

  /// Training forward: the global batch's statistics from every rank's sums of x - shift, shift
  /// the channel's first value x[c * shift_stride] (T: float or __nv_bfloat16). Each rank's sums
  /// are moved in double to a centre common to all, the running mean (broadcast from rank 0 and
  /// updated with the same statistics on every rank), rounded to float and added; so the variance
  /// keeps float's relative precision where the running mean is within a few standard deviations
  /// of the batch's mean. The running variance is unbiased with the global count.
  template <typename T>
  void forward_stats(cudaStream_t stream, const RankPartials& local, const T* x,
                     std::int64_t shift_stride, double eps, double momentum,
                     const bn::StatsOut& out);

  /// Training backward with an input gradient: the parameters' gradients from this rank's sums
  /// (the gradient exchange averages them), the input gradient's coefficients from the sums of g
  /// and g * (x - mean) over every rank, divided by the global count.
  void backward_coefficients(cudaStream_t stream, const RankPartials& local,
                             const bn::GradsOut& out);

 private:
  // The all-reduce of sums_ on `stream`.
  void sum_over_ranks(cudaStream_t stream);

  runtime::Communicator* group_;
  std::int64_t channels_;
  DeviceBuffer sums_;  // [2C] floats: this rank's sums of both kinds, then every rank's
};

}  // namespace vdnn::layers::cuda
