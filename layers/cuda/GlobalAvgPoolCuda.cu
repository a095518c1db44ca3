// CUDA global average pooling in NCHW or NHWC. Forward: in NCHW one warp reduces each plane; in
// NHWC a block reads 32 adjacent channels per pixel (coalesced) over 32 pixel lanes and each warp
// then reduces one channel's lanes. Both add the same 32 strided partial sums in the same shuffle
// tree, so both layouts give the same bits. Backward spreads each mean's gradient over its plane,
// one thread per element. The kernels are templates on the element type (float or __nv_bfloat16)
// and sum in float.
#include "layers/cuda/GlobalAvgPoolCuda.hpp"

#include <utility>

#include "layers/cuda/CudaLayerChecks.hpp"
#include "layers/cuda/Elements.cuh"
#include "layers/cuda/ElementwiseKernels.hpp"
#include "layers/cuda/KernelGrid.hpp"
#include "layers/cuda/PoolWindow.hpp"
#include "layers/cuda/Vectors.cuh"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"
#include "runtime/cuda/DeviceContext.hpp"

namespace vdnn::layers::cuda {
namespace {

constexpr int kWarpSize = 32;
constexpr int kPlanesPerBlock = kBlockThreads / kWarpSize;
constexpr int kNhwcBlockThreads = kWarpSize * kWarpSize;  // 32 channels x 32 pixel lanes

// Lane `lane` holds the sum of the values lane, lane + 32, ... of one plane: the mean, in lane 0.
__device__ float warp_mean(float sum, int plane_size) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  }
  return sum / static_cast<float>(plane_size);
}

// NCHW: one warp per plane.
template <typename T>
__global__ void global_avg_pool_forward(int planes, int plane_size, const T* __restrict__ x,
                                        T* __restrict__ y) {
  const int plane =
      static_cast<int>(blockIdx.x) * kPlanesPerBlock + static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  if (plane >= planes) return;  // the whole warp leaves together
  const T* values = x + static_cast<long long>(plane) * plane_size;
  float sum = 0.0f;
  for (int i = lane; i < plane_size; i += kWarpSize) sum += to_float(values[i]);
  const float mean = warp_mean(sum, plane_size);
  if (lane == 0) y[plane] = from_float<T>(mean);
}

// NHWC: one block per (sample, group of 32 channels), blockDim (32 channels, 32 pixel lanes).
// Thread (c, lane) sums pixels lane, lane + 32, ... of channel c; warp `lane` then reduces
// channel `lane` of the group.
template <typename T>
__global__ void __launch_bounds__(kNhwcBlockThreads)
    global_avg_pool_forward_nhwc(int channels, int plane_size, const T* __restrict__ x,
                                 T* __restrict__ y) {
  __shared__ float partial[kWarpSize][kWarpSize + 1];  // [pixel lane][channel], padded
  const int groups = (channels + kWarpSize - 1) / kWarpSize;
  const int sample = static_cast<int>(blockIdx.x) / groups;
  const int first = (static_cast<int>(blockIdx.x) - sample * groups) * kWarpSize;
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int channel = first + tx;
  float sum = 0.0f;
  if (channel < channels) {
    const T* values = x + static_cast<long long>(sample) * plane_size * channels + channel;
    for (int p = ty; p < plane_size; p += kWarpSize) sum += to_float(values[p * channels]);
  }
  partial[ty][tx] = sum;
  __syncthreads();
  const float mean = warp_mean(partial[tx][ty], plane_size);
  if (tx == 0 && first + ty < channels) y[sample * channels + first + ty] = from_float<T>(mean);
}

// One thread per input element, dx stored in L; dy holds one value per plane.
template <Layout L, typename T>
__global__ void global_avg_pool_backward(PlaneLayout<L> planes, int count, const T* __restrict__ dy,
                                         T* __restrict__ dx, bool accumulate) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= count) return;
  const PlanePixel at = planes.locate(index);
  const float share = to_float(dy[at.sample * planes.channels + at.channel]) /
                      static_cast<float>(planes.plane_size);
  dx[index] = from_float<T>(accumulate ? to_float(dx[index]) + share : share);
}

}  // namespace

GlobalAvgPoolCuda::GlobalAvgPoolCuda(const GlobalAvgPoolSpec& spec, std::vector<Shape> input_shapes,
                                     const LayerOptions& options)
    : Layer(spec, std::move(input_shapes), options.dtype, shared_layout(options),
            shared_layout(options)),
      context_(&checked_context(options, "GlobalAvgPoolCuda", Precisions::F32OrBf16)),
      planes_(checked_int(output_shape().numel(), "GlobalAvgPoolCuda planes")),
      // The samples fold into the channels in NCHW (PlaneLayout).
      channels_(layout() == Layout::Nhwc ? static_cast<int>(output_shape().c()) : planes_),
      plane_size_(checked_int(this->input_shapes()[0].h() * this->input_shapes()[0].w(),
                              "GlobalAvgPoolCuda plane size")),
      count_(checked_int(this->input_shapes()[0].numel(), "GlobalAvgPoolCuda input elements")) {}

void GlobalAvgPoolCuda::forward(const ForwardArgs& args) {
  VDNN_EXPECTS(args.inputs.size() == 1 &&
                   view_matches(args.inputs[0], input_shapes()[0], dtype()) &&
                   view_matches(args.output, output_shape(), dtype()),
               "GlobalAvgPoolCuda::forward: views do not match the layer's shapes");
  const cudaStream_t stream = context_->compute_stream();
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    const T* x = device_data<T>(args.inputs[0]);
    T* y = device_data<T>(args.output);
    if (layout() == Layout::Nhwc) {
      const int groups = (channels_ + kWarpSize - 1) / kWarpSize;
      const unsigned int blocks = static_cast<unsigned int>(planes_ / channels_ * groups);
      global_avg_pool_forward_nhwc<<<blocks, dim3(kWarpSize, kWarpSize), 0, stream>>>(
          channels_, plane_size_, x, y);
    } else {
      const unsigned int blocks = (planes_ + kPlanesPerBlock - 1) / kPlanesPerBlock;
      global_avg_pool_forward<<<blocks, kBlockThreads, 0, stream>>>(planes_, plane_size_, x, y);
    }
  });
  VDNN_CHECK_LAUNCH();
}

void GlobalAvgPoolCuda::backward(const BackwardArgs& args) {
  VDNN_EXPECTS(
      args.grad_inputs.size() == 1 && view_matches(args.grad_output, output_shape(), dtype()),
      "GlobalAvgPoolCuda::backward: views do not match the layer's shapes");
  const GradTarget& target = args.grad_inputs[0];
  if (target.tensor.empty()) return;
  VDNN_EXPECTS(view_matches(target.tensor, input_shapes()[0], dtype()),
               "GlobalAvgPoolCuda::backward: input gradient view does not match the input shape");
  with_element_type(dtype(), [&](auto element) {
    using T = DeviceElementOf<decltype(element)>;
    with_layout(layout(), [&](auto tag) {
      constexpr Layout kLayout = decltype(tag)::value;
      global_avg_pool_backward<kLayout>
          <<<blocks_for(count_), kBlockThreads, 0, context_->compute_stream()>>>(
              PlaneLayout<kLayout>{channels_, plane_size_}, count_,
              device_data<T>(args.grad_output), device_data<T>(target.tensor), target.accumulate);
    });
  });
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::layers::cuda
