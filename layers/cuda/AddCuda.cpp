// Element-wise sum of two or more inputs on the CUDA backend: one fused kernel for the first pair,
// then one accumulating pass per further input, the CPU backend's summation order.
#include "layers/cuda/AddCuda.hpp"

#include <cstddef>
#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

AddCuda::AddCuda(const AddSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "AddCuda", Precisions::F32OrBf16)) {}

void AddCuda::forward(const ForwardArgs& args) {
  cudaStream_t stream = context_->compute_stream();
  const std::int64_t n = args.output.numel();
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    T* y = args.output.as<T>();
    add_pair(stream, args.inputs[0].as<T>(), args.inputs[1].as<T>(), y, n);
    // In BF16 each further input rounds the running sum once more, as a chain of adds would.
    for (std::size_t k = 2; k < args.inputs.size(); ++k) {
      copy_elements(stream, y, args.inputs[k].as<T>(), n, /*accumulate=*/true);
    }
  });
}

void AddCuda::backward(const BackwardArgs& args) {
  const std::int64_t n = args.grad_output.numel();
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    const T* dy = args.grad_output.as<T>();
    for (const GradTarget& target : args.grad_inputs) {
      if (target.tensor.empty()) continue;
      copy_elements(context_->compute_stream(), target.tensor.as<T>(), dy, n, target.accumulate);
    }
  });
}

}  // namespace vdnn::layers::cuda
