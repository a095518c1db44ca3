// The element-wise kernels behind ElementwiseKernels.hpp: one thread per element (KernelGrid.hpp),
// or per float4 of elements for the memory-bound passes (ReLU, add, SGD) where the count and the
// pointers allow (Vectors.cuh).
#include "layers/cuda/ElementwiseKernels.hpp"

#include <initializer_list>

#include "layers/DropoutMask.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

__device__ std::int64_t element_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ void store(float* out, float value, bool accumulate) {
  *out = accumulate ? *out + value : value;
}

__global__ void add_rows_kernel(float* dst, std::int64_t dst_stride, const float* src,
                                std::int64_t src_stride, std::int64_t rows, std::int64_t cols) {
  const std::int64_t i = element_index();
  if (i >= rows * cols) return;
  const std::int64_t r = i / cols;
  const std::int64_t c = i - r * cols;
  dst[r * dst_stride + c] += src[r * src_stride + c];
}

// A pass over `vecs` vectors of kVec elements, one thread each: op.template apply<kVec>(i).
template <int kVec, typename Op>
__global__ void vector_kernel(Op op, std::int64_t vecs) {
  const std::int64_t i = element_index();
  if (i < vecs) op.template apply<kVec>(i);
}

// Enqueues op over n elements: by float4 when n % 4 == 0 and every pointer is 16-byte aligned.
template <typename Op>
void launch_vectors(cudaStream_t stream, std::int64_t n,
                    std::initializer_list<const void*> pointers, const Op& op) {
  if (n % 4 == 0 && aligned16(pointers)) {
    vector_kernel<4><<<blocks_for(n / 4), kBlockThreads, 0, stream>>>(op, n / 4);
  } else {
    vector_kernel<1><<<blocks_for(n), kBlockThreads, 0, stream>>>(op, n);
  }
  VDNN_CHECK_LAUNCH();
}

struct AddPair {
  const float* a;
  const float* b;
  float* y;
  template <int kVec>
  __device__ void apply(std::int64_t i) const {
    float u[kVec];
    float v[kVec];
    load_vec<kVec>(a, i, u);
    load_vec<kVec>(b, i, v);
#pragma unroll
    for (int k = 0; k < kVec; ++k) u[k] += v[k];
    store_vec<kVec>(y, i, u);
  }
};

struct ReluForward {
  const float* x;
  float* y;
  template <int kVec>
  __device__ void apply(std::int64_t i) const {
    float v[kVec];
    load_vec<kVec>(x, i, v);
    // A select rather than fmaxf, which would turn a NaN input into 0 and hide it from the loss.
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = v[k] < 0.0f ? 0.0f : v[k];
    store_vec<kVec>(y, i, v);
  }
};

struct ReluMaskInPlace {
  const float* y;
  float* g;
  template <int kVec>
  __device__ void apply(std::int64_t i) const {
    float mask[kVec];
    float v[kVec];
    load_vec<kVec>(y, i, mask);
    load_vec_mutable<kVec>(g, i, v);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = mask[k] > 0.0f ? v[k] : 0.0f;
    store_vec<kVec>(g, i, v);
  }
};

struct ReluBackward {
  const float* y;
  const float* dy;
  float* dx;
  bool accumulate;
  template <int kVec>
  __device__ void apply(std::int64_t i) const {
    float out[kVec];
    float g[kVec];
    float mask[kVec];
    load_vec<kVec>(y, i, mask);
    load_vec<kVec>(dy, i, g);
    if (accumulate) {
      load_vec_mutable<kVec>(dx, i, out);
    }
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float v = mask[k] > 0.0f ? g[k] : 0.0f;
      out[k] = accumulate ? out[k] + v : v;
    }
    store_vec<kVec>(dx, i, out);
  }
};

// The mask index of element i: the element's own index (NCHW, or any layout of rank 2).
struct SameIndex {
  __device__ std::int64_t operator()(std::int64_t i) const { return i; }
};

// The NCHW index of element i = (n * pixels + pixel) * channels + c of an NHWC tensor.
struct NchwIndexOfNhwc {
  std::int64_t channels;
  std::int64_t pixels;
  __device__ std::int64_t operator()(std::int64_t i) const {
    const std::int64_t rest = i / channels;  // n * pixels + pixel
    const std::int64_t c = i - rest * channels;
    const std::int64_t n = rest / pixels;
    return (n * channels + c) * pixels + (rest - n * pixels);
  }
};

template <typename MaskIndex>
__global__ void dropout_kernel(double p, float scale, std::uint64_t state, const float* in,
                               float* out, std::int64_t n, bool accumulate, MaskIndex mask_index) {
  const std::int64_t i = element_index();
  if (i >= n) return;
  store(out + i, in[i] * (dropout::keep(state, mask_index(i), p) ? scale : 0.0f), accumulate);
}

template <typename MaskIndex>
void launch_dropout(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                    const float* in, float* out, std::int64_t n, bool accumulate,
                    MaskIndex mask_index) {
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  const std::uint64_t state = dropout::state(seed, step);
  dropout_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(p, scale, state, in, out, n,
                                                              accumulate, mask_index);
  VDNN_CHECK_LAUNCH();
}

struct SgdStep {
  float* param;
  const float* grad;
  float* velocity;
  float lr, momentum, weight_decay;
  bool first_step;
  template <int kVec>
  __device__ void apply(std::int64_t i) const {
    float p[kVec];
    float g[kVec];
    float v[kVec];
    load_vec_mutable<kVec>(param, i, p);
    load_vec<kVec>(grad, i, g);
    if (!first_step) load_vec_mutable<kVec>(velocity, i, v);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float d = g[k] + weight_decay * p[k];
      v[k] = first_step ? d : momentum * v[k] + d;
      p[k] -= lr * v[k];
    }
    store_vec<kVec>(velocity, i, v);
    store_vec<kVec>(param, i, p);
  }
};

}  // namespace

void copy_rows(cudaStream_t stream, float* dst, std::int64_t dst_stride, const float* src,
               std::int64_t src_stride, std::int64_t rows, std::int64_t cols, bool accumulate) {
  constexpr auto kFloat = static_cast<std::int64_t>(sizeof(float));
  if (!accumulate && dst_stride == cols && src_stride == cols) {
    // Contiguous: one plain copy, which also avoids the 2-D copy's limit on the pitch.
    VDNN_CHECK_CUDA(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(rows * cols * kFloat),
                                    cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (!accumulate) {
    VDNN_CHECK_CUDA(cudaMemcpy2DAsync(
        dst, static_cast<std::size_t>(dst_stride * kFloat), src,
        static_cast<std::size_t>(src_stride * kFloat), static_cast<std::size_t>(cols * kFloat),
        static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  add_rows_kernel<<<blocks_for(rows * cols), kBlockThreads, 0, stream>>>(dst, dst_stride, src,
                                                                         src_stride, rows, cols);
  VDNN_CHECK_LAUNCH();
}

void add_pair(cudaStream_t stream, const float* a, const float* b, float* y, std::int64_t n) {
  launch_vectors(stream, n, {a, b, y}, AddPair{a, b, y});
}

void relu_forward(cudaStream_t stream, const float* x, float* y, std::int64_t n) {
  launch_vectors(stream, n, {x, y}, ReluForward{x, y});
}

void relu_backward(cudaStream_t stream, const float* y, const float* dy, float* dx, std::int64_t n,
                   bool accumulate) {
  launch_vectors(stream, n, {y, dy, dx}, ReluBackward{y, dy, dx, accumulate});
}

void relu_mask_in_place(cudaStream_t stream, const float* y, float* g, std::int64_t n) {
  launch_vectors(stream, n, {y, g}, ReluMaskInPlace{y, g});
}

void dropout_apply(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                   const float* in, float* out, std::int64_t n, bool accumulate) {
  launch_dropout(stream, p, seed, step, in, out, n, accumulate, SameIndex{});
}

void dropout_apply_channels_last(cudaStream_t stream, double p, std::uint64_t seed,
                                 std::uint64_t step, const float* in, float* out, std::int64_t n,
                                 std::int64_t channels, std::int64_t pixels, bool accumulate) {
  launch_dropout(stream, p, seed, step, in, out, n, accumulate, NchwIndexOfNhwc{channels, pixels});
}

void sgd_update(cudaStream_t stream, float* param, const float* grad, float* velocity,
                std::int64_t n, const SgdHyper& hyper) {
  launch_vectors(stream, n, {param, grad, velocity},
                 SgdStep{param, grad, velocity, static_cast<float>(hyper.lr),
                         static_cast<float>(hyper.momentum), static_cast<float>(hyper.weight_decay),
                         hyper.first_step});
}

}  // namespace vdnn::layers::cuda
