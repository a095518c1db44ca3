// BFloat16: the host's view of a bf16 element (Note [Precision]): its bits, and the conversions
// from and to float that the CPU backend's emulation and the tests use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vdnn::runtime {

/// One bf16 value: the upper 16 bits of an IEEE float (sign, 8 exponent bits, 7 mantissa bits).
struct BFloat16 {
  std::uint16_t bits = 0;
};

/// `value` rounded to the nearest bf16, ties to even (as __float2bfloat16_rn on the device); a
/// NaN stays a quiet NaN of the same sign, infinities stay infinite.
inline BFloat16 to_bfloat16(float value) noexcept {
  std::uint32_t u = 0;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
  const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return {static_cast<std::uint16_t>((u + rounding) >> 16)};
}

/// The float `value` stands for, exactly.
inline float to_float(BFloat16 value) noexcept {
  const std::uint32_t u = static_cast<std::uint32_t>(value.bits) << 16;
  float f = 0.0f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// `value` rounded to bf16 and back: what a store to a bf16 tensor keeps of it.
inline float round_to_bfloat16(float value) noexcept { return to_float(to_bfloat16(value)); }

/// dst[i] = to_bfloat16(src[i]) for i < n.
void to_bfloat16(const float* src, BFloat16* dst, std::size_t n) noexcept;
/// dst[i] = to_float(src[i]) for i < n.
void to_float(const BFloat16* src, float* dst, std::size_t n) noexcept;

}  // namespace vdnn::runtime
