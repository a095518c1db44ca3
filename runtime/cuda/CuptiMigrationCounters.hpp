// CUPTI's unified-memory counters as MigrationCounters: the bytes the driver migrated each way for
// managed memory on one device, the GPU page faults it served, and how long the transfers took.
#pragma once

#include <memory>
#include <string>

#include "runtime/MigrationCounters.hpp"

namespace vdnn::runtime::cuda {

/// Starts CUPTI's unified-memory counter collection for device `ordinal` (activity kind
/// UNIFIED_MEMORY_COUNTER: host-to-device bytes, device-to-host bytes and GPU page faults, scope
/// "process, single device") and returns the collector; counting starts now. collect() flushes
/// CUPTI's buffers and sums the records that arrived since the previous collect() (or since
/// creation). Make it before the managed allocations it is to watch: on the test machine CUPTI
/// reported nothing for memory allocated earlier (Note [Collector before allocations], .cpp).
/// The collector owns CUPTI's activity state until it is destroyed; its destructor flushes,
/// disables the activity kind and never throws, after which a new collector may be made.
///
/// CUPTI is process-wide, so at most one collector lives at a time. Returns nullptr and, when
/// `why_not` is not null, sets *why_not to a short sentence when the counters are unavailable:
/// no CUDA device, another collector alive in this process, or CUPTI refusing (unified-memory
/// profiling not supported on this device, driver or platform; insufficient privileges; another
/// profiler attached). Throws InvalidArgument when `ordinal` is not in [0, cuda_device_count()),
/// CudaError for any other CUDA or CUPTI failure. Thread-safe.
std::unique_ptr<MigrationCounters> make_cupti_migration_counters(int ordinal, std::string* why_not);

}  // namespace vdnn::runtime::cuda
