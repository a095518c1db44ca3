// CUDA average pooling in NCHW or NHWC: cuDNN's average pooling forward; backward as a gather
// kernel, because cuDNN's pooling backward also takes the input and output, which backward does not
// keep.
#include "layers/cuda/AvgPool2dCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/CudnnPooling.hpp"
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
  template <typename Plane>
  __device__ float operator()(Plane /*x_plane*/, int /*pixel*/, IndexRange rows, IndexRange cols,
                              float dy) const {
    // Without ceil mode no window reaches past the padding: including it means the kernel area.
    const int divisor = count_include_pad ? w.kernel_h * w.kernel_w
                                          : (rows.end - rows.begin) * (cols.end - cols.begin);
    return dy / static_cast<float>(divisor);
  }
};

// One thread per input element, dx and dy stored in L.
template <Layout L>
__global__ void avg_pool_backward(PoolWindow w, bool count_include_pad,
                                  const float* __restrict__ dy, float* __restrict__ dx,
                                  bool accumulate) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= w.planes() * w.in_plane()) return;
  gather_window_gradients<L>(w, index, dy, dx, accumulate, AverageShare{w, count_include_pad});
}

}  // namespace

AvgPool2dCuda::AvgPool2dCuda(const AvgPool2dSpec& spec, std::vector<Shape> input_shapes,
                             const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "AvgPool2dCuda")),
      window_(PoolWindow::make(spec.kernel, spec.stride, spec.padding, this->input_shapes()[0],
                               output_shape(), layout())),
      count_include_pad_(spec.count_include_pad),
      pooling_(std::make_unique<CudnnPooling>(
          spec.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                 : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
          window_, this->input_shapes()[0], output_shape(), layout())) {}

AvgPool2dCuda::~AvgPool2dCuda() = default;

void AvgPool2dCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], input_shapes()[0]) &&
                   view_matches(args.output, output_shape()),
               "AvgPool2dCuda::forward: views do not match the layer's shapes");
  pooling_->forward(context_->cudnn(), args.inputs[0].data, args.output.data);
}

void AvgPool2dCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.grad_inputs.size() == 1 && view_matches(args.grad_output, output_shape()),
               "AvgPool2dCuda::backward: views do not match the layer's shapes");
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  VDNN_EXPECTS(view_matches(target.tensor, input_shapes()[0]),
               "AvgPool2dCuda::backward: input gradient view does not match the input shape");
  with_layout(layout(), [&](auto tag) {
    avg_pool_backward<decltype(tag)::value>
        <<<blocks_for(target.tensor.numel()), kBlockThreads, 0, context_->compute_stream()>>>(
            window_, count_include_pad_, args.grad_output.as<float>(), target.tensor.as<float>(),
            target.accumulate);
  });
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
