// CUDA global average pooling: one warp reduces each plane (shuffle tree, fixed order); backward
// spreads each mean's gradient over its plane, one thread per element.
#include "layers/cuda/GlobalAvgPoolCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr int kWarpSize = 32;
constexpr int kPlanesPerBlock = kBlockThreads / kWarpSize;

__global__ void global_avg_pool_forward(int planes, int plane_size, const float* __restrict__ x,
                                        float* __restrict__ y) {
  const int plane =
      static_cast<int>(blockIdx.x) * kPlanesPerBlock + static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  if (plane >= planes) return;  // the whole warp leaves together
  const float* values = x + static_cast<long long>(plane) * plane_size;
  float sum = 0.0f;
  for (int i = lane; i < plane_size; i += kWarpSize) sum += values[i];
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  }
  if (lane == 0) y[plane] = sum / static_cast<float>(plane_size);
}

__global__ void global_avg_pool_backward(int count, int plane_size, const float* __restrict__ dy,
                                         float* __restrict__ dx, bool accumulate) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= count) return;
  const float share = dy[index / plane_size] / static_cast<float>(plane_size);
  dx[index] = accumulate ? dx[index] + share : share;
}

}  // namespace

GlobalAvgPoolCuda::GlobalAvgPoolCuda(const GlobalAvgPoolSpec& spec, std::vector<Shape> input_shapes,
                                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype),
      context_(&checked_context(options, "GlobalAvgPoolCuda")),
      planes_(checked_int(output_shape().numel(), "GlobalAvgPoolCuda planes")),
      plane_size_(checked_int(this->input_shapes()[0].h() * this->input_shapes()[0].w(),
                              "GlobalAvgPoolCuda plane size")),
      count_(checked_int(this->input_shapes()[0].numel(), "GlobalAvgPoolCuda input elements")) {}

void GlobalAvgPoolCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 && view_matches(args.inputs[0], input_shapes()[0]) &&
                   view_matches(args.output, output_shape()),
               "GlobalAvgPoolCuda::forward: views do not match the layer's shapes");
  const unsigned int blocks = (planes_ + kPlanesPerBlock - 1) / kPlanesPerBlock;
  global_avg_pool_forward<<<blocks, kBlockThreads, 0, context_->compute_stream()>>>(
      planes_, plane_size_, args.inputs[0].as<float>(), args.output.as<float>());
  VDNN_CHECK_LAUNCH();
}

void GlobalAvgPoolCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(args.grad_inputs.size() == 1 && view_matches(args.grad_output, output_shape()),
               "GlobalAvgPoolCuda::backward: views do not match the layer's shapes");
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  VDNN_EXPECTS(view_matches(target.tensor, input_shapes()[0]),
               "GlobalAvgPoolCuda::backward: input gradient view does not match the input shape");
  global_avg_pool_backward<<<blocks_for(count_), kBlockThreads, 0, context_->compute_stream()>>>(
      count_, plane_size_, args.grad_output.as<float>(), target.tensor.as<float>(),
      target.accumulate);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
