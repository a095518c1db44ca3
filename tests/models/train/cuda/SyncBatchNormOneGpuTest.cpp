// Synchronized batch norm (--sync-bn) with two ranks as two threads on ONE GPU (no NCCL: the
// host-staged communicator), so that the NCCL tests' equivalences run, and are taken apart, on one
// card (SyncBatchNormRuns.hpp: why the first step). Every test prints both sides' losses step by
// step and the worst per-tensor tolerance ratios (the gradients after the first step, the values
// after the last):
// - ResNet-18 and ResNet-50, two ranks at batch 8 on the halves of each batch against one trainer
//   at 16, within float32's spread (the one trainer against itself with its input moved by one ulp,
//   and in NCHW against NHWC: printed too), ResNet-18's first step within FP32 tolerance;
// - ResNet-18, two ranks fed the SAME batches against one trainer at 8, with and without
//   --sync-bn: the gradient exchange alone, then with the batch norms' exchange, free of any
//   rounding that depends on the batch size.
// Alone: build/bin/vdnn_gpu_tests --gtest_filter='SyncBatchNormOneGpu*'
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "models/train/cuda/HostStagedCommunicator.hpp"
#include "models/train/cuda/NcclRanks.hpp"
#include "models/train/cuda/RunComparison.hpp"
#include "models/train/cuda/SyncBatchNormRuns.hpp"
#include "runtime/Device.hpp"

namespace vdnn::models {
namespace {

using nccl_test::kRankBatch;
using nccl_test::kRanks;
using nccl_test::RankRun;

// kRanks ranks on threads, all on CUDA device 0, each through a HostStagedCommunicator over one
// LocalCommunicatorGroup; body(rank, 0, communicator) gives its run, an exception its error (and
// aborts the group, so that no other rank waits for it).
std::vector<RankRun> on_one_gpu(const sync_bn_test::RankBody& body) {
  std::vector<RankRun> runs(static_cast<std::size_t>(kRanks));
  const std::vector<std::string> errors = test::on_staged_ranks(
      kRanks,
      [&](int r, test::HostStagedCommunicator& staged) {
        runs[static_cast<std::size_t>(r)] = body(r, 0, staged);
      },
      std::chrono::seconds(300));
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (!errors[r].empty()) runs[r].error = errors[r];
  }
  return runs;
}

class SyncBatchNormOneGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(SyncBatchNormOneGpu, ResNet18TwoRanksAtBatch8AreOneAtBatch16WithinFloat32Spread) {
  sync_bn_test::expect_within_spread(on_one_gpu, "resnet18", {true, 2}, ", one GPU");
}

TEST_F(SyncBatchNormOneGpu, ResNet50TwoRanksAtBatch8AreOneAtBatch16WithinFloat32Spread) {
  sync_bn_test::expect_within_spread(on_one_gpu, "resnet50", {false, 1}, ", one GPU");
}

// Both ranks see the batches one trainer at batch 8 sees. Without --sync-bn the exchange averages
// equal gradients (exact): only the gradient exchange and the executor's data-parallel path are
// under test. With it every batch norm's statistics and input-gradient sums are over two equal
// halves: the one trainer's, but for rounding (and for the running variance, unbiased with both
// ranks' count, which these checks do not read).
TEST_F(SyncBatchNormOneGpu, ResNet18SameBatchesOnBothRanksAreOneAtBatch8) {
  const std::vector<sync_bn_test::Batch> batches =
      sync_bn_test::fixed_batches(sync_bn_test::small_network("resnet18"), kRankBatch);
  const sync_bn_test::Part whole{0, kRankBatch};
  const RankRun one = sync_bn_test::train_on("resnet18", batches, whole, 0, nullptr, false);
  for (const bool sync_bn : {false, true}) {
    const std::string what = sync_bn ? "--sync-bn" : "batch norms per rank";
    SCOPED_TRACE(what);
    const std::vector<RankRun> ranks = on_one_gpu([&](int, int device, runtime::Communicator& c) {
      return sync_bn_test::train_on("resnet18", batches, whole, device, &c, sync_bn);
    });
    run_compare::print("ResNet-18, two ranks on the same batches (" + what + ") against one at 8",
                       ranks, one);
    run_compare::expect_first_step_as_one(ranks, one);
  }
}

}  // namespace
}  // namespace vdnn::models
