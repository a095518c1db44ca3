// The cast between F32 and BF16 on the CUDA backend: one grid-stride kernel per pair of types.
#include "layers/cuda/CastCuda.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

template <typename From, typename To>
__global__ void convert_kernel(const From* src, To* dst, std::int64_t n, bool accumulate) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float v = to_float(src[i]);
    dst[i] = from_float<To>(accumulate ? to_float(dst[i]) + v : v);
  }
}

template <typename From, typename To>
void launch(cudaStream_t stream, const TensorView& src, const TensorView& dst, bool accumulate) {
  const std::int64_t n = src.numel();
  constexpr std::int64_t kMaxBlocks = 65536;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(blocks_for(n), kMaxBlocks));
  convert_kernel<<<blocks, kBlockThreads, 0, stream>>>(device_data<From>(src), device_data<To>(dst),
                                                       n, accumulate);
  VDNN_CHECK_LAUNCH();
}

// dst (+)= src converted to dst's type.
void convert(cudaStream_t stream, const TensorView& src, const TensorView& dst, bool accumulate) {
  const bool from_bf16 = src.dtype == DType::BF16;
  const bool to_bf16 = dst.dtype == DType::BF16;
  if (from_bf16 && to_bf16) {
    launch<__nv_bfloat16, __nv_bfloat16>(stream, src, dst, accumulate);
  } else if (from_bf16) {
    launch<__nv_bfloat16, float>(stream, src, dst, accumulate);
  } else if (to_bf16) {
    launch<float, __nv_bfloat16>(stream, src, dst, accumulate);
  } else {
    launch<float, float>(stream, src, dst, accumulate);
  }
}

bool castable(DType dtype) { return dtype == DType::F32 || dtype == DType::BF16; }

// The context, once the target is a type this layer converts to.
runtime::cuda::DeviceContext& cast_context(const CastSpec& spec, const LayerOptions& options) {
  VDNN_EXPECTS(castable(spec.to), "CastCuda converts to f32 or bf16 only");
  return checked_context(options, "CastCuda", Precisions::F32OrBf16);
}

}  // namespace

CastCuda::CastCuda(const CastSpec& spec, std::vector<Shape> input_shapes,
                   const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&cast_context(spec, options)) {}

void CastCuda::forward(const ForwardArgs& args) {
  convert(context_->compute_stream(), args.inputs[0], args.output, false);
}

void CastCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  convert(context_->compute_stream(), args.grad_output, target.tensor, target.accumulate);
}

}  // namespace vdnn::layers::cuda
