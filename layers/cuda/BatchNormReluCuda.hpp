// BatchNormReluCuda: the fused batchnorm2d -> [add] -> relu chain on the CUDA backend (own kernels,
// F32 or BF16 feature maps, NCHW or NHWC), see Note [Fusion].
#pragma once

#include <memory>
#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// y = relu(bn(x) [+ r]) with BatchNorm2dCuda's statistics, running updates, recompute rule and
/// reductions, in one pass over x (and r) after the statistics. Backward reads x, and y with the
/// residual only (backward_needs; r is never read): the reductions over dz = mask ? dy : 0, the
/// mask y > 0 or, without the residual, x renormalized with the forward's statistics; then one
/// pass writing dx and, with spec.residual, r's gradient dz, each honouring
/// GradTarget::accumulate (BatchNormCore::backward). Results match the unfused CUDA chain and the
/// CPU reference (cpu::BatchNormReluCpu) and are bitwise reproducible. BF16 as BatchNorm2dCuda:
/// x, r, y and their gradients BF16, the rest F32; y is rounded once after the ReLU (so the fused
/// BF16 layer is not bitwise the BF16 chain, which rounds after each layer), and the mask
/// recomputed from x decides as that rounded store did. Throws runtime::InvalidArgument for a
/// dtype other than F32 or BF16 or a missing options.cuda. Runs in options.layout
/// (input_layout must be the same). Enqueues on options.cuda's compute stream and never waits. Not
/// thread-safe; see layers/Layer.hpp for the argument contract.
class BatchNormReluCuda final : public Layer {
 public:
  BatchNormReluCuda(const BatchNormReluSpec& spec, std::vector<Shape> input_shapes,
                    const LayerOptions& options);
  BatchNormReluCuda(const BatchNormReluCuda&) = delete;
  BatchNormReluCuda& operator=(const BatchNormReluCuda&) = delete;
  BatchNormReluCuda(BatchNormReluCuda&&) = delete;
  BatchNormReluCuda& operator=(BatchNormReluCuda&&) = delete;
  ~BatchNormReluCuda() override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  struct State;  // what BatchNorm2dCuda keeps, shared through the same batch-norm core

  BatchNormReluSpec spec_;
  runtime::cuda::DeviceContext* context_;
  std::unique_ptr<State> state_;
};

}  // namespace vdnn::layers::cuda
