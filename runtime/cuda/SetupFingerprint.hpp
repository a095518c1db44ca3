// SetupFingerprint: what measured setup results (convolution algorithms, cost models) on a CUDA
// device are valid for, as the setup cache's fingerprint (runtime/DiskCache.hpp).
#pragma once

#include <string>

namespace vdnn::runtime::cuda {

/// One line naming device `device` (name, compute capability), the driver (the first line of
/// /proc/driver/nvidia/version when readable, else cudaDriverGetVersion), the CUDA runtime, cuDNN
/// and cuBLAS versions, and the cache format. Any change of these changes the fingerprint, and so
/// every cache file name. Throws runtime::CudaError when a query fails.
std::string setup_fingerprint(int device);

}  // namespace vdnn::runtime::cuda
