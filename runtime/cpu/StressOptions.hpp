// StressOptions: seeded random delays that CpuStream inserts before each operation, so tests can
// explore many interleavings of the streams' worker threads. See Note [CPU stream emulation].
#pragma once

#include <chrono>
#include <cstdint>

namespace vdnn::runtime::cpu {

/// When `enabled`, a CpuStream sleeps before every operation (task, copy, wait, event record) for
/// a duration in [0, max_delay] drawn from (seed, stream name, operation index). The same seed
/// gives the same delays; a different seed gives a different interleaving.
struct StressOptions {
  bool enabled = false;
  std::uint64_t seed = 0;
  std::chrono::microseconds max_delay{200};
};

}  // namespace vdnn::runtime::cpu
