// BatchNormReluCpu: the fused batchnorm2d -> [add] -> relu chain on the CPU backend, the reference
// the CUDA kernels are checked against (Note [Fusion]).
#pragma once

#include <vector>

#include "layers/Layer.hpp"
#include "layers/cpu/BatchNorm2dCpu.hpp"

namespace vdnn::layers::cpu {

/// y = relu(bn(x) [+ r]): the batch norm of BatchNorm2dCpu (same params, statistics, running
/// updates and recompute rule), then the residual r (input 1, with spec.residual) added and the
/// ReLU applied in the unfused chain's order, so results are bitwise the chain's. Backward reads x,
/// and y with the residual only (backward_needs; never r): dz = y > 0 ? dy : 0 in the backward
/// workspace (without the residual, y is the batch norm recomputed there as the last forward
/// normalized), r's gradient (+)= dz, then the batch norm's backward from dz. F32 and F64. Not
/// thread-safe; see layers/Layer.hpp for the argument contract.
class BatchNormReluCpu final : public Layer {
 public:
  BatchNormReluCpu(const BatchNormReluSpec& spec, std::vector<Shape> input_shapes,
                   const LayerOptions& options);
  WorkspaceBytes workspace() const override;
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  template <typename T>
  void forward_typed(const ForwardArgs& args);
  template <typename T>
  void backward_typed(const BackwardArgs& args);

  BatchNorm2dCpu bn_;
};

}  // namespace vdnn::layers::cpu
