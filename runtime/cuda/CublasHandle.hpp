// CublasHandle: RAII owner of one cuBLAS handle bound to one stream.
#pragma once

#include <cublas_v2.h>

#include "runtime/UniqueHandle.hpp"

namespace vdnn::runtime::cuda {

namespace detail {
struct CublasDeleter {
  static void destroy(cublasHandle_t handle) noexcept;
};
}  // namespace detail

/// Owns a cuBLAS handle created on the calling thread's current device, every call through which
/// runs on the stream given at construction. The stream must outlive the handle and belong to the
/// same device, which must be current again when the handle is destroyed (cuBLAS requires it).
/// Move-only. Not thread-safe: use it from one host thread at a time.
class CublasHandle {
 public:
  /// Throws InvalidArgument for the NULL stream, CudaError when cuBLAS fails.
  explicit CublasHandle(cudaStream_t stream);

  /// The raw handle, a non-owning view valid while this object lives. Null only after a move.
  cublasHandle_t get() const noexcept { return handle_.get(); }

 private:
  UniqueHandle<cublasHandle_t, detail::CublasDeleter> handle_;
};

}  // namespace vdnn::runtime::cuda
