// Inverted dropout on the CUDA backend. The mask is hashed per element from (seed, step, index)
// rather than stored, so backward needs no mask tensor and matches the CPU backend bit for bit; in
// NHWC the index hashed is the element's NCHW one, the CPU's.
#include "layers/cuda/DropoutCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

DropoutCuda::DropoutCuda(const DropoutSpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      spec_(spec),
      seed_(options.seed),
      context_(&checked_context(options, "DropoutCuda")) {}

void DropoutCuda::forward(const ForwardArgs& args) {
  const float* x = args.inputs[0].as<float>();
  float* y = args.output.as<float>();
  if (!args.training) {
    copy_elements(context_->compute_stream(), y, x, args.output.numel(), /*accumulate=*/false);
    return;
  }
  apply(args.step, x, y, /*accumulate=*/false);
}

void DropoutCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  apply(args.step, args.grad_output.as<float>(), target.tensor.as<float>(), target.accumulate);
}

void DropoutCuda::apply(std::uint64_t step, const float* in, float* out, bool accumulate) const {
  const Shape& shape = input_shapes()[0];
  if (layout() == Layout::Nhwc && !same_in_both_layouts(shape)) {
    dropout_apply_channels_last(context_->compute_stream(), spec_.p, seed_, step, in, out,
                                shape.numel(), shape.c(), shape.h() * shape.w(), accumulate);
    return;
  }
  dropout_apply(context_->compute_stream(), spec_.p, seed_, step, in, out, shape.numel(),
                accumulate);
}

}  // namespace vdnn::layers::cuda
