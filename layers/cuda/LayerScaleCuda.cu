// The per-channel scale on the CUDA backend: one thread per element for y and dx, the channel
// taken from the element's index in its layout; the scale's gradient through ChannelReduce.cuh.
#include "layers/cuda/LayerScaleCuda.hpp"

#include <type_traits>
#include <utility>

#include "layers/cuda/ChannelReduce.cuh"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// The channel of element i: i % C in NHWC, (i / (H * W)) % C in NCHW.
struct ChannelOf {
  std::int64_t channels;
  std::int64_t pixels;
  bool channels_last;
  __device__ std::int64_t operator()(std::int64_t i) const {
    return (channels_last ? i : i / pixels) % channels;
  }
};

// out[i] (+)= in[i] * scale[channel(i)].
template <typename T>
__global__ void scale_kernel(const T* __restrict__ in, const float* __restrict__ scale, T* out,
                             std::int64_t n, ChannelOf channel, bool accumulate) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = to_float(in[i]) * scale[channel(i)];
  out[i] = from_float<T>(accumulate ? to_float(out[i]) + v : v);
}

// The scale gradient's term of one element: dy * x.
template <typename T>
struct ProductTerms {
  const T* dy;
  const T* x;
  __device__ Terms<1> operator()(std::int64_t element, std::int64_t, std::int64_t) const {
    return {{to_float(dy[element]) * to_float(x[element])}};
  }
};

template <typename T>
void launch_scale(cudaStream_t stream, const T* in, const float* scale, T* out, const Shape& s,
                  Layout layout, bool accumulate) {
  const ChannelOf channel{s.c(), s.h() * s.w(), layout == Layout::Nhwc};
  scale_kernel<<<blocks_for(s.numel()), kBlockThreads, 0, stream>>>(
      device_pointer(in), scale, device_pointer(out), s.numel(), channel, accumulate);
  VDNN_CHECK_LAUNCH();
}

}  // namespace

LayerScaleCuda::LayerScaleCuda(const LayerScaleSpec& spec, std::vector<Shape> input_shapes,
                               const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "LayerScaleCuda", Precisions::F32OrBf16)) {}

WorkspaceBytes LayerScaleCuda::workspace() const {
  return {0, ChannelGrid::of(input_shapes()[0], layout()).scratch_bytes(1)};
}

void LayerScaleCuda::forward(const ForwardArgs& args) {
  const Shape& s = input_shapes()[0];
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], s, dtype()) &&
                   view_matches(args.output, s, dtype()) &&
                   views_match(args.params, param_shapes(spec(), input_shapes())),
               "LayerScaleCuda::forward: views do not match the layer");
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    launch_scale(context_->compute_stream(), args.inputs[0].as<T>(), args.params[0].as<float>(),
                 args.output.as<T>(), s, layout(), false);
  });
}

void LayerScaleCuda::backward(const BackwardArgs& args) {
  const Shape& s = input_shapes()[0];
  const GradTarget& dx = args.grad_inputs.at(0);
  const bool scale_grad = !args.grad_params.empty() && !args.grad_params[0].empty();
  VDNN_EXPECTS(
      args.params.size() == 1 && view_matches(args.grad_output, s, dtype()) &&
          (dx.tensor.empty() || view_matches(dx.tensor, s, dtype())) &&
          (!scale_grad || (args.inputs.size() == 1 && view_matches(args.inputs[0], s, dtype()) &&
                           workspace_fits(args.workspace, workspace().backward))),
      "LayerScaleCuda::backward: views do not match the layer");
  const cudaStream_t stream = context_->compute_stream();
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    if (!dx.tensor.empty()) {
      launch_scale(stream, args.grad_output.as<T>(), args.params[0].as<float>(), dx.tensor.as<T>(),
                   s, layout(), dx.accumulate);
    }
    if (!scale_grad) return;
    using D = DeviceElementOf<T>;
    channel_reduce<1>(stream, ChannelGrid::of(s, layout()),
                      ProductTerms<D>{device_pointer(args.grad_output.as<T>()),
                                      device_pointer(args.inputs[0].as<T>())},
                      args.workspace.data, ChannelOutputs<1>{{args.grad_params[0].as<float>()}});
  });
}

}  // namespace vdnn::layers::cuda
