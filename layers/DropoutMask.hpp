// DropoutMask: the keep/drop draw of inverted dropout, one definition for every backend, so CPU
// and CUDA masks are bitwise identical (host and device code; no CUDA header needed).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define VDNN_DROPOUT_HOST_DEVICE __host__ __device__
#else
#define VDNN_DROPOUT_HOST_DEVICE
#endif

namespace vdnn::layers::dropout {

/// splitmix64's finaliser.
VDNN_DROPOUT_HOST_DEVICE constexpr std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// The stream state of one (seed, step).
VDNN_DROPOUT_HOST_DEVICE constexpr std::uint64_t state(std::uint64_t seed, std::uint64_t step) {
  return mix(mix(seed) ^ step);
}

/// True when element `i` is kept: the top 53 bits of output i of the splitmix64 stream at `state`,
/// as u in [0, 1), are at least p.
VDNN_DROPOUT_HOST_DEVICE inline bool keep(std::uint64_t state, std::int64_t i, double p) {
  constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
  const std::uint64_t bits = mix(state + (static_cast<std::uint64_t>(i) + 1) * kGolden);
  return static_cast<double>(bits >> 11) * 0x1.0p-53 >= p;
}

}  // namespace vdnn::layers::dropout

#undef VDNN_DROPOUT_HOST_DEVICE
