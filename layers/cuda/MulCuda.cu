// The product of a feature map and a (broadcast) scale on the CUDA backend: one thread per element
// for y and dx; a broadcast scale's gradient is one block per scale element reducing its plane in
// a fixed order (BlockReduce.cuh). Kernels compute in float over float or __nv_bfloat16.
#include "layers/cuda/MulCuda.hpp"

#include <type_traits>
#include <utility>

#include "layers/cuda/BlockReduce.cuh"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// Where the scale element of x's element i lies: s[i / plane] in NCHW (plane 1 when the shapes
// agree), s[n * C + c] for the NHWC element i = (n * plane + pixel) * C + c.
struct ScaleIndex {
  std::int64_t plane;
  std::int64_t channels;
  bool channels_last;
  __device__ std::int64_t operator()(std::int64_t i) const {
    if (!channels_last) return i / plane;
    return i / (plane * channels) * channels + i % channels;
  }
};

// out[i] (+)= a[i] * s[index(i)], rounded as the CPU layer rounds: F32 accumulates with one
// fused multiply-add (MulCpu's std::fma); BF16 rounds the product, then the float sum, then the
// store (the CPU's emulation: a fresh F32 gradient added to the old bf16 value).
template <typename T>
__global__ void scale_kernel(const T* __restrict__ a, const T* __restrict__ s, T* out,
                             std::int64_t n, ScaleIndex index, bool accumulate) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = to_float(a[i]);
  const float scale = to_float(s[index(i)]);
  float v = __fmul_rn(x, scale);
  if (accumulate) {
    v = std::is_same_v<T, float> ? __fmaf_rn(x, scale, to_float(out[i]))
                                 : __fadd_rn(to_float(out[i]), v);
  }
  out[i] = from_float<T>(v);
}

// ds[j] (+)= sum over j's plane of dy * x: block j, threads striding over the plane.
template <typename T>
__global__ void scale_grad_kernel(const T* __restrict__ dy, const T* __restrict__ x, T* ds,
                                  ScaleIndex index, bool accumulate) {
  const std::int64_t j = blockIdx.x;
  const std::int64_t n = j / index.channels;
  const std::int64_t c = j - n * index.channels;
  float sum = 0.0f;
  for (std::int64_t p = threadIdx.x; p < index.plane; p += blockDim.x) {
    const std::int64_t e =
        index.channels_last ? (n * index.plane + p) * index.channels + c : j * index.plane + p;
    sum += to_float(dy[e]) * to_float(x[e]);
  }
  sum = block_reduce(sum, Sum{});
  if (threadIdx.x == 0) ds[j] = from_float<T>(accumulate ? to_float(ds[j]) + sum : sum);
}

template <typename T>
void launch_scale(cudaStream_t stream, const T* a, const T* s, T* out, std::int64_t n,
                  ScaleIndex index, bool accumulate) {
  scale_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(
      device_pointer(a), device_pointer(s), device_pointer(out), n, index, accumulate);
  VDNN_CHECK_LAUNCH();
}

}  // namespace

MulCuda::MulCuda(const MulSpec& spec, std::vector<Shape> input_shapes, const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "MulCuda", Precisions::F32OrBf16)),
      plane_(this->input_shapes()[0].numel() / this->input_shapes()[1].numel()),
      channels_(this->input_shapes()[0].c()) {}

void MulCuda::forward(const ForwardArgs& args) {
  const ScaleIndex index{plane_, channels_, layout() == runtime::Layout::Nhwc};
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    launch_scale(context_->compute_stream(), args.inputs[0].as<T>(), args.inputs[1].as<T>(),
                 args.output.as<T>(), args.output.numel(), index, false);
  });
}

void MulCuda::backward(const BackwardArgs& args) {
  const ScaleIndex index{plane_, channels_, layout() == runtime::Layout::Nhwc};
  const GradTarget& dx = args.grad_inputs[0];
  const GradTarget& ds = args.grad_inputs[1];
  const cudaStream_t stream = context_->compute_stream();
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    const T* dy = args.grad_output.as<T>();
    const T* x = args.inputs[0].as<T>();
    const std::int64_t n = args.grad_output.numel();
    if (!dx.tensor.empty()) {
      launch_scale(stream, dy, args.inputs[1].as<T>(), dx.tensor.as<T>(), n, index, dx.accumulate);
    }
    if (ds.tensor.empty()) return;
    if (plane_ == 1) {  // shapes agree: ds = dy * x element by element
      launch_scale(stream, dy, x, ds.tensor.as<T>(), n, ScaleIndex{1, channels_, false},
                   ds.accumulate);
      return;
    }
    scale_grad_kernel<<<static_cast<unsigned int>(ds.tensor.numel()), kReduceBlock, 0, stream>>>(
        device_pointer(dy), device_pointer(x), device_pointer(ds.tensor.as<T>()), index,
        ds.accumulate);
    VDNN_CHECK_LAUNCH();
  });
}

}  // namespace vdnn::layers::cuda
