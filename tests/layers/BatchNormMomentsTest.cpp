// BatchNormMoments: sums about a centre give the batch's moments; a double survives the trip as a
// float pair, also through an all-reduce of zeros and one rank's value; and the ranks of a
// synchronized batch norm (what CUDA's BatchNormRanks does, step after step, with the running
// statistics moving) get the global batch's statistics, as one process at the global batch does.
#include "layers/BatchNormMoments.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
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

// `count` float values (as a float feature map holds them) of mean `mean` and standard deviation
// `spread`, from `seed`.
std::vector<double> batch(std::size_t count, double mean, double spread, std::uint64_t seed) {
  std::vector<double> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>(mean + spread * runtime::normal01(seed, 0, i));
  }
  return values;
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

TEST(BatchNormMomentsTest, AFloatPairCarriesADoubleThroughASumOfZeros) {
  for (const double v : {0.0, 1.0 / 3.0, -123456.789012345, 6.02e23, 1e-30, -2.5e-7}) {
    const FloatPair p = to_pair(v);
    EXPECT_NEAR(from_pair(p), v, std::ldexp(std::abs(v), -46)) << v;
    // What the all-reduce does to it: zeros added before and after, in float.
    const FloatPair summed{0.0f + p.hi + 0.0f, 0.0f + p.lo + 0.0f};
    EXPECT_EQ(from_pair(summed), from_pair(p)) << v;
  }
  EXPECT_GT(std::abs(from_pair(to_pair(1.0 / 3.0)) - static_cast<float>(1.0 / 3.0)), 1e-9);
  EXPECT_TRUE(std::isnan(from_pair(to_pair(std::numeric_limits<double>::quiet_NaN()))));
}

// Running statistics as BatchNormFinish's store_stats keeps them (PyTorch's momentum, unbiased).
struct Running {
  double mean = 0.0;
  double var = 1.0;

  void update(Moments m, double count, double momentum) {
    mean = (1.0 - momentum) * mean + momentum * m.mean;
    var = (1.0 - momentum) * var + momentum * m.var * count / (count - 1.0);
  }
};

// Two ranks at 64 values a channel against one process at 128, five steps of batches whose mean
// is far from zero and moves (so the running mean is neither zero nor the batch's, and far from
// it): each rank sums about its own first value, sends its moments as float pairs and merges the
// ranks' in rank order; the global batch's statistics and running buffers come out within double
// rounding of one process's, and both ranks get the same bits.
TEST(BatchNormMomentsTest, RanksExchangingTheirMomentsAsFloatPairsTrainAsOneProcess) {
  constexpr int kRanks = 2;
  constexpr std::size_t kCount = 64;
  constexpr double kMomentum = 0.1;
  Running ranks_running;
  Running one_running;
  for (int step = 0; step < 5; ++step) {
    std::vector<double> all;
    std::vector<FloatPair> exchange(2 * kRanks);  // [rank][mean, m2], zeros but one's own
    for (int r = 0; r < kRanks; ++r) {
      const std::vector<double> mine =
          batch(kCount, 100.0 + 10.0 * step + 2.0 * r, 0.5 + 0.25 * step, 100 * step + r);
      all.insert(all.end(), mine.begin(), mine.end());
      const RankMoments own = rank_moments(sums_about(mine, mine[0]), kCount, mine[0]);
      exchange[2 * r] = to_pair(own.mean);
      exchange[2 * r + 1] = to_pair(own.m2);
    }
    const auto read = [&](int r) {
      return RankMoments{from_pair(exchange[2 * r]), from_pair(exchange[2 * r + 1])};
    };
    const Moments global = merged(kRanks, kCount, read);
    const Moments one = moments(sums_about(all, all[0]), static_cast<double>(all.size()), all[0]);
    const Moments e = exact(all);
    EXPECT_NEAR(global.mean, e.mean, 1e-12 * std::abs(e.mean)) << step;
    EXPECT_NEAR(global.var, e.var, 1e-9 * e.var) << step;
    EXPECT_NEAR(global.var, one.var, 1e-9 * e.var) << step;
    ranks_running.update(global, kRanks * kCount, kMomentum);
    one_running.update(one, static_cast<double>(all.size()), kMomentum);
    EXPECT_NEAR(ranks_running.mean, one_running.mean, 1e-12 * std::abs(one_running.mean)) << step;
    EXPECT_NEAR(ranks_running.var, one_running.var, 1e-9 * one_running.var) << step;
    // One rank's own moments are not the global batch's: the exchange matters.
    EXPECT_GT(std::abs(read(0).mean - global.mean), 0.1) << step;
  }
}

}  // namespace
}  // namespace vdnn::layers::bn_moments
