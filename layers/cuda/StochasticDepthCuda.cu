// Drop path on the CUDA backend: one thread per element, each hashing its sample's keep/drop draw
// (dropout's hash of the sample index), so no mask is stored and the CPU backend's is matched.
#include "layers/cuda/StochasticDepthCuda.hpp"

#include <utility>

#include "layers/DropoutMask.hpp"
#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

// The multipliers of one step: kept samples get `kept`, dropped ones 0.
struct SampleMask {
  std::uint64_t state;
  double p;
  float kept;
  std::int64_t sample_numel;
  __device__ float operator()(std::int64_t i) const {
    return dropout::keep(state, i / sample_numel, p) ? kept : 0.0f;
  }
};

template <typename T>
__global__ void drop_path_kernel(const T* __restrict__ in, T* out, std::int64_t n, SampleMask mask,
                                 bool accumulate) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // __fmul_rn: a product rounded on its own, never fused into the accumulating add.
  const float v = __fmul_rn(to_float(in[i]), mask(i));
  out[i] = from_float<T>(accumulate ? to_float(out[i]) + v : v);
}

}  // namespace

StochasticDepthCuda::StochasticDepthCuda(const StochasticDepthSpec& spec,
                                         std::vector<Shape> input_shapes,
                                         const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      p_(spec.p),
      seed_(options.seed),
      context_(&checked_context(options, "StochasticDepthCuda", Precisions::F32OrBf16)) {}

void StochasticDepthCuda::forward(const ForwardArgs& args) {
  apply(args.training, args.step, args.inputs[0], args.output, /*accumulate=*/false);
}

void StochasticDepthCuda::backward(const BackwardArgs& args) {
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  apply(/*training=*/true, args.step, args.grad_output, target.tensor, target.accumulate);
}

void StochasticDepthCuda::apply(bool training, std::uint64_t step, const TensorView& in_view,
                                const TensorView& out_view, bool accumulate) const {
  const Shape& shape = input_shapes()[0];
  with_element_type(dtype(), [&](auto element) {
    using T = decltype(element);
    const T* in = in_view.as<T>();
    T* out = out_view.as<T>();
    if (!training) {
      copy_elements(context_->compute_stream(), out, in, shape.numel(), accumulate);
      return;
    }
    const SampleMask mask{dropout::state(seed_, step), p_, static_cast<float>(1.0 / (1.0 - p_)),
                          shape.sample_numel()};
    drop_path_kernel<<<blocks_for(shape.numel()), kBlockThreads, 0, context_->compute_stream()>>>(
        device_pointer(in), device_pointer(out), shape.numel(), mask, accumulate);
    VDNN_CHECK_LAUNCH();
  });
}

}  // namespace vdnn::layers::cuda
