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

}  // namespace

DeviceContext::DeviceContext(int ordinal)
    : ordinal_(select_device(ordinal)), cudnn_(compute_.get()), cublas_(compute_.get()) {}

DeviceContext::~DeviceContext() { VDNN_CHECK_CUDA_NOTHROW(cudaSetDevice(ordinal_)); }

void DeviceContext::make_current() const { VDNN_CHECK_CUDA(cudaSetDevice(ordinal_)); }

}  // namespace vdnn::runtime::cuda
