// MigrationCounters: what the driver moved for managed (unified) memory between two readings:
// bytes each way, page faults, and the time the transfers took. Backend-neutral; the CUDA backend
// reads CUPTI's unified-memory counters (runtime/cuda/CuptiMigrationCounters.hpp).
#pragma once

#include <cstdint>

namespace vdnn::runtime {

/// Unified-memory traffic over an interval.
struct MigrationTraffic {
  std::uint64_t to_device_bytes = 0;  // host -> device migrations (prefetches and demand faults)
  std::uint64_t to_host_bytes = 0;    // device -> host migrations (evictions)
  std::uint64_t gpu_page_faults = 0;  // GPU page-fault groups the driver served
  double to_device_seconds = 0.0;     // summed durations of the host -> device transfers
  double to_host_seconds = 0.0;       // summed durations of the device -> host transfers

  MigrationTraffic& operator+=(const MigrationTraffic& more) noexcept {
    to_device_bytes += more.to_device_bytes;
    to_host_bytes += more.to_host_bytes;
    gpu_page_faults += more.gpu_page_faults;
    to_device_seconds += more.to_device_seconds;
    to_host_seconds += more.to_host_seconds;
    return *this;
  }
};

/// Counts the migrations of managed memory on one device. Used from one host thread.
class MigrationCounters {
 public:
  MigrationCounters() = default;
  MigrationCounters(const MigrationCounters&) = delete;
  MigrationCounters& operator=(const MigrationCounters&) = delete;
  MigrationCounters(MigrationCounters&&) = delete;
  MigrationCounters& operator=(MigrationCounters&&) = delete;
  virtual ~MigrationCounters() = default;

  /// What moved since the previous call (or since construction). Call only once the streams that
  /// touch managed memory have been synchronized. Throws runtime::Error on a driver failure.
  virtual MigrationTraffic collect() = 0;
};

}  // namespace vdnn::runtime
