// The optimizer on the CUDA backend: the order of the reductions and updates of one step on the
// compute stream, with every intermediate value in device memory.
#include "layers/cuda/OptimizerCuda.hpp"

#include <cuda_runtime_api.h>

#include <string>

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
  for (std::size_t k = 0; k < slots.size(); ++k) {
    const OptimizerSlot& s = slots[k];
    const optim::UpdateRule<float> rule =
        optim::update_rule<float>(config_, lr, steps_before, s.excluded);
    float* p = s.param.as<float>();
    const float* g = s.grad.as<float>();
    if (config_.kind == OptimizerKind::AdamW) {
      adamw_update(stream_, rule, p, g, s.state[0].as<float>(), s.state[1].as<float>(),
                   s.param.numel(), clip_factor);
    } else {
      const float* squares = lars && !s.excluded ? sums() + 2 * k : nullptr;
      momentum_update(stream_, rule, p, g, s.state[0].as<float>(), s.param.numel(), clip_factor,
                      squares);
    }
  }
}

}  // namespace vdnn::layers::cuda
