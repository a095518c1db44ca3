// The host's bf16 conversions: rounding to nearest even, specials, and the element size.
#include "runtime/BFloat16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/Shape.hpp"
#include "runtime/TensorView.hpp"

namespace vdnn::runtime {
namespace {

float from_bits(std::uint32_t u) {
  float f = 0.0f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(BFloat16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(to_bfloat16(1.0f).bits, 0x3F80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: the tie goes to the even mantissa (1).
  EXPECT_EQ(to_bfloat16(from_bits(0x3F808000u)).bits, 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up to the even one.
  EXPECT_EQ(to_bfloat16(from_bits(0x3F818000u)).bits, 0x3F82);
  // Just above halfway rounds up; just below rounds down.
  EXPECT_EQ(to_bfloat16(from_bits(0x3F808001u)).bits, 0x3F81);
  EXPECT_EQ(to_bfloat16(from_bits(0x3F807FFFu)).bits, 0x3F80);
  EXPECT_EQ(to_bfloat16(-2.5f).bits, 0xC020);
}

TEST(BFloat16, KeepsSpecialsAndRoundsOverflowToInfinity) {
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits only in the low bits must not round to infinity.
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(from_bits(0x7F800001u)))));
  EXPECT_EQ(to_float(to_bfloat16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(to_bfloat16(std::numeric_limits<float>::max())),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(to_float(to_bfloat16(-0.0f)), 0.0f);
  EXPECT_TRUE(std::signbit(to_float(to_bfloat16(-0.0f))));
}

TEST(BFloat16, RelativeErrorIsAtMostHalfAnUlp) {
  for (float x = 1e-3f; x < 1e3f; x *= 1.0137f) {
    EXPECT_LE(std::fabs(round_to_bfloat16(x) - x), std::ldexp(std::fabs(x), -8)) << x;
  }
}

TEST(BFloat16, BulkConversionsMatchTheScalarOnes) {
  const std::vector<float> values{0.1f, -3.75f, 1e-20f, 65504.0f, 3.14159f};
  std::vector<BFloat16> half(values.size());
  std::vector<float> back(values.size());
  to_bfloat16(values.data(), half.data(), values.size());
  to_float(half.data(), back.data(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back[i], round_to_bfloat16(values[i]));
}

TEST(BFloat16, IsTwoBytesAndNamed) {
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_STREQ(dtype_name(DType::BF16), "bf16");
  EXPECT_EQ(Shape({2, 3}).bytes(DType::BF16), 12u);
  BFloat16 storage[2];
  const TensorView view{storage, Shape{2}, DType::BF16};
  EXPECT_EQ(view.as<BFloat16>(), storage);
  EXPECT_THROW(view.as<float>(), InvalidArgument);
}

}  // namespace
}  // namespace vdnn::runtime
