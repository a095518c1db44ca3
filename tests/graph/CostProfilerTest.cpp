// The peer link's fit (graph/CostProfiler, Note [Peer tier]): latency plus bytes at a rate, through
// two copy sizes' seconds per copy, and what noisy timings fall back to.
#include "graph/CostProfiler.hpp"

#include <gtest/gtest.h>

namespace vdnn::graph {
namespace {

constexpr double kMiB = 1 << 20;

TEST(FitLink, PassesThroughBothCopySizes) {
  // 3 us and 400 GB/s: what two H200s' NVLink measures about.
  const auto seconds = [](double bytes) { return 3e-6 + bytes / 4e11; };
  const LinkFit link = fit_link(4 * kMiB, seconds(4 * kMiB), 64 * kMiB, seconds(64 * kMiB));
  EXPECT_NEAR(link.bytes_per_second, 4e11, 1e3);
  EXPECT_NEAR(link.latency, 3e-6, 1e-12);
}

TEST(FitLink, NoisyTimingsFallBackToTheLargeCopiesRateWithoutLatency) {
  // The large copies no slower than the small ones.
  LinkFit link = fit_link(4 * kMiB, 2e-4, 64 * kMiB, 1e-4);
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 64 * kMiB / 1e-4);
  EXPECT_EQ(link.latency, 0.0);
  // A line through the two that would give a negative latency.
  link = fit_link(4 * kMiB, 1e-5, 64 * kMiB, 2e-4);
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 64 * kMiB / 2e-4);
  EXPECT_EQ(link.latency, 0.0);
}

}  // namespace
}  // namespace vdnn::graph
