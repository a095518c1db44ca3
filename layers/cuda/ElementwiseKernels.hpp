// Host-side launchers of the element-wise kernels of the CUDA ReLU, Add, Concat, Flatten and
// Dropout layers and of the SGD update. Each enqueues on `stream` (never the NULL stream), checks
// the launch and returns without waiting; pointers are device memory of at least the counts given,
// and counts are positive and at most INT_MAX elements (KernelGrid.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "layers/SgdUpdate.hpp"

namespace vdnn::layers::cuda {

/// dst[r * dst_stride + i] = src[r * src_stride + i] for r < rows, i < cols; with `accumulate`
/// the value is added to dst instead. Source and destination must not overlap. Throws
/// runtime::CudaError.
void copy_rows(cudaStream_t stream, float* dst, std::int64_t dst_stride, const float* src,
               std::int64_t src_stride, std::int64_t rows, std::int64_t cols, bool accumulate);

/// dst[i] (+)= src[i] for i < n: copy_rows over one row.
inline void copy_elements(cudaStream_t stream, float* dst, const float* src, std::int64_t n,
                          bool accumulate) {
  copy_rows(stream, dst, n, src, n, 1, n, accumulate);
}

/// y = a + b over n elements. Throws runtime::CudaError.
void add_pair(cudaStream_t stream, const float* a, const float* b, float* y, std::int64_t n);

/// y = x < 0 ? 0 : x (a NaN stays NaN). Throws runtime::CudaError.
void relu_forward(cudaStream_t stream, const float* x, float* y, std::int64_t n);

/// dx (+)= y > 0 ? dy : 0, from the forward output y. Throws runtime::CudaError.
void relu_backward(cudaStream_t stream, const float* y, const float* dy, float* dx, std::int64_t n,
                   bool accumulate);

/// out (+)= in * mask(i), with DropoutCpu's mask of (p, seed, step): bitwise the same multipliers,
/// so forward (in = x) and backward (in = dy) match the CPU backend exactly. Throws
/// runtime::CudaError.
void dropout_apply(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                   const float* in, float* out, std::int64_t n, bool accumulate);

/// SgdUpdate's rule, in F32, on n elements: g = grad + weight_decay * param; velocity =
/// first_step ? g : momentum * velocity + g; param -= lr * velocity. Throws runtime::CudaError.
void sgd_update(cudaStream_t stream, float* param, const float* grad, float* velocity,
                std::int64_t n, const SgdHyper& hyper);

}  // namespace vdnn::layers::cuda
