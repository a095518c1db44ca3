// fill_nan_async: poisons device memory with NaN, so that a read of memory nobody wrote since
// (a freed or not-yet-produced tensor) shows up as NaN in the loss instead of as plausible data.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace vdnn::runtime::cuda {

/// Enqueues on `stream` a kernel that fills the `bytes` bytes at device address `ptr` with a quiet
/// NaN bit pattern (0x7FFF per 2 bytes: a NaN read as BF16, F32 or F64). Returns without waiting;
/// nothing for zero bytes. Throws InvalidArgument for the NULL stream, a null `ptr` with bytes > 0,
/// or `ptr` or `bytes` not a multiple of 2; CudaError when the launch fails.
void fill_nan_async(cudaStream_t stream, void* ptr, std::size_t bytes);

}  // namespace vdnn::runtime::cuda
