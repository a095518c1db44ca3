// The step-time model: a replay of the plan on stream clocks, checked on plans whose time is known.
#include "graph/StepTimeModel.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

Plan plan(const Graph& g, Policy policy) {
  PlanRequest r;
  r.policy = policy;
  return make_plan(g, r);
}

// Every layer 1 ms forward and 2 ms backward, a 0.1 ms gap, copies at `rate` bytes per second.
CostModel uniform_costs(const Graph& g, double rate) {
  CostModel c;
  c.layers.assign(g.nodes().size(), {1e-3, 2e-3});
  c.device_to_host = c.host_to_device = rate;
  c.gap = 1e-4;
  return c;
}

// The previous step uploaded the batch (Note [Input staging]), and this one's upload of the next
// hides behind backward.
TEST(StepTimeModel, BaselineIsEveryLayerInSequence) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const CostModel costs = uniform_costs(g, 1e9);
  const double n = static_cast<double>(g.nodes().size());
  const double expected = n * (1e-3 + 2e-3) + 2 * n * 1e-4;
  EXPECT_NEAR(predict_step_seconds(g, plan(g, Policy::Baseline), costs), expected, 1e-12);
}

// Without a StageInput the step starts with its own upload on the compute stream; with one whose
// upload outlasts the rest of backward, the step ends when the next batch is up.
TEST(StepTimeModel, TheUploadCountsWhereItRuns) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const double n = static_cast<double>(g.nodes().size());
  const double bytes = static_cast<double>(g.input_shape().bytes(runtime::DType::F32));
  Plan unstaged = plan(g, Policy::Baseline);
  const auto stage = std::find_if(unstaged.actions.begin(), unstaged.actions.end(),
                                  [](const Action& a) { return a.op == Op::StageInput; });
  ASSERT_NE(stage, unstaged.actions.end());
  unstaged.actions.erase(stage);
  const double layers = n * (1e-3 + 2e-3) + 2 * n * 1e-4;
  EXPECT_NEAR(predict_step_seconds(g, unstaged, uniform_costs(g, 1e9)), bytes / 1e9 + layers + 1e-4,
              1e-12);
  const double slow = bytes / 1e3;  // far longer than the step
  const double staged = predict_step_seconds(g, plan(g, Policy::Baseline), uniform_costs(g, 1e3));
  EXPECT_GT(staged, slow);
  EXPECT_LT(staged, slow + layers);
}

TEST(StepTimeModel, FastCopiesHideBehindComputeAndSlowOnesDoNot) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const Plan base = plan(g, Policy::Baseline);
  const Plan all = plan(g, Policy::VdnnAll);
  const double baseline = predict_step_seconds(g, base, uniform_costs(g, 1e15));
  EXPECT_NEAR(predict_step_seconds(g, all, uniform_costs(g, 1e15)), baseline, 1e-6);
  // At 1 MB/s every copy takes longer than the step: the prefetch stream alone must move all of
  // them before the last backward can start.
  const double slow = predict_step_seconds(g, all, uniform_costs(g, 1e6));
  EXPECT_GT(slow, static_cast<double>(all.prefetched_bytes) / 1e6);
}

TEST(StepTimeModel, ARecomputeCostsItsForwardAgain) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const Plan base = plan(g, Policy::Baseline);
  const Plan rebuilt = plan(g, Policy::Recompute);
  std::size_t recomputes = 0;
  for (const Action& a : rebuilt.actions) recomputes += a.op == Op::Recompute ? 1 : 0;
  ASSERT_GT(recomputes, 0U);
  const CostModel costs = uniform_costs(g, 1e9);
  EXPECT_NEAR(predict_step_seconds(g, rebuilt, costs) - predict_step_seconds(g, base, costs),
              static_cast<double>(recomputes) * (1e-3 + 1e-4), 1e-9);
}

}  // namespace
}  // namespace vdnn::graph
