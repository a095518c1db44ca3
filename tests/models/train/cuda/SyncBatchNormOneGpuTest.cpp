// Synchronized batch norm (--sync-bn) with two ranks as two threads on ONE GPU (no NCCL: the
// host-staged communicator), so that SyncBatchNormNccl's failing equivalence runs, and is taken
// apart, on one card. Every test prints both sides' losses step by step and the worst per-tensor
// tolerance ratios (the gradients after the first step, the values after the last):
// - two ranks at batch 8 against one trainer at batch 16 (the NCCL test's equivalence);
// - two ranks fed the SAME batches against one trainer at batch 8, with and without --sync-bn:
//   the gradient exchange alone, then with the batch norms' exchange, free of any rounding that
//   depends on the batch size;
// - one trainer at batch 16 in NCHW against NHWC: float32's own spread under another summation
//   order, the scale of the tolerance the equivalences are held to.
// Alone: build/bin/vdnn_gpu_tests --gtest_filter='SyncBatchNormOneGpu*'
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include "models/train/cuda/HostStagedCommunicator.hpp"
#include "models/train/cuda/NcclRanks.hpp"
#include "models/train/cuda/RunComparison.hpp"
#include "models/train/cuda/SyncBatchNormRuns.hpp"
#include "runtime/Device.hpp"
#include "runtime/LocalCommunicator.hpp"
#include "runtime/Random.hpp"

namespace vdnn::models {
namespace {

using nccl_test::kRankBatch;
using nccl_test::kRanks;
using nccl_test::kSteps;
using nccl_test::RankRun;
using run_compare::expect_trains_as_one;
using run_compare::expect_within_tolerance;
using run_compare::mean_losses;
using run_compare::report;
using sync_bn_test::kRate;
using sync_bn_test::kSide;
using sync_bn_test::train;

constexpr auto kTimeout = std::chrono::seconds(300);

// `ranks` ranks on threads, all on CUDA device 0, each through a HostStagedCommunicator over one
// LocalCommunicatorGroup; body(rank, communicator) gives its run, an exception its error (and
// aborts the group, so that no other rank waits for it).
std::vector<RankRun> on_one_gpu(int ranks,
                                const std::function<RankRun(int, runtime::Communicator&)>& body) {
  runtime::LocalCommunicatorGroup group(ranks, kTimeout);
  std::vector<RankRun> runs(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      test::HostStagedCommunicator staged(group.endpoint(r));
      try {
        runs[static_cast<std::size_t>(r)] = body(r, staged);
      } catch (const std::exception& e) {
        runs[static_cast<std::size_t>(r)].error = e.what();
        staged.abort(e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return runs;
}

// One batch of ResNet-50's input: images uniform in [-1, 1), labels spread over the classes,
// a pure function of (step, batch size).
struct Batch {
  std::vector<float> images;
  std::vector<std::int32_t> labels;
};

std::vector<Batch> fixed_batches(std::int64_t batch) {
  const graph::NetworkDef def = sync_bn_test::small_resnet50();
  std::vector<Batch> batches(static_cast<std::size_t>(kSteps));
  for (std::size_t s = 0; s < batches.size(); ++s) {
    batches[s].images.resize(static_cast<std::size_t>(batch * def.channels * kSide * kSide));
    for (std::size_t i = 0; i < batches[s].images.size(); ++i) {
      batches[s].images[i] = static_cast<float>(2.0 * runtime::uniform01(7, s, i) - 1.0);
    }
    for (std::int64_t i = 0; i < batch; ++i) {
      batches[s].labels.push_back(static_cast<std::int32_t>((37 * i + 11 * s) % def.num_classes));
    }
  }
  return batches;
}

// kSteps steps on `batches` (the same ones whatever the rank).
RankRun train_on(const std::vector<Batch>& batches, runtime::Communicator* communicator,
                 bool sync_bn) {
  Trainer trainer(sync_bn_test::small_resnet50(), kRankBatch,
                  sync_bn_test::options(0, communicator, sync_bn, kRate));
  return nccl_test::train_steps(trainer, kSteps, [&](int s) {
    const Batch& b = batches[static_cast<std::size_t>(s)];
    return trainer.step(b.images.data(), b.labels.data()).loss;
  });
}

void print(const std::string& title, const std::vector<RankRun>& ranks, const RankRun& one) {
  ASSERT_EQ(ranks[0].error, "");
  ASSERT_EQ(one.error, "");
  std::cout << report(title, mean_losses(ranks), ranks[0], one) << std::flush;
}

class SyncBatchNormOneGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(SyncBatchNormOneGpu, TwoRanksAtBatch8TrainAsOneAtBatch16) {
  const RankRun one = train(0, kRanks * kRankBatch, nullptr, false, kRate);
  const std::vector<RankRun> synced = on_one_gpu(
      kRanks, [](int, runtime::Communicator& c) { return train(0, kRankBatch, &c, true, kRate); });
  print("two ranks at batch 8 (--sync-bn, one GPU) against one at batch 16", synced, one);
  expect_trains_as_one(synced, one);
}

// Both ranks see the batches one trainer at batch 8 sees: without --sync-bn the exchange averages
// equal gradients (exact), so only the gradient exchange and the executor's data-parallel path
// are under test; with it the batch norms' statistics and input-gradient sums are over two equal
// halves, the one trainer's up to rounding, but for the running variance (unbiased with the
// count of both ranks: excepted).
TEST_F(SyncBatchNormOneGpu, SameBatchesOnBothRanksTrainAsOneAtBatch8) {
  const std::vector<Batch> batches = fixed_batches(kRankBatch);
  const RankRun one = train_on(batches, nullptr, false);
  for (const bool sync_bn : {false, true}) {
    SCOPED_TRACE(sync_bn ? "--sync-bn" : "local batch norms");
    const std::vector<RankRun> ranks = on_one_gpu(
        kRanks, [&](int, runtime::Communicator& c) { return train_on(batches, &c, sync_bn); });
    print(std::string("two ranks on the same batches (") + (sync_bn ? "--sync-bn" : "local bn") +
              ") against one at batch 8",
          ranks, one);
    expect_trains_as_one(ranks, one, "running_var");
  }
}

// Float32's spread: the same run in another summation order (cuDNN's and the batch norms'
// kernels of the other layout). The equivalences above are held to the same tolerance.
TEST_F(SyncBatchNormOneGpu, Batch16InNchwIsBatch16InNhwcWithinTolerance) {
  const auto in = [](graph::LayoutChoice layout) {
    return [layout](TrainerOptions& o) { o.session.layout = layout; };
  };
  const RankRun nchw =
      train(0, kRanks * kRankBatch, nullptr, false, kRate, in(graph::LayoutChoice::Nchw));
  const RankRun nhwc =
      train(0, kRanks * kRankBatch, nullptr, false, kRate, in(graph::LayoutChoice::Nhwc));
  print("one GPU at batch 16, NHWC against NCHW", {nhwc}, nchw);
  expect_within_tolerance(nhwc.losses, nhwc, nchw);
}

}  // namespace
}  // namespace vdnn::models
