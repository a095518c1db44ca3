// ReLU on the CUDA backend. Backward works from the output alone (y > 0 exactly where x > 0), so
// the scheduler may drop the input right after forward.
#include "layers/cuda/ReluCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

ReluCuda::ReluCuda(const ReluSpec& spec, std::vector<Shape> input_shapes,
                   const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "ReluCuda", Precisions::F32OrBf16)) {}

void ReluCuda::forward(const ForwardArgs& args) {
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    relu_forward(context_->compute_stream(), args.inputs[0].as<T>(), args.output.as<T>(),
                 args.output.numel());
  });
}

void ReluCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    relu_backward(context_->compute_stream(), args.output.as<T>(), args.grad_output.as<T>(),
                  target.tensor.as<T>(), args.grad_output.numel(), target.accumulate);
  });
}

}  // namespace vdnn::layers::cuda
