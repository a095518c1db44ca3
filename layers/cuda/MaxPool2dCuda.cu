// CUDA max pooling: cuDNN's deterministic max pooling forward (an own kernel in ceil mode, whose
// output extents cuDNN cannot produce); backward as a gather kernel that re-finds each covering
// window's arg-max in the input, since the output is not kept for backward.
#include "layers/cuda/MaxPool2dCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnPooling.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// Index in `plane` of the first maximum under the window, row-major; a NaN beats every number so
// that the gradient follows the NaN that forward propagated (the MaxPool2dCpu rule).
__device__ int window_argmax(const float* plane, int width, IndexRange rows, IndexRange cols) {
  int best = rows.begin * width + cols.begin;
  float best_value = plane[best];
  for (int ih = rows.begin; ih < rows.end; ++ih) {
    for (int iw = cols.begin; iw < cols.end; ++iw) {
      const float value = plane[ih * width + iw];
      if (value > best_value || (value != value && best_value == best_value)) {
        best = ih * width + iw;
        best_value = value;
      }
    }
  }
  return best;
}

// A window passes its gradient to its arg-max only.
struct ArgmaxShare {
  int in_w;
  const float* x;
  int in_plane;
  __device__ float operator()(int plane, int pixel, IndexRange rows, IndexRange cols,
                              float dy) const {
    return window_argmax(x + plane * in_plane, in_w, rows, cols) == pixel ? dy : 0.0f;
  }
};

// cuDNN pools in floor mode only; ceil mode that adds a window needs the own kernel.
bool cudnn_can_pool(MaxPool2dSpec spec, const Shape& input, const Shape& output) {
  spec.ceil_mode = false;
  return infer_output_shape(spec, {input}) == output;
}

// One thread per output element; the windows are clipped to the input, so the extra last window
// of ceil mode reads only input pixels.
__global__ void max_pool_forward(PoolWindow w, const float* __restrict__ x, float* __restrict__ y) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= w.planes * w.out_plane()) return;
  const int plane = index / w.out_plane();
  const int pixel = index - plane * w.out_plane();
  const float* x_plane = x + plane * w.in_plane();
  y[index] = x_plane[window_argmax(x_plane, w.in_w, w.rows_under(pixel / w.out_w),
                                   w.cols_under(pixel % w.out_w))];
}

// One thread per input element.
__global__ void max_pool_backward(PoolWindow w, const float* __restrict__ x,
                                  const float* __restrict__ dy, float* __restrict__ dx,
                                  bool accumulate) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= w.planes * w.in_plane()) return;
  gather_window_gradients(w, index, dy, dx, accumulate, ArgmaxShare{w.in_w, x, w.in_plane()});
}

}  // namespace

MaxPool2dCuda::MaxPool2dCuda(const MaxPool2dSpec& spec, std::vector<Shape> input_shapes,
                             const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      context_(&checked_context(options, "MaxPool2dCuda")),
      window_(PoolWindow::make(spec.kernel, spec.stride, spec.padding, this->input_shapes()[0],
                               output_shape())),
      pooling_(cudnn_can_pool(spec, this->input_shapes()[0], output_shape())
                   ? std::make_unique<CudnnPooling>(CUDNN_POOLING_MAX_DETERMINISTIC, window_,
                                                    this->input_shapes()[0], output_shape())
                   : nullptr) {}

MaxPool2dCuda::~MaxPool2dCuda() = default;

void MaxPool2dCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], input_shapes()[0]) &&
                   view_matches(args.output, output_shape()),
               "MaxPool2dCuda::forward: views do not match the layer's shapes");
  if (pooling_) {
    pooling_->forward(context_->cudnn(), args.inputs[0].data, args.output.data);
    return;
  }
  max_pool_forward<<<blocks_for(args.output.numel()), kBlockThreads, 0,
                     context_->compute_stream()>>>(window_, args.inputs[0].as<float>(),
                                                   args.output.as<float>());
  VDNN_CHECK_LAUNCH();
}

void MaxPool2dCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && args.grad_inputs.size() == 1 &&
                   view_matches(args.inputs[0], input_shapes()[0]) &&
                   view_matches(args.grad_output, output_shape()),
               "MaxPool2dCuda::backward: views do not match the layer's shapes");
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  VDNN_EXPECTS(view_matches(target.tensor, input_shapes()[0]),
               "MaxPool2dCuda::backward: input gradient view does not match the input shape");
  max_pool_backward<<<blocks_for(target.tensor.numel()), kBlockThreads, 0,
                      context_->compute_stream()>>>(window_, args.inputs[0].as<float>(),
                                                    args.grad_output.as<float>(),
                                                    target.tensor.as<float>(), target.accumulate);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
