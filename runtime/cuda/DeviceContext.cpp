// Construction and teardown of a per-device context.
#include "runtime/cuda/DeviceContext.hpp"

#include <string>

#include "runtime/Device.hpp"
#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

// Runs before any member is constructed, so that the streams and handles land on `ordinal`.
int select_device(int ordinal) {
  const int count = cuda_device_count();
  VDNN_EXPECTS(ordinal >= 0 && ordinal < count, "no CUDA device " + std::to_string(ordinal) + ": " +
                                                    std::to_string(count) + " visible");
  VDNN_CHECK_CUDA(cudaSetDevice(ordinal));
  return ordinal;
}

// cuBLAS's recommended workspace for Hopper.
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

}  // namespace

DeviceContext::DeviceContext(int ordinal)
    : ordinal_(select_device(ordinal)),
      cublas_workspace_(workspace_memory_, kCublasWorkspaceBytes),
      cudnn_(compute_.get()),
      cublas_(compute_.get()) {
  VDNN_CHECK_CUBLAS(
      cublasSetWorkspace(cublas_.get(), cublas_workspace_.data(), cublas_workspace_.bytes()));
}

DeviceContext::~DeviceContext() { VDNN_CHECK_CUDA_NOTHROW(cudaSetDevice(ordinal_)); }

void DeviceContext::make_current() const { VDNN_CHECK_CUDA(cudaSetDevice(ordinal_)); }

}  // namespace vdnn::runtime::cuda
