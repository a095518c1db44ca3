// The NaN-fill kernel behind --debug-poison.
#include "runtime/cuda/FillNan.hpp"

#include <algorithm>

#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

__global__ void fill_nan_kernel(float* data, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = __int_as_float(0x7fc00000);
  }
}

}  // namespace

void fill_nan_async(cudaStream_t stream, void* ptr, std::size_t bytes) {
  const std::size_t count = bytes / sizeof(float);
  if (count == 0) return;
  constexpr unsigned kThreads = 256;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 4096));
  fill_nan_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(ptr), count);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::runtime::cuda
