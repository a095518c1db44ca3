// The conv2d_relu epilogue kernel behind ConvEpilogue.hpp: one thread per element, or per four
// elements (float4) where the launcher found the tensor and its channels allow it, so that the
// pass runs near memory bandwidth.
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

// Element and vector indices are 32-bit where every element index fits: the channel's division is
// then a 32-bit one, several times cheaper than a 64-bit one at one per four elements.
template <typename Index>
__device__ __forceinline__ Index thread_index() {
  return static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) +
         static_cast<Index>(threadIdx.x);
}

// The bias an element gets, or the four biases of the vector starting at element i. No bias adds
// nothing (adding 0 would turn a -0 into +0, which the unfused chain keeps).
template <typename Index>
struct NoBias {
  __device__ float add(float z, Index /*i*/) const { return z; }
  __device__ float4 add4(float4 z, Index /*i*/) const { return z; }
};

// NHWC: the channel moves fastest. add4 needs C % 4 == 0: the vector holds channels c to c + 3.
template <typename Index>
struct ChannelsLastBias {
  const float* bias;
  Index channels;
  __device__ float add(float z, Index i) const { return z + __ldg(bias + i % channels); }
  __device__ float4 add4(float4 z, Index i) const {
    const float* b = bias + i % channels;
    return make_float4(z.x + __ldg(b), z.y + __ldg(b + 1), z.z + __ldg(b + 2), z.w + __ldg(b + 3));
  }
};

// NCHW: one channel per plane of H * W elements. add4 needs H * W % 4 == 0: the vector lies in one
// plane.
template <typename Index>
struct ChannelsFirstBias {
  const float* bias;
  Index channels;
  Index plane;
  __device__ float add(float z, Index i) const { return z + __ldg(bias + (i / plane) % channels); }
  __device__ float4 add4(float4 z, Index i) const {
    const float b = __ldg(bias + (i / plane) % channels);
    return make_float4(z.x + b, z.y + b, z.z + b, z.w + b);
  }
};

template <typename Index, typename Bias>
__global__ void bias_relu_kernel(float* y, Index n, Bias bias) {
  const Index i = thread_index<Index>();
  if (i < n) y[i] = relu(bias.add(y[i], i));
}

template <typename Index, typename Bias>
__global__ void bias_relu_vec4_kernel(float4* y, Index vectors, Bias bias) {
  const Index v = thread_index<Index>();
  if (v >= vectors) return;
  const float4 z = bias.add4(y[v], 4 * v);
  y[v] = make_float4(relu(z.x), relu(z.y), relu(z.z), relu(z.w));
}

// Whether 32-bit indices cover `n` elements (and the thread indices of their launch).
bool fits_32_bits(std::int64_t n) { return n <= std::numeric_limits<std::int32_t>::max(); }

template <typename Index, typename Bias>
void launch_bias_relu(cudaStream_t stream, float* y, std::int64_t n, Bias bias, bool vectorize) {
  if (vectorize) {
    const std::int64_t vectors = n / 4;
    bias_relu_vec4_kernel<<<blocks_for(vectors), kBlockThreads, 0, stream>>>(
        reinterpret_cast<float4*>(y), static_cast<Index>(vectors), bias);
  } else {
    bias_relu_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(y, static_cast<Index>(n), bias);
  }
  VDNN_CHECK_LAUNCH();
}

template <typename Index>
void bias_relu_indexed(cudaStream_t stream, float* y, const float* bias,
                       const runtime::Shape& shape, runtime::Layout layout) {
  const std::int64_t n = shape.numel();
  const bool vectors = n % 4 == 0 && aligned16({y});
  const auto channels = static_cast<Index>(shape.c());
  if (bias == nullptr) {
    launch_bias_relu<Index>(stream, y, n, NoBias<Index>{}, vectors);
  } else if (layout == runtime::Layout::Nhwc) {
    launch_bias_relu<Index>(stream, y, n, ChannelsLastBias<Index>{bias, channels},
                            vectors && shape.c() % 4 == 0);
  } else {
    const std::int64_t plane = shape.h() * shape.w();
    launch_bias_relu<Index>(stream, y, n,
                            ChannelsFirstBias<Index>{bias, channels, static_cast<Index>(plane)},
                            vectors && plane % 4 == 0);
  }
}

}  // namespace

void bias_relu_forward(cudaStream_t stream, float* y, const float* bias,
                       const runtime::Shape& shape, runtime::Layout layout) {
  VDNN_EXPECTS(shape.rank() == 4 && shape.numel() > 0,
               "bias_relu_forward: expected a non-empty rank-4 shape");
  if (fits_32_bits(shape.numel())) {
    bias_relu_indexed<std::uint32_t>(stream, y, bias, shape, layout);
  } else {
    bias_relu_indexed<std::int64_t>(stream, y, bias, shape, layout);
  }
}

}  // namespace vdnn::layers::cuda
