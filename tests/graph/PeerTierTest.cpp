// The peer tier in the planner (Note [Peer tier]): which offloaded maps go to the peer, the peer
// pool's size, the step-time model's peer link, auto's choice and the printed plan.
#include <gtest/gtest.h>

#include <cstdint>

#include "graph/LayerSet.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"
#include "graph/StepTimeModel.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {
namespace {

constexpr int kPeer = 1;

Plan plan(const Graph& g, Policy policy, std::uint64_t peer_budget, std::uint64_t budget = 0,
          int peer_device = kPeer) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  r.peer_device = peer_device;
  r.peer_budget_bytes = peer_budget;
  return make_plan(g, r);
}

std::uint64_t stored(const Graph& g, NodeId t) {
  return runtime::MemoryResource::align_up(g.tensor_bytes(t));
}

TEST(PeerTier, ZeroPeerBudgetOrNoPeerChangesNothing) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const Plan host = plan(g, Policy::VdnnAll, 0, 0, -1);
  for (const Plan& p : {plan(g, Policy::VdnnAll, 0), plan(g, Policy::VdnnAll, 1 << 30, 0, -1)}) {
    EXPECT_EQ(p.peer_device, -1);
    EXPECT_EQ(p.peer_bytes, 0U);
    EXPECT_EQ(p.peer_offloaded_bytes, 0U);
    EXPECT_EQ(p.pinned_bytes, host.pinned_bytes);
    EXPECT_EQ(p.predicted_step_seconds, host.predicted_step_seconds);
    ASSERT_EQ(p.actions.size(), host.actions.size());
    for (std::size_t i = 0; i < p.actions.size(); ++i) {
      EXPECT_EQ(p.actions[i].op, host.actions[i].op) << i;
      EXPECT_EQ(p.actions[i].tensor, host.actions[i].tensor) << i;
      EXPECT_EQ(p.actions[i].device_bytes, host.actions[i].device_bytes) << i;
      EXPECT_EQ(p.actions[i].tier, Tier::Host) << i;
    }
  }
}

// Offloads in order fill the peer while the maps there at once fit its budget; the rest go to
// pinned host memory, and each map comes back from where it went.
TEST(PeerTier, SmallPeerBudgetFillsThePeerFirstAndTheRestGoesToTheHost) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const Plan host = plan(g, Policy::VdnnAll, 0);
  const std::uint64_t budget = host.offloaded_bytes / 3;
  const Plan p = plan(g, Policy::VdnnAll, budget);
  EXPECT_EQ(p.peer_device, kPeer);
  EXPECT_EQ(p.peer_budget_bytes, budget);
  std::uint64_t on_peer = 0;
  std::uint64_t peak = 0;
  std::uint64_t to_peer = 0;
  bool host_seen = false;
  for (const Action& a : p.actions) {
    if (a.op == Op::Offload) {
      const bool fits = on_peer + stored(g, a.tensor) <= budget;
      EXPECT_EQ(a.tier, fits ? Tier::Peer : Tier::Host) << g.node(a.tensor).name;
      if (a.tier == Tier::Peer) {
        on_peer += stored(g, a.tensor);
        to_peer += a.bytes;
      }
      host_seen = host_seen || a.tier == Tier::Host;
      peak = std::max(peak, on_peer);
    } else if (a.op == Op::Prefetch || a.op == Op::AwaitPrefetch) {
      EXPECT_EQ(a.tier, p.tier_of(a.tensor)) << g.node(a.tensor).name;
      if (a.op == Op::AwaitPrefetch && a.tier == Tier::Peer) on_peer -= stored(g, a.tensor);
    }
  }
  EXPECT_TRUE(host_seen);
  EXPECT_EQ(on_peer, 0U);  // every peer copy came back
  EXPECT_GT(to_peer, 0U);
  EXPECT_LE(peak, budget);
  EXPECT_EQ(p.peer_offloaded_bytes, to_peer);
  EXPECT_EQ(p.offloaded_bytes, host.offloaded_bytes);  // the tier moves bytes, not maps
  EXPECT_GE(p.peer_bytes, peak);                       // the pool holds the peak
  EXPECT_LT(p.pinned_bytes, host.pinned_bytes);
  EXPECT_LT(p.predicted_step_seconds, host.predicted_step_seconds);  // a faster link
}

TEST(PeerTier, PeerBudgetAboveEveryOffloadLeavesNothingPinned) {
  const Graph g = testing::load_config("densenet40-cifar.json", 8);
  const Plan host = plan(g, Policy::VdnnConv, 0);
  const Plan p = plan(g, Policy::VdnnConv, 2 * host.offloaded_bytes);
  EXPECT_EQ(p.peer_offloaded_bytes, p.offloaded_bytes);
  EXPECT_GT(p.peer_offloaded_bytes, 0U);
  EXPECT_EQ(p.pinned_bytes, 0U);
  EXPECT_GT(p.peer_bytes, 0U);
}

// A peer copy takes the peer link's latency and rate; an unmeasured link (0) is the host's.
TEST(PeerTier, APeerCopyTakesThePeerLinksLatencyAndRate) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  CostModel costs = estimate_costs(g);
  costs.peer_link = 0.0;
  costs.peer_copy_latency = 1e-3;
  EXPECT_EQ(costs.copy_seconds(Tier::Peer, true, 1e9), 1e9 / costs.host_to_device);
  EXPECT_EQ(costs.copy_seconds(Tier::Peer, false, 1e9), 1e9 / costs.device_to_host);
  costs.peer_link = 5e11;
  EXPECT_DOUBLE_EQ(costs.copy_seconds(Tier::Peer, false, 1e9), 1e-3 + 2e-3);
  EXPECT_DOUBLE_EQ(costs.copy_seconds(Tier::Peer, true, 1e9), 1e-3 + 2e-3);
  EXPECT_EQ(costs.copy_seconds(Tier::Host, false, 1e9), 1e9 / costs.device_to_host);
  costs.device_to_host = 1e9;
  EXPECT_DOUBLE_EQ(costs.slower_copy_seconds(Tier::Host, 1e9), 1.0);
}

// The step-time model replays a peer copy for its latency too: many small copies take longer than
// one of their bytes.
TEST(PeerTier, StepTimeModelChargesEachPeerCopyItsLatency) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  CostModel costs = estimate_costs(g);
  PlanRequest r;
  r.policy = Policy::VdnnAll;
  r.costs = &costs;
  r.peer_device = 1;
  r.peer_budget_bytes = std::uint64_t{1} << 40;
  const Plan p = make_plan(g, r);
  ASSERT_GT(p.peer_offloaded_bytes, 0U);
  costs.peer_copy_latency = 0.0;
  const double without = predict_step_seconds(g, p, costs);
  costs.peer_copy_latency = 1e-3;  // far beyond the layers: the copies bound the step
  EXPECT_GT(predict_step_seconds(g, p, costs), without + 1e-3);
}

// Under a budget, auto offloads over the faster link first: with a peer it moves bytes there and
// predicts a step no slower than without.
TEST(PeerTier, AutoChoosesThePeerWhenItIsFaster) {
  const Graph g = testing::load_config("resnet20-cifar.json", 32);
  const auto all = static_cast<double>(plan(g, Policy::VdnnAll, 0).predicted_peak);
  const auto base = static_cast<double>(plan(g, Policy::Baseline, 0).predicted_peak);
  const auto budget = static_cast<std::uint64_t>(all + 0.3 * (base - all));
  const Plan host = plan(g, Policy::Auto, 0, budget);
  const Plan peer = plan(g, Policy::Auto, std::uint64_t{1} << 30, budget);
  EXPECT_GT(peer.peer_offloaded_bytes, 0U);
  EXPECT_LE(peer.predicted_step_seconds, host.predicted_step_seconds);
  EXPECT_LE(peer.predicted_peak, budget);
}

TEST(PeerTier, PrintedPlanShowsTheTierPerOffloadAndBytesPerTier) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const Plan host = plan(g, Policy::VdnnAll, 0);
  const std::string text = format_plan(g, plan(g, Policy::VdnnAll, host.offloaded_bytes / 3));
  EXPECT_NE(text.find(" @peer"), std::string::npos);
  EXPECT_NE(text.find(" @host"), std::string::npos);
  EXPECT_NE(text.find("offloaded to peer GPU 1:"), std::string::npos);
  EXPECT_NE(text.find("offloaded to the host:"), std::string::npos);
  EXPECT_EQ(format_plan(g, host).find("@host"), std::string::npos);
}

}  // namespace
}  // namespace vdnn::graph
