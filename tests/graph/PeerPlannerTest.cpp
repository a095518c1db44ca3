// Auto with a fast, idle peer link under a tight budget (issue 28): ResNet-50 b128 at 25% of
// baseline's peak and ResNet-1001 b64 under 0.5 GiB, planned on hand-made H200-like costs.
#include <gtest/gtest.h>

#include <cstdint>

#include "graph/Fusion.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kPeerBudget = 16 * kGiB;  // a neighbour H200 has far more free
constexpr double kPeerLink = 384e9;               // measured each way between two H200s

// estimate_costs' FLOPs and bytes with every layer's time scaled by one factor, so that ResNet-50
// b128 TF32's baseline step is predicted at the 35.4 ms measured on an H200 (3620 img/s); copies
// at the measured 55 GB/s to the host and 384 GB/s to the peer.
CostModel h200_costs(const Graph& g) {
  constexpr double kScale = 0.435;
  CostModel costs = estimate_costs(g);
  costs.peer_link = kPeerLink;
  for (LayerCost& layer : costs.layers) {
    layer.forward *= kScale;
    layer.backward *= kScale;
  }
  return costs;
}

// The graph as `vdnn train` runs it: chains fused (batchnorm2d_relu, batchnorm2d_add_relu).
Graph fused(const char* config, std::int64_t batch) {
  return fuse(testing::load_config(config, batch));
}

Plan plan(const Graph& g, const CostModel& costs, Policy policy, std::uint64_t budget,
          std::uint64_t peer_budget) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.costs = &costs;
  r.peer_device = peer_budget > 0 ? 1 : -1;
  r.peer_budget_bytes = peer_budget;
  return make_plan(g, r);
}

// Why not within 5% of baseline: the budget leaves about 2.3 GB of the 10.7 GB of maps backward
// reads on the device, and the peer link carries about 4.4 GB while forward runs (11.5 ms at
// 384 GB/s); copies beyond that stall forward, so the rest is rebuilt. The batch-norm-ReLU
// outputs (2.1 GB) rebuild cheaply, but the residual joins' outputs rebuild only in chains through
// the blocks, each bringing its convolution outputs back early, which the budget holds for two
// at most; what is left is convolution outputs rebuilt at convolution cost. Predicted before
// issue 28's fix: peer 46.2 ms (1.30x baseline's 35.4 ms), host-only 185.5 ms; after: 44.1 ms
// (1.25x) and 141.9 ms.
TEST(PeerPlanner, ResNet50AtAQuarterOfBaselinesPeakUsesThePeerLinkAndNeverSlowsHostOnlyAuto) {
  const Graph g = fused("resnet50.json", 128);
  const CostModel costs = h200_costs(g);
  const Plan base = plan(g, costs, Policy::Baseline, 0, 0);
  EXPECT_NEAR(base.predicted_step_seconds, 35.4e-3, 0.5e-3);
  const std::uint64_t budget = base.predicted_peak / 4;
  EXPECT_NEAR(static_cast<double>(budget) / kGiB, 2.62, 0.01);  // the measured run's budget

  const Plan peer = plan(g, costs, Policy::Auto, budget, kPeerBudget);
  EXPECT_LE(peer.pool_bytes, budget);
  EXPECT_GT(peer.offloaded_bytes, 0U);
  EXPECT_EQ(peer.peer_offloaded_bytes, peer.offloaded_bytes);
  EXPECT_LE(peer.predicted_step_seconds, 1.27 * base.predicted_step_seconds);

  const Plan host = plan(g, costs, Policy::Auto, budget, 0);
  EXPECT_LE(host.pool_bytes, budget);
  EXPECT_EQ(host.peer_offloaded_bytes, 0U);
  EXPECT_LE(host.predicted_step_seconds, 185.6e-3);  // before the fix
  EXPECT_LT(3.0 * peer.predicted_step_seconds, host.predicted_step_seconds);
}

// ResNet-1001 b64 under 0.5 GiB with the peer tier: 46.6 ms against baseline's 37.9 ms on these
// costs (0.81x), the same as before issue 28's fix. The real run is bound by its host's launches
// (Note [Cost model]'s gap), which these estimated costs leave out.
TEST(PeerPlanner, ResNet1001UnderHalfAGibibyteFitsWithThePeerTier) {
  const Graph g = fused("resnet1001-cifar.json", 64);
  const CostModel costs = h200_costs(g);
  const Plan base = plan(g, costs, Policy::Baseline, 0, 0);
  const Plan peer = plan(g, costs, Policy::Auto, kGiB / 2, kPeerBudget);
  EXPECT_LE(peer.pool_bytes, kGiB / 2);
  EXPECT_GT(peer.peer_offloaded_bytes, 0U);
  EXPECT_LE(peer.predicted_step_seconds, 1.25 * base.predicted_step_seconds);
}

}  // namespace
}  // namespace vdnn::graph
