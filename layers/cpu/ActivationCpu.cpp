// The smooth activations on the CPU backend: one loop per direction around the shared formulas.
#include "layers/cpu/ActivationCpu.hpp"

#include <cstdint>
#include <utility>

#include "layers/ActivationMath.hpp"

namespace vdnn::layers::cpu {
namespace {

template <Activation A, typename T>
void activation_forward_all(const ForwardArgs& args) {
  const T* x = args.inputs[0].as<T>();
  T* y = args.output.as<T>();
  const std::int64_t n = args.output.numel();
  for (std::int64_t i = 0; i < n; ++i) y[i] = activation_value<A>(x[i]);
}

template <Activation A, typename T>
void activation_backward_all(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const T* saved = activation_grad_from_output(A) ? args.output.as<T>() : args.inputs[0].as<T>();
  const T* dy = args.grad_output.as<T>();
  T* dx = target.tensor.as<T>();
  const std::int64_t n = args.grad_output.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const T g = activation_grad<A>(saved[i], dy[i]);
    dx[i] = target.accumulate ? dx[i] + g : g;
  }
}

}  // namespace

template <Activation A>
ActivationCpu<A>::ActivationCpu(const ActivationSpec<A>& spec, std::vector<Shape> input_shapes,
                                const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype) {}

template <Activation A>
void ActivationCpu<A>::forward(const ForwardArgs& args) {
  if (dtype() == DType::F64) {
    activation_forward_all<A, double>(args);
  } else {
    activation_forward_all<A, float>(args);
  }
}

template <Activation A>
void ActivationCpu<A>::backward(const BackwardArgs& args) {
  if (dtype() == DType::F64) {
    activation_backward_all<A, double>(args);
  } else {
    activation_backward_all<A, float>(args);
  }
}

template class ActivationCpu<Activation::Silu>;
template class ActivationCpu<Activation::Gelu>;
template class ActivationCpu<Activation::Sigmoid>;
template class ActivationCpu<Activation::Hardswish>;
template class ActivationCpu<Activation::Relu6>;
template class ActivationCpu<Activation::Hardsigmoid>;

}  // namespace vdnn::layers::cpu
