// Batch normalization on the CUDA backend with own deterministic kernels for NCHW F32: a two-level
// per-channel reduction (blocks over chunks of a channel, then one warp per channel in fixed
// order, no atomics) for the statistics and the gradient sums, and element-wise kernels for y and
// dx. Loads are float4 wherever a plane's length and the pointers allow it.
#include "layers/cuda/BatchNorm2dCuda.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "layers/cuda/BlockReduce.cuh"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/RawBuffer.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// Blocks the first-level reduction aims for (several waves of 256-thread blocks on an H200), the
// most blocks one channel gets, and the loads each thread keeps in flight.
constexpr std::int64_t kTargetReduceBlocks = 4096;
constexpr std::int64_t kMaxPartsPerChannel = 128;
constexpr int kUnroll = 4;
constexpr int kCombineBlock = 256;  // one warp per channel in the combine kernels

template <int kVec>
__device__ __forceinline__ void load(const float* p, std::int64_t vec_index, float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(p) + vec_index);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else {
    v[0] = __ldg(p + vec_index);
  }
}

// A plain (coherent) load, for the input gradient that the same kernel then overwrites.
template <int kVec>
__device__ __forceinline__ void load_mutable(const float* p, std::int64_t vec_index,
                                             float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const float4 q = reinterpret_cast<const float4*>(p)[vec_index];
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else {
    v[0] = p[vec_index];
  }
}

template <int kVec>
__device__ __forceinline__ void store(float* p, std::int64_t vec_index, const float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    reinterpret_cast<float4*>(p)[vec_index] = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    p[vec_index] = v[0];
  }
}

// First level. Block b reduces chunk b % parts of channel b / parts, where a channel is the
// `channel_vecs` vectors of its N planes taken in order. Forward (dy null): sums of x - shift and
// (x - shift)^2, with shift the channel's first value so that the variance does not cancel.
// Backward: sums of dy and dy * (x - mean). Per-thread sums in double, then block_reduce; the
// block writes its two sums to partials[2b], partials[2b + 1].
template <int kVec, typename Index>
__global__ void __launch_bounds__(kReduceBlock)
    channel_sums_kernel(const float* x, const float* dy, const float* mean, double* partials,
                        Index parts, Index channels, Index plane_vecs, Index channel_vecs,
                        Index chunk) {
  const Index c = blockIdx.x / parts;
  const Index begin = (blockIdx.x - c * parts) * chunk;
  const Index end = begin + chunk < channel_vecs ? begin + chunk : channel_vecs;
  const bool backward = dy != nullptr;
  const float centre =
      backward ? mean[c] : __ldg(x + static_cast<std::int64_t>(c) * plane_vecs * kVec);
  double s0 = 0.0;
  double s1 = 0.0;
  for (Index i = begin + threadIdx.x; i < end; i += kUnroll * kReduceBlock) {
    float xs[kUnroll][kVec];
    float gs[kUnroll][kVec];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index j = i + u * kReduceBlock;
      if (j < end) {
        const Index n = j / plane_vecs;
        const std::int64_t at =
            (static_cast<std::int64_t>(n) * channels + c) * plane_vecs + (j - n * plane_vecs);
        load<kVec>(x, at, xs[u]);
        if (backward) load<kVec>(dy, at, gs[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (i + u * kReduceBlock < end) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float d = xs[u][k] - centre;
          if (backward) {
            s0 += gs[u][k];
            s1 += static_cast<double>(gs[u][k]) * d;
          } else {
            s0 += d;
            s1 += static_cast<double>(d) * d;
          }
        }
      }
    }
  }
  s0 = block_reduce(s0, Sum{});
  s1 = block_reduce(s1, Sum{});
  if (threadIdx.x == 0) {
    partials[2 * static_cast<std::int64_t>(blockIdx.x)] = s0;
    partials[2 * static_cast<std::int64_t>(blockIdx.x) + 1] = s1;
  }
}

// Second level: one warp sums a channel's `parts` partial pairs, lanes strided, then a fixed
// shuffle tree. Returns the two totals to lane 0 (other lanes get partial values).
__device__ __forceinline__ void combine_parts(const double* partials, std::int64_t c, int parts,
                                              unsigned lane, double& t0, double& t1) {
  t0 = 0.0;
  t1 = 0.0;
  for (int p = static_cast<int>(lane); p < parts; p += kWarpSize) {
    t0 += partials[2 * (c * parts + p)];
    t1 += partials[2 * (c * parts + p) + 1];
  }
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    t0 += __shfl_down_sync(0xFFFFFFFFu, t0, offset);
    t1 += __shfl_down_sync(0xFFFFFFFFu, t1, offset);
  }
}

// Batch statistics of the training forward: saved mean and inv_std, scale = weight * inv_std for
// the normalize kernel, and the running buffers (PyTorch's momentum, unbiased variance).
__global__ void finish_forward_stats_kernel(const double* partials, int parts, const float* x,
                                            std::int64_t plane, std::int64_t channels, double count,
                                            double eps, double momentum, const float* weight,
                                            float* running_mean, float* running_var, float* mean,
                                            float* inv_std, float* scale) {
  const std::int64_t c =
      static_cast<std::int64_t>(blockIdx.x) * (kCombineBlock / kWarpSize) + threadIdx.x / kWarpSize;
  if (c >= channels) return;  // whole warps leave together
  const unsigned lane = threadIdx.x % kWarpSize;
  double sum = 0.0;
  double squares = 0.0;
  combine_parts(partials, c, parts, lane, sum, squares);
  if (lane != 0) return;
  const double shifted_mean = sum / count;
  const double var = std::max(squares / count - shifted_mean * shifted_mean, 0.0);
  const double m = static_cast<double>(x[c * plane]) + shifted_mean;
  const double s = 1.0 / sqrt(var + eps);
  mean[c] = static_cast<float>(m);
  inv_std[c] = static_cast<float>(s);
  scale[c] = static_cast<float>(weight[c] * s);
  running_mean[c] = static_cast<float>((1.0 - momentum) * running_mean[c] + momentum * m);
  running_var[c] = static_cast<float>((1.0 - momentum) * running_var[c] +
                                      momentum * var * count / (count - 1.0));
}

// What the inference forward and a later backward read of the running buffers.
__global__ void stats_from_running_kernel(const float* running_mean, const float* running_var,
                                          const float* weight, double eps, float* mean,
                                          float* inv_std, float* scale, std::int64_t channels) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  const double s = 1.0 / sqrt(static_cast<double>(running_var[c]) + eps);
  mean[c] = running_mean[c];
  inv_std[c] = static_cast<float>(s);
  scale[c] = static_cast<float>(weight[c] * s);
}

// Parameter gradients where asked for, and dx = a * dy + b * (x - mean) + k per channel: with
// batch statistics mean and inv_std depend on x (b, k); with running statistics only a remains.
__global__ void finish_backward_kernel(const double* partials, int parts, std::int64_t channels,
                                       double count, bool batch_stats, const float* weight,
                                       const float* inv_std, float* grad_weight, float* grad_bias,
                                       float* a_out, float* b_out, float* k_out) {
  const std::int64_t c =
      static_cast<std::int64_t>(blockIdx.x) * (kCombineBlock / kWarpSize) + threadIdx.x / kWarpSize;
  if (c >= channels) return;
  const unsigned lane = threadIdx.x % kWarpSize;
  double sum_dy = 0.0;
  double sum_dy_centred = 0.0;
  combine_parts(partials, c, parts, lane, sum_dy, sum_dy_centred);
  if (lane != 0) return;
  const double s = inv_std[c];
  if (grad_weight != nullptr) grad_weight[c] = static_cast<float>(sum_dy_centred * s);
  if (grad_bias != nullptr) grad_bias[c] = static_cast<float>(sum_dy);
  const double a = weight[c] * s;
  a_out[c] = static_cast<float>(a);
  b_out[c] = static_cast<float>(batch_stats ? -a * s * s * sum_dy_centred / count : 0.0);
  k_out[c] = static_cast<float>(batch_stats ? -a * sum_dy / count : 0.0);
}

// Element-wise kernels: block b covers kUnroll * kBlockThreads vectors from b * that, all loads
// issued before any use so that enough bytes are in flight. kPlaneVec: a vector never crosses a
// plane (plane % 4 == 0, `plane` counted in vectors); otherwise `plane` counts floats and each
// component finds its own channel.
template <int kVec, bool kPlaneVec, typename Index>
__device__ __forceinline__ Index channel_of(Index i, int k, Index plane, Index channels) {
  if constexpr (kPlaneVec) {
    return (i / plane) % channels;
  } else {
    return ((i * kVec + k) / plane) % channels;
  }
}

// y = (x - mean) * scale + bias.
template <int kVec, bool kPlaneVec, typename Index>
__global__ void __launch_bounds__(kBlockThreads)
    normalize_kernel(const float* x, const float* mean, const float* scale, const float* bias,
                     float* y, Index total_vecs, Index plane, Index channels) {
  const std::uint64_t base =
      static_cast<std::uint64_t>(blockIdx.x) * (kUnroll * kBlockThreads) + threadIdx.x;
  float v[kUnroll][kVec];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g < total_vecs) load<kVec>(x, static_cast<std::int64_t>(g), v[u]);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g >= total_vecs) continue;
    const auto i = static_cast<Index>(g);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const Index c = channel_of<kVec, kPlaneVec>(i, k, plane, channels);
      v[u][k] = (v[u][k] - __ldg(mean + c)) * __ldg(scale + c) + __ldg(bias + c);
    }
    store<kVec>(y, static_cast<std::int64_t>(g), v[u]);
  }
}

// dx (+)= a * dy + b * (x - mean) + k.
template <int kVec, bool kPlaneVec, typename Index>
__global__ void __launch_bounds__(kBlockThreads)
    input_grad_kernel(const float* x, const float* dy, const float* mean, const float* a_in,
                      const float* b_in, const float* k_in, float* dx, bool accumulate,
                      Index total_vecs, Index plane, Index channels) {
  const std::uint64_t base =
      static_cast<std::uint64_t>(blockIdx.x) * (kUnroll * kBlockThreads) + threadIdx.x;
  float xs[kUnroll][kVec];
  float gs[kUnroll][kVec];
  float out[kUnroll][kVec];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g < total_vecs) {
      load<kVec>(x, static_cast<std::int64_t>(g), xs[u]);
      load<kVec>(dy, static_cast<std::int64_t>(g), gs[u]);
      if (accumulate) {
        load_mutable<kVec>(dx, static_cast<std::int64_t>(g), out[u]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) out[u][j] = 0.0f;
      }
    }
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::uint64_t g = base + u * kBlockThreads;
    if (g >= total_vecs) continue;
    const auto i = static_cast<Index>(g);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const Index c = channel_of<kVec, kPlaneVec>(i, j, plane, channels);
      const float v = gs[u][j] * __ldg(a_in + c) + (xs[u][j] - __ldg(mean + c)) * __ldg(b_in + c) +
                      __ldg(k_in + c);
      out[u][j] = accumulate ? out[u][j] + v : v;
    }
    store<kVec>(dx, static_cast<std::int64_t>(g), out[u]);
  }
}

template <typename T>
struct Tag {
  using type = T;
};

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Calls f(std::integral_constant<int, kVec>, Tag<Index>) with float4 vectors when the plane
// length and every pointer allow them, and 32-bit indices when the tensor allows them.
template <typename F>
void dispatch(const Shape& shape, std::initializer_list<const void*> pointers, F&& f) {
  bool vec4 = shape.h() * shape.w() % 4 == 0;
  for (const void* p : pointers) vec4 = vec4 && (p == nullptr || aligned16(p));
  const bool narrow = shape.numel() <= std::numeric_limits<std::uint32_t>::max();
  if (vec4 && narrow) {
    f(std::integral_constant<int, 4>{}, Tag<std::uint32_t>{});
  } else if (vec4) {
    f(std::integral_constant<int, 4>{}, Tag<std::uint64_t>{});
  } else if (narrow) {
    f(std::integral_constant<int, 1>{}, Tag<std::uint32_t>{});
  } else {
    f(std::integral_constant<int, 1>{}, Tag<std::uint64_t>{});
  }
}

// Calls f(std::integral_constant<int, kVec>, std::integral_constant<bool, kPlaneVec>, Tag<Index>)
// for the element-wise kernels: float4 whenever the element count and the pointers allow it,
// whether or not a plane is a whole number of vectors.
template <typename F>
void dispatch_elementwise(const Shape& shape, std::initializer_list<const void*> pointers, F&& f) {
  bool vec4 = shape.numel() % 4 == 0;
  for (const void* p : pointers) vec4 = vec4 && (p == nullptr || aligned16(p));
  const bool plane_vec = shape.h() * shape.w() % 4 == 0;
  const bool narrow = shape.numel() <= std::numeric_limits<std::uint32_t>::max();
  auto with_index = [&](auto vec, auto plane) {
    if (narrow) {
      f(vec, plane, Tag<std::uint32_t>{});
    } else {
      f(vec, plane, Tag<std::uint64_t>{});
    }
  };
  if (vec4 && plane_vec) {
    with_index(std::integral_constant<int, 4>{}, std::true_type{});
  } else if (vec4) {
    with_index(std::integral_constant<int, 4>{}, std::false_type{});
  } else {
    with_index(std::integral_constant<int, 1>{}, std::false_type{});
  }
}

unsigned elementwise_blocks(std::int64_t vecs) {
  constexpr std::int64_t kPerBlock = kUnroll * kBlockThreads;
  return static_cast<unsigned>((vecs + kPerBlock - 1) / kPerBlock);
}

// Plane length in the units the element-wise kernels expect (see normalize_kernel).
std::int64_t elementwise_plane(const Shape& shape, int vec, bool plane_vec) {
  return plane_vec ? shape.h() * shape.w() / vec : shape.h() * shape.w();
}

// Blocks per channel of the first-level reduction, fixed at construction so that the summation
// order (and so the result) never changes from one step to the next.
std::int64_t parts_per_channel(const Shape& shape) {
  const std::int64_t channels = std::max<std::int64_t>(shape.c(), 1);
  const std::int64_t plane = shape.h() * shape.w();
  const std::int64_t channel_vecs = shape.n() * (plane % 4 == 0 ? plane / 4 : plane);
  const std::int64_t by_work =
      (channel_vecs + kUnroll * kReduceBlock - 1) / (kUnroll * kReduceBlock);
  const std::int64_t by_grid = (kTargetReduceBlocks + channels - 1) / channels;
  return std::max<std::int64_t>(1, std::min({by_work, by_grid, kMaxPartsPerChannel}));
}

unsigned combine_blocks(std::int64_t channels) {
  constexpr std::int64_t kPerBlock = kCombineBlock / kWarpSize;
  return static_cast<unsigned>((channels + kPerBlock - 1) / kPerBlock);
}

float* data_or_null(const TensorView& view) { return view.empty() ? nullptr : view.as<float>(); }

}  // namespace

struct BatchNorm2dCuda::State {
  explicit State(const Shape& x_shape)
      : channels(x_shape.c()),
        parts(parts_per_channel(x_shape)),
        per_channel(5 * sizeof(float) * static_cast<std::size_t>(channels)),
        partials(2 * sizeof(double) * static_cast<std::size_t>(channels * parts)) {}

  float* mean() const { return per_channel.as<float>(); }
  float* inv_std() const { return per_channel.as<float>() + channels; }
  float* coeff_a() const { return per_channel.as<float>() + 2 * channels; }  // also the scale
  float* coeff_b() const { return per_channel.as<float>() + 3 * channels; }
  float* coeff_k() const { return per_channel.as<float>() + 4 * channels; }

  std::int64_t channels;
  std::int64_t parts;        // first-level reduction blocks per channel
  DeviceBuffer per_channel;  // [5C]: mean, inv_std of the last forward; coefficients a, b, k
  DeviceBuffer partials;     // [2 * C * parts] doubles: the first-level sums
};

BatchNorm2dCuda::BatchNorm2dCuda(const BatchNorm2dSpec& spec, std::vector<Shape> input_shapes,
                                 const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      spec_(spec),
      context_(&checked_context(options, "BatchNorm2dCuda")),
      // this->: the moved-from parameter input_shapes hides the accessor here.
      state_(std::make_unique<State>(this->input_shapes()[0])) {}

BatchNorm2dCuda::~BatchNorm2dCuda() = default;

namespace {

// Enqueues the first-level reduction over every channel of x (forward when dy is null).
void launch_channel_sums(cudaStream_t stream, const Shape& shape, std::int64_t parts,
                         const float* x, const float* dy, const float* mean, double* partials) {
  dispatch(shape, {x, dy}, [&](auto vec, auto index) {
    constexpr int kVec = decltype(vec)::value;
    using Index = typename decltype(index)::type;
    const std::int64_t plane_vecs = shape.h() * shape.w() / kVec;
    const std::int64_t channel_vecs = shape.n() * plane_vecs;
    const std::int64_t chunk = (channel_vecs + parts - 1) / parts;
    channel_sums_kernel<kVec, Index>
        <<<static_cast<unsigned>(shape.c() * parts), kReduceBlock, 0, stream>>>(
            x, dy, mean, partials, static_cast<Index>(parts), static_cast<Index>(shape.c()),
            static_cast<Index>(plane_vecs), static_cast<Index>(channel_vecs),
            static_cast<Index>(chunk));
    VDNN_CHECK_LAUNCH();
  });
}

void launch_normalize(cudaStream_t stream, const Shape& shape, const float* x, const float* mean,
                      const float* scale, const float* bias, float* y) {
  if (shape.numel() == 0) return;
  dispatch_elementwise(shape, {x, y}, [&](auto vec, auto plane_vec, auto index) {
    constexpr int kVec = decltype(vec)::value;
    constexpr bool kPlaneVec = decltype(plane_vec)::value;
    using Index = typename decltype(index)::type;
    const std::int64_t total = shape.numel() / kVec;
    normalize_kernel<kVec, kPlaneVec, Index>
        <<<elementwise_blocks(total), kBlockThreads, 0, stream>>>(
            x, mean, scale, bias, y, static_cast<Index>(total),
            static_cast<Index>(elementwise_plane(shape, kVec, kPlaneVec)),
            static_cast<Index>(shape.c()));
    VDNN_CHECK_LAUNCH();
  });
}

}  // namespace

void BatchNorm2dCuda::forward(const ForwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const cudaStream_t stream = context_->compute_stream();
  const float* x = args.inputs[0].as<float>();
  float* y = args.output.as<float>();
  const float* weight = args.params[0].as<float>();
  const float* bias = args.params[1].as<float>();
  float* running_mean = args.params[2].as<float>();
  float* running_var = args.params[3].as<float>();
  State& s = *state_;
  // A recompute normalizes with the statistics the first forward saved, which nothing has changed
  // since (this node's backward comes later): the same bits, one running update per step
  // (Note [Recomputation]).
  if (args.training && !args.recompute) {
    const std::int64_t count = shape.n() * shape.h() * shape.w();
    VDNN_EXPECTS(count > 1, "batchnorm2d training needs more than one value per channel");
    double* partials = s.partials.as<double>();
    launch_channel_sums(stream, shape, s.parts, x, nullptr, nullptr, partials);
    finish_forward_stats_kernel<<<combine_blocks(s.channels), kCombineBlock, 0, stream>>>(
        partials, static_cast<int>(s.parts), x, shape.h() * shape.w(), s.channels,
        static_cast<double>(count), spec_.eps, spec_.momentum, weight, running_mean, running_var,
        s.mean(), s.inv_std(), s.coeff_a());
    VDNN_CHECK_LAUNCH();
  } else if (!args.training && s.channels > 0) {
    stats_from_running_kernel<<<blocks_for(s.channels), kBlockThreads, 0, stream>>>(
        running_mean, running_var, weight, spec_.eps, s.mean(), s.inv_std(), s.coeff_a(),
        s.channels);
    VDNN_CHECK_LAUNCH();
  }
  launch_normalize(stream, shape, x, s.mean(), s.coeff_a(), bias, y);
  batch_stats_ = args.training;
}

void BatchNorm2dCuda::backward(const BackwardArgs& args) {
  const Shape& shape = input_shapes()[0];
  const cudaStream_t stream = context_->compute_stream();
  const GradTarget& target = args.grad_inputs[0];
  float* grad_weight = data_or_null(args.grad_params[0]);
  float* grad_bias = data_or_null(args.grad_params[1]);
  float* dx = data_or_null(target.tensor);
  const float* x = args.inputs[0].as<float>();
  const float* dy = args.grad_output.as<float>();
  const float* weight = args.params[0].as<float>();
  if (dx == nullptr && grad_weight == nullptr && grad_bias == nullptr) return;
  if (shape.numel() == 0) return;
  State& s = *state_;
  double* partials = s.partials.as<double>();
  launch_channel_sums(stream, shape, s.parts, x, dy, s.mean(), partials);
  finish_backward_kernel<<<combine_blocks(s.channels), kCombineBlock, 0, stream>>>(
      partials, static_cast<int>(s.parts), s.channels,
      static_cast<double>(shape.n() * shape.h() * shape.w()), batch_stats_, weight, s.inv_std(),
      grad_weight, grad_bias, s.coeff_a(), s.coeff_b(), s.coeff_k());
  VDNN_CHECK_LAUNCH();
  if (dx == nullptr) return;
  dispatch_elementwise(shape, {x, dy, dx}, [&](auto vec, auto plane_vec, auto index) {
    constexpr int kVec = decltype(vec)::value;
    constexpr bool kPlaneVec = decltype(plane_vec)::value;
    using Index = typename decltype(index)::type;
    const std::int64_t total = shape.numel() / kVec;
    input_grad_kernel<kVec, kPlaneVec, Index>
        <<<elementwise_blocks(total), kBlockThreads, 0, stream>>>(
            x, dy, s.mean(), s.coeff_a(), s.coeff_b(), s.coeff_k(), dx, target.accumulate,
            static_cast<Index>(total),
            static_cast<Index>(elementwise_plane(shape, kVec, kPlaneVec)),
            static_cast<Index>(shape.c()));
    VDNN_CHECK_LAUNCH();
  });
}

}  // namespace vdnn::layers::cuda
