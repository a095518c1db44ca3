// Backend-neutral queries about the CUDA devices of this machine (for the CLI's `--device auto`
// and `vdnn inspect --devices`).
// Includes no CUDA header and links in builds without CUDA, where no device is ever reported.
#pragma once

#include <cstdint>
#include <string>

namespace vdnn::runtime {

/// Number of CUDA devices visible to this process. 0 when vdnn was built without CUDA, when no
/// driver is installed, or when the query fails for any other reason. Never throws, never aborts.
/// Thread-safe.
int cuda_device_count() noexcept;

/// The marketing name of CUDA device `ordinal` (e.g. "NVIDIA H200"). Throws InvalidArgument when
/// `ordinal` is not in [0, cuda_device_count()) (always, without CUDA), CudaError when the query
/// fails. Thread-safe.
std::string cuda_device_name(int ordinal);

/// Free memory of CUDA device `ordinal` now, in bytes (what cudaMemGetInfo reports on it). Makes
/// `ordinal` the calling thread's device. Throws as cuda_device_name.
std::uint64_t cuda_free_memory(int ordinal);

/// How CUDA device `from` reaches device `to` (cudaDeviceGetP2PAttribute), for the peer tier's
/// topology (Note [Peer tier]).
struct PeerLink {
  bool access = false;          // peer access is supported (cudaDevP2PAttrAccessSupported)
  bool native_atomics = false;  // atomics over the link: NVLink, as the runtime can tell
  int performance_rank = 0;     // the driver's relative rank of the link, 0 the fastest
};
/// "NVLink" (peer access with native atomics), "PCIe" (peer access without) or "none".
const char* link_kind(const PeerLink& link) noexcept;

/// Throws InvalidArgument when `from` or `to` is not a device or they are the same (always,
/// without CUDA), CudaError when the query fails. Thread-safe.
PeerLink cuda_peer_link(int from, int to);

/// The ordinal of the CUDA device whose memory `ptr` points into (device memory, or managed memory
/// allocated there), or -1: host memory (pageable or pinned), null, or a build or machine without
/// CUDA. Never throws. Thread-safe.
int cuda_device_of(const void* ptr) noexcept;

}  // namespace vdnn::runtime
