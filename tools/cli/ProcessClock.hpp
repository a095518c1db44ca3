// ProcessClock: seconds since this process started, as the kernel recorded its start (so the
// loading of the CUDA libraries before main counts), for `first_step_end_seconds`.
#pragma once

namespace vdnn::tools {

/// Seconds from the process's start to now (Linux: /proc/self/stat's start time against
/// CLOCK_BOOTTIME, 10 ms resolution); negative where that cannot be read.
double seconds_since_process_start();

}  // namespace vdnn::tools
