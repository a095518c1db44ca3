// The element-wise kernels behind ElementwiseKernels.hpp: one thread per element (KernelGrid.hpp),
// or per vector of four elements for the memory-bound passes (ReLU, the smooth activations, add)
// where the count and
// the pointers allow (Vectors.cuh). The feature-map kernels are templates on the device element
// type T (float or __nv_bfloat16), computing in float.
#include "layers/cuda/ElementwiseKernels.hpp"

#include <initializer_list>

#include "layers/ActivationMath.hpp"
#include "layers/DropoutMask.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::layers::cuda {
namespace {

__device__ std::int64_t element_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// *out (+)= value, in float, rounded once to T.
template <typename T>
__device__ void store(T* out, float value, bool accumulate) {
  *out = from_float<T>(accumulate ? to_float(*out) + value : value);
}

template <typename T>
__global__ void add_rows_kernel(T* dst, std::int64_t dst_stride, const T* src,
                                std::int64_t src_stride, std::int64_t rows, std::int64_t cols) {
  const std::int64_t i = element_index();
  if (i >= rows * cols) return;
  const std::int64_t r = i / cols;
  const std::int64_t c = i - r * cols;
  store(dst + r * dst_stride + c, to_float(src[r * src_stride + c]), /*accumulate=*/true);
}

// The same over 16-byte vectors (kVec elements; cols and both strides multiples of kVec, both
// pointers 16-byte aligned): one thread per vector. A concatenation's rows are a few dozen bytes
// (DenseNet's 32 new channels of bf16 per pixel), which cudaMemcpy2DAsync and the element kernel
// move at a third of the copy bandwidth. Each element rounds as in add_rows_kernel.
template <typename T, int kVec>
__global__ void rows_vec_kernel(T* dst, std::int64_t dst_stride, const T* src,
                                std::int64_t src_stride, std::int64_t rows, std::int64_t cols,
                                bool accumulate) {
  const std::int64_t i = element_index();
  const std::int64_t vectors = cols / kVec;
  if (i >= rows * vectors) return;
  const std::int64_t r = i / vectors;
  const std::int64_t c = i - r * vectors;
  const std::int64_t from = (r * src_stride) / kVec + c;
  const std::int64_t to = (r * dst_stride) / kVec + c;
  if (!accumulate) {
    reinterpret_cast<uint4*>(dst)[to] = __ldg(reinterpret_cast<const uint4*>(src) + from);
    return;
  }
  float v[kVec];
  float old[kVec];
  load_vec<kVec>(src, from, v);
  load_vec_mutable<kVec>(dst, to, old);
#pragma unroll
  for (int k = 0; k < kVec; ++k) v[k] += old[k];
  store_vec<kVec>(dst, to, v);
}

// One thread per element of dst, so that its writes coalesce: dst[b][j][i] (+)= src[b][i][j].
template <typename T>
__global__ void transpose_kernel(const T* src, T* dst, std::int64_t batches, std::int64_t rows,
                                 std::int64_t cols, bool accumulate) {
  const std::int64_t k = element_index();
  if (k >= batches * rows * cols) return;
  const std::int64_t b = k / (rows * cols);
  const std::int64_t rest = k - b * rows * cols;  // j * rows + i
  const std::int64_t j = rest / rows;
  const std::int64_t i = rest - j * rows;
  store(dst + k, to_float(src[(b * rows + i) * cols + j]), accumulate);
}

// A pass over `vecs` vectors of kVec elements, one thread each: op.template apply<kVec>(i).
template <int kVec, typename Op>
__global__ void vector_kernel(Op op, std::int64_t vecs) {
  const std::int64_t i = element_index();
  if (i < vecs) op.template apply<kVec>(i);
}

// Enqueues op over n elements: by vectors of four when n % 4 == 0 and every pointer is 16-byte
// aligned (more than the 8 bytes that four bf16 need).
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

template <typename T>
struct AddPair {
  const T* a;
  const T* b;
  T* y;
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

template <typename T>
struct ReluMaskInPlace {
  const T* y;
  T* g;
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

// y = Value()(x) element by element, in float: ReLU's and the activations'.
template <typename Value, typename T>
struct PointwiseForward {
  const T* x;
  T* y;
  template <int kVec>
  __device__ void apply(std::int64_t i) const {
    float v[kVec];
    load_vec<kVec>(x, i, v);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = Value()(v[k]);
    store_vec<kVec>(y, i, v);
  }
};

// A select rather than fmaxf, which would turn a NaN input into 0 and hide it from the loss.
struct ReluValue {
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }
};

// f(x) for activation A (layers/ActivationMath.hpp).
template <Activation A>
struct ActivationValue {
  __device__ float operator()(float x) const { return activation_value<A>(x); }
};

// dx (+)= Grad()(saved, dy) element by element: ReLU's (its output masks dy) and the smooth
// activations' (dy * f'(.) from the input, or sigmoid's output).
template <typename Grad, typename T>
struct PointwiseBackward {
  const T* saved;
  const T* dy;
  T* dx;
  bool accumulate;
  template <int kVec>
  __device__ void apply(std::int64_t i) const {
    float out[kVec];
    float g[kVec];
    float s[kVec];
    load_vec<kVec>(saved, i, s);
    load_vec<kVec>(dy, i, g);
    if (accumulate) {
      load_vec_mutable<kVec>(dx, i, out);
    }
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float v = Grad()(s[k], g[k]);
      out[k] = accumulate ? out[k] + v : v;
    }
    store_vec<kVec>(dx, i, out);
  }
};

struct ReluGrad {
  __device__ float operator()(float y, float g) const { return y > 0.0f ? g : 0.0f; }
};

template <Activation A>
struct ActivationGrad {
  __device__ float operator()(float saved, float g) const { return activation_grad<A>(saved, g); }
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

// The draw of element i when a whole sample shares one (drop path): its sample, in either layout.
struct SampleIndex {
  std::int64_t sample_numel;
  __device__ std::int64_t operator()(std::int64_t i) const { return i / sample_numel; }
};

template <typename T, typename MaskIndex>
__global__ void dropout_kernel(double p, float scale, std::uint64_t state, const T* in, T* out,
                               std::int64_t n, bool accumulate, MaskIndex mask_index) {
  const std::int64_t i = element_index();
  if (i >= n) return;
  store(out + i, to_float(in[i]) * (dropout::keep(state, mask_index(i), p) ? scale : 0.0f),
        accumulate);
}

template <typename T, typename MaskIndex>
void launch_dropout(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                    const T* in, T* out, std::int64_t n, bool accumulate, MaskIndex mask_index) {
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  const std::uint64_t state = dropout::state(seed, step);
  dropout_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(
      p, scale, state, device_pointer(in), device_pointer(out), n, accumulate, mask_index);
  VDNN_CHECK_LAUNCH();
}

}  // namespace

template <typename T>
void copy_rows(cudaStream_t stream, T* dst, std::int64_t dst_stride, const T* src,
               std::int64_t src_stride, std::int64_t rows, std::int64_t cols, bool accumulate) {
  constexpr auto kBytes = static_cast<std::int64_t>(sizeof(T));
  constexpr int kVec = kWideVec<T>;
  const bool contiguous = dst_stride == cols && src_stride == cols;
  if (!(contiguous && !accumulate) && cols % kVec == 0 && dst_stride % kVec == 0 &&
      src_stride % kVec == 0 && aligned16({dst, src})) {
    using D = DeviceElementOf<T>;
    rows_vec_kernel<D, kVec><<<blocks_for(rows * cols / kVec), kBlockThreads, 0, stream>>>(
        device_pointer(dst), dst_stride, device_pointer(src), src_stride, rows, cols, accumulate);
    VDNN_CHECK_LAUNCH();
    return;
  }
  if (!accumulate && contiguous) {
    // Contiguous: one plain copy, which also avoids the 2-D copy's limit on the pitch.
    VDNN_CHECK_CUDA(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(rows * cols * kBytes),
                                    cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (!accumulate) {
    VDNN_CHECK_CUDA(cudaMemcpy2DAsync(
        dst, static_cast<std::size_t>(dst_stride * kBytes), src,
        static_cast<std::size_t>(src_stride * kBytes), static_cast<std::size_t>(cols * kBytes),
        static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  add_rows_kernel<<<blocks_for(rows * cols), kBlockThreads, 0, stream>>>(
      device_pointer(dst), dst_stride, device_pointer(src), src_stride, rows, cols);
  VDNN_CHECK_LAUNCH();
}

template <typename T>
void transpose_batches(cudaStream_t stream, const T* src, T* dst, std::int64_t batches,
                       std::int64_t rows, std::int64_t cols, bool accumulate) {
  transpose_kernel<<<blocks_for(batches * rows * cols), kBlockThreads, 0, stream>>>(
      device_pointer(src), device_pointer(dst), batches, rows, cols, accumulate);
  VDNN_CHECK_LAUNCH();
}

template <typename T>
void add_pair(cudaStream_t stream, const T* a, const T* b, T* y, std::int64_t n) {
  using D = DeviceElementOf<T>;
  launch_vectors(stream, n, {a, b, y},
                 AddPair<D>{device_pointer(a), device_pointer(b), device_pointer(y)});
}

template <typename T>
void relu_forward(cudaStream_t stream, const T* x, T* y, std::int64_t n) {
  using D = DeviceElementOf<T>;
  launch_vectors(stream, n, {x, y},
                 PointwiseForward<ReluValue, D>{device_pointer(x), device_pointer(y)});
}

template <typename T>
void relu_backward(cudaStream_t stream, const T* y, const T* dy, T* dx, std::int64_t n,
                   bool accumulate) {
  using D = DeviceElementOf<T>;
  launch_vectors(stream, n, {y, dy, dx},
                 PointwiseBackward<ReluGrad, D>{device_pointer(y), device_pointer(dy),
                                                device_pointer(dx), accumulate});
}

template <typename T>
void relu_mask_in_place(cudaStream_t stream, const T* y, T* g, std::int64_t n) {
  using D = DeviceElementOf<T>;
  launch_vectors(stream, n, {y, g}, ReluMaskInPlace<D>{device_pointer(y), device_pointer(g)});
}

template <Activation A, typename T>
void activation_forward(cudaStream_t stream, const T* x, T* y, std::int64_t n) {
  using D = DeviceElementOf<T>;
  launch_vectors(stream, n, {x, y},
                 PointwiseForward<ActivationValue<A>, D>{device_pointer(x), device_pointer(y)});
}

template <Activation A, typename T>
void activation_backward(cudaStream_t stream, const T* saved, const T* dy, T* dx, std::int64_t n,
                         bool accumulate) {
  using D = DeviceElementOf<T>;
  launch_vectors(stream, n, {saved, dy, dx},
                 PointwiseBackward<ActivationGrad<A>, D>{device_pointer(saved), device_pointer(dy),
                                                         device_pointer(dx), accumulate});
}

template <typename T>
void dropout_apply(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                   const T* in, T* out, std::int64_t n, bool accumulate) {
  launch_dropout(stream, p, seed, step, in, out, n, accumulate, SameIndex{});
}

template <typename T>
void dropout_apply_channels_last(cudaStream_t stream, double p, std::uint64_t seed,
                                 std::uint64_t step, const T* in, T* out, std::int64_t n,
                                 std::int64_t channels, std::int64_t pixels, bool accumulate) {
  launch_dropout(stream, p, seed, step, in, out, n, accumulate, NchwIndexOfNhwc{channels, pixels});
}

template <typename T>
void drop_path_apply(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                     const T* in, T* out, std::int64_t n, std::int64_t sample_numel,
                     bool accumulate) {
  launch_dropout(stream, p, seed, step, in, out, n, accumulate, SampleIndex{sample_numel});
}

// The launchers of both element types (ElementwiseKernels.hpp).
#define VDNN_ELEMENTWISE_LAUNCHERS(T)                                                              \
  template void copy_rows<T>(cudaStream_t, T*, std::int64_t, const T*, std::int64_t, std::int64_t, \
                             std::int64_t, bool);                                                  \
  template void transpose_batches<T>(cudaStream_t, const T*, T*, std::int64_t, std::int64_t,       \
                                     std::int64_t, bool);                                          \
  template void add_pair<T>(cudaStream_t, const T*, const T*, T*, std::int64_t);                   \
  template void relu_forward<T>(cudaStream_t, const T*, T*, std::int64_t);                         \
  template void relu_backward<T>(cudaStream_t, const T*, const T*, T*, std::int64_t, bool);        \
  template void relu_mask_in_place<T>(cudaStream_t, const T*, T*, std::int64_t);                   \
  template void dropout_apply<T>(cudaStream_t, double, std::uint64_t, std::uint64_t, const T*, T*, \
                                 std::int64_t, bool);                                              \
  template void dropout_apply_channels_last<T>(cudaStream_t, double, std::uint64_t, std::uint64_t, \
                                               const T*, T*, std::int64_t, std::int64_t,           \
                                               std::int64_t, bool);                                \
  template void drop_path_apply<T>(cudaStream_t, double, std::uint64_t, std::uint64_t, const T*,   \
                                   T*, std::int64_t, std::int64_t, bool);
VDNN_ELEMENTWISE_LAUNCHERS(float)
VDNN_ELEMENTWISE_LAUNCHERS(runtime::BFloat16)
#undef VDNN_ELEMENTWISE_LAUNCHERS

// The activation launchers of each activation and element type.
#define VDNN_ACTIVATION_LAUNCHERS(A, T)                                             \
  template void activation_forward<A, T>(cudaStream_t, const T*, T*, std::int64_t); \
  template void activation_backward<A, T>(cudaStream_t, const T*, const T*, T*, std::int64_t, bool);
#define VDNN_ACTIVATION_TYPES(A)      \
  VDNN_ACTIVATION_LAUNCHERS(A, float) \
  VDNN_ACTIVATION_LAUNCHERS(A, runtime::BFloat16)
VDNN_ACTIVATION_TYPES(Activation::Silu)
VDNN_ACTIVATION_TYPES(Activation::Gelu)
VDNN_ACTIVATION_TYPES(Activation::Sigmoid)
VDNN_ACTIVATION_TYPES(Activation::Hardswish)
VDNN_ACTIVATION_TYPES(Activation::Relu6)
VDNN_ACTIVATION_TYPES(Activation::Hardsigmoid)
#undef VDNN_ACTIVATION_TYPES
#undef VDNN_ACTIVATION_LAUNCHERS

}  // namespace vdnn::layers::cuda
