// CudaStream: RAII owner of one non-blocking CUDA stream.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/UniqueHandle.hpp"

namespace vdnn::runtime::cuda {

namespace detail {
struct StreamDeleter {
  static void destroy(cudaStream_t stream) noexcept;
};
}  // namespace detail

/// Owns a stream created with cudaStreamNonBlocking on the calling thread's current device, so it
/// never synchronizes with the legacy NULL stream. Move-only; the destructor does not wait for
/// queued work (CUDA finishes it, then releases the stream). The stream may be used from any
/// thread; the object is not thread-safe to move or destroy concurrently.
class CudaStream {
 public:
  /// Throws CudaError when the stream cannot be created.
  CudaStream();

  /// The raw stream, a non-owning view valid while this object lives. Null only after a move.
  cudaStream_t get() const noexcept { return stream_.get(); }

 private:
  UniqueHandle<cudaStream_t, detail::StreamDeleter> stream_;
};

}  // namespace vdnn::runtime::cuda
