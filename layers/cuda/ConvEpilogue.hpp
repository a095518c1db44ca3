// ConvEpilogue: the convolution's own passes over its tensors. The fused convolution's epilogue
// (conv2d_relu, Note [Fusion]): the bias and the ReLU in one pass after cuDNN's convolution (its
// backward's mask is ChannelSums::masked_sums with the bias gradient in NHWC, else
// ElementwiseKernels' relu_mask_in_place). Also the bias of a
// BF16 convolution or linear layer, and the conversions between layouts and element types that
// stage a BF16 layer's weight, input and weight gradient (Note [Precision]). Internal to
// layers/cuda/.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/Shape.hpp"

namespace vdnn::layers::cuda {

/// y = relu(y + bias[c]) in place over the rank-4 tensor `y` (F32 or bf16) of NCHW-logical `shape`
/// stored in `layout` (the channel of element i is i % C in NHWC, (i / (H * W)) % C in NCHW);
/// without a bias (null) y = relu(y); with relu false y = y + bias[c] (bias not null). Rounded as
/// the unfused chain rounds it: y + bias in float, rounded to the element type (as cudnnAddTensor
/// in F32, as the bf16 bias pass here), then the select y < 0 ? 0 : y (a NaN stays NaN), so the
/// result is bitwise the unfused convolution's followed by the ReLU layer's. Loads and stores eight
/// or four elements at once where the element count, the channels (C % 8 or 4 == 0 in NHWC,
/// H * W % 8 or 4 == 0 in NCHW) and the pointer's alignment allow, else one element per thread.
/// Enqueued on `stream`; does not wait. Throws runtime::InvalidArgument for an empty or non-rank-4
/// shape or nothing to do, runtime::CudaError when the launch fails.
template <typename T>
void bias_relu_forward(cudaStream_t stream, T* y, const float* bias, const runtime::Shape& shape,
                       runtime::Layout layout, bool relu = true);

/// dst = src (or dst += src with `accumulate`, in float, rounded once) over a rank-4 tensor of
/// NCHW-logical `shape`, read in `src_layout` and written in `dst_layout` (NCHW <-> NHWC moves the
/// channel; a [K, C, R, S] weight is KCRS in NCHW, KRSC in NHWC), converting the element type
/// (float <-> __nv_bfloat16, bf16 stores round to nearest even). Instantiated for float ->
/// bf16, bf16 -> float and bf16 -> bf16. src and dst must not overlap. Enqueued on `stream`.
/// Throws runtime::InvalidArgument for a shape that is not rank 4, runtime::CudaError when the
/// launch fails.
template <typename Src, typename Dst>
void convert_layout(cudaStream_t stream, const Src* src, runtime::Layout src_layout, Dst* dst,
                    runtime::Layout dst_layout, const runtime::Shape& shape,
                    bool accumulate = false);

}  // namespace vdnn::layers::cuda
