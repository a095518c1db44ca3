// ActivationCuda: the smooth element-wise activations (silu, gelu, sigmoid, hardswish,
// relu6, hardsigmoid) on the CUDA
// backend (own vectorized kernels), F32 or BF16.
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cuda {

/// y = f(x) for activation A (layers/ActivationMath.hpp), computed in float. Backward reads the
/// output for sigmoid and relu6 and the input for the others (backward_needs), honours
/// GradTarget::accumulate and skips an empty target. Element-wise, so it runs in options.layout,
/// NCHW or NHWC, when options.input_layout is the same (else it keeps NCHW and make_layer refuses
/// it). Views are device memory; all work is enqueued on options.cuda's compute stream and nothing
/// waits for it. The constructor throws runtime::InvalidArgument for a dtype other than F32 or
/// BF16 or a missing options.cuda. Not thread-safe; see layers/Layer.hpp for the argument
/// contract.
template <Activation A>
class ActivationCuda final : public Layer {
 public:
  ActivationCuda(const ActivationSpec<A>& spec, std::vector<Shape> input_shapes,
                 const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;

 private:
  runtime::cuda::DeviceContext* context_;
};

using SiluCuda = ActivationCuda<Activation::Silu>;
using GeluCuda = ActivationCuda<Activation::Gelu>;
using SigmoidCuda = ActivationCuda<Activation::Sigmoid>;
using HardswishCuda = ActivationCuda<Activation::Hardswish>;
using Relu6Cuda = ActivationCuda<Activation::Relu6>;
using HardsigmoidCuda = ActivationCuda<Activation::Hardsigmoid>;

}  // namespace vdnn::layers::cuda
