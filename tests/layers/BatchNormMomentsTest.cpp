// BatchNormMoments: sums moved to another centre are the sums about it, and the ranks of a
// synchronized batch norm, each summing about its own first value, get the global batch's mean and
// variance when their sums meet about one centre in FP32 (what CUDA's BatchNormRanks does).
#include "layers/BatchNormMoments.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "runtime/Random.hpp"

namespace vdnn::layers::bn_moments {
namespace {

CentredSums sums_about(const std::vector<double>& values, double centre) {
  CentredSums s;
  for (const double x : values) {
    s.sum += x - centre;
    s.squares += (x - centre) * (x - centre);
  }
  return s;
}

Moments exact(const std::vector<double>& values) {
  double mean = 0.0;
  for (const double x : values) mean += x;
  mean /= static_cast<double>(values.size());
  double var = 0.0;
  for (const double x : values) var += (x - mean) * (x - mean);
  return {mean, var / static_cast<double>(values.size())};
}

// `count` normal values of mean `mean` and standard deviation `spread`, from `seed`.
std::vector<double> batch(std::size_t count, double mean, double spread, std::uint64_t seed) {
  std::vector<double> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    values[i] = mean + spread * runtime::normal01(seed, 0, i);
  }
  return values;
}

TEST(BatchNormMomentsTest, RecentredSumsAreTheSumsAboutTheNewCentre) {
  const std::vector<double> values = batch(1000, 3.0, 0.5, 1);
  const CentredSums moved = recentred(sums_about(values, values[0]), 1000.0, values[0], 2.5);
  const CentredSums direct = sums_about(values, 2.5);
  EXPECT_NEAR(moved.sum, direct.sum, 1e-10 * std::abs(direct.sum) + 1e-10);
  EXPECT_NEAR(moved.squares, direct.squares, 1e-12 * direct.squares);
}

TEST(BatchNormMomentsTest, MomentsOfCentredSumsAreTheBatchMeanAndBiasedVariance) {
  const std::vector<double> values = batch(512, -40.0, 2.0, 2);
  const Moments m = moments(sums_about(values, values[0]), 512.0, values[0]);
  const Moments e = exact(values);
  EXPECT_NEAR(m.mean, e.mean, 1e-12 * std::abs(e.mean));
  EXPECT_NEAR(m.var, e.var, 1e-10 * e.var);
  // Rounding below zero is clamped, a NaN stays NaN.
  EXPECT_EQ(moments({0.0, -1e-30}, 4.0, 1.0).var, 0.0);
  EXPECT_TRUE(std::isnan(moments({std::nan(""), 0.0}, 4.0, 1.0).var));
}

// Four ranks of a batch whose mean is far from zero and whose channels differ by rank: each
// rank's sums about its own first value, moved to a common centre near the mean and rounded to
// float, add up to the global batch's statistics within float's relative precision.
TEST(BatchNormMomentsTest, RanksSumsAboutACommonCentreInFloatGiveTheGlobalMoments) {
  constexpr int kRanks = 4;
  constexpr std::size_t kCount = 256;
  const double centre = 99.0;  // a running mean close to the batch's
  std::vector<double> all;
  float sum = 0.0f;
  float squares = 0.0f;
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<double> mine = batch(kCount, 100.0 + 0.25 * r, 1.0, 10 + r);
    all.insert(all.end(), mine.begin(), mine.end());
    const CentredSums moved = recentred(sums_about(mine, mine[0]), kCount, mine[0], centre);
    sum += static_cast<float>(moved.sum);
    squares += static_cast<float>(moved.squares);
  }
  const double count = static_cast<double>(all.size());
  const Moments m = moments({sum, squares}, count, centre);
  const Moments e = exact(all);
  EXPECT_NEAR(m.mean, e.mean, 1e-6);
  EXPECT_NEAR(m.var, e.var, 1e-6 * e.var);
  // One rank alone (the world of one) gets its own moments.
  const std::vector<double> first(all.begin(), all.begin() + kCount);
  const Moments one = moments(sums_about(first, first[0]), kCount, first[0]);
  EXPECT_NEAR(one.var, exact(first).var, 1e-10 * exact(first).var);
  EXPECT_GT(std::abs(one.var - e.var), 1e-3);  // the global batch's are not one rank's
}

}  // namespace
}  // namespace vdnn::layers::bn_moments
