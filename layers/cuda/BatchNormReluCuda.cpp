// The fused batch norm -> [add] -> ReLU on the CUDA backend (Note [Fusion]): BatchNormCore with its
// ReLU epilogue, so statistics, reductions and roundings are BatchNorm2dCuda's.
#include "layers/cuda/BatchNormReluCuda.hpp"

#include <utility>

#include "layers/cuda/BatchNormCore.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

struct BatchNormReluCuda::State : BatchNormCore {
  using BatchNormCore::BatchNormCore;
};

BatchNormReluCuda::BatchNormReluCuda(const BatchNormReluSpec& spec, std::vector<Shape> input_shapes,
                                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, batch_norm_layout(options),
            batch_norm_layout(options)),
      spec_(spec),
      context_(&checked_context(options, "BatchNormReluCuda", Precisions::F32OrBf16)),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      state_(std::make_unique<State>(spec.bn, this->input_shapes()[0], layout(), options.dtype,
                                     options.batch_norm_group)) {}

BatchNormReluCuda::~BatchNormReluCuda() = default;

void BatchNormReluCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == (spec_.residual ? 2U : 1U),
               "BatchNormReluCuda: one input, two with the residual");
  state_->forward(context_->compute_stream(), args, Epilogue::Relu);
}

void BatchNormReluCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.grad_inputs.size() == (spec_.residual ? 2U : 1U),
               "BatchNormReluCuda: one input gradient target, two with the residual");
  state_->backward(context_->compute_stream(), args, Epilogue::Relu);
}

}  // namespace vdnn::layers::cuda
