// Host-side launchers of the element-wise kernels of the CUDA ReLU, smooth activations, Add,
// Concat, Flatten and Dropout (and drop path) layers (F32 or BF16). Each enqueues on `stream`
// (never the NULL stream), checks the launch and returns without waiting; pointers are device
// memory of at least the counts given, and counts are positive and at most INT_MAX elements
// (KernelGrid.hpp). Also the layout rules of the layers that take either memory order (Note
// [Layout]).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "layers/Layer.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Shape.hpp"

namespace vdnn::layers::cuda {

// The element-wise launchers are templates on the element type T of the feature maps: float (F32)
// or runtime::BFloat16 (BF16, Note [Precision]); both are instantiated in ElementwiseKernels.cu.
// A BF16 launcher computes in float and rounds each stored value once to nearest even; with
// `accumulate` it reads the old bf16 value, adds in float and rounds once.

/// dst[r * dst_stride + i] = src[r * src_stride + i] for r < rows, i < cols; with `accumulate`
/// the value is added to dst instead. Source and destination must not overlap. Throws
/// runtime::CudaError.
template <typename T>
void copy_rows(cudaStream_t stream, T* dst, std::int64_t dst_stride, const T* src,
               std::int64_t src_stride, std::int64_t rows, std::int64_t cols, bool accumulate);

/// dst[i] (+)= src[i] for i < n: copy_rows over one row.
template <typename T>
void copy_elements(cudaStream_t stream, T* dst, const T* src, std::int64_t n, bool accumulate) {
  copy_rows(stream, dst, n, src, n, 1, n, accumulate);
}

/// dst[b][j][i] (+)= src[b][i][j] for b < batches, i < rows, j < cols: the NHWC <-> NCHW reorder of
/// `batches` samples (rows = H * W and cols = C for NHWC -> NCHW, the other way back). Source and
/// destination must not overlap. Throws runtime::CudaError.
template <typename T>
void transpose_batches(cudaStream_t stream, const T* src, T* dst, std::int64_t batches,
                       std::int64_t rows, std::int64_t cols, bool accumulate);

/// y = a + b over n elements. Throws runtime::CudaError.
template <typename T>
void add_pair(cudaStream_t stream, const T* a, const T* b, T* y, std::int64_t n);

/// y = x < 0 ? 0 : x (a NaN stays NaN). Throws runtime::CudaError.
template <typename T>
void relu_forward(cudaStream_t stream, const T* x, T* y, std::int64_t n);

/// dx (+)= y > 0 ? dy : 0, from the forward output y. Throws runtime::CudaError.
template <typename T>
void relu_backward(cudaStream_t stream, const T* y, const T* dy, T* dx, std::int64_t n,
                   bool accumulate);

/// g = y > 0 ? g : 0 in place: the ReLU's gradient over a gradient nothing reads again (the fused
/// conv2d_relu's output gradient, BackwardArgs::grad_output). Throws runtime::CudaError.
template <typename T>
void relu_mask_in_place(cudaStream_t stream, const T* y, T* g, std::int64_t n);

/// y = f(x) for activation A (layers/ActivationMath.hpp), computed in float. Instantiated for the
/// six activations. Throws runtime::CudaError.
template <Activation A, typename T>
void activation_forward(cudaStream_t stream, const T* x, T* y, std::int64_t n);

/// dx (+)= dy * f'(.) for activation A, from `saved`: the forward output for sigmoid and relu6,
/// else the forward input (activation_grad_from_output). Throws runtime::CudaError.
template <Activation A, typename T>
void activation_backward(cudaStream_t stream, const T* saved, const T* dy, T* dx, std::int64_t n,
                         bool accumulate);

/// out (+)= in * mask(i), with DropoutCpu's mask of (p, seed, step): bitwise the same multipliers,
/// so forward (in = x) and backward (in = dy) match the CPU backend exactly (in BF16: the CPU's
/// float product, rounded once). Throws runtime::CudaError.
template <typename T>
void dropout_apply(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                   const T* in, T* out, std::int64_t n, bool accumulate);

/// dropout_apply on a rank-4 tensor stored NHWC, with `channels` C and `pixels` H * W per sample:
/// element i gets the multiplier of its NCHW index, so the mask matches DropoutCpu's on the same
/// logical tensor. Throws runtime::CudaError.
template <typename T>
void dropout_apply_channels_last(cudaStream_t stream, double p, std::uint64_t seed,
                                 std::uint64_t step, const T* in, T* out, std::int64_t n,
                                 std::int64_t channels, std::int64_t pixels, bool accumulate);

/// dropout_apply with one draw per sample of `sample_numel` elements (drop path): the draw of
/// element i is that of index i / sample_numel, StochasticDepthCpu's in either layout (a sample is
/// contiguous in NCHW and NHWC alike). Throws runtime::CudaError.
template <typename T>
void drop_path_apply(cudaStream_t stream, double p, std::uint64_t seed, std::uint64_t step,
                     const T* in, T* out, std::int64_t n, std::int64_t sample_numel,
                     bool accumulate);

/// The layout of a layer whose inputs and output share one memory order, whichever it is (element-
/// wise work, pooling, concatenation): options.layout when options.input_layout agrees, else Nchw,
/// which make_layer then refuses as a layout the layer cannot take.
inline runtime::Layout shared_layout(const LayerOptions& options) noexcept {
  return options.layout == options.input_layout ? options.layout : runtime::Layout::Nchw;
}

/// True when `shape` lies in memory the same way in NCHW and NHWC: a rank other than 4, one
/// channel, or a 1 x 1 plane.
inline bool same_in_both_layouts(const runtime::Shape& shape) {
  return shape.rank() != 4 || shape.c() == 1 || shape.h() * shape.w() == 1;
}

/// The input layout of a layer that reads its input as NCHW bytes (Linear, the loss): `asked` where
/// the first input lies the same in both layouts, else Nchw, which make_layer then refuses when
/// NHWC was asked.
inline runtime::Layout nchw_bytes_layout(const std::vector<runtime::Shape>& inputs,
                                         runtime::Layout asked) {
  return !inputs.empty() && same_in_both_layouts(inputs.front()) ? asked : runtime::Layout::Nchw;
}

}  // namespace vdnn::layers::cuda
