// Image bytes to normalized NCHW feature maps on the CUDA backend: one thread per pixel reads its
// three bytes and writes one element to each channel plane.
#include "layers/cuda/NormalizeCuda.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

struct Affine {
  float scale[3];
  float shift[3];
};

// The same fused multiply-add as NormalizeCpu, so the two agree bit for bit.
template <typename T>
__global__ void normalize_kernel(const std::uint8_t* x, T* y, std::int64_t pixels,
                                 std::int64_t plane, Affine affine) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < pixels; p += stride) {
    const std::int64_t n = p / plane;
    const std::int64_t i = p - n * plane;
    T* out = y + n * 3 * plane + i;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
      const float v =
          __fmaf_rn(static_cast<float>(x[3 * p + c]), affine.scale[c], -affine.shift[c]);
      out[c * plane] = from_float<T>(v);
    }
  }
}

}  // namespace

NormalizeCuda::NormalizeCuda(const NormalizeSpec& spec, std::vector<Shape> input_shapes,
                             const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, Layout::Nchw, Layout::Nhwc),
      spec_(spec),
      context_(options.cuda) {
  VDNN_EXPECTS(options.dtype == DType::U8 && options.input_layout == Layout::Nhwc,
               "NormalizeCuda reads u8 NHWC images");
  VDNN_EXPECTS(spec.to == DType::F32 || spec.to == DType::BF16, "NormalizeCuda writes f32 or bf16");
  VDNN_EXPECTS(context_ != nullptr,
               "NormalizeCuda: LayerOptions::cuda must name the device context to run on");
}

void NormalizeCuda::forward(const ForwardArgs& args) {
  const TensorView& x = args.inputs[0];
  const std::int64_t plane = x.shape.h() * x.shape.w();
  const std::int64_t pixels = x.shape.n() * plane;
  Affine affine{};
  for (int c = 0; c < 3; ++c) {
    affine.scale[c] = 1.0f / (255.0f * spec_.std[c]);
    affine.shift[c] = spec_.mean[c] / spec_.std[c];
  }
  constexpr std::int64_t kMaxBlocks = 65536;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(blocks_for(pixels), kMaxBlocks));
  const cudaStream_t stream = context_->compute_stream();
  const auto* in = static_cast<const std::uint8_t*>(x.data);
  if (spec_.to == DType::BF16) {
    normalize_kernel<<<blocks, kBlockThreads, 0, stream>>>(
        in, static_cast<__nv_bfloat16*>(args.output.data), pixels, plane, affine);
  } else {
    normalize_kernel<<<blocks, kBlockThreads, 0, stream>>>(
        in, static_cast<float*>(args.output.data), pixels, plane, affine);
  }
  VDNN_CHECK_LAUNCH();
}

void NormalizeCuda::backward(const BackwardArgs& /*args*/) {}

}  // namespace vdnn::layers::cuda
