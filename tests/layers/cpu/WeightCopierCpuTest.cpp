// The bf16 weight copies on the CPU backend (layers/WeightCopies.hpp): each copy is its master
// rounded to nearest even, ties to even, refreshed from the master's current values; a pair that
// is not an F32 master and a BF16 copy of one shape is refused.
#include "layers/cpu/WeightCopierCpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "layers/Registry.hpp"
#include "layers/WeightCopies.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/Error.hpp"

namespace vdnn::layers {
namespace {

using runtime::BFloat16;
using runtime::DType;
using runtime::Shape;
using runtime::TensorView;

TEST(WeightCopierCpu, RoundsEachMasterToNearestEvenOnEveryRefresh) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8 halfway between
  // 1 + 2^-7 and 1 + 2^-6: to even (1 + 2^-6); just above a tie rounds up.
  std::vector<float> weight = {
      1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -(1.0f + 0x1p-8f + 0x1p-20f), 0.0f, 3.0e38f, 1.0e-40f};
  std::vector<float> bias = {0.25f, -0.5f};
  std::vector<BFloat16> weight_copy(weight.size());
  std::vector<BFloat16> bias_copy(bias.size());
  const Shape w{2, 3};
  const Shape b{2};
  auto copier = make_weight_copier(
      Backend::Cpu, {},
      {{TensorView{weight.data(), w, DType::F32}, TensorView{weight_copy.data(), w, DType::BF16}},
       {TensorView{bias.data(), b, DType::F32}, TensorView{bias_copy.data(), b, DType::BF16}}});
  copier->refresh();
  const std::vector<float> expected = {1.0f, 1.0f + 0x1p-6f, -(1.0f + 0x1p-7f), 0.0f};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(runtime::to_float(weight_copy[i]), expected[i]) << i;
  }
  for (std::size_t i = 0; i < weight.size(); ++i) {
    EXPECT_EQ(runtime::to_float(weight_copy[i]), runtime::round_to_bfloat16(weight[i])) << i;
  }
  EXPECT_EQ(runtime::to_float(bias_copy[1]), -0.5f);
  weight[0] = 2.0f;  // the master changed (an update, a caller's write): the next refresh follows
  copier->refresh();
  EXPECT_EQ(runtime::to_float(weight_copy[0]), 2.0f);
}

TEST(WeightCopierCpu, RefusesPairsThatAreNotAnF32MasterAndABf16CopyOfOneShape) {
  std::vector<float> master(6);
  std::vector<BFloat16> copy(6);
  std::vector<float> wide(6);
  const TensorView m{master.data(), Shape{2, 3}, DType::F32};
  EXPECT_THROW(cpu::WeightCopierCpu({{m, TensorView{copy.data(), Shape{3, 2}, DType::BF16}}}),
               runtime::InvalidArgument);
  EXPECT_THROW(cpu::WeightCopierCpu({{m, TensorView{wide.data(), Shape{2, 3}, DType::F32}}}),
               runtime::InvalidArgument);
  EXPECT_NO_THROW(cpu::WeightCopierCpu({{m, TensorView{copy.data(), Shape{2, 3}, DType::BF16}}}));
}

}  // namespace
}  // namespace vdnn::layers
