// Bulk conversions between float and bf16 on the host.
#include "runtime/BFloat16.hpp"

namespace vdnn::runtime {

void to_bfloat16(const float* src, BFloat16* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = to_bfloat16(src[i]);
}

void to_float(const BFloat16* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = to_float(src[i]);
}

}  // namespace vdnn::runtime
