// CUDA fully connected layer: the row-major [N, in] batch is the column-major in x N matrix cuBLAS
// sees, so each product is one GEMM with no transposed copies. F32: SGEMMs, and the bias broadcast
// and its gradient (a sum over the batch) are cuDNN's per-channel add and reduction on
// [N, out, 1, 1]. BF16: GemmEx on bf16 operands with FP32 accumulation, the executor's bf16 weight
// copy (or one in the workspace), and the bias and its gradient by our own FP32 passes (Note
// [Precision]).
#include "layers/cuda/LinearCuda.hpp"

#include <cuda_bf16.h>

#include <optional>

#include "layers/cuda/ChannelSums.hpp"
#include "layers/cuda/ConvEpilogue.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnDescriptors.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
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

__nv_bfloat16* bf16(void* p) { return static_cast<__nv_bfloat16*>(p); }

// One column-major GEMM C = alpha op(A) op(B) + beta C on bf16 A and B with FP32 accumulation; C
// is bf16 or F32 (`c_type`).
void gemm_bf16(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n,
               int k, const void* a, int lda, const void* b, int ldb, const float* beta, void* c,
               cudaDataType_t c_type, int ldc) {
  VDNN_CHECK_CUBLAS(cublasGemmEx(handle, op_a, op_b, m, n, k, &kOne, a, CUDA_R_16BF, lda, b,
                                 CUDA_R_16BF, ldb, beta, c, c_type, ldc, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
}

}  // namespace

struct LinearCuda::Impl {
  Impl(runtime::cuda::DeviceContext& device, const LinearSpec& spec, const Shape& y_shape,
       const Shape& w_shape, const LayerOptions& options)
      : context(&device), y(y_shape) {
    if (spec.bias) bias.emplace(Shape::nchw(1, spec.out_features, 1, 1));
    if (options.dtype == DType::BF16) {
      if (!options.bf16_weight_copies) {
        weight = runtime::MemoryResource::align_up(w_shape.bytes(DType::BF16));
      }
      if (spec.bias) {
        bias_sums.emplace(y_shape.n(), spec.out_features);
        bias_scratch = runtime::MemoryResource::align_up(bias_sums->scratch_bytes());
      }
    }
  }

  runtime::cuda::DeviceContext* context;
  TensorDescriptor y;  // [N, out] as [N, out, 1, 1]; also the output gradient (F32)
  std::optional<TensorDescriptor> bias;
  std::size_t weight = 0;  // BF16 without the executor's weight copies: bytes of its own copy
  std::size_t bias_scratch = 0;
  std::optional<ChannelSums> bias_sums;  // BF16 with a bias: over the rows of dy
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
  impl_ = std::make_unique<Impl>(checked_context(options, "LinearCuda", Precisions::F32OrBf16),
                                 spec, output_shape(), param_shapes_[0], options);
}

LinearCuda::~LinearCuda() = default;

WorkspaceBytes LinearCuda::workspace() const {
  return {impl_->weight, impl_->weight + impl_->bias_scratch};
}

namespace {

// The weight as bf16 (Note [Precision]), [out, in] either way: the executor's copy as it is, else
// rounded into `scratch` (`scratch_bytes` of it: 0 for a layer built for copies).
const void* bf16_weight(cudaStream_t stream, const TensorView& weight, void* scratch,
                        std::size_t scratch_bytes) {
  if (weight.dtype == DType::BF16) return weight.data;
  VDNN_EXPECTS(scratch_bytes > 0,
               "LinearCuda: given the F32 weight but built for bf16 weight copies "
               "(LayerOptions::bf16_weight_copies)");
  const Shape& s = weight.shape;
  convert_layout(stream, weight.as<float>(), runtime::Layout::Nchw, bf16(scratch),
                 runtime::Layout::Nchw, Shape::nchw(s[0], s[1], 1, 1));
  return scratch;
}

}  // namespace

void LinearCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(
      args.inputs.size() == 1 && params_match(args.params, param_shapes_, dtype() == DType::BF16),
      "LinearCuda::forward: expected one input and the weight (and bias) views of the "
      "parameter shapes");
  VDNN_EXPECTS(view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
                   view_matches(args.output, output_shape(), dtype()) &&
                   workspace_fits(args.workspace, workspace().forward),
               "LinearCuda::forward: input, output or workspace view does not match the layer");
  if (dtype() == DType::BF16) {
    const cudaStream_t stream = impl_->context->compute_stream();
    const void* weight = bf16_weight(stream, args.params[0], args.workspace.data, impl_->weight);
    // Column-major: y^T (out x N) = W (out x in, stored as in x out) ^T * x^T (in x N).
    gemm_bf16(fp32_cublas(*impl_->context), CUBLAS_OP_T, CUBLAS_OP_N, out_features_, batch_,
              in_features_, weight, in_features_, args.inputs[0].data, in_features_, &kZero,
              args.output.data, CUDA_R_16BF, out_features_);
    if (spec_.bias) {
      bias_relu_forward(stream, bf16(args.output.data), args.params[1].as<float>(),
                        Shape::nchw(batch_, out_features_, 1, 1), runtime::Layout::Nhwc,
                        /*relu=*/false);
    }
    return;
  }
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
                   params_match(args.params, param_shapes_, dtype() == DType::BF16) &&
                   views_match(args.grad_params, param_shapes_),
               "LinearCuda::backward: expected one input, one input gradient and the weight (and "
               "bias) views with their gradients, of the parameter shapes");
  const GradTarget& target = args.grad_inputs[0];
  VDNN_EXPECTS(
      view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
          view_matches(args.grad_output, output_shape(), dtype()) &&
          (target.tensor.empty() || view_matches(target.tensor, input_shapes()[0], dtype())) &&
          workspace_fits(args.workspace, workspace().backward),
      "LinearCuda::backward: a view does not match the layer's shapes");
  const cublasHandle_t cublas = fp32_cublas(*impl_->context);
  if (dtype() == DType::BF16) {
    const cudaStream_t stream = impl_->context->compute_stream();
    char* scratch = static_cast<char*>(args.workspace.data);
    void* dy = args.grad_output.data;
    if (impl_->bias_sums) {
      impl_->bias_sums->sums(stream, bf16(dy), scratch + impl_->weight,
                             args.grad_params[1].as<float>());
    }
    // Column-major: dW^T (in x out) = x^T (in x N) * dy (N x out), into the F32 gradient.
    gemm_bf16(cublas, CUBLAS_OP_N, CUBLAS_OP_T, in_features_, out_features_, batch_,
              args.inputs[0].data, in_features_, dy, out_features_, &kZero,
              args.grad_params[0].as<float>(), CUDA_R_32F, in_features_);
    if (target.tensor.empty()) return;
    const void* weight = bf16_weight(stream, args.params[0], scratch, impl_->weight);
    // Column-major: dx^T (in x N) = W^T (in x out) * dy^T (out x N).
    gemm_bf16(cublas, CUBLAS_OP_N, CUBLAS_OP_N, in_features_, batch_, out_features_, weight,
              in_features_, dy, out_features_, target.accumulate ? &kOne : &kZero,
              target.tensor.data, CUDA_R_16BF, in_features_);
    return;
  }
  const auto* x = args.inputs[0].as<float>();
  const auto* dy = args.grad_output.as<float>();
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
