// The fused batch norm -> smooth activation on the CUDA backend (Note [Fusion]): BatchNormCore
// with the activation as its epilogue, so statistics, reductions and roundings are
// BatchNorm2dCuda's.
#include "layers/cuda/BatchNormActivationCuda.hpp"

#include <memory>
#include <utility>

#include "layers/cuda/BatchNormCore.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

struct BatchNormActivationCuda::State {
  State(const BatchNormActivationSpec& spec, const Shape& x_shape, Layout layout,
        const LayerOptions& options)
      : epilogue(fused_epilogue(spec.activation)),
        core(spec.bn, x_shape, layout, options.dtype, options.batch_norm_group) {}

  Epilogue epilogue;
  BatchNormCore core;
};

BatchNormActivationCuda::BatchNormActivationCuda(const BatchNormActivationSpec& spec,
                                                 std::vector<Shape> input_shapes,
                                                 const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, batch_norm_layout(options),
            batch_norm_layout(options)),
      context_(&checked_context(options, "BatchNormActivationCuda", Precisions::F32OrBf16)),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      state_(std::make_unique<State>(spec, this->input_shapes()[0], layout(), options)) {}

BatchNormActivationCuda::~BatchNormActivationCuda() = default;

void BatchNormActivationCuda::forward(const ForwardArgs& args) {
  state_->core.forward(context_->compute_stream(), args, state_->epilogue);
}

void BatchNormActivationCuda::backward(const BackwardArgs& args) {
  state_->core.backward(context_->compute_stream(), args, state_->epilogue);
}

}  // namespace vdnn::layers::cuda
