// The planner's dry run of the device pool (graph/PoolSimulation, Note [Deferred frees]): a plan
// whose settled-first placement does not repeat within the steps it replays does not fit, however
// large the pool (the next step's input could land somewhere new for many steps: ResNet-1001
// under 1 GiB ran out of memory in its ninth step), where best fit places the same plan.
#include "graph/PoolSimulation.hpp"

#include <gtest/gtest.h>

#include "graph/CostModel.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

TEST(PoolSimulation, ASettledFirstPlanThatDoesNotRepeatDoesNotFitInAnyPool) {
  const Graph g = testing::load_config("googlenet-mini.json", 4);
  const CostModel costs = estimate_costs(g);
  PlanRequest r;
  r.policy = Policy::Recompute;
  r.costs = &costs;
  Plan p = make_plan(g, r);
  ASSERT_EQ(p.device_blocks, runtime::BlockChoice::BestFit);
  ASSERT_GT(p.pool_bytes, 0U);
  const std::uint64_t ample = 4 * p.pool_bytes;
  EXPECT_TRUE(device_pool_fits(g, p, ample));
  p.device_blocks = runtime::BlockChoice::SettledFirst;
  EXPECT_TRUE(device_pool_fits(g, p, p.pool_bytes));  // its steps repeat in the plan's own pool
  EXPECT_FALSE(device_pool_fits(g, p, ample));  // four times the peak: only the repeat can fail
}

}  // namespace
}  // namespace vdnn::graph
