// Layer normalization over channels on the CUDA backend. A group of G threads takes one pixel: in
// NHWC a warp (G = 32, its channels contiguous, a butterfly of shuffles reduces them, giving every
// lane bitwise the same sum), in NCHW one thread (G = 1, its channels a plane apart, so a warp's
// threads read 32 neighbouring pixels of one plane). Backward keeps each pixel's statistics in the
// workspace for the weight and bias gradients (ChannelReduce.cuh).
#include "layers/cuda/LayerNorm2dCuda.hpp"

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

constexpr int kWarpLanes = 32;

// Where the channels of pixel p = n * H * W + h * W + w lie: base(p) + c * stride.
struct PixelChannels {
  std::int64_t channels;
  std::int64_t pixels;  // H * W
  bool channels_last;

  __device__ std::int64_t base(std::int64_t p) const {
    if (channels_last) return p * channels;
    const std::int64_t n = p / pixels;
    return n * channels * pixels + (p - n * pixels);
  }
  __device__ std::int64_t stride() const { return channels_last ? 1 : pixels; }
};

// The sum over the G lanes of a group (aligned within a warp).
template <int G>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int offset = G / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xFFFFFFFFu, v, offset, G);
  }
  return v;
}

// (mean, 1 / sqrt(biased variance + eps)) of a pixel's channels, in two passes.
template <int G, typename T>
__device__ float2 pixel_statistics(const T* x, std::int64_t base, std::int64_t stride,
                                   std::int64_t channels, int lane, float eps) {
  float sum = 0.0f;
  for (std::int64_t c = lane; c < channels; c += G) sum += to_float(x[base + c * stride]);
  const float mean = group_sum<G>(sum) / static_cast<float>(channels);
  float squares = 0.0f;
  for (std::int64_t c = lane; c < channels; c += G) {
    const float d = to_float(x[base + c * stride]) - mean;
    squares += d * d;
  }
  const float var = group_sum<G>(squares) / static_cast<float>(channels);
  return make_float2(mean, 1.0f / sqrtf(var + eps));
}

template <int G, typename T>
__global__ void forward_kernel(const T* __restrict__ x, const float* __restrict__ weight,
                               const float* __restrict__ bias, T* __restrict__ y, PixelChannels at,
                               std::int64_t count, float eps) {
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t p = thread / G;
  const int lane = static_cast<int>(thread % G);
  if (p >= count) return;  // a whole group at once
  const std::int64_t base = at.base(p);
  const std::int64_t stride = at.stride();
  const float2 s = pixel_statistics<G>(x, base, stride, at.channels, lane, eps);
  for (std::int64_t c = lane; c < at.channels; c += G) {
    const std::int64_t i = base + c * stride;
    y[i] = from_float<T>((to_float(x[i]) - s.x) * s.y * weight[c] + bias[c]);
  }
}

// Each pixel's statistics into `stats`, and, where dx is not null, with g = dy * weight:
// dx (+)= inv_std * (g - mean_c(g) - xhat * mean_c(g * xhat)).
template <int G, typename T>
__global__ void backward_kernel(const T* __restrict__ x, const T* __restrict__ dy,
                                const float* __restrict__ weight, T* dx, bool accumulate,
                                float2* __restrict__ stats, PixelChannels at, std::int64_t count,
                                float eps) {
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t p = thread / G;
  const int lane = static_cast<int>(thread % G);
  if (p >= count) return;
  const std::int64_t base = at.base(p);
  const std::int64_t stride = at.stride();
  const float2 s = pixel_statistics<G>(x, base, stride, at.channels, lane, eps);
  if (lane == 0) stats[p] = s;
  if (dx == nullptr) return;
  float grad_sum = 0.0f;
  float projection = 0.0f;
  for (std::int64_t c = lane; c < at.channels; c += G) {
    const std::int64_t i = base + c * stride;
    const float g = to_float(dy[i]) * weight[c];
    grad_sum += g;
    projection += g * (to_float(x[i]) - s.x) * s.y;
  }
  const auto channels = static_cast<float>(at.channels);
  const float grad_mean = group_sum<G>(grad_sum) / channels;
  const float projection_mean = group_sum<G>(projection) / channels;
  for (std::int64_t c = lane; c < at.channels; c += G) {
    const std::int64_t i = base + c * stride;
    const float xhat = (to_float(x[i]) - s.x) * s.y;
    const float v = s.y * (to_float(dy[i]) * weight[c] - grad_mean - xhat * projection_mean);
    dx[i] = from_float<T>(accumulate ? to_float(dx[i]) + v : v);
  }
}

// The weight and bias gradients' terms of one element: dy * xhat and dy.
template <typename T>
struct AffineGradTerms {
  const T* x;
  const T* dy;
  const float2* stats;
  __device__ Terms<2> operator()(std::int64_t element, std::int64_t pixel, std::int64_t) const {
    const float2 s = stats[pixel];
    const float g = to_float(dy[element]);
    return {{g * ((to_float(x[element]) - s.x) * s.y), g}};
  }
};

PixelChannels pixel_channels(const Shape& s, Layout layout) {
  return {s.c(), s.h() * s.w(), layout == Layout::Nhwc};
}

std::size_t statistics_bytes(const Shape& s) {
  return static_cast<std::size_t>(s.n() * s.h() * s.w()) * sizeof(float2);
}

// Launches kernel<G> with G = 32 lanes a pixel in NHWC, 1 in NCHW, over every pixel of `s`.
template <typename Launch>
void per_pixel(const Shape& s, Layout layout, Launch&& launch) {
  const std::int64_t pixels = s.n() * s.h() * s.w();
  if (layout == Layout::Nhwc) {
    launch(std::integral_constant<int, kWarpLanes>{}, blocks_for(pixels * kWarpLanes));
  } else {
    launch(std::integral_constant<int, 1>{}, blocks_for(pixels));
  }
}

float* data_or_null(const std::vector<TensorView>& views, std::size_t k) {
  return k < views.size() && !views[k].empty() ? views[k].as<float>() : nullptr;
}

}  // namespace

LayerNorm2dCuda::LayerNorm2dCuda(const LayerNorm2dSpec& spec, std::vector<Shape> input_shapes,
                                 const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      eps_(static_cast<float>(spec.eps)),
      context_(&checked_context(options, "LayerNorm2dCuda", Precisions::F32OrBf16)) {}

WorkspaceBytes LayerNorm2dCuda::workspace() const {
  const Shape& s = input_shapes()[0];
  return {0, statistics_bytes(s) + ChannelGrid::of(s, layout()).scratch_bytes(2)};
}

void LayerNorm2dCuda::forward(const ForwardArgs& args) {
  const Shape& s = input_shapes()[0];
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], s, dtype()) &&
                   view_matches(args.output, s, dtype()) &&
                   views_match(args.params, param_shapes(spec(), input_shapes())),
               "LayerNorm2dCuda::forward: views do not match the layer");
  const PixelChannels at = pixel_channels(s, layout());
  const std::int64_t count = s.n() * s.h() * s.w();
  const cudaStream_t stream = context_->compute_stream();
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    per_pixel(s, layout(), [&](auto lanes, unsigned int blocks) {
      forward_kernel<decltype(lanes)::value><<<blocks, kBlockThreads, 0, stream>>>(
          device_pointer(args.inputs[0].as<T>()), args.params[0].as<float>(),
          args.params[1].as<float>(), device_pointer(args.output.as<T>()), at, count, eps_);
      VDNN_CHECK_LAUNCH();
    });
  });
}

void LayerNorm2dCuda::backward(const BackwardArgs& args) {
  const Shape& s = input_shapes()[0];
  const GradTarget& dx = args.grad_inputs.at(0);
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], s, dtype()) &&
                   view_matches(args.grad_output, s, dtype()) &&
                   (dx.tensor.empty() || view_matches(dx.tensor, s, dtype())) &&
                   args.params.size() == 2 && workspace_fits(args.workspace, workspace().backward),
               "LayerNorm2dCuda::backward: views do not match the layer");
  const PixelChannels at = pixel_channels(s, layout());
  const std::int64_t count = s.n() * s.h() * s.w();
  const cudaStream_t stream = context_->compute_stream();
  auto* stats = static_cast<float2*>(args.workspace.data);
  char* scratch = static_cast<char*>(args.workspace.data) + statistics_bytes(s);
  const ChannelOutputs<2> grads{
      {data_or_null(args.grad_params, 0), data_or_null(args.grad_params, 1)}};
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    const auto* x = device_pointer(args.inputs[0].as<T>());
    const auto* dy = device_pointer(args.grad_output.as<T>());
    auto* out = dx.tensor.empty() ? nullptr : device_pointer(dx.tensor.as<T>());
    per_pixel(s, layout(), [&](auto lanes, unsigned int blocks) {
      backward_kernel<decltype(lanes)::value><<<blocks, kBlockThreads, 0, stream>>>(
          x, dy, args.params[0].as<float>(), out, dx.accumulate, stats, at, count, eps_);
      VDNN_CHECK_LAUNCH();
    });
    if (grads.out[0] == nullptr && grads.out[1] == nullptr) return;
    using D = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
    channel_reduce<2>(stream, ChannelGrid::of(s, layout()), AffineGradTerms<D>{x, dy, stats},
                      scratch, grads);
  });
}

}  // namespace vdnn::layers::cuda
