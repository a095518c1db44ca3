// Inverted dropout and drop path on the CUDA backend. The mask is hashed per element from (seed,
// step, index) rather than stored, so backward needs no mask tensor and matches the CPU backend bit
// for bit; in NHWC the index hashed is the element's NCHW one, the CPU's, and drop path hashes the
// sample index.
#include "layers/cuda/DropoutCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

DropoutCuda::DropoutCuda(const DropoutSpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options)
    : DropoutCuda(spec, spec.p, /*per_sample=*/false, std::move(input_shapes), options) {}

DropoutCuda::DropoutCuda(const StochasticDepthSpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options)
    : DropoutCuda(spec, spec.p, /*per_sample=*/true, std::move(input_shapes), options) {}

DropoutCuda::DropoutCuda(const LayerSpec& spec, double p, bool per_sample,
                         std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      p_(p),
      seed_(options.seed),
      per_sample_(per_sample),
      context_(&checked_context(options, "DropoutCuda", Precisions::F32OrBf16)) {}

void DropoutCuda::forward(const ForwardArgs& args) {
  apply(args.training, args.step, args.inputs[0], args.output, /*accumulate=*/false);
}

void DropoutCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  apply(/*training=*/true, args.step, args.grad_output, target.tensor, target.accumulate);
}

void DropoutCuda::apply(bool training, std::uint64_t step, const TensorView& in_view,
                        const TensorView& out_view, bool accumulate) const {
  const Shape& shape = input_shapes()[0];
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    const T* in = in_view.as<T>();
    T* out = out_view.as<T>();
    if (!training) {
      copy_elements(context_->compute_stream(), out, in, shape.numel(), accumulate);
    } else if (per_sample_) {
      drop_path_apply(context_->compute_stream(), p_, seed_, step, in, out, shape.numel(),
                      shape.sample_numel(), accumulate);
    } else if (layout() == Layout::Nhwc && !same_in_both_layouts(shape)) {
      dropout_apply_channels_last(context_->compute_stream(), p_, seed_, step, in, out,
                                  shape.numel(), shape.c(), shape.h() * shape.w(), accumulate);
    } else {
      dropout_apply(context_->compute_stream(), p_, seed_, step, in, out, shape.numel(),
                    accumulate);
    }
  });
}

}  // namespace vdnn::layers::cuda
