// The element-wise kernels behind ElementwiseKernels.hpp: one thread per element (KernelGrid.hpp).
#include "layers/cuda/ElementwiseKernels.hpp"

#include "layers/DropoutMask.hpp"
#include "layers/cuda/KernelGrid.hpp"
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

__global__ void add_pair_kernel(const float* a, const float* b, float* y, std::int64_t n) {
  const std::int64_t i = element_index();
  if (i < n) y[i] = a[i] + b[i];
}

__global__ void relu_forward_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = element_index();
  // A select rather than fmaxf, which would turn a NaN input into 0 and hide it from the loss.
  if (i < n) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, std::int64_t n,
                                     bool accumulate) {
  const std::int64_t i = element_index();
  if (i < n) store(dx + i, y[i] > 0.0f ? dy[i] : 0.0f, accumulate);
}

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

__global__ void sgd_kernel(float* param, const float* grad, float* velocity, std::int64_t n,
                           float lr, float momentum, float weight_decay, bool first_step) {
  const std::int64_t i = element_index();
  if (i >= n) return;
  const float d = grad[i] + weight_decay * param[i];
  const float v = first_step ? d : momentum * velocity[i] + d;
  velocity[i] = v;
  param[i] -= lr * v;
}

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
  add_pair_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(a, b, y, n);
  VDNN_CHECK_LAUNCH();
}

void relu_forward(cudaStream_t stream, const float* x, float* y, std::int64_t n) {
  relu_forward_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(x, y, n);
  VDNN_CHECK_LAUNCH();
}

void relu_backward(cudaStream_t stream, const float* y, const float* dy, float* dx, std::int64_t n,
                   bool accumulate) {
  relu_backward_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(y, dy, dx, n, accumulate);
  VDNN_CHECK_LAUNCH();
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
  sgd_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(
      param, grad, velocity, n, static_cast<float>(hyper.lr), static_cast<float>(hyper.momentum),
      static_cast<float>(hyper.weight_decay), hyper.first_step);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
