// ConvEpilogue: the fused convolution's own pass over its output (conv2d_relu, Note [Fusion]): the
// bias and the ReLU in one pass after cuDNN's convolution (its backward masks the gradient with
// ElementwiseKernels' relu_backward). Internal to layers/cuda/.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/Shape.hpp"

namespace vdnn::layers::cuda {

/// y = relu(y + bias[c]) in place over the F32 rank-4 tensor `y` of NCHW-logical `shape` stored in
/// `layout` (the channel of element i is i % C in NHWC, (i / (H * W)) % C in NCHW); without a
/// bias (null) y = relu(y). Rounded as the unfused chain rounds it: y + bias to float (as
/// cudnnAddTensor), then the select y < 0 ? 0 : y (a NaN stays NaN), so the result is bitwise the
/// unfused convolution's followed by ReluCuda's. Loads and stores float4 where the element count,
/// the channels (C % 4 == 0 in NHWC, H * W % 4 == 0 in NCHW) and the pointer's alignment allow,
/// else one element per thread. Enqueued on `stream`; does not wait. Throws runtime::CudaError
/// when the launch fails.
void bias_relu_forward(cudaStream_t stream, float* y, const float* bias,
                       const runtime::Shape& shape, runtime::Layout layout);

}  // namespace vdnn::layers::cuda
