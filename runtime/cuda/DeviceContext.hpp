// DeviceContext: everything vdnn needs to run on one CUDA device: the compute stream, the two
// copy streams of the offload scheme, and cuDNN/cuBLAS handles bound to the compute stream.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "runtime/MemoryResource.hpp"
#include "runtime/cuda/CublasHandle.hpp"
#include "runtime/cuda/CudaMemoryResource.hpp"
#include "runtime/cuda/CudaStream.hpp"
#include "runtime/cuda/CudnnHandle.hpp"

namespace vdnn::runtime::cuda {

/// Owns the streams and library handles of one device. Several contexts may coexist in a process,
/// on the same or on different devices; none is global. Neither copyable nor movable, so the raw
/// views it hands out stay valid for its whole lifetime. The accessors are thread-safe; what they
/// return keeps the thread-safety of its own type (the cuDNN and cuBLAS handles: one host thread at
/// a time).
class DeviceContext {
 public:
  /// Makes `ordinal` the calling thread's current device (and leaves it so), then creates the
  /// three streams and the two handles on it. Throws InvalidArgument when `ordinal` is not in
  /// [0, cuda_device_count()), CudaError when CUDA, cuDNN or cuBLAS fail.
  explicit DeviceContext(int ordinal);
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;
  DeviceContext(DeviceContext&&) = delete;
  DeviceContext& operator=(DeviceContext&&) = delete;
  /// Makes this device current on the calling thread (cuBLAS requires it), then destroys the
  /// handles before the streams they are bound to. Does not wait for queued work. Never throws.
  ~DeviceContext();

  int ordinal() const noexcept { return ordinal_; }
  /// Makes this device the calling thread's current device, as needed before enqueuing work from a
  /// thread whose current device is another. Throws CudaError.
  void make_current() const;

  /// Stream of the kernels and of the cuDNN/cuBLAS calls. Non-blocking; owned by the context.
  cudaStream_t compute_stream() const noexcept { return compute_.get(); }
  /// Stream of device-to-host copies (offloads). Non-blocking; owned by the context.
  cudaStream_t offload_stream() const noexcept { return offload_.get(); }
  /// Stream of host-to-device copies (prefetches). Non-blocking; owned by the context.
  cudaStream_t prefetch_stream() const noexcept { return prefetch_.get(); }
  /// cuDNN handle bound to compute_stream(); owned by the context.
  cudnnHandle_t cudnn() const noexcept { return cudnn_.get(); }
  /// cuBLAS handle bound to compute_stream(); owned by the context.
  cublasHandle_t cublas() const noexcept { return cublas_.get(); }

 private:
  // Declaration order is construction order; destruction runs in reverse, so the handles go
  // before the streams they are bound to.
  int ordinal_;
  CudaStream compute_;
  CudaStream offload_;
  CudaStream prefetch_;
  // cuBLAS's workspace, given at setup so that no GEMM ever allocates on its own.
  DeviceMemoryResource workspace_memory_;
  Buffer cublas_workspace_;
  CudnnHandle cudnn_;
  CublasHandle cublas_;
};

}  // namespace vdnn::runtime::cuda
