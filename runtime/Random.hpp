// Counter-based random numbers: the same (seed, stream, index) always gives the same value, on
// any thread and any backend, so initialization and dropout masks are reproducible.
#pragma once

#include <cmath>
#include <cstdint>

namespace vdnn::runtime {

/// SplitMix64 finalizer: a bijective mix of 64 bits.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) from (seed, stream, index).
inline double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) noexcept {
  const std::uint64_t bits = mix64(mix64(mix64(seed) ^ stream) ^ index);
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);  // 53 bits
}

/// Standard normal from (seed, stream, index) by Box-Muller over two uniforms.
inline double normal01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) noexcept {
  const double u1 = 1.0 - uniform01(seed, stream, 2 * index);  // (0, 1]: log is finite
  const double u2 = uniform01(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace vdnn::runtime
