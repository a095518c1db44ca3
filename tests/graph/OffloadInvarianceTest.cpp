// Offload invariance: every policy (recompute too) gives bitwise the same losses and final weights,
// running statistics included, as baseline, also with random stream delays and NaN-poisoned freed
// memory; measured peaks equal predicted peaks; a budget between vdnn-all's and baseline's peaks
// separates them.
#include <gtest/gtest.h>

#include "graph/Fusion.hpp"
#include "graph/Precision.hpp"
#include "graph/SessionHarness.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/memory/OversubscriptionGuard.hpp"

namespace vdnn::graph {
namespace {

using testing::load_config;
using testing::run_steps;

constexpr int kSteps = 5;

SessionOptions options(Policy policy, std::uint64_t budget = 0,
                       runtime::DType precision = runtime::DType::F32) {
  SessionOptions o;
  o.policy = policy;
  o.precision = precision;
  o.budget_bytes = budget;
  o.executor.seed = 11;
  o.executor.poison_freed = true;
  return o;
}

// Auto under a budget a fifth of the way from vdnn-all's peak to baseline's, with estimated costs
// (a plan that does not depend on this machine's timings): it offloads and recomputes.
SessionOptions auto_options(const Graph& unfused, runtime::DType precision = runtime::DType::F32) {
  const Graph g = fuse(with_precision(unfused, precision));  // as the session runs it
  PlanRequest r{Policy::VdnnAll, 0, LayerSet(g, layers::Backend::Cpu, {}).workspaces()};
  const std::uint64_t all = make_plan(g, r).predicted_peak;
  r.policy = Policy::Baseline;
  const std::uint64_t base = make_plan(g, r).predicted_peak;
  SessionOptions o = options(Policy::Auto, all + (base - all) / 5, precision);
  o.costs = std::make_shared<const CostModel>(estimate_costs(g));
  return o;
}

class OffloadInvariance : public ::testing::TestWithParam<const char*> {};

TEST_P(OffloadInvariance, EveryPolicyMatchesBaselineBitwise) {
  const auto base = run_steps(load_config(GetParam(), 4), options(Policy::Baseline), kSteps);
  EXPECT_EQ(base.memory.device_peak, base.predicted_peak);
  const std::uint64_t all_peak =
      make_plan(load_config(GetParam(), 4), {Policy::VdnnAll, 0, {}}).predicted_peak;
  for (const SessionOptions& o :
       {options(Policy::VdnnAll), options(Policy::VdnnConv),
        options(Policy::VdnnDyn, (base.predicted_peak + all_peak) / 2), options(Policy::Recompute),
        auto_options(load_config(GetParam(), 4))}) {
    const auto run = run_steps(load_config(GetParam(), 4), o, kSteps);
    EXPECT_EQ(run.losses, base.losses) << policy_name(o.policy);
    EXPECT_EQ(run.weights, base.weights) << policy_name(o.policy);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(o.policy);
    EXPECT_LT(run.memory.device_peak, base.memory.device_peak) << policy_name(o.policy);
  }
}

TEST_P(OffloadInvariance, HoldsUnderRandomStreamDelaysOver200Seeds) {
  const auto base = run_steps(load_config(GetParam(), 2), options(Policy::Baseline), kSteps);
  constexpr Policy kPolicies[] = {Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute,
                                  Policy::Auto};
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const Policy policy = kPolicies[seed % 4];
    SessionOptions o =
        policy == Policy::Auto ? auto_options(load_config(GetParam(), 2)) : options(policy);
    o.stress = {true, seed, std::chrono::microseconds(20)};
    const auto run = run_steps(load_config(GetParam(), 2), o, kSteps);
    ASSERT_EQ(run.losses, base.losses) << "seed " << seed << " " << policy_name(o.policy);
    ASSERT_EQ(run.weights, base.weights) << "seed " << seed << " " << policy_name(o.policy);
  }
}

// Where auto's plan takes the blocks whose offload copies may still run last (Note [Deferred
// frees]), the executor places every block as the plan's dry run did for more steps than the dry
// run replays (8; where its steps do not repeat the plan is refused: ResNet-1001 under 1 GiB once
// ran out of memory in its ninth step on the H200), with random stream delays, bitwise as baseline.
TEST(SettledBlocks, AutoPlansTrainAsPlannedPastTheDryRunsSteps) {
  constexpr int kManySteps = 12;
  int settled = 0;
  for (const char* config : {"resnet20-cifar.json", "densenet40-cifar.json"}) {
    const auto base = run_steps(load_config(config, 2), options(Policy::Baseline), kManySteps);
    SessionOptions o = auto_options(load_config(config, 2));
    o.stress = {true, 7, std::chrono::microseconds(20)};
    const auto run = run_steps(load_config(config, 2), o, kManySteps);
    SCOPED_TRACE(config);
    EXPECT_EQ(run.losses, base.losses);
    EXPECT_EQ(run.weights, base.weights);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak);
    settled += run.device_blocks == runtime::BlockChoice::SettledFirst ? 1 : 0;
  }
  EXPECT_GT(settled, 0);  // else this test checks nothing it means to
}

// Managed memory on the CPU backend: the same plans on host memory, migrations moving nothing, so
// these check the schedule: evicted maps keep their range until their last backward reader.
TEST_P(OffloadInvariance, UvmPoliciesMatchBaselineBitwise) {
  const auto base = run_steps(load_config(GetParam(), 4), options(Policy::Baseline), kSteps);
  for (Policy p : {Policy::Uvm, Policy::UvmEvict, Policy::UvmPrefetch}) {
    const auto run = run_steps(load_config(GetParam(), 4), options(p), kSteps);
    EXPECT_EQ(run.losses, base.losses) << policy_name(p);
    EXPECT_EQ(run.weights, base.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
    EXPECT_EQ(run.memory.pool_peak, run.predicted_pool_peak) << policy_name(p);
    EXPECT_EQ(run.memory.pool_peak, base.memory.pool_peak) << policy_name(p);
    if (p != Policy::Uvm) {
      EXPECT_LT(run.memory.device_peak, base.memory.device_peak) << policy_name(p);
    }
  }
}

TEST_P(OffloadInvariance, UvmHoldsUnderRandomStreamDelays) {
  const auto base = run_steps(load_config(GetParam(), 2), options(Policy::Baseline), kSteps);
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    SessionOptions o = options(seed % 2 == 0 ? Policy::UvmEvict : Policy::UvmPrefetch);
    o.stress = {true, seed, std::chrono::microseconds(20)};
    const auto run = run_steps(load_config(GetParam(), 2), o, kSteps);
    ASSERT_EQ(run.losses, base.losses) << "seed " << seed << " " << policy_name(o.policy);
  }
}

// Note [Precision]: the CPU emulates bf16 storage, so the same schedules move half the bytes and
// must still give the bf16 baseline's bits.
TEST_P(OffloadInvariance, EveryPolicyMatchesTheBf16BaselineBitwise) {
  constexpr runtime::DType kBf16 = runtime::DType::BF16;
  const auto base =
      run_steps(load_config(GetParam(), 4), options(Policy::Baseline, 0, kBf16), kSteps);
  const auto fp32 = run_steps(load_config(GetParam(), 4), options(Policy::Baseline), kSteps);
  EXPECT_NE(base.losses, fp32.losses);  // the rounding shows: bf16 did run
  EXPECT_LT(base.memory.device_peak, fp32.memory.device_peak);
  EXPECT_EQ(base.memory.device_peak, base.predicted_peak);
  std::vector<SessionOptions> runs;
  for (Policy p : {Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute, Policy::UvmEvict,
                   Policy::UvmPrefetch}) {
    runs.push_back(options(p, 0, kBf16));
  }
  runs.push_back(auto_options(load_config(GetParam(), 4), kBf16));
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    SessionOptions o = runs[seed % runs.size()];
    o.stress = {seed >= runs.size(), seed, std::chrono::microseconds(20)};
    const auto run = run_steps(load_config(GetParam(), 4), o, kSteps);
    EXPECT_EQ(run.losses, base.losses) << "seed " << seed << " " << policy_name(o.policy);
    EXPECT_EQ(run.weights, base.weights) << "seed " << seed << " " << policy_name(o.policy);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(o.policy);
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
  const std::uint64_t base = make_plan(g, {Policy::Baseline, 0, {}}).predicted_peak;
  const std::uint64_t all = make_plan(g, {Policy::VdnnAll, 0, {}}).predicted_peak;
  const std::uint64_t budget = all + (base - all) / 4;
  EXPECT_THROW(Session(load_config("resnet20-cifar.json", 16), options(Policy::Baseline, budget)),
               DoesNotFit);
  const auto run =
      run_steps(load_config("resnet20-cifar.json", 16), options(Policy::VdnnAll, budget), 3);
  EXPECT_LE(run.memory.device_peak, budget);
  EXPECT_EQ(run.memory.device_peak, run.predicted_peak);
  EXPECT_LE(run.memory.device_capacity, budget);
}

// Between recompute's own peak and baseline's: the budget keeps some maps, the rest are rebuilt.
TEST(Budget, RecomputeTrainsBitwiseAsBaselineUnderABudgetBaselineDoesNotFit) {
  const Graph g = load_config("resnet20-cifar.json", 16);
  const std::uint64_t base = make_plan(g, {Policy::Baseline, 0, {}}).predicted_peak;
  const std::uint64_t least = make_plan(g, {Policy::Recompute, 0, {}}).predicted_peak;
  const std::uint64_t budget = least + (base - least) / 2;
  EXPECT_THROW(Session(load_config("resnet20-cifar.json", 16), options(Policy::Baseline, budget)),
               DoesNotFit);
  const auto run =
      run_steps(load_config("resnet20-cifar.json", 16), options(Policy::Recompute, budget), 3);
  EXPECT_LE(run.memory.device_peak, budget);
  EXPECT_EQ(run.memory.device_peak, run.predicted_peak);
  EXPECT_EQ(run.losses,
            run_steps(load_config("resnet20-cifar.json", 16), options(Policy::Baseline), 3).losses);
}

TEST(Budget, UvmPrefetchKeepsDevicePagesWithinTheBudget) {
  const Graph g = load_config("resnet20-cifar.json", 16);
  const std::uint64_t base = make_plan(g, {Policy::Baseline, 0, {}}).predicted_peak;
  const std::uint64_t all = make_plan(g, {Policy::VdnnAll, 0, {}}).predicted_peak;
  const std::uint64_t budget = all + (base - all) / 4;
  const auto run =
      run_steps(load_config("resnet20-cifar.json", 16), options(Policy::UvmPrefetch, budget), 3);
  EXPECT_LE(run.memory.device_peak, budget);
  EXPECT_EQ(run.memory.device_peak, run.predicted_peak);
  EXPECT_GT(run.memory.pool_peak, budget);
}

TEST(ManagedMemory, MoreThanTheDeviceHasFreeIsRefusedWithBothSizes) {
  SessionOptions o = options(Policy::UvmPrefetch);
  o.cpu_free_device_bytes = std::uint64_t{1} << 20;
  try {
    Session session(load_config("resnet20-cifar.json", 16), o);
    FAIL() << "expected OversubscriptionRefused";
  } catch (const runtime::OversubscriptionRefused& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1.00 MiB free"), std::string::npos) << what;
    EXPECT_NE(what.find("refusing to allocate " + runtime::format_bytes(e.bytes_requested())),
              std::string::npos)
        << what;
  }
  o.executor.allow_oversubscription = true;  // host memory here: nothing to hang
  EXPECT_EQ(run_steps(load_config("resnet20-cifar.json", 16), o, 1).losses.size(), 1u);
}

}  // namespace
}  // namespace vdnn::graph
