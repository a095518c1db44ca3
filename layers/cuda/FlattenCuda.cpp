// Flatten on the CUDA backend: a device-to-device copy, because input and output are separate
// buffers owned by the executor (row-major NCHW already is the (N, features) layout), or a reorder
// of an NHWC input into that NCHW order and back (a cuDNN transform in F32, an own kernel in BF16).
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
      context_(&checked_context(options, "FlattenCuda", Precisions::F32OrBf16)),
      channels_last_(options.input_layout == Layout::Nhwc &&
                     !same_in_both_layouts(this->input_shapes()[0])),
      permute_(channels_last_ && options.dtype == DType::F32
                   ? std::make_unique<Permute>(this->input_shapes()[0])
                   : nullptr) {}

FlattenCuda::~FlattenCuda() = default;

void FlattenCuda::forward(const ForwardArgs& args) {
  if (permute_) {
    Permute::run(context_->cudnn(), permute_->nhwc, args.inputs[0].data, permute_->nchw,
                 args.output.data, /*accumulate=*/false);
    return;
  }
  reorder(args.inputs[0], args.output, /*to_nchw=*/true, /*accumulate=*/false);
}

void FlattenCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  if (permute_) {
    Permute::run(context_->cudnn(), permute_->nchw, args.grad_output.data, permute_->nhwc,
                 target.tensor.data, target.accumulate);
    return;
  }
  reorder(args.grad_output, target.tensor, /*to_nchw=*/false, target.accumulate);
}

void FlattenCuda::reorder(const TensorView& src, const TensorView& dst, bool to_nchw,
                          bool accumulate) const {
  const Shape& input = input_shapes()[0];
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    if (!channels_last_) {
      copy_elements(context_->compute_stream(), dst.as<T>(), src.as<T>(), src.numel(), accumulate);
      return;
    }
    // Per sample, NHWC is a [H * W, C] matrix and NCHW its transpose.
    const std::int64_t pixels = input.h() * input.w();
    transpose_batches(context_->compute_stream(), src.as<T>(), dst.as<T>(), input.n(),
                      to_nchw ? pixels : input.c(), to_nchw ? input.c() : pixels, accumulate);
  });
}

}  // namespace vdnn::layers::cuda
