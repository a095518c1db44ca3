// The kernels behind ConvEpilogue.hpp: the bias-and-ReLU epilogue, one thread per element or per
// four or eight elements where the launcher found the tensor and its channels allow it (so that the
// pass runs near memory bandwidth), the bf16 ReLU mask, and the layout and type conversions that
// stage a BF16 layer's tensors (one thread per written element; they move weights and the network
// input, small next to the convolutions).
#include "layers/cuda/ConvEpilogue.hpp"

#include <cstdint>
#include <limits>

#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

// A select rather than fmaxf, which would turn a NaN into 0 and hide it from the loss (ReluCuda's
// rule, so the fused layer keeps the unfused chain's bits).
__device__ __forceinline__ float relu(float z) { return z < 0.0f ? 0.0f : z; }

// What a store of x to a T element keeps of it: the unfused chain stores y + bias before its ReLU.
template <typename T>
__device__ __forceinline__ float rounded(float x) {
  return to_float(from_float<T>(x));
}

// Element and vector indices are 32-bit where every element index fits: the channel's division is
// then a 32-bit one, several times cheaper than a 64-bit one at one per four elements.
template <typename Index>
__device__ __forceinline__ Index thread_index() {
  return static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) +
         static_cast<Index>(threadIdx.x);
}

// Adds the biases of the kVec elements starting at element i. No bias adds nothing (adding 0
// would turn a -0 into +0, which the unfused chain keeps).
template <typename Index>
struct NoBias {
  template <int kVec>
  __device__ void add(float (&/*z*/)[kVec], Index /*i*/) const {}
};

// NHWC: the channel moves fastest. kVec 4 or 8 needs C % kVec == 0: the vector holds channels c to
// c + kVec - 1.
template <typename Index>
struct ChannelsLastBias {
  const float* bias;
  Index channels;
  template <int kVec>
  __device__ void add(float (&z)[kVec], Index i) const {
    const float* b = bias + i % channels;
#pragma unroll
    for (int k = 0; k < kVec; ++k) z[k] += __ldg(b + k);
  }
};

// NCHW: one channel per plane of H * W elements. kVec 4 or 8 needs H * W % kVec == 0: the vector
// lies in one plane.
template <typename Index>
struct ChannelsFirstBias {
  const float* bias;
  Index channels;
  Index plane;
  template <int kVec>
  __device__ void add(float (&z)[kVec], Index i) const {
    const float b = __ldg(bias + (i / plane) % channels);
#pragma unroll
    for (int k = 0; k < kVec; ++k) z[k] += b;
  }
};

template <int kVec, bool kRelu, typename T, typename Index, typename Bias>
__global__ void bias_relu_kernel(T* y, Index vectors, Bias bias) {
  const Index v = thread_index<Index>();
  if (v >= vectors) return;
  float z[kVec];
  load_vec_mutable<kVec>(y, v, z);
  bias.template add<kVec>(z, static_cast<Index>(kVec) * v);
  if constexpr (kRelu) {
#pragma unroll
    for (int k = 0; k < kVec; ++k) z[k] = relu(rounded<T>(z[k]));
  }
  store_vec<kVec>(y, v, z);
}

// Whether 32-bit indices cover `n` elements (and the thread indices of their launch).
bool fits_32_bits(std::int64_t n) { return n <= std::numeric_limits<std::int32_t>::max(); }

// `width` elements a thread: 8 (16-byte bf16 vectors, two float4s), 4 or 1.
template <typename Index, typename T, typename Bias>
void launch_bias_relu(cudaStream_t stream, T* y, std::int64_t n, Bias bias, int width, bool relu) {
  const auto launch = [&](auto kernel, std::int64_t vectors) {
    kernel<<<blocks_for(vectors), kBlockThreads, 0, stream>>>(y, static_cast<Index>(vectors), bias);
  };
  if (width == 8) {
    launch(relu ? bias_relu_kernel<8, true, T, Index, Bias>
                : bias_relu_kernel<8, false, T, Index, Bias>,
           n / 8);
  } else if (width == 4) {
    launch(relu ? bias_relu_kernel<4, true, T, Index, Bias>
                : bias_relu_kernel<4, false, T, Index, Bias>,
           n / 4);
  } else {
    launch(relu ? bias_relu_kernel<1, true, T, Index, Bias>
                : bias_relu_kernel<1, false, T, Index, Bias>,
           n);
  }
  VDNN_CHECK_LAUNCH();
}

// The widest vector (8, 4 or 1 elements) that divides `n` and `group` (the elements that share
// the vector's bias lookup) where y is 16-byte aligned.
int vector_width(std::int64_t n, std::int64_t group, bool aligned) {
  if (!aligned) return 1;
  if (n % 8 == 0 && group % 8 == 0) return 8;
  return n % 4 == 0 && group % 4 == 0 ? 4 : 1;
}

template <typename Index, typename T>
void bias_relu_indexed(cudaStream_t stream, T* y, const float* bias, const runtime::Shape& shape,
                       runtime::Layout layout, bool relu) {
  const std::int64_t n = shape.numel();
  const bool aligned = aligned16({y});
  const auto channels = static_cast<Index>(shape.c());
  const std::int64_t plane = shape.h() * shape.w();
  if (bias == nullptr) {
    launch_bias_relu<Index>(stream, y, n, NoBias<Index>{}, vector_width(n, 8, aligned), relu);
  } else if (layout == runtime::Layout::Nhwc) {
    launch_bias_relu<Index>(stream, y, n, ChannelsLastBias<Index>{bias, channels},
                            vector_width(n, shape.c(), aligned), relu);
  } else {
    launch_bias_relu<Index>(stream, y, n,
                            ChannelsFirstBias<Index>{bias, channels, static_cast<Index>(plane)},
                            vector_width(n, plane, aligned), relu);
  }
}

// One thread per element of dst, in dst's order. The channel is the second index of the logical
// [outer, channels, plane] tensor (NCHW: outer N, plane H * W; a weight: outer K, plane R * S);
// the channels-last order is [outer, plane, channels]. A plane of 1 makes both orders one: a
// plain type conversion.
template <typename Src, typename Dst>
__global__ void convert_layout_kernel(const Src* src, bool src_last, Dst* dst, bool dst_last,
                                      std::int64_t n, std::int64_t channels, std::int64_t plane,
                                      bool accumulate) {
  const auto i = thread_index<std::int64_t>();
  if (i >= n) return;
  std::int64_t o = 0;
  std::int64_t c = 0;
  std::int64_t p = 0;
  if (dst_last) {
    c = i % channels;
    p = (i / channels) % plane;
    o = i / (channels * plane);
  } else {
    p = i % plane;
    c = (i / plane) % channels;
    o = i / (channels * plane);
  }
  const std::int64_t s = src_last ? (o * plane + p) * channels + c : (o * channels + c) * plane + p;
  float value = to_float(src[s]);
  if (accumulate) value += to_float(dst[i]);
  dst[i] = from_float<Dst>(value);
}

// A conversion that keeps the element order (one layout, or a plane of 1): kVec elements a thread
// with vector loads and stores; the same arithmetic per element as convert_layout_kernel.
template <int kVec, typename Src, typename Dst>
__global__ void convert_in_order_kernel(const Src* src, Dst* dst, std::int64_t vectors,
                                        bool accumulate) {
  const auto v = thread_index<std::int64_t>();
  if (v >= vectors) return;
  float value[kVec];
  load_vec<kVec>(src, v, value);
  if (accumulate) {
    float before[kVec];
    load_vec_mutable<kVec>(dst, v, before);
#pragma unroll
    for (int k = 0; k < kVec; ++k) value[k] += before[k];
  }
  store_vec<kVec>(dst, v, value);
}

}  // namespace

template <typename T>
void bias_relu_forward(cudaStream_t stream, T* y, const float* bias, const runtime::Shape& shape,
                       runtime::Layout layout, bool relu) {
  VDNN_EXPECTS(shape.rank() == 4 && shape.numel() > 0 && (relu || bias != nullptr),
               "bias_relu_forward: expected a non-empty rank-4 shape and a bias or the ReLU");
  if (fits_32_bits(shape.numel())) {
    bias_relu_indexed<std::uint32_t>(stream, y, bias, shape, layout, relu);
  } else {
    bias_relu_indexed<std::int64_t>(stream, y, bias, shape, layout, relu);
  }
}

template void bias_relu_forward<float>(cudaStream_t, float*, const float*, const runtime::Shape&,
                                       runtime::Layout, bool);
template void bias_relu_forward<__nv_bfloat16>(cudaStream_t, __nv_bfloat16*, const float*,
                                               const runtime::Shape&, runtime::Layout, bool);

template <typename Src, typename Dst>
void convert_layout(cudaStream_t stream, const Src* src, runtime::Layout src_layout, Dst* dst,
                    runtime::Layout dst_layout, const runtime::Shape& shape, bool accumulate) {
  VDNN_EXPECTS(shape.rank() == 4,
               "convert_layout: expected a rank-4 shape, got " + shape.to_string());
  const std::int64_t n = shape.numel();
  if (n == 0) return;
  const bool same = src_layout == dst_layout;
  // In one layout the tensor is [numel / C, C, 1] either way: a plane of 1 skips the division.
  const std::int64_t plane = same ? 1 : shape.h() * shape.w();
  if ((plane == 1 || shape.c() == 1) && n % 8 == 0 && aligned16({src, dst})) {
    constexpr int kVec = 8;
    convert_in_order_kernel<kVec>
        <<<blocks_for(n / kVec), kBlockThreads, 0, stream>>>(src, dst, n / kVec, accumulate);
    VDNN_CHECK_LAUNCH();
    return;
  }
  convert_layout_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(
      src, src_layout == runtime::Layout::Nhwc, dst, dst_layout == runtime::Layout::Nhwc, n,
      shape.c(), plane, accumulate);
  VDNN_CHECK_LAUNCH();
}

template void convert_layout<float, __nv_bfloat16>(cudaStream_t, const float*, runtime::Layout,
                                                   __nv_bfloat16*, runtime::Layout,
                                                   const runtime::Shape&, bool);
template void convert_layout<__nv_bfloat16, float>(cudaStream_t, const __nv_bfloat16*,
                                                   runtime::Layout, float*, runtime::Layout,
                                                   const runtime::Shape&, bool);
template void convert_layout<__nv_bfloat16, __nv_bfloat16>(cudaStream_t, const __nv_bfloat16*,
                                                           runtime::Layout, __nv_bfloat16*,
                                                           runtime::Layout, const runtime::Shape&,
                                                           bool);

}  // namespace vdnn::layers::cuda
