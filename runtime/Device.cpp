// Device queries; the CUDA runtime is consulted only when vdnn is built with it.
#include "runtime/Device.hpp"

#include "runtime/Error.hpp"

#ifdef VDNN_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "runtime/cuda/CudaCheck.hpp"
#endif

namespace vdnn::runtime {

int cuda_device_count() noexcept {
#ifdef VDNN_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    // No driver or no device is a normal answer here (count 0), not an error: clear the thread's
    // last-error so a later VDNN_CHECK_LAUNCH does not report it.
    static_cast<void>(cudaGetLastError());
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

namespace {

#ifdef VDNN_HAVE_CUDA
void expect_device(int ordinal) {
  const int count = cuda_device_count();
  VDNN_EXPECTS(ordinal >= 0 && ordinal < count, "no CUDA device " + std::to_string(ordinal) + ": " +
                                                    std::to_string(count) + " visible");
}
#else
[[noreturn]] void no_cuda(int ordinal) {
  throw InvalidArgument("no CUDA device " + std::to_string(ordinal) +
                        ": vdnn was built without CUDA");
}
#endif

}  // namespace

std::string cuda_device_name(int ordinal) {
#ifdef VDNN_HAVE_CUDA
  expect_device(ordinal);
  cudaDeviceProp properties{};
  VDNN_CHECK_CUDA(cudaGetDeviceProperties(&properties, ordinal));
  return properties.name;
#else
  no_cuda(ordinal);
#endif
}

std::uint64_t cuda_free_memory(int ordinal) {
#ifdef VDNN_HAVE_CUDA
  expect_device(ordinal);
  VDNN_CHECK_CUDA(cudaSetDevice(ordinal));
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  VDNN_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
#else
  no_cuda(ordinal);
#endif
}

const char* link_kind(const PeerLink& link) noexcept {
  if (!link.access) return "none";
  return link.native_atomics ? "NVLink" : "PCIe";
}

PeerLink cuda_peer_link(int from, int to) {
#ifdef VDNN_HAVE_CUDA
  expect_device(from);
  expect_device(to);
  VDNN_EXPECTS(from != to, "GPU " + std::to_string(from) + " is not its own peer");
  const auto attribute = [&](cudaDeviceP2PAttr what) {
    int value = 0;
    VDNN_CHECK_CUDA(cudaDeviceGetP2PAttribute(&value, what, from, to));
    return value;
  };
  return {attribute(cudaDevP2PAttrAccessSupported) != 0,
          attribute(cudaDevP2PAttrNativeAtomicSupported) != 0,
          attribute(cudaDevP2PAttrPerformanceRank)};
#else
  static_cast<void>(to);
  no_cuda(from);
#endif
}

int cuda_device_of(const void* ptr) noexcept {
#ifdef VDNN_HAVE_CUDA
  if (ptr == nullptr || cuda_device_count() == 0) return -1;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // as in cuda_device_count
    return -1;
  }
  const bool device =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return device ? attributes.device : -1;
#else
  static_cast<void>(ptr);
  return -1;
#endif
}

}  // namespace vdnn::runtime
