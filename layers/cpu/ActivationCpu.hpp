// ActivationCpu: the smooth element-wise activations (silu, gelu, sigmoid, hardswish,
// relu6, hardsigmoid) on the CPU
// backend, for F32 and F64 tensors (bf16 through Bf16EmulationCpu, as every CPU layer).
#pragma once

#include <vector>

#include "layers/Layer.hpp"

namespace vdnn::layers::cpu {

/// y = f(x) for activation A (layers/ActivationMath.hpp), element by element, so either layout.
/// Backward reads the output for sigmoid and relu6 and the input for the others (backward_needs)
/// and honours GradTarget::accumulate; an empty target is skipped. Not thread-safe; see
/// layers/Layer.hpp for the argument contract. Constructing throws nothing beyond Layer's.
template <Activation A>
class ActivationCpu final : public Layer {
 public:
  ActivationCpu(const ActivationSpec<A>& spec, std::vector<Shape> input_shapes,
                const LayerOptions& options);
  void forward(const ForwardArgs& args) override;
  void backward(const BackwardArgs& args) override;
};

using SiluCpu = ActivationCpu<Activation::Silu>;
using GeluCpu = ActivationCpu<Activation::Gelu>;
using SigmoidCpu = ActivationCpu<Activation::Sigmoid>;
using HardswishCpu = ActivationCpu<Activation::Hardswish>;
using Relu6Cpu = ActivationCpu<Activation::Relu6>;
using HardsigmoidCpu = ActivationCpu<Activation::Hardsigmoid>;

}  // namespace vdnn::layers::cpu
