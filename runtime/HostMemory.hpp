// How much physical host memory this process may still use, for checks made before allocating.
#pragma once

#include <cstdint>
#include <string>

namespace vdnn::runtime {

/// Host memory available now, and where the number comes from (for messages).
struct HostMemory {
  std::uint64_t available_bytes = 0;
  std::string source;  // e.g. "MemAvailable in /proc/meminfo"
};

/// The smaller of the kernel's estimate of memory available without swapping (MemAvailable in
/// /proc/meminfo; sysconf's free pages where that is missing) and, inside a cgroup v2 with a
/// memory limit, what the limit leaves. available_bytes is UINT64_MAX when nothing can be read.
/// Never throws on a missing or malformed file. Thread-safe.
HostMemory available_host_memory();

}  // namespace vdnn::runtime
