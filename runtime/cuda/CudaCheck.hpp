// The check-macro family for CUDA runtime, cuDNN and cuBLAS calls: each failure becomes a
// runtime::CudaError carrying the statement, file, line and the library's error string.
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "runtime/Error.hpp"

namespace vdnn::runtime::cuda::detail {

// Out of line and cold, so a check costs one compare at each call site. The CUDA overloads also
// clear the thread's last-error, so a later VDNN_CHECK_LAUNCH does not report this failure again.
[[noreturn]] void throw_error(cudaError_t status, const char* statement, const char* file,
                              int line);
[[noreturn]] void throw_error(cudnnStatus_t status, const char* statement, const char* file,
                              int line);
[[noreturn]] void throw_error(cublasStatus_t status, const char* statement, const char* file,
                              int line);
void log_error(cudaError_t status, const char* statement, const char* file, int line) noexcept;
void log_error(cudnnStatus_t status, const char* statement, const char* file, int line) noexcept;
void log_error(cublasStatus_t status, const char* statement, const char* file, int line) noexcept;

}  // namespace vdnn::runtime::cuda::detail

// Evaluates `stmt` once as a `status_type`; on anything but `success` calls detail::`handler`.
// `text` is the caller's statement as written (stringized before macro expansion).
#define VDNN_DETAIL_CHECK(status_type, success, handler, stmt, text)                         \
  do {                                                                                       \
    const status_type vdnn_check_status = (stmt);                                            \
    if (vdnn_check_status != (success))                                                      \
      ::vdnn::runtime::cuda::detail::handler(vdnn_check_status, (text), __FILE__, __LINE__); \
  } while (false)

/// Runs a CUDA runtime call; throws vdnn::runtime::CudaError unless it returns cudaSuccess.
#define VDNN_CHECK_CUDA(stmt) VDNN_DETAIL_CHECK(cudaError_t, cudaSuccess, throw_error, stmt, #stmt)
/// Runs a cuDNN call; throws vdnn::runtime::CudaError unless it returns CUDNN_STATUS_SUCCESS.
#define VDNN_CHECK_CUDNN(stmt) \
  VDNN_DETAIL_CHECK(cudnnStatus_t, CUDNN_STATUS_SUCCESS, throw_error, stmt, #stmt)
/// Runs a cuBLAS call; throws vdnn::runtime::CudaError unless it returns CUBLAS_STATUS_SUCCESS.
#define VDNN_CHECK_CUBLAS(stmt) \
  VDNN_DETAIL_CHECK(cublasStatus_t, CUBLAS_STATUS_SUCCESS, throw_error, stmt, #stmt)

/// Goes right after every kernel launch: throws vdnn::runtime::CudaError when the launch failed
/// (cudaGetLastError, which also clears the error). Errors raised while the kernel runs surface
/// at the next synchronizing call instead.
#define VDNN_CHECK_LAUNCH()                                                    \
  VDNN_DETAIL_CHECK(cudaError_t, cudaSuccess, throw_error, cudaGetLastError(), \
                    "kernel launch (cudaGetLastError())")

/// For destructors and other noexcept paths: on failure, prints the same message to stderr and
/// continues. Never throws.
#define VDNN_CHECK_CUDA_NOTHROW(stmt) \
  VDNN_DETAIL_CHECK(cudaError_t, cudaSuccess, log_error, stmt, #stmt)
/// cuDNN counterpart of VDNN_CHECK_CUDA_NOTHROW.
#define VDNN_CHECK_CUDNN_NOTHROW(stmt) \
  VDNN_DETAIL_CHECK(cudnnStatus_t, CUDNN_STATUS_SUCCESS, log_error, stmt, #stmt)
/// cuBLAS counterpart of VDNN_CHECK_CUDA_NOTHROW.
#define VDNN_CHECK_CUBLAS_NOTHROW(stmt) \
  VDNN_DETAIL_CHECK(cublasStatus_t, CUBLAS_STATUS_SUCCESS, log_error, stmt, #stmt)
