// Synchronized batch norm over NCCL (--sync-bn, Note [Data parallelism]) on two GPUs at batch 8
// each against one GPU at batch 16 (SyncBatchNormRuns.hpp: why the first step): ResNet-18 within
// FP32 tolerance, ResNet-50 within float32's own spread; without --sync-bn the running statistics
// visibly are each rank's own. At rate 0 (the weights never move, no chaos) ResNet-50's forward
// passes match one GPU's step after step for ten steps while the running statistics move.
// Skips with fewer than two devices. Alone:
//   build/bin/vdnn_gpu_tests --gtest_filter='SyncBatchNormNccl*'
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "models/train/cuda/NcclRanks.hpp"
#include "models/train/cuda/RunComparison.hpp"
#include "models/train/cuda/SyncBatchNormRuns.hpp"

namespace vdnn::models {
namespace {

using nccl_test::kRankBatch;
using nccl_test::kRanks;
using nccl_test::RankRun;
using sync_bn_test::train;

std::vector<RankRun> two_gpus(const sync_bn_test::RankBody& body) {
  return nccl_test::on_gpus(kRanks, std::chrono::seconds(300),
                            [&body](int r, runtime::Communicator& c) { return body(r, r, c); });
}

std::vector<RankRun> resnet50_on_two_gpus(bool sync_bn, double lr) {
  return two_gpus([sync_bn, lr](int, int device, runtime::Communicator& c) {
    return train(device, kRankBatch, &c, sync_bn, lr);
  });
}

class SyncBatchNormNccl : public nccl_test::TwoGpus {};

TEST_F(SyncBatchNormNccl, ResNet18OnTwoGpusAtBatch8IsOneAtBatch16WithinFloat32Spread) {
  sync_bn_test::expect_within_spread(two_gpus, "resnet18", {true, 2}, ", NCCL");
}

TEST_F(SyncBatchNormNccl, ResNet50OnTwoGpusAtBatch8IsOneAtBatch16WithinFloat32Spread) {
  sync_bn_test::expect_within_spread(two_gpus, "resnet50", {false, 1}, ", NCCL");
}

TEST_F(SyncBatchNormNccl, WithoutSyncBnTheRunningStatisticsAreEachRanksOwn) {
  const RankRun one = train(0, kRanks * kRankBatch, nullptr, false, 0.0);
  const std::vector<RankRun> local = resnet50_on_two_gpus(false, 0.0);
  ASSERT_EQ(local[0].error, "");
  EXPECT_GT(run_compare::worst_ratio(local[0], one, "running_var"), 100.0);
}

TEST_F(SyncBatchNormNccl, AtRateZeroEveryForwardPassIsOneGpusAtTwiceTheBatch) {
  run_compare::expect_trains_as_one(resnet50_on_two_gpus(true, 0.0),
                                    train(0, kRanks * kRankBatch, nullptr, false, 0.0));
}

}  // namespace
}  // namespace vdnn::models
