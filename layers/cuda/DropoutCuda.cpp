// Inverted dropout on the CUDA backend. The mask is hashed per element from (seed, step, index)
// rather than stored, so backward needs no mask tensor and matches the CPU backend bit for bit.
#include "layers/cuda/DropoutCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

DropoutCuda::DropoutCuda(const DropoutSpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      seed_(options.seed),
      context_(&checked_context(options, "DropoutCuda")) {}

void DropoutCuda::forward(const ForwardArgs& args) {
  const float* x = args.inputs[0].as<float>();
  float* y = args.output.as<float>();
  const std::int64_t n = args.output.numel();
  if (!args.training) {
    copy_elements(context_->compute_stream(), y, x, n, /*accumulate=*/false);
    return;
  }
  dropout_apply(context_->compute_stream(), spec_.p, seed_, args.step, x, y, n,
                /*accumulate=*/false);
}

void DropoutCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  dropout_apply(context_->compute_stream(), spec_.p, seed_, args.step, args.grad_output.as<float>(),
                target.tensor.as<float>(), args.grad_output.numel(), target.accumulate);
}

}  // namespace vdnn::layers::cuda
