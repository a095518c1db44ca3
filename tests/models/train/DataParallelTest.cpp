// Data parallelism on the CPU (issue 27): four ranks (threads, an in-process communicator) at
// batch 8 train as one process at batch 32, under every policy; a rank that throws mid-step makes
// the others stop with an error naming it, long before the timeout; with synchronized batch norm
// the same holds for a network with batch norm, which without it trains differently.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "graph/TestNetworks.hpp"
#include "models/train/ParameterAccess.hpp"
#include "models/train/Trainer.hpp"
#include "runtime/LocalCommunicator.hpp"

namespace vdnn::models {
namespace {

using std::chrono::milliseconds;

constexpr int kRanks = 4;
constexpr std::int64_t kRankBatch = 8;
constexpr int kSteps = 10;

// No batch norm (its statistics are per rank): conv-relu-pool-conv-relu-pool-linear-loss.
graph::NetworkDef plain_cnn(std::int64_t width = 16) {
  using namespace layers;
  MaxPool2dSpec pool;
  pool.kernel = {2, 2};
  LinearSpec fc;
  fc.out_features = 10;
  return testing::network(
      {
          testing::layer("conv1", testing::conv(8, 3), {"input"}),
          testing::layer("relu1", ReluSpec{}, {"conv1"}),
          testing::layer("pool1", pool, {"relu1"}),
          testing::layer("conv2", testing::conv(width, 3, 2), {"pool1"}),
          testing::layer("relu2", ReluSpec{}, {"conv2"}),
          testing::layer("pool2", GlobalAvgPoolSpec{}, {"relu2"}),
          testing::layer("fc", fc, {"pool2"}),
          testing::layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
      },
      3, 16, 10);
}

// With batch norm, plain and fused with its ReLU, whose statistics differ per rank unless synced.
graph::NetworkDef bn_cnn() {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 10;
  return testing::network(
      {
          testing::layer("conv1", testing::conv(8, 3), {"input"}),
          testing::layer("bn1", BatchNorm2dSpec{}, {"conv1"}),
          testing::layer("relu1", ReluSpec{}, {"bn1"}),
          testing::layer("conv2", testing::conv(16, 3, 2), {"relu1"}),
          testing::layer("bn2", BatchNormReluSpec{}, {"conv2"}),
          testing::layer("pool", GlobalAvgPoolSpec{}, {"bn2"}),
          testing::layer("fc", fc, {"pool"}),
          testing::layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
      },
      3, 16, 10);
}

// Who a rank trains with: its gradients' group and its batch norms' (null: its own statistics).
struct Groups {
  runtime::Communicator* gradients = nullptr;
  runtime::Communicator* batch_norm = nullptr;
};

TrainerOptions options(graph::Policy policy, Groups groups) {
  TrainerOptions o;
  o.session.policy = policy;
  o.session.executor.seed = 5;
  o.session.executor.communicator = groups.gradients;
  o.session.executor.batch_norm_communicator = groups.batch_norm;
  o.session.executor.buckets = {1024, 4096};  // several buckets (the defaults would make one)
  o.schedule.base_lr = 0.1;
  o.schedule.total_steps = kSteps;
  o.cache = false;
  return o;
}

struct RankRun {
  std::vector<double> losses;
  std::vector<float> weights;          // every parameter, in graph order
  std::uint64_t allreduced_bytes = 0;  // the last step's
  double allreduce_exposed_seconds = -1.0;
  std::vector<double> rank_ms;       // the last step's, every rank's
  std::uint64_t device_peak = 0;     // measured
  std::uint64_t predicted_peak = 0;  // the plan's
};

std::vector<float> weights(graph::Session& session) {
  std::vector<float> all;
  for (const NamedTensor& t : named_tensors(session)) {
    std::int64_t n = 1;
    for (const std::int64_t d : t.shape) n *= d;
    std::vector<float> values(static_cast<std::size_t>(n));
    read_parameter(session, t.name, ParameterPart::Value, values.data(), values.size());
    all.insert(all.end(), values.begin(), values.end());
  }
  return all;
}

RankRun train(graph::Policy policy, std::int64_t batch, Groups groups,
              const runtime::cpu::StressOptions& stress = {},
              const graph::NetworkDef& network = plain_cnn()) {
  TrainerOptions o = options(policy, groups);
  o.session.stress = stress;
  Trainer trainer(network, batch, o);
  RankRun run;
  for (int i = 0; i < kSteps; ++i) run.losses.push_back(trainer.step().loss);
  run.weights = weights(trainer.session());
  run.rank_ms = trainer.history().back().rank_ms;
  run.device_peak = trainer.session().executor().memory().device_peak;
  run.predicted_peak = trainer.session().plan().predicted_peak;
  run.allreduced_bytes = trainer.history().back().transfers.allreduced_bytes;
  run.allreduce_exposed_seconds = trainer.history().back().transfers.allreduce_exposed_seconds;
  return run;
}

// body(rank) on one thread per rank; what each threw ("" for nothing).
std::vector<std::string> on_ranks(const std::function<void(int)>& body) {
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

// FP32 tolerance: the ranks sum their gradients in partial sums of 8 samples, then over the
// ranks, where one process sums 32 at once; each order rounds differently (~6e-8 relative per
// addition), and ten steps of SGD with momentum carry those differences on (measured: at most
// 3e-8 here). 1e-5 relative (absolute below 1) leaves room for that and is far below what a wrong
// shard, a sum for a mean or a bucket reduced early would give (1e-2 and more).
constexpr double kTolerance = 1e-5;

// The ranks' mean loss per step, against one process's.
void expect_same_losses(const std::vector<RankRun>& ranks, const RankRun& one,
                        const std::string& what) {
  for (int step = 0; step < kSteps; ++step) {
    double mean = 0.0;  // of the ranks' per-rank means: the mean over the global batch
    for (const RankRun& r : ranks) mean += r.losses[static_cast<std::size_t>(step)] / kRanks;
    EXPECT_NEAR(mean, one.losses[static_cast<std::size_t>(step)], kTolerance) << what << step;
  }
}

// The largest difference of `a` from `b`, relative where |b| > 1.
double worst_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max(1.0, std::abs(static_cast<double>(b[i])));
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / scale);
  }
  return worst;
}

void expect_close(const std::vector<float>& a, const std::vector<float>& b,
                  const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_LT(worst_difference(a, b), kTolerance) << what;
}

// The four ranks' runs of `network`, their streams (the communication stream too) delayed at
// random from `seed` when it is set; with `sync_bn`, batch norm over a group of its own.
std::vector<RankRun> train_ranks(graph::Policy policy, std::optional<std::uint64_t> seed,
                                 const graph::NetworkDef& network = plain_cnn(),
                                 bool sync_bn = false) {
  runtime::LocalCommunicatorGroup group(kRanks, milliseconds(120000));
  runtime::LocalCommunicatorGroup bn_group(kRanks, milliseconds(120000));
  std::vector<RankRun> ranks(kRanks);
  const std::vector<std::string> errors = on_ranks([&](int r) {
    runtime::cpu::StressOptions stress;
    stress.enabled = seed.has_value();
    stress.seed = seed.value_or(0) + static_cast<std::uint64_t>(r);
    const Groups groups{&group.endpoint(r), sync_bn ? &bn_group.endpoint(r) : nullptr};
    ranks[static_cast<std::size_t>(r)] = train(policy, kRankBatch, groups, stress, network);
  });
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  return ranks;
}

TEST(DataParallel, FourRanksAtBatch8TrainAsOneAtBatch32UnderEveryPolicy) {
  for (const std::string& name : graph::policy_names()) {
    const graph::Policy policy = graph::parse_policy(name);
    const RankRun one = train(policy, kRanks * kRankBatch, {});
    const std::vector<RankRun> ranks = train_ranks(policy, std::nullopt);
    expect_same_losses(ranks, one, name);
    for (const RankRun& r : ranks) {
      EXPECT_EQ(r.weights, ranks[0].weights) << name;  // bitwise
      // Every gradient, padding included, and a wait that was measured.
      EXPECT_GE(r.allreduced_bytes, r.weights.size() * sizeof(float)) << name;
      EXPECT_GE(r.allreduce_exposed_seconds, 0.0) << name;
      EXPECT_EQ(r.rank_ms, ranks[0].rank_ms) << name;  // gathered: the same on every rank
      EXPECT_EQ(r.rank_ms.size(), static_cast<std::size_t>(kRanks)) << name;
      // The plan counts every gradient once, in the flat buffer as in buffers of their own; the
      // measured peak also holds the flat buffer's padding between gradients (their 256-byte
      // alignment, which the pool rounds every allocation to anyway), the prediction does not.
      const std::uint64_t padding = r.allreduced_bytes - r.weights.size() * sizeof(float);
      if (one.device_peak == one.predicted_peak) {
        EXPECT_EQ(r.device_peak, r.predicted_peak + padding) << name;
      }
    }
    EXPECT_EQ(one.allreduced_bytes, 0U) << name;
    EXPECT_TRUE(one.rank_ms.empty()) << name;
    expect_close(ranks[0].weights, one.weights, name);
  }
}

TEST(DataParallel, SyncBatchNormTrainsFourRanksAsOneUnderEveryPolicy) {
  for (const std::string& name : graph::policy_names()) {
    const graph::Policy policy = graph::parse_policy(name);
    const RankRun one = train(policy, kRanks * kRankBatch, {}, {}, bn_cnn());
    const std::vector<RankRun> ranks = train_ranks(policy, std::nullopt, bn_cnn(), true);
    expect_same_losses(ranks, one, name);
    for (const RankRun& r : ranks) EXPECT_EQ(r.weights, ranks[0].weights) << name;  // bitwise
    // The running statistics too: they are among the weights.
    expect_close(ranks[0].weights, one.weights, name);
  }
}

TEST(DataParallel, BatchNormPerRankTrainsDifferentlyFromOneProcess) {
  const RankRun one = train(graph::Policy::Baseline, kRanks * kRankBatch, {}, {}, bn_cnn());
  const std::vector<RankRun> ranks = train_ranks(graph::Policy::Baseline, std::nullopt, bn_cnn());
  ASSERT_EQ(ranks[0].weights.size(), one.weights.size());
  // Far beyond the tolerance that synchronized batch norm meets.
  EXPECT_GT(worst_difference(ranks[0].weights, one.weights), 100 * kTolerance);
}

TEST(DataParallel, StreamInterleavingsChangeNoBit) {
  const std::vector<RankRun> calm = train_ranks(graph::Policy::VdnnAll, std::nullopt);
  for (const std::uint64_t seed : {1U, 2U}) {
    const std::vector<RankRun> stressed = train_ranks(graph::Policy::VdnnAll, seed);
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(stressed[static_cast<std::size_t>(r)].losses,
                calm[static_cast<std::size_t>(r)].losses)
          << seed;
      EXPECT_EQ(stressed[static_cast<std::size_t>(r)].weights,
                calm[static_cast<std::size_t>(r)].weights)
          << seed;
    }
  }
}

TEST(DataParallel, ARankThatThrowsMidStepStopsTheOthersWithItsName) {
  runtime::LocalCommunicatorGroup group(kRanks, milliseconds(120000));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> errors = on_ranks([&](int r) {
    Trainer trainer(plain_cnn(), kRankBatch, options(graph::Policy::VdnnAll, {&group.endpoint(r)}));
    std::vector<float> images(static_cast<std::size_t>(kRankBatch * 3 * 16 * 16), 0.0f);
    const std::vector<std::int32_t> bad_labels(kRankBatch, 10);  // out of range for 10 classes
    for (int i = 0; i < kSteps; ++i) {
      // Rank 2's loss throws in its forward, so it never reaches its gradient all-reduces.
      if (r == 2 && i == 3)
        trainer.step(images.data(), bad_labels.data());
      else
        trainer.step();
    }
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_NE(errors[2].find("label"), std::string::npos) << errors[2];
  for (const int r : {0, 1, 3}) {
    EXPECT_NE(errors[static_cast<std::size_t>(r)].find("rank 2 aborted"), std::string::npos)
        << errors[static_cast<std::size_t>(r)];
  }
}

TEST(DataParallel, ARankWithAnotherNetworkIsNamedAtSetup) {
  runtime::LocalCommunicatorGroup group(2, milliseconds(120000));
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        Trainer trainer(plain_cnn(r == 0 ? 16 : 12), kRankBatch,
                        options(graph::Policy::Baseline, {&group.endpoint(r)}));
      } catch (const runtime::CommunicatorError& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // The plan's graph is compared first (graph/SharedPlan), before the gradients' layout.
  EXPECT_NE(errors[1].find("rank 1's graph"), std::string::npos) << errors[1];
  EXPECT_NE(errors[0].find("rank 1 aborted"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace vdnn::models
