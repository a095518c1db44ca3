// Batch normalization on the CUDA backend: the layer around BatchNormCore, which holds the
// statistics and launches the kernels it shares with the fused BatchNormReluCuda.
#include "layers/cuda/BatchNorm2dCuda.hpp"

#include <utility>

#include "layers/cuda/BatchNormCore.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

struct BatchNorm2dCuda::State : BatchNormCore {
  using BatchNormCore::BatchNormCore;
};

BatchNorm2dCuda::BatchNorm2dCuda(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes,
                                 const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, batch_norm_layout(options),
            batch_norm_layout(options)),
      context_(&checked_context(options, "BatchNorm2dCuda", Precisions::F32OrBf16)),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      state_(std::make_unique<State>(spec, this->input_shapes()[0], layout(), options.dtype,
                                     options.batch_norm_group)) {}

BatchNorm2dCuda::~BatchNorm2dCuda() = default;

void BatchNorm2dCuda::forward(const ForwardArgs& args) {
  state_->forward(context_->compute_stream(), args, Epilogue::None);
}

void BatchNorm2dCuda::backward(const BackwardArgs& args) {
  state_->backward(context_->compute_stream(), args, Epilogue::None);
}

}  // namespace vdnn::layers::cuda
