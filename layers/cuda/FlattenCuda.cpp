// Flatten on the CUDA backend: a device-to-device copy, because input and output are separate
// buffers owned by the executor (row-major NCHW already is the (N, features) layout).
#include "layers/cuda/FlattenCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

FlattenCuda::FlattenCuda(const FlattenSpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      context_(&checked_context(options, "FlattenCuda")) {}

void FlattenCuda::forward(const ForwardArgs& args) {
  copy_elements(context_->compute_stream(), args.output.as<float>(), args.inputs[0].as<float>(),
                args.output.numel(), /*accumulate=*/false);
}

void FlattenCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  copy_elements(context_->compute_stream(), target.tensor.as<float>(), args.grad_output.as<float>(),
                args.grad_output.numel(), target.accumulate);
}

}  // namespace vdnn::layers::cuda
