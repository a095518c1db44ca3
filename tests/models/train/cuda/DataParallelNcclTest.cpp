// Data parallelism over NCCL on two GPUs (one thread per rank, each its own communicator through
// the rendezvous): two ranks at batch 8 train as one GPU at batch 16, the same bits on both
// ranks and again in a second run with --deterministic; a rank that stops coming makes the other
// fail within the timeout. Skips with fewer than two devices.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "graph/TestNetworks.hpp"
#include "models/train/cuda/NcclRanks.hpp"

namespace vdnn::models {
namespace {

using nccl_test::kRankBatch;
using nccl_test::kRanks;
using nccl_test::kSteps;
using nccl_test::RankRun;

graph::NetworkDef plain_cnn() {  // no batch norm: its statistics are per rank
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 10;
  return testing::network(
      {testing::layer("conv1", testing::conv(16, 3), {"input"}),
       testing::layer("relu1", ReluSpec{}, {"conv1"}),
       testing::layer("conv2", testing::conv(32, 3, 2), {"relu1"}),
       testing::layer("relu2", ReluSpec{}, {"conv2"}),
       testing::layer("pool", GlobalAvgPoolSpec{}, {"relu2"}), testing::layer("fc", fc, {"pool"}),
       testing::layer("loss", SoftmaxCrossEntropySpec{}, {"fc"})},
      3, 16, 10);
}

RankRun train(int device, std::int64_t batch, runtime::Communicator* communicator, int steps) {
  TrainerOptions o = nccl_test::fp32_options(device, communicator, 5, 0.1);
  // Several buckets, each launched when its last gradient is written, as the CPU test has them
  // (the defaults would make one: this network's gradients are 26 KB).
  o.session.executor.buckets = {1024, 4096};
  Trainer trainer(plain_cnn(), batch, o);
  return nccl_test::train_steps(trainer, steps);
}

std::vector<RankRun> on_gpus(std::chrono::milliseconds timeout,
                             const std::function<RankRun(int, runtime::Communicator&)>& body) {
  return nccl_test::on_gpus(kRanks, timeout, body);
}

class DataParallelNccl : public nccl_test::TwoGpus {};

TEST_F(DataParallelNccl, TwoGpusAtBatch8TrainAsOneAtBatch16Bitwise) {
  const RankRun one = train(0, kRanks * kRankBatch, nullptr, kSteps);
  const auto body = [](int r, runtime::Communicator& c) {
    return train(r, kRankBatch, &c, kSteps);
  };
  const std::vector<RankRun> first = on_gpus(std::chrono::seconds(120), body);
  const std::vector<RankRun> again = on_gpus(std::chrono::seconds(120), body);
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(first[static_cast<std::size_t>(r)].error, "");
    EXPECT_EQ(first[static_cast<std::size_t>(r)].flat(), first[0].flat());  // every rank
    EXPECT_EQ(again[static_cast<std::size_t>(r)].flat(), first[0].flat());  // --deterministic
    EXPECT_EQ(again[static_cast<std::size_t>(r)].losses, first[static_cast<std::size_t>(r)].losses);
  }
  // Different reduction orders (cuDNN at another batch, NCCL's ring): FP32 rounding, carried by
  // ten SGD steps.
  for (int step = 0; step < kSteps; ++step) {
    const double mean = (first[0].losses[static_cast<std::size_t>(step)] +
                         first[1].losses[static_cast<std::size_t>(step)]) /
                        2.0;
    EXPECT_NEAR(mean, one.losses[static_cast<std::size_t>(step)], 1e-4) << step;
  }
  const std::vector<float> weights = first[0].flat();
  const std::vector<float> one_weights = one.flat();
  ASSERT_EQ(weights.size(), one_weights.size());
  for (std::size_t i = 0; i < one_weights.size(); ++i) {
    ASSERT_NEAR(weights[i], one_weights[i], 1e-4 * std::max(1.0f, std::abs(one_weights[i]))) << i;
  }
}

TEST_F(DataParallelNccl, ARankThatStopsComingFailsTheOtherWithinTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<RankRun> runs =
      on_gpus(std::chrono::seconds(5), [](int r, runtime::Communicator& c) {
        // Rank 1 sets up and leaves; rank 0's parameter broadcast then waits for it.
        return r == 0 ? train(0, kRankBatch, &c, kSteps) : RankRun{};
      });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  // The watchdog's timeout, or NCCL's own error when it sees the peer go first.
  EXPECT_NE(runs[0].error.find("rank 0"), std::string::npos) << runs[0].error;
  EXPECT_EQ(runs[1].error, "");
}

}  // namespace
}  // namespace vdnn::models
