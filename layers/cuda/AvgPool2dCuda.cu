// CUDA average pooling in NCHW or NHWC: cuDNN's average pooling forward in F32, an own kernel that
// sums each window in float in BF16; backward as a gather kernel, because cuDNN's pooling backward
// also takes the input and output, which backward does not keep.
#include "layers/cuda/AvgPool2dCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnPooling.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// Each window passes on its gradient divided by what forward divided by.
struct AverageShare {
  PoolWindow w;
  bool count_include_pad;
  // What forward divides the sum of the window (clipped to rows x cols) by.
  __device__ float divisor(IndexRange rows, IndexRange cols) const {
    // Without ceil mode no window reaches past the padding: including it means the kernel area.
    return static_cast<float>(count_include_pad
                                  ? w.kernel_h * w.kernel_w
                                  : (rows.end - rows.begin) * (cols.end - cols.begin));
  }
  template <typename Plane>
  __device__ float operator()(Plane /*x_plane*/, int /*pixel*/, IndexRange rows, IndexRange cols,
                              float dy) const {
    return dy / divisor(rows, cols);
  }
};

// One thread per output element, x and y stored in L: the window's sum in float over the divisor.
template <Layout L, typename T>
__global__ void avg_pool_forward(AverageShare share, const T* __restrict__ x, T* __restrict__ y) {
  const PoolWindow& w = share.w;
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= w.planes() * w.out_plane()) return;
  const PlanePixel at = w.outputs<L>().locate(index);
  const PlaneOffsets<L> x_plane = w.inputs<L>().plane(at.sample, at.channel);
  const IndexRange rows = w.rows_under(at.pixel / w.out_w);
  const IndexRange cols = w.cols_under(at.pixel % w.out_w);
  float sum = 0.0f;
  for (int ih = rows.begin; ih < rows.end; ++ih) {
    for (int iw = cols.begin; iw < cols.end; ++iw) sum += to_float(x[x_plane[ih * w.in_w + iw]]);
  }
  y[index] = from_float<T>(sum / share.divisor(rows, cols));
}

// One thread per input element, dx and dy stored in L.
template <Layout L, typename T>
__global__ void avg_pool_backward(PoolWindow w, bool count_include_pad, const T* __restrict__ dy,
                                  T* __restrict__ dx, bool accumulate) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= w.planes() * w.in_plane()) return;
  gather_window_gradients<L>(w, index, dy, dx, accumulate, AverageShare{w, count_include_pad});
}

}  // namespace

AvgPool2dCuda::AvgPool2dCuda(const AvgPool2dSpec& spec, std::vector<Shape> input_shapes,
                             const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "AvgPool2dCuda", Precisions::F32OrBf16)),
      window_(PoolWindow::make(spec.kernel, spec.stride, spec.padding, this->input_shapes()[0],
                               output_shape(), layout())),
      count_include_pad_(spec.count_include_pad),
      pooling_(options.dtype == DType::F32
                   ? std::make_unique<CudnnPooling>(
                         spec.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                         window_, this->input_shapes()[0], output_shape(), layout())
                   : nullptr) {}

AvgPool2dCuda::~AvgPool2dCuda() = default;

void AvgPool2dCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 &&
                   view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
                   view_matches(args.output, output_shape(), dtype()),
               "AvgPool2dCuda::forward: views do not match the layer's shapes");
  if (pooling_) {
    pooling_->forward(context_->cudnn(), args.inputs[0].data, args.output.data);
    return;
  }
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    with_layout(layout(), [&](auto tag) {
      avg_pool_forward<decltype(tag)::value>
          <<<blocks_for(args.output.numel()), kBlockThreads, 0, context_->compute_stream()>>>(
              AverageShare{window_, count_include_pad_}, device_data<T>(args.inputs[0]),
              device_data<T>(args.output));
    });
  });
  VDNN_CHECK_LAUNCH();
}

void AvgPool2dCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(
      args.grad_inputs.size() == 1 && view_matches(args.grad_output, output_shape(), dtype()),
      "AvgPool2dCuda::backward: views do not match the layer's shapes");
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  VDNN_EXPECTS(view_matches(target.tensor, input_shapes()[0], dtype()),
               "AvgPool2dCuda::backward: input gradient view does not match the input shape");
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    with_layout(layout(), [&](auto tag) {
      avg_pool_backward<decltype(tag)::value>
          <<<blocks_for(target.tensor.numel()), kBlockThreads, 0, context_->compute_stream()>>>(
              window_, count_include_pad_, device_data<T>(args.grad_output),
              device_data<T>(target.tensor), target.accumulate);
    });
  });
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
