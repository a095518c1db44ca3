// SharedPlan: a plan survives its bytes exactly and malformed bytes are refused; two ranks whose
// cost models differ (so that each alone would plan differently) run rank 0's plan, the same
// actions on both (Note [Data parallelism]).
#include "graph/SharedPlan.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/Planner.hpp"
#include "graph/Session.hpp"
#include "graph/SessionHarness.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/LocalCommunicator.hpp"

namespace vdnn::graph {
namespace {

constexpr int kRanks = 2;

// The plan a session of `g` runs under `policy` and `budget` (the CPU's, unfused).
Plan plan_for(const Graph& g, Policy policy, std::uint64_t budget = 0) {
  SessionOptions o;
  o.policy = policy;
  o.budget_bytes = budget;
  o.fuse = false;
  return Session(g, o).plan();
}

// `fraction` of the way from vdnn-all's peak up to baseline's.
std::uint64_t budget_between(const Graph& g, double fraction) {
  const std::uint64_t all = plan_for(g, Policy::VdnnAll).predicted_peak;
  const std::uint64_t base = plan_for(g, Policy::Baseline).predicted_peak;
  return all + static_cast<std::uint64_t>(fraction * static_cast<double>(base - all));
}

TEST(SharedPlan, EveryPolicysPlanSurvivesItsBytes) {
  const Graph g = testing::load_config("resnet20-cifar.json", 16);
  for (const Policy policy :
       {Policy::Baseline, Policy::VdnnAll, Policy::UvmPrefetch, Policy::Recompute, Policy::Auto}) {
    const Plan p = plan_for(g, policy, policy == Policy::Auto ? budget_between(g, 0.3) : 0);
    const std::vector<std::uint8_t> bytes = encode_plan(p);
    const Plan back = decode_plan(bytes);
    EXPECT_EQ(encode_plan(back), bytes) << policy_name(policy);
    ASSERT_EQ(back.actions.size(), p.actions.size());
    for (std::size_t i = 0; i < p.actions.size(); ++i) {
      EXPECT_EQ(back.actions[i].op, p.actions[i].op) << i;
      EXPECT_EQ(back.actions[i].tensor, p.actions[i].tensor) << i;
      EXPECT_EQ(back.actions[i].device_bytes, p.actions[i].device_bytes) << i;
    }
    EXPECT_EQ(back.placement, p.placement);
    EXPECT_EQ(back.pool_bytes, p.pool_bytes);
    EXPECT_EQ(back.cost_source, p.cost_source);
    EXPECT_EQ(back.predicted_step_seconds, p.predicted_step_seconds);
  }
}

TEST(SharedPlan, MalformedBytesAreRefused) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const std::vector<std::uint8_t> bytes = encode_plan(plan_for(g, Policy::VdnnAll));
  std::vector<std::uint8_t> short_bytes(bytes.begin(), bytes.end() - 1);
  EXPECT_THROW(decode_plan(short_bytes), runtime::InvalidArgument);
  std::vector<std::uint8_t> long_bytes = bytes;
  long_bytes.push_back(0);
  EXPECT_THROW(decode_plan(long_bytes), runtime::InvalidArgument);
  std::vector<std::uint8_t> bad_enum = bytes;
  bad_enum[0] = 0xFF;  // the purpose
  EXPECT_THROW(decode_plan(bad_enum), runtime::InvalidArgument);
}

// Auto under a budget with copies for free on one rank and rebuilds for free on the other.
SessionOptions rank_options(int rank, const Graph& g, runtime::Communicator* communicator) {
  auto costs = std::make_shared<CostModel>(estimate_costs(g));
  if (rank == 0) {
    costs->device_to_host = costs->host_to_device = std::numeric_limits<double>::max();
  } else {
    for (LayerCost& c : costs->layers) c.forward = 0.0;
    costs->device_to_host = costs->host_to_device = 1e6;
  }
  SessionOptions o;
  o.policy = Policy::Auto;
  o.budget_bytes = budget_between(g, 0.3);
  o.fuse = false;  // the costs are the unfused graph's
  o.costs = costs;
  o.executor.communicator = communicator;
  return o;
}

struct RankSession {
  std::vector<std::uint8_t> plan;  // encoded
  std::string error;
};

// Both ranks' sessions of `g`, made at once on threads; `fuse_rank1` fuses rank 1's graph.
std::vector<RankSession> sessions_on_ranks(const Graph& g, bool fuse_rank1) {
  runtime::LocalCommunicatorGroup group(kRanks, std::chrono::milliseconds(60000));
  std::vector<RankSession> ranks(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      RankSession& mine = ranks[static_cast<std::size_t>(r)];
      try {
        SessionOptions o = rank_options(r, g, &group.endpoint(r));
        o.fuse = o.fuse || (r == 1 && fuse_rank1);
        mine.plan = encode_plan(Session(g, o).plan());
      } catch (const std::exception& e) {
        mine.error = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return ranks;
}

// Rank r's session alone, planned for the ranks' world as a session with their communicator is.
std::vector<std::uint8_t> alone(int r, const Graph& g) {
  SessionOptions o = rank_options(r, g, nullptr);
  o.data_parallel.world_size = kRanks;
  return encode_plan(Session(g, o).plan());
}

TEST(SharedPlan, RanksWithDifferentCostsRunRank0sPlan) {
  const Graph g = testing::load_config("resnet20-cifar.json", 16);
  // Alone, each rank's costs give it a plan of its own.
  const std::vector<std::uint8_t> alone0 = alone(0, g);
  const std::vector<std::uint8_t> alone1 = alone(1, g);
  ASSERT_NE(alone0, alone1);
  const std::vector<RankSession> ranks = sessions_on_ranks(g, false);
  for (const RankSession& r : ranks) {
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.plan, alone0);
  }
}

TEST(SharedPlan, ARankWithAnotherGraphStopsEveryRankNamingIt) {
  const Graph g = testing::load_config("resnet20-cifar.json", 16);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<RankSession> ranks = sessions_on_ranks(g, true);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // no timeout
  EXPECT_NE(ranks[1].error.find("rank 1's graph (its network, fusion or layout) differs"),
            std::string::npos)
      << ranks[1].error;
  EXPECT_NE(ranks[0].error.find("rank 1"), std::string::npos) << ranks[0].error;
}

// A group of one whose transport holds `bytes` of device memory of its own and measured a bus
// bandwidth of `bus` bytes per second at setup (NCCL's, on CUDA).
class OwnMemoryCommunicator final : public runtime::Communicator {
 public:
  explicit OwnMemoryCommunicator(std::uint64_t bytes, double bus = 0.0)
      : bytes_(bytes), bus_(bus) {}
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  void all_reduce(runtime::Stream&, float*, std::size_t, runtime::Reduction) override {}
  void broadcast(runtime::Stream&, void*, std::size_t) override {}
  void barrier() override {}
  std::vector<double> all_gather(double value) override { return {value}; }
  void raise_if_failed() override {}
  void abort(const std::string&) noexcept override {}
  std::uint64_t device_bytes() const noexcept override { return bytes_; }
  double bus_bytes_per_second() const noexcept override { return bus_; }

 private:
  std::uint64_t bytes_;
  double bus_;
};

TEST(SharedPlan, TheCommunicatorsOwnMemoryIsInsideTheBudget) {
  const Graph g = testing::load_config("resnet20-cifar.json", 16);
  const std::uint64_t baseline = plan_for(g, Policy::Baseline).predicted_peak;
  OwnMemoryCommunicator nccl(baseline / 20);
  SessionOptions o;
  o.policy = Policy::VdnnDyn;
  o.fuse = false;
  o.budget_bytes = baseline;  // baseline fits alone, not beside NCCL's memory
  o.executor.communicator = &nccl;
  const Plan p = Session(g, o).plan();
  EXPECT_EQ(p.communicator_bytes, nccl.device_bytes());
  EXPECT_EQ(p.budget_bytes, baseline - nccl.device_bytes());
  EXPECT_LE(p.predicted_peak, p.budget_bytes);
  EXPECT_NE(p.policy, Policy::Baseline);
  EXPECT_NE(
      format_plan(g, p).find("communicator (NCCL):   " + runtime::format_bytes(baseline / 20)),
      std::string::npos);
  o.budget_bytes = nccl.device_bytes();
  EXPECT_THROW(Session(g, o), DoesNotFit);
}

TEST(SharedPlan, ThePlanAllReducesAtTheBandwidthTheCommunicatorMeasured) {
  const Graph g = testing::load_config("resnet20-cifar.json", 16);
  SessionOptions o;
  o.policy = Policy::Baseline;
  o.fuse = false;
  OwnMemoryCommunicator measured(0, 123e9);
  o.executor.communicator = &measured;
  EXPECT_EQ(Session(g, o).plan().data_parallel.bus_bytes_per_second, 123e9);
  // A transport that measures nothing (in-process ranks): the assumed bandwidth.
  OwnMemoryCommunicator unmeasured(0);
  o.executor.communicator = &unmeasured;
  EXPECT_EQ(Session(g, o).plan().data_parallel.bus_bytes_per_second, kAllReduceBusBytesPerSecond);
}

}  // namespace
}  // namespace vdnn::graph
