// The SGD update on the CUDA backend: one element-wise kernel per parameter tensor, in F32 with the
// CPU backend's formula.
#include "layers/cuda/SgdUpdateCuda.hpp"

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

SgdUpdateCuda::SgdUpdateCuda(const LayerOptions& options)
    : context_(&checked_context(options, "SgdUpdateCuda")) {}

void SgdUpdateCuda::apply(const TensorView& param, const TensorView& grad,
                          const TensorView& velocity, const SgdHyper& hyper) {
  VDNN_EXPECTS(param.shape == grad.shape && param.shape == velocity.shape,
               "SGD: parameter, gradient and velocity shapes differ");
  sgd_update(context_->compute_stream(), param.as<float>(), grad.as<float>(), velocity.as<float>(),
             param.numel(), hyper);
}

}  // namespace vdnn::layers::cuda
