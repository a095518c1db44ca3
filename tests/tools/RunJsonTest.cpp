// A step's transfer figures and their medians (tools/cli/RunJson): the copies' speeds only where
// the step's copies were timed (ExecutorOptions::copy_timing_period), and medians over the steps
// after the warmup, however few of them timed their copies.
#include "tools/cli/RunJson.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace vdnn::tools {
namespace {

graph::TransferReport step(bool timed, double offload_seconds) {
  graph::TransferReport r;
  r.copies_timed = timed;
  r.step_seconds = 1.0;
  r.offloaded_bytes = 4'000'000'000;
  r.offload_seconds = timed ? offload_seconds : 0.0;
  r.peer_offloaded_bytes = r.offloaded_bytes;
  r.peer_offload_seconds = r.offload_seconds;
  return r;
}

TEST(TransferMetrics, SpeedsOnlyWhereTheStepsCopiesWereTimed) {
  const nlohmann::json timed = transfer_metrics(step(true, 2.0), false);
  EXPECT_DOUBLE_EQ(timed.at("offload_gbps").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(timed.at("peer_offload_gbps").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(timed.at("peer_offload_busy").get<double>(), 2.0);
  const nlohmann::json untimed = transfer_metrics(step(false, 0.0), true);
  EXPECT_EQ(untimed.at("offloaded_bytes"), 4'000'000'000U);
  EXPECT_EQ(untimed.at("peer_offloaded_bytes"), 4'000'000'000U);
  for (const char* speed :
       {"offload_gbps", "offload_busy", "prefetch_gbps", "peer_offload_gbps", "peer_offload_busy",
        "host_prefetch_busy", "evict_gbps", "migrate_busy", "stage_input_gbps"}) {
    EXPECT_FALSE(untimed.contains(speed)) << speed;
  }
  EXPECT_TRUE(untimed.contains("evicted_bytes"));
  graph::TransferReport waited = step(false, 0.0);  // the host's own figures come every step
  waited.allocation_waits = 3;
  waited.allocation_wait_seconds = 0.002;
  const nlohmann::json host = transfer_metrics(waited, false);
  EXPECT_EQ(host.at("allocation_waits"), 3U);
  EXPECT_DOUBLE_EQ(host.at("allocation_wait_ms").get<double>(), 2.0);
}

TEST(TransferSeries, MediansSkipTheWarmupStepsAndTakeTheTimedStepsAfterIt) {
  TransferSeries series(2);                                      // steps 0 and 1 are the warmup
  const double seconds[] = {8.0, 8.0, 0.0, 1.0, 0.0, 0.5, 2.0};  // untimed: steps 2 and 4
  for (double s : seconds) series.add(transfer_metrics(step(s > 0.0, s), false));
  const nlohmann::json medians = series.medians();
  // Steps 3, 5 and 6 (4, 8 and 2 GB/s); the warmup's (0.5 GB/s each) would make it 2.
  EXPECT_DOUBLE_EQ(medians.at("offload_gbps_median").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(medians.at("offloaded_bytes_median").get<double>(), 4e9);

  TransferSeries early(4);  // no timed step after the warmup: the medians of all of them
  for (double s : {8.0, 0.0, 0.0, 0.0, 0.0}) early.add(transfer_metrics(step(s > 0.0, s), false));
  EXPECT_DOUBLE_EQ(early.medians().at("offload_gbps_median").get<double>(), 0.5);
}

}  // namespace
}  // namespace vdnn::tools
