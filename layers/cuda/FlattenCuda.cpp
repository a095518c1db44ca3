// Flatten on the CUDA backend: a device-to-device copy, because input and output are separate
// buffers owned by the executor (row-major NCHW already is the (N, features) layout), or a cuDNN
// transform that reorders an NHWC input into that NCHW order and back.
#include "layers/cuda/FlattenCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnDescriptors.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {

// The input's shape described in both memory orders.
struct FlattenCuda::Permute {
  explicit Permute(const Shape& input) : nhwc(input, Layout::Nhwc), nchw(input, Layout::Nchw) {}

  // dst (+)= src, reordered from `from`'s memory order to `to`'s, on the handle's stream.
  static void run(cudnnHandle_t handle, const TensorDescriptor& from, const void* src,
                  const TensorDescriptor& to, void* dst, bool accumulate) {
    const float one = 1.0f;
    const float zero = 0.0f;
    VDNN_CHECK_CUDNN(cudnnTransformTensor(handle, &one, from.get(), src, accumulate ? &one : &zero,
                                          to.get(), dst));
  }

  TensorDescriptor nhwc;
  TensorDescriptor nchw;
};

FlattenCuda::FlattenCuda(const FlattenSpec& spec, std::vector<Shape> input_shapes,
                         const LayerOptions& options)
    // The output is rank 2, the same in either layout.
    : Layer(spec, std::move(input_shapes), options.dtype, options.layout, options.input_layout),
      context_(&checked_context(options, "FlattenCuda")),
      permute_(options.input_layout == Layout::Nhwc &&
                       !same_in_both_layouts(this->input_shapes()[0])
                   ? std::make_unique<Permute>(this->input_shapes()[0])
                   : nullptr) {}

FlattenCuda::~FlattenCuda() = default;

void FlattenCuda::forward(const ForwardArgs& args) {
  if (permute_) {
    Permute::run(context_->cudnn(), permute_->nhwc, args.inputs[0].data, permute_->nchw,
                 args.output.data, /*accumulate=*/false);
    return;
  }
  copy_elements(context_->compute_stream(), args.output.as<float>(), args.inputs[0].as<float>(),
                args.output.numel(), /*accumulate=*/false);
}

void FlattenCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  if (permute_) {
    Permute::run(context_->cudnn(), permute_->nchw, args.grad_output.data, permute_->nhwc,
                 target.tensor.data, target.accumulate);
    return;
  }
  copy_elements(context_->compute_stream(), target.tensor.as<float>(), args.grad_output.as<float>(),
                args.grad_output.numel(), target.accumulate);
}

}  // namespace vdnn::layers::cuda
