// The setup cache's fingerprint of a CUDA device: device, driver and library versions.
#include "runtime/cuda/SetupFingerprint.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <library_types.h>

#include <fstream>

#include "runtime/DiskCache.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

// The kernel module's release line (e.g. "NVRM version: NVIDIA UNIX x86_64 Kernel Module
// 570.86.15 ..."): finer than cudaDriverGetVersion, which names only the CUDA API level.
std::string driver_release() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (in && std::getline(in, line) && !line.empty()) return line;
  int version = 0;
  VDNN_CHECK_CUDA(cudaDriverGetVersion(&version));
  return "CUDA driver " + std::to_string(version);
}

}  // namespace

std::string setup_fingerprint(int device) {
  cudaDeviceProp prop{};
  VDNN_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  int runtime_version = 0;
  VDNN_CHECK_CUDA(cudaRuntimeGetVersion(&runtime_version));
  int cublas[3] = {0, 0, 0};
  VDNN_CHECK_CUBLAS(cublasGetProperty(MAJOR_VERSION, &cublas[0]));
  VDNN_CHECK_CUBLAS(cublasGetProperty(MINOR_VERSION, &cublas[1]));
  VDNN_CHECK_CUBLAS(cublasGetProperty(PATCH_LEVEL, &cublas[2]));
  return std::string("cuda device \"") + prop.name + "\" sm " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + "; driver \"" + driver_release() + "\"; runtime " +
         std::to_string(runtime_version) + "; cudnn " + std::to_string(cudnnGetVersion()) +
         "; cublas " + std::to_string(cublas[0]) + "." + std::to_string(cublas[1]) + "." +
         std::to_string(cublas[2]) + "; format " + std::to_string(kDiskCacheFormat);
}

}  // namespace vdnn::runtime::cuda
