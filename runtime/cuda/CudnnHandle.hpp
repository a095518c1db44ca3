// CudnnHandle: RAII owner of one cuDNN handle bound to one stream.
#pragma once

#include <cudnn.h>

#include "runtime/UniqueHandle.hpp"

namespace vdnn::runtime::cuda {

namespace detail {
struct CudnnDeleter {
  static void destroy(cudnnHandle_t handle) noexcept;
};
}  // namespace detail

/// Owns a cuDNN handle created on the calling thread's current device, every call through which
/// runs on the stream given at construction. The stream must outlive the handle and belong to the
/// same device. Move-only. Not thread-safe: use it from one host thread at a time.
class CudnnHandle {
 public:
  /// Throws InvalidArgument for the NULL stream, CudaError when cuDNN fails.
  explicit CudnnHandle(cudaStream_t stream);

  /// The raw handle, a non-owning view valid while this object lives. Null only after a move.
  cudnnHandle_t get() const noexcept { return handle_.get(); }

 private:
  UniqueHandle<cudnnHandle_t, detail::CudnnDeleter> handle_;
};

}  // namespace vdnn::runtime::cuda
