// The host budget (Note [Host budget]): no plan pins more host memory than it allows; auto rebuilds
// what the host cannot hold, a fixed policy that would pin more does not fit and says why, and a
// run's default is what the machine leaves.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "graph/LayerSet.hpp"
#include "graph/MemoryCheck.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

Plan plan(const Graph& g, Policy policy, std::uint64_t budget, std::uint64_t host_budget,
          const CostModel* costs = nullptr) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.host_budget_bytes = host_budget;
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  r.costs = costs;
  return make_plan(g, r);
}

// A link fast enough that auto offloads part of what it moves.
CostModel fast_link(const Graph& g) {
  CostModel costs = estimate_costs(g);
  costs.device_to_host = costs.host_to_device = 1e12;
  return costs;
}

// 30% of the way from vdnn-all's peak up to baseline's.
std::uint64_t tight_budget(const Graph& g) {
  const auto all = static_cast<double>(plan(g, Policy::VdnnAll, 0, kNoHostBudget).predicted_peak);
  const auto base = static_cast<double>(plan(g, Policy::Baseline, 0, kNoHostBudget).predicted_peak);
  return static_cast<std::uint64_t>(all + 0.3 * (base - all));
}

// Where rebuilding alone fits the device budget, auto fits any host budget down to none.
TEST(HostBudget, AutoRebuildsWhatTheHostCannotHold) {
  const Graph g = testing::load_config("resnet20-cifar.json", 32);
  const CostModel costs = fast_link(g);
  const std::uint64_t budget = plan(g, Policy::Recompute, 0, kNoHostBudget).predicted_peak;
  const Plan unlimited = plan(g, Policy::Auto, budget, kNoHostBudget, &costs);
  ASSERT_GT(unlimited.pinned_bytes, 0U);
  for (const std::uint64_t host :
       {unlimited.pinned_bytes / 2, unlimited.pinned_bytes / 8, std::uint64_t{0}}) {
    SCOPED_TRACE(host);
    const Plan p = plan(g, Policy::Auto, budget, host, &costs);
    EXPECT_EQ(p.host_budget_bytes, host);
    EXPECT_LE(p.pinned_bytes, host);
    EXPECT_LE(p.predicted_peak, budget);
    EXPECT_GT(p.recomputed_bytes, unlimited.recomputed_bytes);
  }
}

TEST(HostBudget, AHostBudgetAboveTheOffloadsChangesNothing) {
  const Graph g = testing::load_config("resnet20-cifar.json", 32);
  const CostModel costs = fast_link(g);
  const std::uint64_t budget = tight_budget(g);
  const Plan unlimited = plan(g, Policy::Auto, budget, kNoHostBudget, &costs);
  const Plan roomy = plan(g, Policy::Auto, budget, unlimited.pinned_bytes, &costs);
  EXPECT_EQ(roomy.placement, unlimited.placement);
  EXPECT_EQ(roomy.pinned_bytes, unlimited.pinned_bytes);
}

TEST(HostBudget, AFixedPolicyThatPinsMoreDoesNotFitAndSaysSo) {
  const Graph g = testing::load_config("resnet20-cifar.json", 32);
  const std::uint64_t budget = tight_budget(g);
  const Plan all = plan(g, Policy::VdnnAll, budget, kNoHostBudget);
  ASSERT_GT(all.pinned_bytes, 0U);
  try {
    plan(g, Policy::VdnnAll, budget, all.pinned_bytes / 2);
    FAIL() << "vdnn-all pinned more than the host budget";
  } catch (const DoesNotFit& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pinned host memory"), std::string::npos) << what;
    EXPECT_NE(what.find("--host-budget"), std::string::npos) << what;
  }
  EXPECT_EQ(plan(g, Policy::VdnnAll, budget, all.pinned_bytes).pinned_bytes, all.pinned_bytes);
}

TEST(HostBudget, TheDefaultIsWhatTheMachineLeaves) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  const std::vector<HostNeed> dataset{{"a dataset", kGiB}};
  const std::uint64_t needs = [&] {
    std::uint64_t total = 0;
    for (const HostNeed& n : host_needs(g, Policy::Auto, kGiB, layers::Backend::Cuda)) {
      total += n.bytes;
    }
    return total;
  }();
  const runtime::HostMemory machine{64 * kGiB, "test"};
  EXPECT_EQ(pinned_room(g, Policy::Auto, kGiB, layers::Backend::Cuda, dataset, machine),
            64 * kGiB - needs - kGiB - 8 * kGiB);  // an eighth of 64 GiB stays free
  EXPECT_EQ(host_headroom(8 * kGiB), 4 * kGiB);    // at least 4 GiB
  EXPECT_EQ(pinned_room(g, Policy::Auto, kGiB, layers::Backend::Cuda, dataset, {kGiB, "test"}), 0U);
  const runtime::HostMemory unknown{std::numeric_limits<std::uint64_t>::max(), "unknown"};
  EXPECT_EQ(pinned_room(g, Policy::Auto, kGiB, layers::Backend::Cuda, dataset, unknown),
            kNoHostBudget);
}

}  // namespace
}  // namespace vdnn::graph
