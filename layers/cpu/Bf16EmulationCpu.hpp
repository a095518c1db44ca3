// Bf16EmulationCpu: a CPU layer run in bf16 storage (Note [Precision]): the FP32 layer's
// arithmetic between rounding stores, so the CPU backend checks bf16 numerics, plans and policy
// invariance without a GPU.
#pragma once

#include <memory>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// Wraps `inner`, a CPU layer built for F32 from the same spec and input shapes, as a layer of
/// dtype BF16: every BF16 view it is given (feature maps, their gradients) is read as float for
/// `inner`, and every BF16 view `inner` writes is rounded to nearest even once, after it
/// (accumulating targets: old value + new gradient, rounded once), as the CUDA layers store bf16.
/// Views given in F32 (the loss's output and its gradient, parameters, parameter gradients) pass
/// as they are, except the parameters layers::param_read_in_precision() names, which `inner`
/// reads rounded to bf16, as the CUDA layers' bf16 weight copies (given as BF16 views, the
/// executor's copies, they are widened as any other). A row-strided view (Note [Dense block
/// storage]) is widened to, or rounded from, a packed float copy row by row, so `inner` sees only
/// packed views. Scratch floats are allocated per call. Workspace and backward needs are `inner`'s.
/// Not thread-safe.
class Bf16EmulationCpu final : public Layer {
 public:
  explicit Bf16EmulationCpu(std::unique_ptr<Layer> inner);
  WorkspaceBytes workspace() const override { return inner_->workspace(); }
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  std::unique_ptr<Layer> inner_;
};

}  // namespace vdnn::layers::cpu
