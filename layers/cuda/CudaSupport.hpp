// Internal helpers of the CUDA layers: the options check every constructor makes, and the owners
// of the small device and pinned buffers a layer allocates once, at construction.
#pragma once

#include <cstddef>
#include <string_view>

#include "layers/Layer.hpp"
#include "runtime/UniqueHandle.hpp"

namespace vdnn::layers::cuda {

/// The device context a CUDA layer named `layer` runs on, made current on the calling thread.
/// Throws runtime::InvalidArgument unless options.dtype is F32 and options.cuda is set,
/// runtime::CudaError when the device cannot be selected.
runtime::cuda::DeviceContext& checked_context(std::string_view layer, const LayerOptions& options);

namespace detail {
struct DeviceAllocator {
  static void* allocate(std::size_t bytes);  // cudaMalloc on the current device
  static void destroy(void* ptr) noexcept;
};
struct PinnedAllocator {
  static void* allocate(std::size_t bytes);  // cudaHostAlloc, page-locked
  static void destroy(void* ptr) noexcept;
};
}  // namespace detail

/// Owns `bytes` of memory from `Allocator`, freed on destruction (errors there are logged, never
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

/// Device memory: read and written by kernels only.
using DeviceBuffer = RawBuffer<detail::DeviceAllocator>;
/// Page-locked host memory: the end of device-to-host copies that must not block the host.
using PinnedBuffer = RawBuffer<detail::PinnedAllocator>;

}  // namespace vdnn::layers::cuda
