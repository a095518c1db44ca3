// The auto policy: keep, offload or recompute per map under a budget, chosen by predicted time.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "graph/Fusion.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Liveness.hpp"
#include "graph/Planner.hpp"
#include "graph/PoolSimulation.hpp"
#include "graph/SessionHarness.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {
namespace {

Plan plan(const Graph& g, Policy policy, std::uint64_t budget = 0,
          const CostModel* costs = nullptr) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  r.costs = costs;
  return make_plan(g, r);
}

std::size_t placed(const Plan& p, Placement placement) {
  return static_cast<std::size_t>(std::count(p.placement.begin(), p.placement.end(), placement));
}

// `fraction` of the way from vdnn-all's peak up to baseline's.
std::uint64_t budget_at(const Graph& g, double fraction) {
  const auto all = static_cast<double>(plan(g, Policy::VdnnAll).predicted_peak);
  const auto base = static_cast<double>(plan(g, Policy::Baseline).predicted_peak);
  return static_cast<std::uint64_t>(all + fraction * (base - all));
}

TEST(AutoPolicy, KeepsEverythingWhenNothingNeedsToLeave) {
  const Graph g = testing::load_config("resnet20-cifar.json", 16);
  const Plan base = plan(g, Policy::Baseline);
  const Plan automatic = plan(g, Policy::Auto);
  EXPECT_EQ(automatic.policy, Policy::Auto);
  EXPECT_EQ(automatic.placement, base.placement);
  EXPECT_EQ(automatic.predicted_peak, base.predicted_peak);
  EXPECT_DOUBLE_EQ(automatic.predicted_step_seconds, base.predicted_step_seconds);
  EXPECT_EQ(plan(g, Policy::Auto, base.pool_bytes).placement, base.placement);
}

class AutoBudgets : public ::testing::TestWithParam<const char*> {};

// Wherever vdnn-all fits, auto fits too, and no fixed policy that fits is predicted faster.
TEST_P(AutoBudgets, FitsWhereVdnnAllFitsAndNoFixedPolicyIsPredictedFaster) {
  const Graph g = testing::load_config(GetParam(), 8);
  for (double fraction : {0.05, 0.25, 0.5, 0.75}) {
    SCOPED_TRACE(fraction);
    const std::uint64_t budget = budget_at(g, fraction);
    const Plan automatic = plan(g, Policy::Auto, budget);
    EXPECT_LE(automatic.predicted_peak, budget);
    EXPECT_LE(automatic.pool_bytes, budget);
    for (Policy p : {Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute}) {
      try {
        EXPECT_LE(automatic.predicted_step_seconds, plan(g, p, budget).predicted_step_seconds)
            << policy_name(p);
      } catch (const DoesNotFit&) {
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Networks, AutoBudgets,
                         ::testing::Values("resnet20-cifar.json", "densenet40-cifar.json",
                                           "googlenet-mini.json"),
                         [](const auto& test) {
                           std::string name = test.param;
                           return name.substr(0, name.find_first_of("-."));
                         });

// Whether every rebuild finds its inputs on the device, and whether one reads an offloaded map.
struct Rebuilds {
  bool inputs_present = true;
  bool read_offloaded = false;
};
Rebuilds check_rebuilds(const Graph& g, const Plan& p) {
  Rebuilds r;
  std::vector<bool> on_device(g.nodes().size() + 1, false);
  const auto at = [&](NodeId t) { return t == kNetworkInput ? g.nodes().size() : std::size_t(t); };
  for (const Action& a : p.actions) {
    if (a.op == Op::Allocate || a.op == Op::AwaitPrefetch || a.op == Op::Recompute) {
      on_device[at(a.tensor)] = true;
    }
    if (a.op == Op::Free || a.op == Op::Release) on_device[at(a.tensor)] = false;
    if (a.op != Op::Recompute) continue;
    for (NodeId in : g.node(a.tensor).inputs) {
      r.inputs_present = r.inputs_present && on_device[at(in)];
      r.read_offloaded = r.read_offloaded || p.placement_of(in) == Placement::Offloaded;
    }
  }
  return r;
}

// Under tight budgets auto both offloads and recomputes, and a rebuild may read a map that was
// offloaded: its prefetch is awaited before the rebuild.
TEST(AutoPolicy, RebuildsFromOffloadedMapsUnderTightBudgets) {
  const Graph g = testing::load_config("resnet20-cifar.json", 64);
  bool mixed = false;
  for (double link : {2e9, 5e9, 20e9}) {
    CostModel costs = estimate_costs(g);
    costs.device_to_host = costs.host_to_device = link;
    for (double fraction : {0.02, 0.05, 0.1, 0.2, 0.3}) {
      const Plan p = plan(g, Policy::Auto, budget_at(g, fraction), &costs);
      const Rebuilds r = check_rebuilds(g, p);
      EXPECT_TRUE(r.inputs_present) << fraction;
      mixed = mixed || (placed(p, Placement::Offloaded) > 0 && r.read_offloaded);
    }
  }
  EXPECT_TRUE(mixed);
}

// The choice follows the costs: copies that cost nothing are taken over rebuilds, and rebuilds
// that cost nothing over copies.
TEST(AutoPolicy, ChoosesByTheCostModel) {
  const Graph g = testing::load_config("resnet20-cifar.json", 32);
  const std::uint64_t budget = budget_at(g, 0.3);
  CostModel free_copies = estimate_costs(g);
  free_copies.device_to_host = free_copies.host_to_device = std::numeric_limits<double>::max();
  const Plan copying = plan(g, Policy::Auto, budget, &free_copies);
  EXPECT_EQ(placed(copying, Placement::Recomputed), 0U);
  EXPECT_GT(placed(copying, Placement::Offloaded), 0U);

  CostModel free_layers = estimate_costs(g);
  for (LayerCost& c : free_layers.layers) c.forward = 0.0;
  free_layers.device_to_host = free_layers.host_to_device = 1e6;  // a slow link
  const Plan rebuilding = plan(g, Policy::Auto, budget, &free_layers);
  EXPECT_GT(placed(rebuilding, Placement::Recomputed), placed(copying, Placement::Recomputed));
  EXPECT_LT(rebuilding.offloaded_bytes, copying.offloaded_bytes);
  EXPECT_EQ(rebuilding.cost_source, "estimated");
}

// Where rebuilds cost nothing and the link is slow, auto rebuilds what leaves the device and copies
// only what breaks rebuild chains too long for the budget. Chains that may break at their smallest
// map (an MBConv block's narrow input or projection, not its six times wider expansions) fit with
// most of the leaving bytes rebuilt; breaking only where a chain reaches its limit, no rebuild fit
// at this budget and every map was copied (EfficientNet-B7 at batch 66 copied 36 GiB a step that
// way, 10.6 with breaks at the smallest map).
TEST(AutoPolicy, BreaksRebuildChainsAtTheirNarrowMaps) {
  const Graph g = testing::load_config("efficientnet_b0.json", 2);
  CostModel free_layers = estimate_costs(g);
  for (LayerCost& c : free_layers.layers) c.forward = 0.0;
  free_layers.device_to_host = free_layers.host_to_device = 1e6;  // a slow link
  const Plan p = plan(g, Policy::Auto, budget_at(g, 0.05), &free_layers);
  std::uint64_t copied = 0;
  std::uint64_t rebuilt = 0;
  for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (p.placement_of(t) == Placement::Offloaded) copied += g.tensor_bytes(t);
    if (p.placement_of(t) == Placement::Recomputed) rebuilt += g.tensor_bytes(t);
  }
  EXPECT_GT(copied, 0U);
  EXPECT_LT(2 * copied, rebuilt);  // 47 MB copied, 128 MB rebuilt
}

// DenseNet's convolution outputs are read again only by the rebuilds of the concatenations they
// join: under budgets where those are rebuilt, auto keeps some of them (small, dear to rebuild)
// instead of running the convolution again; each is freed once its consumers' backward has run,
// and none is rebuilt.
TEST(AutoPolicy, KeepsTheSmallMapsItsRebuildsReadWhereTheyFit) {
  const Graph g = testing::load_config("densenet40-cifar.json", 8);
  std::size_t retained = 0;
  for (double fraction : {0.1, 0.25, 0.5}) {
    SCOPED_TRACE(fraction);
    const Plan p = plan(g, Policy::Auto, budget_at(g, fraction));
    EXPECT_TRUE(check_rebuilds(g, p).inputs_present);
    std::vector<int> frees(g.nodes().size(), 0);
    std::vector<std::size_t> backward_at(g.nodes().size(), 0);
    for (std::size_t i = 0; i < p.actions.size(); ++i) {
      const Action& a = p.actions[i];
      if (a.tensor == kNetworkInput) continue;
      const auto t = static_cast<std::size_t>(a.tensor);
      if (a.op == Op::Backward) backward_at[t] = i;
      if (p.placement_of(a.tensor) != Placement::Retained) continue;
      EXPECT_NE(a.op, Op::Recompute) << g.node(a.tensor).name;
      if (a.op != Op::Free) continue;
      ++frees[t];
      for (NodeId c : g.node(a.tensor).consumers) {
        EXPECT_GT(i, backward_at[static_cast<std::size_t>(c)]) << g.node(a.tensor).name;
      }
    }
    for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
      if (p.placement_of(t) != Placement::Retained) continue;
      ++retained;
      EXPECT_EQ(frees[static_cast<std::size_t>(t)], 1) << g.node(t).name;
    }
  }
  EXPECT_GT(retained, 0U);
}

// Where the link carries fewer copies than auto's candidates guessed, forward waits for it, and
// rebuild_where_faster rebuilds some offloaded maps instead: only maps auto offloaded, only where
// the plan still fits and its rebuilds find their inputs, and never predicted slower. A plan of
// another policy comes back as it is.
TEST(AutoPolicy, RebuildsInsteadOfCopyingWhereThatIsPredictedFaster) {
  const Graph g = testing::load_config("resnet20-cifar.json", 64);
  int faster = 0;
  for (double link : {2e9, 5e9, 20e9}) {
    CostModel costs = estimate_costs(g);
    costs.device_to_host = costs.host_to_device = link;
    for (double fraction : {0.05, 0.1, 0.2, 0.3}) {
      SCOPED_TRACE(::testing::Message() << link << " " << fraction);
      const std::uint64_t budget = budget_at(g, fraction);
      PlanRequest r;
      r.policy = Policy::Auto;
      r.budget_bytes = budget;
      r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
      r.costs = &costs;
      const Plan copying = make_plan(g, r);
      const Plan p = rebuild_where_faster(g, r, copying);
      EXPECT_LE(p.predicted_step_seconds, copying.predicted_step_seconds);
      EXPECT_LE(p.offloaded_bytes, copying.offloaded_bytes);
      EXPECT_LE(p.predicted_peak, budget);
      EXPECT_TRUE(device_pool_fits(g, p, p.pool_bytes));
      EXPECT_TRUE(check_rebuilds(g, p).inputs_present);
      for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
        if (p.placement_of(t) == Placement::Recomputed) {
          EXPECT_TRUE(copying.placement_of(t) == Placement::Recomputed ||
                      copying.placement_of(t) == Placement::Offloaded)
              << g.node(t).name;
        }
      }
      if (p.predicted_step_seconds < copying.predicted_step_seconds) {
        ++faster;
        EXPECT_LT(p.offloaded_bytes, copying.offloaded_bytes);
        EXPECT_GT(placed(p, Placement::Recomputed), placed(copying, Placement::Recomputed));
      }
      r.policy = Policy::VdnnAll;
      const Plan all = make_plan(g, r);
      EXPECT_EQ(rebuild_where_faster(g, r, all).placement, all.placement);
    }
  }
  EXPECT_GT(faster, 0);
}

// Every plan auto returns is one the allocator places: a step never runs out of its pool. Dropping
// retained maps that no rebuild reads once placed them in another order that did not fit
// (DenseNet-40 b8, fused, under 71 MB: the executor ran out of its pool at setup).
TEST(AutoPolicy, EveryPlanItReturnsTheAllocatorPlaces) {
  const Graph g = fuse(testing::load_config("densenet40-cifar.json", 8));
  const CostModel costs = estimate_costs(g);
  for (int k = 1; k <= 12; ++k) {
    const std::uint64_t budget = budget_at(g, k / 24.0);
    SCOPED_TRACE(budget);
    const Plan p = plan(g, Policy::Auto, budget, &costs);
    EXPECT_TRUE(device_pool_fits(g, p,
                                 p.budget_bytes / runtime::MemoryResource::kAlignment *
                                     runtime::MemoryResource::kAlignment));
  }
}

TEST(AutoPolicy, RefusesABudgetBelowWhatAnyPlacementNeeds) {
  const Graph g = testing::load_config("resnet20-cifar.json", 16);
  try {
    plan(g, Policy::Auto, plan(g, Policy::Baseline).resident_bytes);
    FAIL() << "expected DoesNotFit";
  } catch (const DoesNotFit& e) {
    EXPECT_NE(std::string(e.what()).find("policy auto needs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vdnn::graph
