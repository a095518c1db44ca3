// The fused batch norm and smooth activation on the CPU backend, built on BatchNorm2dCpu and the
// activations' shared formulas.
#include "layers/cpu/BatchNormActivationCpu.hpp"

#include <cstdint>
#include <utility>

#include "layers/ActivationMath.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers::cpu {

BatchNormActivationCpu::BatchNormActivationCpu(const BatchNormActivationSpec& spec,
                                               std::vector<Shape> input_shapes,
                                               const LayerOptions& options)
    : Layer(spec, input_shapes, options.dtype),
      activation_(spec.activation),
      bn_(spec.bn, std::move(input_shapes), options) {}

WorkspaceBytes BatchNormActivationCpu::workspace() const {
  return {0, output_shape().bytes(dtype())};  // backward: z, then the activation's gradient g
}

template <typename T>
void BatchNormActivationCpu::forward_typed(const ForwardArgs& args) {
  bn_.forward(args);
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  with_activation(activation_, [&](auto a) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = activation_value<decltype(a)::value>(y[i]);
  });
}

template <typename T>
void BatchNormActivationCpu::backward_typed(const BackwardArgs& args) {
  VDNN_EXPECTS(args.workspace.bytes() >= workspace().backward,
               "BatchNormActivationCpu: the workspace view is smaller than workspace().backward");
  const TensorView g{args.workspace.data, output_shape(), dtype()};
  bn_.normalize_again(args.inputs.front(), args.params, g);
  const T* dy = args.grad_output.as<T>();
  T* z = g.as<T>();
  const std::int64_t n = g.numel();
  with_activation(activation_, [&](auto a) {
    for (std::int64_t i = 0; i < n; ++i) z[i] = activation_grad<decltype(a)::value>(z[i], dy[i]);
  });
  BackwardArgs bn = args;
  bn.grad_output = g;
  bn_.backward(bn);
}

void BatchNormActivationCpu::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    forward_typed<double>(args);
  } else {
    forward_typed<float>(args);
  }
}

void BatchNormActivationCpu::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    backward_typed<double>(args);
  } else {
    backward_typed<float>(args);
  }
}

}  // namespace vdnn::layers::cpu
