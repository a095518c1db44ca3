// Offload invariance: every policy gives bitwise the same losses and final weights as baseline,
// also with random stream delays and NaN-poisoned freed memory; measured peaks equal predicted
// peaks; a budget between vdnn-all's and baseline's peaks separates them.
#include <gtest/gtest.h>

#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

using testing::load_config;
using testing::run_steps;

constexpr int kSteps = 5;

SessionOptions options(Policy policy, std::uint64_t budget = 0) {
  SessionOptions o;
  o.policy = policy;
  o.budget_bytes = budget;
  o.executor.seed = 11;
  o.executor.poison_freed = true;
  return o;
}

class OffloadInvariance : public ::testing::TestWithParam<const char*> {};

TEST_P(OffloadInvariance, EveryPolicyMatchesBaselineBitwise) {
  const auto base = run_steps(load_config(GetParam(), 4), options(Policy::Baseline), kSteps);
  EXPECT_EQ(base.memory.device_peak, base.predicted_peak);
  const std::uint64_t all_peak =
      make_plan(load_config(GetParam(), 4), {Policy::VdnnAll, 0, 0}).predicted_peak;
  for (const SessionOptions& o : {options(Policy::VdnnAll), options(Policy::VdnnConv),
                                  options(Policy::VdnnDyn, (base.predicted_peak + all_peak) / 2)}) {
    const auto run = run_steps(load_config(GetParam(), 4), o, kSteps);
    EXPECT_EQ(run.losses, base.losses) << policy_name(o.policy);
    EXPECT_EQ(run.weights, base.weights) << policy_name(o.policy);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(o.policy);
    EXPECT_LT(run.memory.device_peak, base.memory.device_peak) << policy_name(o.policy);
  }
}

TEST_P(OffloadInvariance, HoldsUnderRandomStreamDelaysOver200Seeds) {
  const auto base = run_steps(load_config(GetParam(), 2), options(Policy::Baseline), kSteps);
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    SessionOptions o = options(seed % 2 == 0 ? Policy::VdnnAll : Policy::VdnnConv);
    o.stress = {true, seed, std::chrono::microseconds(20)};
    const auto run = run_steps(load_config(GetParam(), 2), o, kSteps);
    ASSERT_EQ(run.losses, base.losses) << "seed " << seed << " " << policy_name(o.policy);
    ASSERT_EQ(run.weights, base.weights) << "seed " << seed << " " << policy_name(o.policy);
  }
}

INSTANTIATE_TEST_SUITE_P(Networks, OffloadInvariance,
                         ::testing::Values("resnet20-cifar.json", "densenet40-cifar.json",
                                           "googlenet-mini.json"),
                         [](const auto& test) {
                           std::string name = test.param;
                           return name.substr(0, name.find_first_of("-."));
                         });

TEST(Budget, BaselineDoesNotFitWhereVdnnAllTrainsUnderIt) {
  const Graph g = load_config("resnet20-cifar.json", 16);
  const std::uint64_t base = make_plan(g, {Policy::Baseline, 0, 0}).predicted_peak;
  const std::uint64_t all = make_plan(g, {Policy::VdnnAll, 0, 0}).predicted_peak;
  const std::uint64_t budget = all + (base - all) / 4;
  EXPECT_THROW(Session(load_config("resnet20-cifar.json", 16), options(Policy::Baseline, budget)),
               DoesNotFit);
  const auto run =
      run_steps(load_config("resnet20-cifar.json", 16), options(Policy::VdnnAll, budget), 3);
  EXPECT_LE(run.memory.device_peak, budget);
  EXPECT_EQ(run.memory.device_peak, run.predicted_peak);
  EXPECT_LE(run.memory.device_capacity, budget);
}

}  // namespace
}  // namespace vdnn::graph
