// Synchronized batch norm over NCCL (--sync-bn, Note [Data parallelism]): ResNet-50 at 64 x 64 on
// two GPUs at batch 8 each trains as one GPU at batch 16 for ten steps, losses and every parameter
// and buffer within FP32 tolerance, the two ranks bitwise alike; without --sync-bn the running
// statistics visibly are each rank's own. At rate 0 (the weights never move) the same holds for
// the forward pass alone, step after step, while the running statistics move: a failure of the
// first test that this one does not share lies in the backward pass or the gradient exchange.
// Skips with fewer than two devices. Alone:
//   build/bin/vdnn_gpu_tests --gtest_filter='SyncBatchNormNccl*'
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <iostream>
#include <string>
#include <vector>

#include "models/train/cuda/NcclRanks.hpp"
#include "models/train/cuda/RunComparison.hpp"
#include "models/train/cuda/SyncBatchNormRuns.hpp"

namespace vdnn::models {
namespace {

using nccl_test::kRankBatch;
using nccl_test::kRanks;
using nccl_test::kSteps;
using nccl_test::RankRun;
using run_compare::expect_trains_as_one;
using run_compare::worst_ratio;
using sync_bn_test::kRate;
using sync_bn_test::train;

std::vector<RankRun> two_gpus(bool sync_bn, double lr) {
  return nccl_test::on_gpus(kRanks, std::chrono::seconds(300),
                            [sync_bn, lr](int r, runtime::Communicator& c) {
                              return train(r, kRankBatch, &c, sync_bn, lr);
                            });
}

class SyncBatchNormNccl : public nccl_test::TwoGpus {};

TEST_F(SyncBatchNormNccl, ResNet50OnTwoGpusAtBatch8TrainsAsOneAtBatch16) {
  const RankRun one = train(0, kRanks * kRankBatch, nullptr, false, kRate);
  const std::vector<RankRun> synced = two_gpus(true, kRate);
  ASSERT_EQ(synced[0].error, "");
  std::cout << run_compare::report("two GPUs at batch 8 (--sync-bn) against one at batch 16",
                                   run_compare::mean_losses(synced), synced[0], one);
  expect_trains_as_one(synced, one);
  // Without --sync-bn each rank's running statistics are its own batch's: far outside.
  const std::vector<RankRun> local = two_gpus(false, kRate);
  ASSERT_EQ(local[0].error, "");
  EXPECT_GT(worst_ratio(local[0], one, "running_var"), 100.0);
}

TEST_F(SyncBatchNormNccl, AtRateZeroEveryForwardPassIsOneGpusAtTwiceTheBatch) {
  expect_trains_as_one(two_gpus(true, 0.0), train(0, kRanks * kRankBatch, nullptr, false, 0.0));
}

}  // namespace
}  // namespace vdnn::models
