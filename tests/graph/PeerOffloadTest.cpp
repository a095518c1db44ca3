// The peer tier run end to end on the CPU backend's emulated peer (Note [Peer tier]): every policy
// that offloads gives bitwise baseline's losses and weights with maps on both tiers, under random
// stream delays and NaN-poisoned freed memory; the peer pool holds what the plan predicts; a peer
// that cannot be reached or has too little free memory is refused.
#include <gtest/gtest.h>

#include "graph/Fusion.hpp"
#include "graph/SessionHarness.hpp"
#include "runtime/memory/PeerMemoryResource.hpp"

namespace vdnn::graph {
namespace {

using testing::load_config;
using testing::run_steps;

constexpr int kSteps = 4;
constexpr int kPeer = 1;

// vdnn-all's offloaded bytes for the graph the session runs (fused), to size peer budgets by.
std::uint64_t all_offloaded(const Graph& unfused) {
  const Graph g = fuse(unfused);
  return make_plan(g, {Policy::VdnnAll, 0, LayerSet(g, layers::Backend::Cpu, {}).workspaces()})
      .offloaded_bytes;
}

// `policy` with the peer tier holding `peer_budget` bytes; auto and vdnn-dyn on estimated costs.
SessionOptions options(const Graph& unfused, Policy policy, std::uint64_t peer_budget) {
  SessionOptions o;
  o.policy = policy;
  o.executor.seed = 11;
  o.executor.poison_freed = true;
  o.peer_device = peer_budget > 0 ? kPeer : -1;
  o.peer_budget_bytes = peer_budget;
  if (policy == Policy::Auto || policy == Policy::VdnnDyn) {
    const Graph g = fuse(unfused);
    const LayerSet layers(g, layers::Backend::Cpu, {});
    PlanRequest r{Policy::VdnnAll, 0, layers.workspaces()};
    const std::uint64_t all = make_plan(g, r).predicted_peak;
    r.policy = Policy::Baseline;
    const std::uint64_t base = make_plan(g, r).predicted_peak;
    o.budget_bytes = all + (base - all) / 5;
    o.costs = std::make_shared<const CostModel>(estimate_costs(g));
  }
  return o;
}

class PeerOffload : public ::testing::TestWithParam<const char*> {};

TEST_P(PeerOffload, EveryPolicyWithThePeerTierMatchesBaselineBitwise) {
  const Graph g = load_config(GetParam(), 2);
  const auto base = run_steps(g, options(g, Policy::Baseline, 0), kSteps);
  const std::uint64_t peer_budget = all_offloaded(g) / 3;  // both tiers in use under vdnn-all
  constexpr Policy kPolicies[] = {Policy::VdnnAll, Policy::VdnnConv, Policy::VdnnDyn, Policy::Auto};
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const Policy policy = kPolicies[seed % std::size(kPolicies)];
    SessionOptions o = options(g, policy, peer_budget);
    o.stress = {seed >= std::size(kPolicies), seed, std::chrono::microseconds(20)};
    const auto run = run_steps(g, o, kSteps);
    ASSERT_EQ(run.losses, base.losses) << "seed " << seed << " " << policy_name(policy);
    ASSERT_EQ(run.weights, base.weights) << "seed " << seed << " " << policy_name(policy);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(policy);
    EXPECT_GT(run.memory.peer_peak, 0U) << policy_name(policy);
    EXPECT_LE(run.memory.peer_peak, run.memory.peer_capacity) << policy_name(policy);
  }
}

INSTANTIATE_TEST_SUITE_P(Networks, PeerOffload,
                         ::testing::Values("resnet20-cifar.json", "densenet40-cifar.json"),
                         [](const auto& test) {
                           std::string name = test.param;
                           return name.substr(0, name.find_first_of("-."));
                         });

// vdnn-all with a small peer budget: the step moves the planned bytes over each link, and the peer
// pool's measured peak is the simulated one's.
TEST(PeerOffload, EachLinkMovesThePlannedBytes) {
  const Graph g = load_config("resnet20-cifar.json", 2);
  Session session(g, options(g, Policy::VdnnAll, all_offloaded(g) / 3));
  const Plan& plan = session.plan();
  ASSERT_GT(plan.peer_offloaded_bytes, 0U);
  ASSERT_LT(plan.peer_offloaded_bytes, plan.offloaded_bytes);
  Executor& executor = session.executor();
  const std::vector<std::int32_t> labels(2, 0);
  executor.train_step(executor.input_staging(0), labels.data(), 0.0);
  const TransferReport& t = executor.transfers();
  EXPECT_EQ(t.peer_offloaded_bytes, plan.peer_offloaded_bytes);
  EXPECT_EQ(t.peer_prefetched_bytes, plan.peer_offloaded_bytes);
  EXPECT_EQ(t.offloaded_bytes, plan.offloaded_bytes);
  EXPECT_EQ(executor.memory().peer_capacity, runtime::MemoryResource::align_up(plan.peer_bytes));
  EXPECT_LE(executor.memory().peer_peak, plan.peer_bytes);
}

TEST(PeerOffload, RefusesAPeerWithoutPeerAccessNamingBothGpus) {
  const Graph g = load_config("resnet20-cifar.json", 2);
  SessionOptions o = options(g, Policy::VdnnAll, all_offloaded(g));
  o.cpu_peer.access = false;
  try {
    Session session(g, o);
    FAIL() << "expected InvalidArgument";
  } catch (const runtime::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 0 cannot access GPU 1"), std::string::npos)
        << e.what();
  }
  o = options(g, Policy::VdnnAll, all_offloaded(g));
  o.peer_device = 3;
  EXPECT_THROW(Session(g, o), runtime::InvalidArgument);
}

TEST(PeerOffload, RefusesAPeerBudgetAboveThePeersFreeMemory) {
  const Graph g = load_config("resnet20-cifar.json", 2);
  SessionOptions o = options(g, Policy::VdnnAll, all_offloaded(g));
  o.cpu_peer.free_bytes = all_offloaded(g) / 4;
  EXPECT_THROW(Session(g, o), runtime::PeerMemoryRefused);
}

}  // namespace
}  // namespace vdnn::graph
