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
      context_(&checked_context(options, "AddCuda")) {}

void AddCuda::forward(const ForwardArgs& args) {
  cudaStream_t stream = context_->compute_stream();
  float* y = args.output.as<float>();
  const std::int64_t n = args.output.numel();
  add_pair(stream, args.inputs[0].as<float>(), args.inputs[1].as<float>(), y, n);
  for (std::size_t k = 2; k < args.inputs.size(); ++k) {
    copy_elements(stream, y, args.inputs[k].as<float>(), n, /*accumulate=*/true);
  }
}

void AddCuda::backward(const BackwardArgs& args) {
  const float* dy = args.grad_output.as<float>();
  const std::int64_t n = args.grad_output.numel();
  for (const GradTarget& target : args.grad_inputs) {
    if (target.tensor.empty()) continue;
    copy_elements(context_->compute_stream(), target.tensor.as<float>(), dy, n, target.accumulate);
  }
}

}  // namespace vdnn::layers::cuda
