// The NaN-fill kernel behind fill_nan_async.
#include "runtime/cuda/FillNan.hpp"

#include <algorithm>
#include <cstdint>

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

// A quiet NaN as a bf16; two side by side are one as a float, four as a double (exponent all ones,
// mantissa not zero), so the poison works whatever the element type.
constexpr std::uint16_t kQuietNan = 0x7FFFu;

__global__ void fill_nan_kernel(std::uint16_t* words, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    words[i] = kQuietNan;
  }
}

}  // namespace

void fill_nan_async(cudaStream_t stream, void* ptr, std::size_t bytes) {
  constexpr std::size_t kWord = sizeof(std::uint16_t);
  VDNN_EXPECTS(stream != nullptr, "vdnn never enqueues work on the NULL stream");
  if (bytes == 0) return;
  VDNN_EXPECTS(ptr != nullptr, "fill_nan_async: null pointer");
  VDNN_EXPECTS(bytes % kWord == 0 && reinterpret_cast<std::uintptr_t>(ptr) % kWord == 0,
               "fill_nan_async: pointer and size must be multiples of 2 bytes");
  constexpr unsigned kBlock = 256;
  constexpr std::size_t kMaxBlocks = 65536;
  const std::size_t count = bytes / kWord;
  const auto blocks = static_cast<unsigned>(std::min((count + kBlock - 1) / kBlock, kMaxBlocks));
  fill_nan_kernel<<<blocks, kBlock, 0, stream>>>(static_cast<std::uint16_t*>(ptr), count);
  VDNN_CHECK_LAUNCH();
}

}  // namespace vdnn::runtime::cuda
