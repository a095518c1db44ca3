// OptimizerCuda: SGD, AdamW and LARS with global-norm clipping on device memory (own kernels, F32).
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <vector>

#include "layers/Optimizer.hpp"
#include "layers/cuda/OptimizerKernels.hpp"
#include "layers/cuda/RawBuffer.hpp"

namespace vdnn::layers::cuda {

/// See layers/Optimizer.hpp. step() enqueues its kernels on options.cuda's compute stream and
/// returns without waiting (but for the first step over a list of slots, which uploads their
/// chunk table): the sums of squares of clipping and LARS are reduced into a device
/// buffer that the update kernels read, so nothing synchronizes the host. The constructor
/// allocates that buffer (a few floats per parameter) and throws runtime::InvalidArgument for an
/// invalid config, a dtype other than F32 or a missing options.cuda, runtime::CudaError when the
/// allocation fails; step() throws runtime::InvalidArgument for a slot count other than the
/// constructor's, views that are not F32 or shapes that differ, runtime::CudaError when a launch
/// fails. Not thread-safe (one user of the stream).
class OptimizerCuda final : public Optimizer {
 public:
  OptimizerCuda(const LayerOptions& options, const OptimizerConfig& config, std::size_t parameters);
  void step(const std::vector<OptimizerSlot>& slots, double lr, std::int64_t steps_before) override;

 private:
  /// Enqueues the sums of squares of the gradients (and of LARS's weights) into sums().
  void reduce_squares(const std::vector<OptimizerSlot>& slots, bool weights);
  float* partials() const noexcept { return scratch_.as<float>(); }
  float* sums() const noexcept;  // per parameter k: [2k] its weight's, [2k + 1] its gradient's
  float* clip() const noexcept;
  const UpdateChunk* chunk_table(const std::vector<OptimizerSlot>& slots, bool lars);

  cudaStream_t stream_;
  OptimizerConfig config_;
  std::size_t parameters_;
  DeviceBuffer scratch_;  // partials, sums, clip
  // The update's chunk table: built for bound_ (one entry per slot, its whole range) as chunks_,
  // in device memory at table_ (table_bytes_ of it).
  std::vector<UpdateChunk> bound_;
  std::vector<UpdateChunk> entries_;  // chunk_table()'s scratch: this step's slots, one entry each
  std::vector<UpdateChunk> chunks_;
  std::optional<DeviceBuffer> table_;
  std::size_t table_bytes_ = 0;
};

}  // namespace vdnn::layers::cuda
