// fill_nan_async: poisons device memory with quiet NaNs (the --debug-poison switch).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace vdnn::runtime::cuda {

/// Enqueues on `stream` a kernel that writes quiet NaN floats over `bytes` bytes at `ptr`
/// (device memory; trailing bytes beyond a whole float are left). Throws CudaError on a failed
/// launch.
void fill_nan_async(cudaStream_t stream, void* ptr, std::size_t bytes);

}  // namespace vdnn::runtime::cuda
