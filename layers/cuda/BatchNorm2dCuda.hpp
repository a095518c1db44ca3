// BatchNorm2dCuda: batch normalization over N, H, W per channel on the CUDA backend (own kernels),
// F32 or BF16 feature maps, NCHW or NHWC.
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// Params: weight, bias, running_mean, running_var (all [C], device memory). Same semantics as
/// cpu::BatchNorm2dCpu: training forward normalizes with the batch statistics and updates the
/// running buffers in place (momentum as in PyTorch, unbiased variance); inference forward uses
/// the running buffers; a recompute (ForwardArgs::recompute) normalizes with the statistics the
/// last training forward saved and updates nothing; backward reads the input (backward_needs:
/// inputs), differentiates the normalization the last forward used, writes grad_params (weight,
/// bias) where non-empty and the input gradient honouring GradTarget::accumulate. All work is
/// enqueued on options.cuda's compute stream and nothing waits for it; results are bitwise
/// reproducible (fixed-order reductions, no atomics). Runs in options.layout when that is NHWC and
/// options.input_layout is too, otherwise in NCHW (layout(), input_layout(); Note [Layout]). The
/// constructor allocates the saved statistics and the reduction scratch once and throws
/// runtime::InvalidArgument for a dtype other than F32 or BF16 or a missing options.cuda. With
/// BF16, x, y, grad_output and the input gradient are BF16 while params, grad_params and all
/// statistics and sums stay F32 (or double), read into float and rounded once on store (Note
/// [Precision]; BatchNormCore.hpp); views of another dtype throw runtime::InvalidArgument. Training
/// forward throws it when a channel has a single value. Not thread-safe; see layers/Layer.hpp for
/// the argument contract.
class BatchNorm2dCuda final : public Layer {
 public:
  BatchNorm2dCuda(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes,
                  const LayerOptions& options);
  BatchNorm2dCuda(const BatchNorm2dCuda&) = delete;
  BatchNorm2dCuda& operator=(const BatchNorm2dCuda&) = delete;
  BatchNorm2dCuda(BatchNorm2dCuda&&) = delete;
  BatchNorm2dCuda& operator=(BatchNorm2dCuda&&) = delete;
  ~BatchNorm2dCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  struct State;  // the batch-norm core it shares with BatchNormReluCuda (BatchNormCore.hpp)

  runtime::cuda::DeviceContext* context_;
  std::unique_ptr<State> state_;
};

}  // namespace vdnn::layers::cuda
