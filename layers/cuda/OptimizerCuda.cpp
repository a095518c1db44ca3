// The optimizer on the CUDA backend: the order of the reductions and updates of one step on the
// compute stream, with every intermediate value in device memory, and one update launch over a
// chunk table of every parameter.
#include "layers/cuda/OptimizerCuda.hpp"

#include <cuda_runtime_api.h>

#include <limits>
#include <string>
#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/OptimizerKernels.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

std::size_t scratch_floats(std::size_t parameters) {
  return 2 * parameters * kSquareBlocks + 2 * parameters + 1;
}

}  // namespace

OptimizerCuda::OptimizerCuda(const LayerOptions& options, const OptimizerConfig& config,
                             std::size_t parameters)
    : stream_(checked_context(options, "OptimizerCuda").compute_stream()),
      config_(config),
      parameters_(parameters),
      scratch_(scratch_floats(parameters) * sizeof(float)) {
  validate(config);
  // Partials of weights that no step sums stay zero, so that finishing them reads defined memory.
  VDNN_CHECK_CUDA(
      cudaMemsetAsync(partials(), 0, scratch_floats(parameters) * sizeof(float), stream_));
}

float* OptimizerCuda::sums() const noexcept { return partials() + 2 * parameters_ * kSquareBlocks; }

float* OptimizerCuda::clip() const noexcept { return sums() + 2 * parameters_; }

void OptimizerCuda::reduce_squares(const std::vector<OptimizerSlot>& slots, bool weights) {
  for (std::size_t k = 0; k < slots.size(); ++k) {
    const OptimizerSlot& s = slots[k];
    float* at = partials() + 2 * k * kSquareBlocks;
    if (weights && !s.excluded) partial_squares(stream_, s.param.as<float>(), s.param.numel(), at);
    partial_squares(stream_, s.grad.as<float>(), s.grad.numel(), at + kSquareBlocks);
  }
  finish_squares(stream_, partials(), static_cast<int>(2 * slots.size()), sums());
}

// The chunk table of `slots` in device memory, rebuilt and uploaded only when their pointers (or
// exclusions) differ from the last call's: an executor's slots never change, so a run uploads it
// once (a pageable copy, which waits for the stream).
const UpdateChunk* OptimizerCuda::chunk_table(const std::vector<OptimizerSlot>& slots, bool lars) {
  std::vector<UpdateChunk>& entries = entries_;  // its capacity kept from step to step
  entries.clear();
  for (std::size_t k = 0; k < slots.size(); ++k) {
    const OptimizerSlot& s = slots[k];
    UpdateChunk& e = entries.emplace_back();
    e.param = s.param.as<float>();
    e.grad = s.grad.as<float>();
    e.state0 = static_cast<float*>(s.state[0].data);  // AdamW's two; SGD and LARS use one
    e.state1 = static_cast<float*>(s.state[1].data);
    e.squares = lars && !s.excluded ? sums() + 2 * k : nullptr;
    e.end = s.param.numel();
    e.excluded = s.excluded;
  }
  if (entries == bound_) return table_->as<UpdateChunk>();
  chunks_.clear();
  for (const UpdateChunk& e : entries) append_chunks(e, e.end, chunks_);
  VDNN_EXPECTS(chunks_.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
               "OptimizerCuda: more update chunks than one launch takes");
  const std::size_t bytes = chunks_.size() * sizeof(UpdateChunk);
  if (!table_ || table_bytes_ < bytes) {
    table_.reset();  // frees the old table first (cudaFree waits for its readers)
    table_.emplace(bytes);
    table_bytes_ = bytes;
  }
  VDNN_CHECK_CUDA(cudaMemcpyAsync(table_->as<UpdateChunk>(), chunks_.data(), bytes,
                                  cudaMemcpyHostToDevice, stream_));
  std::swap(bound_, entries);
  return table_->as<UpdateChunk>();
}

void OptimizerCuda::step(const std::vector<OptimizerSlot>& slots, double lr,
                         std::int64_t steps_before) {
  check_slots(slots, parameters_, config_.kind);
  if (slots.empty()) return;
  const bool lars = config_.kind == OptimizerKind::Lars;
  const bool clipping = config_.clip_grad_norm > 0.0;
  if (lars || clipping) reduce_squares(slots, lars);
  const float* clip_factor = nullptr;
  if (clipping) {
    clip_from_squares(stream_, sums(), static_cast<int>(slots.size()), 2, 1, config_.clip_grad_norm,
                      clip());
    clip_factor = clip();
  }
  const UpdateChunk* table = chunk_table(slots, lars);
  update(stream_, config_.kind == OptimizerKind::AdamW,
         optim::update_rule<float>(config_, lr, steps_before, /*excluded=*/false),
         optim::update_rule<float>(config_, lr, steps_before, /*excluded=*/true), table,
         static_cast<int>(chunks_.size()), clip_factor);
}

}  // namespace vdnn::layers::cuda
