// explain_moves: every map a plan offloads or rebuilds, once, with costs and a reason that agrees
// with them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "graph/LayerSet.hpp"
#include "graph/MoveReasons.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

Plan plan(const Graph& g, Policy policy, const CostModel& costs, std::uint64_t budget = 0) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  r.costs = &costs;
  return make_plan(g, r);
}

std::size_t moved(const Plan& p) {
  return static_cast<std::size_t>(std::count_if(p.placement.begin(), p.placement.end(), [](auto x) {
    return x == Placement::Offloaded || x == Placement::Recomputed;
  }));
}

TEST(MoveReasons, BaselineMovesNothing) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const CostModel costs = estimate_costs(g);
  const std::vector<MoveReason> moves = explain_moves(g, plan(g, Policy::Baseline, costs), costs);
  EXPECT_TRUE(moves.empty());
  EXPECT_EQ(format_moves(moves), "moves: none (every map stays on the device)\n");
}

TEST(MoveReasons, AFixedPolicyNamesItsRuleForEveryMapItMoves) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const CostModel costs = estimate_costs(g);
  const Plan all = plan(g, Policy::VdnnAll, costs);
  const std::vector<MoveReason> moves = explain_moves(g, all, costs);
  ASSERT_EQ(moves.size(), moved(all));
  EXPECT_EQ(moves.front().tensor, "input");
  for (const MoveReason& m : moves) {
    EXPECT_EQ(m.placement, Placement::Offloaded) << m.tensor;
    EXPECT_EQ(m.why, "policy vdnn-all offloads this map") << m.tensor;
    EXPECT_GT(m.bytes, 0U);
    EXPECT_GT(m.copy_seconds, 0.0);
  }
  EXPECT_NE(format_moves(moves).find("conv1"), std::string::npos);
}

// Under auto, a rebuilt map says its rebuild costs less than its copy exactly when it does, and
// an offloaded one says its copy costs less, or that it runs beside compute, by the same numbers.
TEST(MoveReasons, AutosReasonsAgreeWithTheCostsTheyQuote) {
  const Graph g = testing::load_config("densenet40-cifar.json", 8);
  const CostModel costs = estimate_costs(g);
  const Plan base = plan(g, Policy::Baseline, costs);
  const Plan all = plan(g, Policy::VdnnAll, costs);
  const std::uint64_t budget = (base.predicted_peak + all.predicted_peak) / 2;
  const Plan automatic = plan(g, Policy::Auto, costs, budget);
  const std::vector<MoveReason> moves = explain_moves(g, automatic, costs);
  ASSERT_EQ(moves.size(), moved(automatic));
  ASSERT_FALSE(moves.empty());
  for (const MoveReason& m : moves) {
    SCOPED_TRACE(m.tensor);
    const bool cheaper_rebuild = m.rebuild_seconds <= m.copy_seconds;
    if (m.placement == Placement::Recomputed) {
      EXPECT_EQ(m.why.rfind(cheaper_rebuild ? "rebuild " : "rebuilt: ", 0), 0U) << m.why;
    } else if (std::isinf(m.rebuild_seconds)) {
      EXPECT_EQ(m.tensor, "input");
    } else {
      EXPECT_NE(m.why.find(cheaper_rebuild ? "runs beside compute" : "costs less than a rebuild"),
                std::string::npos)
          << m.why;
    }
  }
}

// With a peer tier, a rebuilt map's copy is priced on the peer link its offload would take (a
// rebuild of ResNet-50's conv1 at b128 read "1.080 ms costs less than its copy 9.956 ms", the
// host's, where its copy to the peer took 1.08 ms), and an offloaded map's on its own tier's.
TEST(MoveReasons, ARebuiltMapsCopyIsPricedOnThePeerLinkWhereThePlanHasOne) {
  const Graph g = testing::load_config("resnet20-cifar.json", 64);
  CostModel costs = estimate_costs(g);
  costs.peer_link = 2.0 * std::max(costs.device_to_host, costs.host_to_device);
  PlanRequest r;
  r.policy = Policy::Auto;
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  r.costs = &costs;
  r.budget_bytes = (plan(g, Policy::Baseline, costs).predicted_peak +
                    plan(g, Policy::VdnnAll, costs).predicted_peak) /
                   4;
  r.peer_device = 1;
  r.peer_budget_bytes = std::uint64_t{1} << 40;
  const Plan p = make_plan(g, r);
  const std::vector<MoveReason> moves = explain_moves(g, p, costs);
  std::size_t rebuilt = 0;
  for (const MoveReason& m : moves) {
    SCOPED_TRACE(m.tensor);
    const auto bytes = static_cast<double>(m.bytes);
    const double copy = m.placement == Placement::Recomputed || m.tier == Tier::Peer
                            ? costs.peer_copy_latency + bytes / costs.peer_link
                            : bytes / std::min(costs.device_to_host, costs.host_to_device);
    EXPECT_DOUBLE_EQ(m.copy_seconds, copy);
    rebuilt += m.placement == Placement::Recomputed ? 1 : 0;
  }
  EXPECT_GT(rebuilt, 0U);
}

}  // namespace
}  // namespace vdnn::graph
