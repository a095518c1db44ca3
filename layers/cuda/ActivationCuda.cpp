// The smooth activations on the CUDA backend: the layer around the element-wise launchers.
#include "layers/cuda/ActivationCuda.hpp"

#include <utility>

#include "layers/ActivationMath.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

template <Activation A>
ActivationCuda<A>::ActivationCuda(const ActivationSpec<A>& spec, std::vector<Shape> input_shapes,
                                  const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "ActivationCuda", Precisions::F32OrBf16)) {}

template <Activation A>
void ActivationCuda<A>::forward(const ForwardArgs& args) {
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    activation_forward<A>(context_->compute_stream(), args.inputs[0].as<T>(), args.output.as<T>(),
                          args.output.numel());
  });
}

template <Activation A>
void ActivationCuda<A>::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  const TensorView& saved = activation_grad_from_output(A) ? args.output : args.inputs[0];
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    activation_backward<A>(context_->compute_stream(), saved.as<T>(), args.grad_output.as<T>(),
                           target.tensor.as<T>(), args.grad_output.numel(), target.accumulate);
  });
}

template class ActivationCuda<Activation::Silu>;
template class ActivationCuda<Activation::Gelu>;
template class ActivationCuda<Activation::Sigmoid>;
template class ActivationCuda<Activation::Hardswish>;
template class ActivationCuda<Activation::Relu6>;
template class ActivationCuda<Activation::Hardsigmoid>;

}  // namespace vdnn::layers::cuda
