// Batch normalization on the CUDA backend: cuDNN's spatial batch norm for both forwards and the
// usual backward, plus one reduction kernel for what cuDNN's backward does not cover: gradients
// after an inference forward (constant statistics) and parameter gradients without an input one.
#include "layers/cuda/BatchNorm2dCuda.hpp"

#include <cudnn.h>

#include <utility>

#include "layers/cuda/BlockReduce.cuh"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnDescriptors.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// What backward reads of the last forward's normalization, computed from the running buffers
// after an inference forward (cuDNN's inference saves nothing).
__global__ void stats_from_running_kernel(const float* running_mean, const float* running_var,
                                          double eps, float* mean, float* inv_std,
                                          std::int64_t channels) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  mean[c] = running_mean[c];
  inv_std[c] = static_cast<float>(1.0 / sqrt(static_cast<double>(running_var[c]) + eps));
}

// One block per channel c. Sums dy and dy * (x - mean) over the channel in double, writes the
// parameter gradients that are asked for and, where dx is set, the input gradient with constant
// statistics: dx (+)= weight * inv_std * dy.
__global__ void backward_reduce_kernel(const float* x, const float* dy, const float* mean,
                                       const float* inv_std, const float* weight,
                                       float* grad_weight, float* grad_bias, float* dx,
                                       bool accumulate, std::int64_t samples, std::int64_t channels,
                                       std::int64_t pixels) {
  const std::int64_t c = blockIdx.x;
  const float centre = mean[c];
  const float a = weight[c] * inv_std[c];
  double sum_dy = 0.0;
  double sum_dy_centred = 0.0;
  for (std::int64_t i = threadIdx.x; i < samples * pixels; i += blockDim.x) {
    const std::int64_t sample = i / pixels;
    const std::int64_t at = (sample * channels + c) * pixels + (i - sample * pixels);
    const float g = dy[at];
    sum_dy += g;
    sum_dy_centred += static_cast<double>(g) * static_cast<double>(x[at] - centre);
    if (dx != nullptr) dx[at] = accumulate ? dx[at] + a * g : a * g;
  }
  sum_dy = block_reduce(sum_dy, Sum{});
  sum_dy_centred = block_reduce(sum_dy_centred, Sum{});
  if (threadIdx.x != 0) return;
  if (grad_weight != nullptr) grad_weight[c] = static_cast<float>(sum_dy_centred * inv_std[c]);
  if (grad_bias != nullptr) grad_bias[c] = static_cast<float>(sum_dy);
}

float* data_or_null(const TensorView& view) { return view.empty() ? nullptr : view.as<float>(); }

}  // namespace

struct BatchNorm2dCuda::State {
  explicit State(const Shape& x_shape)
      : channels(x_shape.c()),
        x(x_shape),
        stats(Shape::nchw(1, channels, 1, 1)),
        saved(2 * sizeof(float) * static_cast<std::size_t>(channels)),
        unwanted_param_grads(2 * sizeof(float) * static_cast<std::size_t>(channels)) {}

  float* saved_mean() const { return saved.as<float>(); }
  float* saved_inv_std() const { return saved.as<float>() + channels; }

  std::int64_t channels;
  TensorDescriptor x;                 // N, C, H, W: x, y, dy and dx alike
  TensorDescriptor stats;             // 1, C, 1, 1: what cuDNN derives for spatial batch norm
  DeviceBuffer saved;                 // [2C]: mean, then 1 / sqrt(var + eps) of the last forward
  DeviceBuffer unwanted_param_grads;  // [2C]: cuDNN's backward always writes both param grads
};

BatchNorm2dCuda::BatchNorm2dCuda(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes,
                                 const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      context_(&checked_context(options, "BatchNorm2dCuda")),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      state_(std::make_unique<State>(this->input_shapes()[0])) {}

BatchNorm2dCuda::~BatchNorm2dCuda() = default;

void BatchNorm2dCuda::forward(const ForwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const float one = 1.0f;
  const float zero = 0.0f;
  const float* x = args.inputs[0].as<float>();
  float* y = args.output.as<float>();
  const float* weight = args.params[0].as<float>();
  const float* bias = args.params[1].as<float>();
  float* running_mean = args.params[2].as<float>();
  float* running_var = args.params[3].as<float>();
  if (args.training) {
    VDNN_EXPECTS(shape.n() * shape.h() * shape.w() > 1,
                 "batchnorm2d training needs more than one value per channel");
    // cuDNN's exponentialAverageFactor weighs the batch statistic: PyTorch's momentum. Its running
    // variance takes the unbiased batch variance, as PyTorch's does.
    VDNN_CHECK_CUDNN(cudnnBatchNormalizationForwardTraining(
        context_->cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, state_->x.get(), x,
        state_->x.get(), y, state_->stats.get(), weight, bias, spec_.momentum, running_mean,
        running_var, spec_.eps, state_->saved_mean(), state_->saved_inv_std()));
  } else {
    VDNN_CHECK_CUDNN(cudnnBatchNormalizationForwardInference(
        context_->cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, state_->x.get(), x,
        state_->x.get(), y, state_->stats.get(), weight, bias, running_mean, running_var,
        spec_.eps));
    stats_from_running_kernel<<<blocks_for(state_->channels), kBlockThreads, 0,
                                context_->compute_stream()>>>(
        running_mean, running_var, spec_.eps, state_->saved_mean(), state_->saved_inv_std(),
        state_->channels);
    VDNN_CHECK_LAUNCH();
  }
  batch_stats_ = args.training;
}

void BatchNorm2dCuda::backward(const BackwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const GradTarget& target = args.grad_inputs[0];
  float* grad_weight = data_or_null(args.grad_params[0]);
  float* grad_bias = data_or_null(args.grad_params[1]);
  const float* x = args.inputs[0].as<float>();
  const float* dy = args.grad_output.as<float>();
  const float* weight = args.params[0].as<float>();
  if (batch_stats_ && !target.tensor.empty()) {
    const float one = 1.0f;
    const float zero = 0.0f;
    const float* dx_beta = target.accumulate ? &one : &zero;
    float* unwanted = state_->unwanted_param_grads.as<float>();
    VDNN_CHECK_CUDNN(cudnnBatchNormalizationBackward(
        context_->cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, dx_beta, &one, &zero, state_->x.get(), x,
        state_->x.get(), dy, state_->x.get(), target.tensor.as<float>(), state_->stats.get(),
        weight, grad_weight != nullptr ? grad_weight : unwanted,
        grad_bias != nullptr ? grad_bias : unwanted + state_->channels, spec_.eps,
        state_->saved_mean(), state_->saved_inv_std()));
    return;
  }
  // With batch statistics and no input gradient only the parameter gradients remain (dx null).
  float* dx = batch_stats_ ? nullptr : data_or_null(target.tensor);
  if (dx == nullptr && grad_weight == nullptr && grad_bias == nullptr) return;
  backward_reduce_kernel<<<static_cast<unsigned>(state_->channels), kReduceBlock, 0,
                           context_->compute_stream()>>>(
      x, dy, state_->saved_mean(), state_->saved_inv_std(), weight, grad_weight, grad_bias, dx,
      target.accumulate, shape.n(), state_->channels, shape.h() * shape.w());
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
