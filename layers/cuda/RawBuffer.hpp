// RawBuffer: owners of the small device and pinned host buffers a CUDA layer allocates once, at
// construction (saved statistics, labels, loss scratch). Internal to layers/cuda/.
#pragma once

#include <cstddef>

#include "runtime/UniqueHandle.hpp"

namespace vdnn::layers::cuda {

namespace detail {
struct DeviceAllocator {
  static void* allocate(std::size_t bytes);  // cudaMalloc on the current device
  static void destroy(void* ptr) noexcept;
};
struct PinnedAllocator {
  static void* allocate(std::size_t bytes);  // cudaHostAlloc: page-locked host memory
  static void destroy(void* ptr) noexcept;
};
}  // namespace detail

/// Owns `bytes` of memory from `Allocator`, freed on destruction (a failure there is logged, never
/// thrown). The constructor throws runtime::CudaError when the allocation fails. Move-only.
template <typename Allocator>
class RawBuffer {
 public:
  explicit RawBuffer(std::size_t bytes) : ptr_(Allocator::allocate(bytes)) {}

  /// The memory as T*; non-owning, valid while this object lives.
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(ptr_.get());
  }

 private:
  runtime::UniqueHandle<void*, Allocator> ptr_;
};

/// Device memory, for kernels and cuDNN.
using DeviceBuffer = RawBuffer<detail::DeviceAllocator>;
/// Page-locked host memory: the host end of copies that must not block the host.
using PinnedBuffer = RawBuffer<detail::PinnedAllocator>;

}  // namespace vdnn::layers::cuda
