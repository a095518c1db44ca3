// KernelGrid: the launch geometry of the one-thread-per-element kernels of layers/cuda/.
#pragma once

#include <cstdint>

namespace vdnn::layers::cuda {

/// Threads per block of the element-wise and per-pixel kernels.
inline constexpr int kBlockThreads = 256;

/// Blocks of kBlockThreads that cover `count` (> 0, at most INT_MAX) threads.
constexpr unsigned int blocks_for(std::int64_t count) noexcept {
  return static_cast<unsigned int>((count + kBlockThreads - 1) / kBlockThreads);
}

}  // namespace vdnn::layers::cuda
