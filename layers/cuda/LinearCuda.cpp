// CUDA fully connected layer: the row-major [N, in] batch is the column-major in x N matrix cuBLAS
// sees, so each product is one SGEMM with no transposed copies; the bias broadcast and its
// gradient (a sum over the batch) are cuDNN's per-channel add and reduction on [N, out, 1, 1].
#include "layers/cuda/LinearCuda.hpp"

#include <optional>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnDescriptors.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

// Other layers share the handle and may change its modes; set the ones these calls rely on.
cublasHandle_t fp32_cublas(const runtime::cuda::DeviceContext& context) {
  const cublasHandle_t handle = context.cublas();
  VDNN_CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  VDNN_CHECK_CUBLAS(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  return handle;
}

}  // namespace

struct LinearCuda::Impl {
  Impl(runtime::cuda::DeviceContext& device, const LinearSpec& spec, const Shape& y_shape)
      : context(&device), y(y_shape) {
    if (spec.bias) bias.emplace(Shape::nchw(1, spec.out_features, 1, 1));
  }

  runtime::cuda::DeviceContext* context;
  TensorDescriptor y;  // [N, out] as [N, out, 1, 1]; also the output gradient
  std::optional<TensorDescriptor> bias;
};

LinearCuda::LinearCuda(const LinearSpec& spec, const std::vector<Shape>& input_shapes,
                       const LayerOptions& options)
    // The output is rank 2, the same in either layout.
    : Layer(spec, input_shapes, options.dtype, options.layout,
            nchw_bytes_layout(input_shapes, options.input_layout)),
      spec_(spec),
      param_shapes_(param_shapes(spec, this->input_shapes())),
      batch_(checked_int(this->input_shapes()[0].n(), "LinearCuda batch")),
      in_features_(checked_int(this->input_shapes()[0].sample_numel(), "LinearCuda in_features")),
      out_features_(checked_int(spec.out_features, "LinearCuda out_features")) {
  impl_ = std::make_unique<Impl>(checked_context(options, "LinearCuda"), spec, output_shape());
}

LinearCuda::~LinearCuda() = default;

void LinearCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && views_match(args.params, param_shapes_),
               "LinearCuda::forward: expected one input and the weight (and bias) views of the "
               "parameter shapes");
  VDNN_EXPECTS(
      view_matches(args.inputs[0], input_shapes()[0]) && view_matches(args.output, output_shape()),
      "LinearCuda::forward: input or output view does not match the layer's shapes");
  const auto* x = args.inputs[0].as<float>();
  const auto* weight = args.params[0].as<float>();
  auto* y = args.output.as<float>();
  // Column-major: y^T (out x N) = W (out x in, stored as in x out) ^T * x^T (in x N).
  VDNN_CHECK_CUBLAS(cublasSgemm(fp32_cublas(*impl_->context), CUBLAS_OP_T, CUBLAS_OP_N,
                                out_features_, batch_, in_features_, &kOne, weight, in_features_, x,
                                in_features_, &kZero, y, out_features_));
  if (spec_.bias) {
    VDNN_CHECK_CUDNN(cudnnAddTensor(impl_->context->cudnn(), &kOne, impl_->bias->get(),
                                    args.params[1].data, &kOne, impl_->y.get(), y));
  }
}

void LinearCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.grad_inputs.size() == 1 &&
                   views_match(args.params, param_shapes_) &&
                   views_match(args.grad_params, param_shapes_),
               "LinearCuda::backward: expected one input, one input gradient and the weight (and "
               "bias) views with their gradients, of the parameter shapes");
  const GradTarget& target = args.grad_inputs[0];
  VDNN_EXPECTS(view_matches(args.inputs[0], input_shapes()[0]) &&
                   view_matches(args.grad_output, output_shape()) &&
                   (target.tensor.empty() || view_matches(target.tensor, input_shapes()[0])),
               "LinearCuda::backward: a view does not match the layer's shapes");
  const auto* x = args.inputs[0].as<float>();
  const auto* dy = args.grad_output.as<float>();
  const cublasHandle_t cublas = fp32_cublas(*impl_->context);
  if (spec_.bias) {
    VDNN_CHECK_CUDNN(cudnnConvolutionBackwardBias(impl_->context->cudnn(), &kOne, impl_->y.get(),
                                                  dy, &kZero, impl_->bias->get(),
                                                  args.grad_params[1].data));
  }
  // Column-major: dW^T (in x out) = x^T (in x N) * dy (N x out).
  VDNN_CHECK_CUBLAS(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, in_features_, out_features_,
                                batch_, &kOne, x, in_features_, dy, out_features_, &kZero,
                                args.grad_params[0].as<float>(), in_features_));
  if (target.tensor.empty()) return;
  // Column-major: dx^T (in x N) = W^T (in x out) * dy^T (out x N).
  VDNN_CHECK_CUBLAS(cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, in_features_, batch_,
                                out_features_, &kOne, args.params[0].as<float>(), in_features_, dy,
                                out_features_, target.accumulate ? &kOne : &kZero,
                                target.tensor.as<float>(), in_features_));
}

}  // namespace vdnn::layers::cuda
