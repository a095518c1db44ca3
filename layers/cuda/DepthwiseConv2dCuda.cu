// The channels-last depthwise convolution on our own kernels (Note [Depthwise convolution]): at
// stride 1 the output and the input gradient a thread per 4 outputs of a row with the row's window
// in registers, else a thread per pixel reading each tap's input; the weight and bias gradients as
// per-thread sums over a part of the output rows, added in an order the shapes fix.
#include "layers/cuda/DepthwiseConv2dCuda.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// Extents and the convolution's window, as the kernels index them.
struct Geometry {
  std::int64_t n;
  int h, w, c;
  int oh, ow;
  int stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;

  __host__ __device__ std::int64_t output_pixels() const { return n * oh * ow; }
  __host__ __device__ std::int64_t input_pixels() const { return n * h * w; }
};

Geometry geometry_of(const Conv2dSpec& s, const Shape& x, const Shape& y) {
  return {x.n(),
          checked_int(x.h(), "height"),
          checked_int(x.w(), "width"),
          checked_int(x.c(), "channels"),
          checked_int(y.h(), "output height"),
          checked_int(y.w(), "output width"),
          static_cast<int>(s.stride[0]),
          static_cast<int>(s.stride[1]),
          static_cast<int>(s.padding[0]),
          static_cast<int>(s.padding[1]),
          static_cast<int>(s.dilation[0]),
          static_cast<int>(s.dilation[1])};
}

// The weight gradient's first level: blocks of kLanes channel vectors (one per lane) by kColumns
// columns, for one kernel row's taps, over a part of the batch's output rows each (about
// kTargetBlocks blocks in all).
constexpr int kLanes = 32;
constexpr int kColumns = 8;
constexpr std::int64_t kTargetBlocks = 2048;

std::int64_t parts_for(const Geometry& g, std::int64_t kernel) {
  const std::int64_t tiles = (g.c + 4 * kLanes - 1) / (4 * kLanes) * kernel;
  return std::clamp<std::int64_t>((kTargetBlocks + tiles - 1) / tiles, 1,
                                  std::min<std::int64_t>(g.n * g.oh, 65535));
}

std::size_t aligned(std::size_t bytes) { return runtime::MemoryResource::align_up(bytes); }

std::size_t taps_bytes(const Conv2dSpec& s, std::int64_t channels) {
  return aligned(static_cast<std::size_t>(s.kernel[0] * s.kernel[1] * channels) * sizeof(float));
}

// taps[k * C + c] = w[c * K*K + k] (flipped: of tap K*K - 1 - k, the kernel turned by 180 degrees
// for the data gradient as a convolution), rounded to bf16 first when the layer is BF16 and the
// weight is the F32 master (as a bf16 convolution reads it).
template <typename W>
__global__ void transpose_taps(const W* __restrict__ w, float* __restrict__ taps, int channels,
                               int taps_per_channel, bool flipped, bool round_bf16) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= channels * taps_per_channel) return;
  const int k = i / channels;
  const int c = i - k * channels;
  float v = to_float(w[c * taps_per_channel + (flipped ? taps_per_channel - 1 - k : k)]);
  if (round_bf16) v = __bfloat162float(__float2bfloat16_rn(v));
  taps[i] = v;
}

// A stride-1, dilation-1 depthwise convolution of `in` (in_h x in_w) into `out` (out_h x out_w)
// with padding pad: out[p] (+)= sum over the taps (r, then s) of in[p - pad + (r, s)] * taps[r, s],
// then + bias. Forward is this with the layer's taps; the data gradient is it from dy into dx with
// the taps flipped and padding K - 1 - pad.
struct RowGeometry {
  std::int64_t n;
  int in_h, in_w, c, out_h, out_w, pad_h, pad_w;
};

// Outputs of a row per thread: each input of the row's window is loaded once for all it feeds.
constexpr int kRowOutputs = 4;

template <typename T, int K, int V>
__global__ void __launch_bounds__(kBlockThreads)
    rows_kernel(const T* __restrict__ in, const float* __restrict__ taps,
                const float* __restrict__ bias, T* out, RowGeometry g, bool accumulate) {
  constexpr int kWindow = kRowOutputs + K - 1;
  const std::int64_t vectors = g.c / V;
  const int tiles = (g.out_w + kRowOutputs - 1) / kRowOutputs;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.n * g.out_h * tiles * vectors) return;
  const std::int64_t cv = i % vectors;
  std::int64_t p = i / vectors;
  const int ow0 = static_cast<int>(p % tiles) * kRowOutputs;
  p /= tiles;
  const int oh = static_cast<int>(p % g.out_h);
  const std::int64_t n = p / g.out_h;
  float acc[kRowOutputs][V] = {};
#pragma unroll
  for (int r = 0; r < K; ++r) {
    const int ih = oh - g.pad_h + r;
    if (ih < 0 || ih >= g.in_h) continue;
    const std::int64_t row = (n * g.in_h + ih) * g.in_w;
    float window[kWindow][V];
#pragma unroll
    for (int j = 0; j < kWindow; ++j) {
      const int iw = ow0 - g.pad_w + j;
      if (iw >= 0 && iw < g.in_w) {
        load_vec<V>(in, (row + iw) * vectors + cv, window[j]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) window[j][v] = 0.0f;
      }
    }
#pragma unroll
    for (int s = 0; s < K; ++s) {
      float w[V];
      load_vec<V>(taps, (r * K + s) * vectors + cv, w);
#pragma unroll
      for (int o = 0; o < kRowOutputs; ++o) {
#pragma unroll
        for (int v = 0; v < V; ++v) acc[o][v] = fmaf(window[o + s][v], w[v], acc[o][v]);
      }
    }
  }
  float b[V] = {};
  if (bias != nullptr) load_vec<V>(bias, cv, b);
#pragma unroll
  for (int o = 0; o < kRowOutputs; ++o) {
    if (ow0 + o >= g.out_w) break;
    const std::int64_t at = ((n * g.out_h + oh) * g.out_w + ow0 + o) * vectors + cv;
    float old[V] = {};
    if (accumulate) load_vec_mutable<V>(out, at, old);
#pragma unroll
    for (int v = 0; v < V; ++v) acc[o][v] += b[v] + old[v];
    store_vec<V>(out, at, acc[o]);
  }
}

// Thread i's pixel (n, row, col) of an N x rows x cols map and its channel vector cv.
struct PixelVector {
  std::int64_t n;
  int row;
  int col;
  std::int64_t cv;
};

__device__ __forceinline__ PixelVector pixel_vector(std::int64_t i, std::int64_t vectors, int rows,
                                                    int cols) {
  std::int64_t p = i / vectors;
  const int col = static_cast<int>(p % cols);
  p /= cols;
  return {p / rows, static_cast<int>(p % rows), col, i % vectors};
}

// acc[v] += (channel vector `at` of src)[v] * (vector `tap` of taps)[v], one fmaf per channel.
template <int V, typename T>
__device__ __forceinline__ void fma_tap(const T* __restrict__ src, std::int64_t at,
                                        const float* __restrict__ taps, std::int64_t tap,
                                        float (&acc)[V]) {
  float sv[V];
  float wv[V];
  load_vec<V>(src, at, sv);
  load_vec<V>(taps, tap, wv);
#pragma unroll
  for (int v = 0; v < V; ++v) acc[v] = fmaf(sv[v], wv[v], acc[v]);
}

// y[n, oh, ow, c..c+V) = sum over the taps (r, then s) of x * w, then + bias.
template <typename T, int K, int V>
__global__ void __launch_bounds__(kBlockThreads)
    forward_kernel(const T* __restrict__ x, const float* __restrict__ taps,
                   const float* __restrict__ bias, T* __restrict__ y, Geometry g) {
  const std::int64_t vectors = g.c / V;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.output_pixels() * vectors) return;
  const PixelVector out = pixel_vector(i, vectors, g.oh, g.ow);
  float acc[V] = {};
  const int ih0 = out.row * g.stride_h - g.pad_h;
  const int iw0 = out.col * g.stride_w - g.pad_w;
#pragma unroll
  for (int r = 0; r < K; ++r) {
    const int ih = ih0 + r * g.dilation_h;
    if (ih < 0 || ih >= g.h) continue;
    const std::int64_t row = (out.n * g.h + ih) * g.w;
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int iw = iw0 + s * g.dilation_w;
      if (iw < 0 || iw >= g.w) continue;
      fma_tap<V>(x, (row + iw) * vectors + out.cv, taps, (r * K + s) * vectors + out.cv, acc);
    }
  }
  if (bias != nullptr) {
    float b[V];
    load_vec<V>(bias, out.cv, b);
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] += b[v];
  }
  store_vec<V>(y, i, acc);
}

// dx[n, ih, iw, c..c+V) (+)= sum over the taps (r, then s) that read it of dy * w.
template <typename T, int K, int V>
__global__ void __launch_bounds__(kBlockThreads)
    data_grad_kernel(const T* __restrict__ dy, const float* __restrict__ taps, T* dx, Geometry g,
                     bool accumulate) {
  const std::int64_t vectors = g.c / V;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.input_pixels() * vectors) return;
  const PixelVector in = pixel_vector(i, vectors, g.h, g.w);
  float acc[V] = {};
#pragma unroll
  for (int r = 0; r < K; ++r) {
    const int along_h = in.row + g.pad_h - r * g.dilation_h;
    if (along_h < 0 || along_h % g.stride_h != 0) continue;
    const int oh = along_h / g.stride_h;
    if (oh >= g.oh) continue;
    const std::int64_t row = (in.n * g.oh + oh) * g.ow;
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int along_w = in.col + g.pad_w - s * g.dilation_w;
      if (along_w < 0 || along_w % g.stride_w != 0) continue;
      const int ow = along_w / g.stride_w;
      if (ow >= g.ow) continue;
      fma_tap<V>(dy, (row + ow) * vectors + in.cv, taps, (r * K + s) * vectors + in.cv, acc);
    }
  }
  if (accumulate) {
    float old[V];
    load_vec_mutable<V>(dx, i, old);
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] += old[v];
  }
  store_vec<V>(dx, i, acc);
}

// Block (tile, part, r): lane = channel vector tile * kLanes + lane (V channels), output rows
// (n, oh) [part * rows_per_part, + rows_per_part), each row's columns taken kColumns apart, the
// taps of kernel row r; partials[(part * (K*K + 1) + k) * C + c] holds the block's sum of tap k's
// dy * x (k = r * K + s) and, from the blocks of kernel row 0, of dy (k == K*K, the bias
// gradient's).
template <typename T, int K, int V>
__global__ void __launch_bounds__(kLanes* kColumns)
    filter_partials_kernel(const T* __restrict__ x, const T* __restrict__ dy, Geometry g,
                           std::int64_t rows_per_part, double* __restrict__ partials) {
  constexpr int kTerms = K * K + 1;
  __shared__ float sums[kColumns][kLanes * V];
  const int lane = static_cast<int>(threadIdx.x) % kLanes;
  const int column = static_cast<int>(threadIdx.x) / kLanes;
  const int r = static_cast<int>(blockIdx.z);
  const std::int64_t vectors = g.c / V;
  const std::int64_t cv = static_cast<std::int64_t>(blockIdx.x) * kLanes + lane;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.y) * rows_per_part;
  const std::int64_t end = std::min(begin + rows_per_part, g.n * g.oh);
  float acc[K + 1][V] = {};  // the kernel row's taps, then dy's sum
  if (cv < vectors) {
    for (std::int64_t out_row = begin; out_row < end; ++out_row) {
      const int oh = static_cast<int>(out_row % g.oh);
      const int ih = oh * g.stride_h - g.pad_h + r * g.dilation_h;
      const bool inside = ih >= 0 && ih < g.h;
      if (!inside && r != 0) continue;
      const T* dy_row = dy + out_row * g.ow * g.c;
      const T* x_row = inside ? x + (out_row / g.oh * g.h + ih) * g.w * g.c : x;
      for (int ow = column; ow < g.ow; ow += kColumns) {
        float d[V];
        load_vec<V>(dy_row, ow * vectors + cv, d);
        if (r == 0) {
#pragma unroll
          for (int v = 0; v < V; ++v) acc[K][v] += d[v];
        }
        if (!inside) continue;
        const int iw0 = ow * g.stride_w - g.pad_w;
#pragma unroll
        for (int s = 0; s < K; ++s) {
          const int iw = iw0 + s * g.dilation_w;
          if (iw < 0 || iw >= g.w) continue;
          float xv[V];
          load_vec<V>(x_row, iw * vectors + cv, xv);
#pragma unroll
          for (int v = 0; v < V; ++v) acc[s][v] = fmaf(d[v], xv[v], acc[s][v]);
        }
      }
    }
  }
#pragma unroll
  for (int s = 0; s <= K; ++s) {
    if (s == K && r != 0) break;  // dy's sum once, from kernel row 0 (uniform across the block)
#pragma unroll
    for (int v = 0; v < V; ++v) sums[column][lane * V + v] = acc[s][v];
    __syncthreads();
    if (column == 0 && cv < vectors) {
      const int k = s < K ? r * K + s : K * K;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        double total = 0.0;
        for (int j = 0; j < kColumns; ++j) total += static_cast<double>(sums[j][lane * V + v]);
        partials[(static_cast<std::int64_t>(blockIdx.y) * kTerms + k) * g.c + cv * V + v] = total;
      }
    }
    __syncthreads();
  }
}

// dw[c * K*K + k] and db[c] (when non-null): the parts' partials added in order.
__global__ void combine_filter_kernel(const double* __restrict__ partials, std::int64_t parts,
                                      int channels, int taps_per_channel, float* dw, float* db) {
  const int terms = taps_per_channel + 1;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= channels * terms) return;
  const int k = i / channels;
  const int c = i - k * channels;
  double total = 0.0;
  for (std::int64_t part = 0; part < parts; ++part) {
    total += partials[(part * terms + k) * channels + c];
  }
  if (k < taps_per_channel) {
    dw[c * taps_per_channel + k] = static_cast<float>(total);
  } else if (db != nullptr) {
    db[c] = static_cast<float>(total);
  }
}

// Calls fn(std::integral_constant<int, K>) for the spec's kernel size (handles() admits 3, 5, 7).
template <typename Fn>
void with_kernel_size(std::int64_t k, Fn&& fn) {
  switch (k) {
    case 3:
      fn(std::integral_constant<int, 3>{});
      break;
    case 5:
      fn(std::integral_constant<int, 5>{});
      break;
    case 7:
      fn(std::integral_constant<int, 7>{});
      break;
    default:
      throw runtime::InvalidArgument("DepthwiseConv2dCuda: kernel sizes are 3, 5 or 7");
  }
}

// The layer's device element type for a host element type: float, or __nv_bfloat16.
template <typename HostT>
using Device = std::conditional_t<std::is_same_v<HostT, float>, float, __nv_bfloat16>;

void launch_transpose(cudaStream_t stream, const TensorView& weight, float* taps, int channels,
                      int taps_per_channel, bool flipped, bool bf16_layer) {
  const int count = channels * taps_per_channel;
  if (weight.dtype == DType::BF16) {
    transpose_taps<<<blocks_for(count), kBlockThreads, 0, stream>>>(
        device_data<__nv_bfloat16>(weight), taps, channels, taps_per_channel, flipped, false);
  } else {
    transpose_taps<<<blocks_for(count), kBlockThreads, 0, stream>>>(
        weight.as<float>(), taps, channels, taps_per_channel, flipped, bf16_layer);
  }
  VDNN_CHECK_LAUNCH();
}

// Launches kernel<4> where `wide` (C a multiple of 4, 16-byte aligned views), else kernel<1>, with
// one thread per `items` channel vectors of the pixels.
template <typename Wide, typename Narrow, typename... Args>
void launch_vectors(cudaStream_t stream, bool wide, std::int64_t items, std::int64_t channels,
                    Wide wide_kernel, Narrow narrow_kernel, Args... args) {
  if (wide) {
    wide_kernel<<<blocks_for(items * (channels / 4)), kBlockThreads, 0, stream>>>(args...);
  } else {
    narrow_kernel<<<blocks_for(items * channels), kBlockThreads, 0, stream>>>(args...);
  }
  VDNN_CHECK_LAUNCH();
}

bool unit_stride(const Conv2dSpec& s) {
  return s.stride[0] == 1 && s.stride[1] == 1 && s.dilation[0] == 1 && s.dilation[1] == 1;
}

}  // namespace

bool DepthwiseConv2dCuda::handles(const Conv2dSpec& spec, const Shape& input,
                                  const LayerOptions& options) {
  const bool square = spec.kernel[0] == spec.kernel[1];
  const bool size = spec.kernel[0] == 3 || spec.kernel[0] == 5 || spec.kernel[0] == 7;
  return options.cuda != nullptr && options.layout == Layout::Nhwc &&
         options.input_layout == Layout::Nhwc &&
         (options.dtype == DType::F32 || options.dtype == DType::BF16) && input.rank() == 4 &&
         spec.groups == input.c() && spec.out_channels == input.c() && square && size;
}

bool DepthwiseConv2dCuda::preferred(const Conv2dSpec& spec, const Shape& input,
                                    const LayerOptions& options) {
  return handles(spec, input, options) && options.dtype == DType::F32 && spec.kernel[0] == 7;
}

DepthwiseConv2dCuda::DepthwiseConv2dCuda(const Conv2dSpec& spec, std::vector<Shape> input_shapes,
                                         const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, options.layout, options.input_layout),
      spec_(spec),
      context_(&checked_context(options, "DepthwiseConv2dCuda", Precisions::F32OrBf16)),
      parts_(1) {
  if (!handles(spec, this->input_shapes().at(0), options)) {
    throw runtime::InvalidArgument(
        "DepthwiseConv2dCuda: not a channels-last depthwise convolution of a 3x3, 5x5 or 7x7 "
        "kernel");
  }
  parts_ = parts_for(geometry_of(spec_, this->input_shapes()[0], output_shape()), spec_.kernel[0]);
}

std::size_t DepthwiseConv2dCuda::partials_offset() const {
  return taps_bytes(spec_, input_shapes()[0].c());
}

WorkspaceBytes DepthwiseConv2dCuda::workspace() const {
  const std::int64_t channels = input_shapes()[0].c();
  const auto terms = static_cast<std::size_t>(spec_.kernel[0] * spec_.kernel[1] + 1);
  const std::size_t partials = static_cast<std::size_t>(parts_) * terms *
                               static_cast<std::size_t>(channels) * sizeof(double);
  return {taps_bytes(spec_, channels), partials_offset() + aligned(partials)};
}

void DepthwiseConv2dCuda::forward(const ForwardArgs& args) {
  const Shape& xs = input_shapes()[0];
  const bool bf16 = dtype() == DType::BF16;
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], xs, dtype()) &&
                   view_matches(args.output, output_shape(), dtype()) &&
                   params_match(args.params, param_shapes(spec(), input_shapes()), bf16) &&
                   workspace_fits(args.workspace, workspace().forward),
               "DepthwiseConv2dCuda::forward: views do not match the layer");
  const Geometry g = geometry_of(spec_, xs, output_shape());
  const int taps_per_channel = static_cast<int>(spec_.kernel[0] * spec_.kernel[1]);
  const cudaStream_t stream = context_->compute_stream();
  auto* taps = static_cast<float*>(args.workspace.data);
  launch_transpose(stream, args.params[0], taps, g.c, taps_per_channel, false, bf16);
  const float* bias = spec_.bias ? args.params[1].as<float>() : nullptr;
  const bool wide = g.c % 4 == 0 && aligned16({args.inputs[0].data, args.output.data, taps, bias});
  with_element_type(dtype(), [&](auto element) {
    using D = Device<decltype(element)>;
    const D* x = device_data<D>(args.inputs[0]);
    D* y = device_data<D>(args.output);
    with_kernel_size(spec_.kernel[0], [&](auto k) {
      constexpr int K = decltype(k)::value;
      if (unit_stride(spec_)) {
        const RowGeometry rows{g.n, g.h, g.w, g.c, g.oh, g.ow, g.pad_h, g.pad_w};
        const std::int64_t tiles = g.n * g.oh * ((g.ow + kRowOutputs - 1) / kRowOutputs);
        launch_vectors(stream, wide, tiles, g.c, rows_kernel<D, K, 4>, rows_kernel<D, K, 1>, x,
                       taps, bias, y, rows, false);
      } else {
        launch_vectors(stream, wide, g.output_pixels(), g.c, forward_kernel<D, K, 4>,
                       forward_kernel<D, K, 1>, x, taps, bias, y, g);
      }
    });
  });
}

void DepthwiseConv2dCuda::backward(const BackwardArgs& args) {
  const Shape& xs = input_shapes()[0];
  const bool bf16 = dtype() == DType::BF16;
  const std::vector<Shape> params = param_shapes(spec(), input_shapes());
  const TensorView& dx = args.grad_inputs.at(0).tensor;
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], xs, dtype()) &&
                   view_matches(args.grad_output, output_shape(), dtype()) &&
                   (dx.empty() || view_matches(dx, xs, dtype())) &&
                   params_match(args.params, params, bf16) &&
                   views_match(args.grad_params, params) &&
                   workspace_fits(args.workspace, workspace().backward),
               "DepthwiseConv2dCuda::backward: views do not match the layer");
  const Geometry g = geometry_of(spec_, xs, output_shape());
  const int taps_per_channel = static_cast<int>(spec_.kernel[0] * spec_.kernel[1]);
  const cudaStream_t stream = context_->compute_stream();
  auto* taps = static_cast<float*>(args.workspace.data);
  auto* partials =
      reinterpret_cast<double*>(static_cast<char*>(args.workspace.data) + partials_offset());
  const std::int64_t rows_per_part = (g.n * g.oh + parts_ - 1) / parts_;
  const bool accumulate = args.grad_inputs[0].accumulate;
  const bool wide = g.c % 4 == 0 && aligned16({args.grad_output.data, dx.data, taps});
  const bool wide_x = g.c % 4 == 0 && aligned16({args.grad_output.data, args.inputs[0].data});
  const bool flipped = unit_stride(spec_);  // the data gradient as a convolution of dy
  if (!dx.empty())
    launch_transpose(stream, args.params[0], taps, g.c, taps_per_channel, flipped, bf16);
  with_element_type(dtype(), [&](auto element) {
    using D = Device<decltype(element)>;
    const D* x = device_data<D>(args.inputs[0]);
    const D* dy = device_data<D>(args.grad_output);
    with_kernel_size(spec_.kernel[0], [&](auto k) {
      constexpr int K = decltype(k)::value;
      if (!dx.empty() && flipped) {
        const RowGeometry rows{g.n, g.oh, g.ow, g.c, g.h, g.w, K - 1 - g.pad_h, K - 1 - g.pad_w};
        const std::int64_t tiles = g.n * g.h * ((g.w + kRowOutputs - 1) / kRowOutputs);
        launch_vectors(stream, wide, tiles, g.c, rows_kernel<D, K, 4>, rows_kernel<D, K, 1>, dy,
                       taps, nullptr, device_data<D>(dx), rows, accumulate);
      } else if (!dx.empty()) {
        launch_vectors(stream, wide, g.input_pixels(), g.c, data_grad_kernel<D, K, 4>,
                       data_grad_kernel<D, K, 1>, dy, taps, device_data<D>(dx), g, accumulate);
      }
      const auto partials_of = [&](auto kernel, int vec) {
        const dim3 blocks(static_cast<unsigned>((g.c / vec + kLanes - 1) / kLanes),
                          static_cast<unsigned>(parts_), static_cast<unsigned>(K));
        kernel<<<blocks, kLanes * kColumns, 0, stream>>>(x, dy, g, rows_per_part, partials);
        VDNN_CHECK_LAUNCH();
      };
      if (wide_x) {
        partials_of(filter_partials_kernel<D, K, 4>, 4);
      } else {
        partials_of(filter_partials_kernel<D, K, 1>, 1);
      }
    });
  });
  float* db = spec_.bias ? args.grad_params[1].as<float>() : nullptr;
  const int outputs = g.c * (taps_per_channel + 1);
  combine_filter_kernel<<<blocks_for(outputs), kBlockThreads, 0, stream>>>(
      partials, parts_, g.c, taps_per_channel, args.grad_params[0].as<float>(), db);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
