// Executor: training reduces the loss, runs are bitwise reproducible, memory is measured and
// matches the plan, nothing is allocated upstream after setup, errors leave it usable.
#include "graph/Executor.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::run_steps;

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double s = 0.0;
  for (std::size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

SessionOptions options(Policy policy = Policy::Baseline, std::uint64_t seed = 7) {
  SessionOptions o;
  o.policy = policy;
  o.executor.seed = seed;
  return o;
}

TEST(Executor, SmallResidualNetLearnsAndIsReproducible) {
  const auto a = run_steps(Graph::build(testing::small_residual_net(), 8), options(), 80).losses;
  const auto b = run_steps(Graph::build(testing::small_residual_net(), 8), options(), 80).losses;
  EXPECT_EQ(a, b);  // bitwise
  EXPECT_LT(mean(a, 70, 80), 0.5 * mean(a, 0, 5));
}

TEST(Executor, MeasuredPeakIsThePlansAndStepsReturnEveryByte) {
  Session session(Graph::build(testing::small_residual_net(), 4), options());
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.5f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  Executor& exec = session.executor();
  const std::uint64_t resident = exec.memory().device_current;
  EXPECT_EQ(resident, session.plan().resident_bytes);
  exec.train_step(images.data(), labels.data(), 0.01);
  EXPECT_EQ(exec.memory().device_current, resident);
  EXPECT_EQ(exec.memory().device_peak, session.plan().predicted_peak);
  EXPECT_EQ(exec.steps(), 1);
}

TEST(Executor, NoUpstreamAllocationAfterSetup) {
  Session session(testing::load_config("resnet20-cifar.json", 4), options(Policy::VdnnAll));
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.5f);
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  Executor& exec = session.executor();
  exec.train_step(images.data(), labels.data(), 0.01);
  const MemoryReport first = exec.memory();
  EXPECT_EQ(first.device_upstream_allocations, 1u);  // the pool's one block
  EXPECT_EQ(first.pinned_upstream_allocations, 3u);  // the pinned pool, input and label staging
  for (int i = 0; i < 3; ++i) exec.train_step(images.data(), labels.data(), 0.01);
  EXPECT_EQ(exec.memory().device_upstream_allocations, first.device_upstream_allocations);
  EXPECT_EQ(exec.memory().pinned_upstream_allocations, first.pinned_upstream_allocations);
  EXPECT_GT(exec.memory().pinned_peak, 0u);
  const TransferReport& copies = exec.transfers();
  EXPECT_EQ(copies.offloaded_bytes, session.plan().offloaded_bytes);
  EXPECT_EQ(copies.prefetched_bytes, session.plan().prefetched_bytes);
  EXPECT_GT(copies.offload_seconds, 0.0);
  EXPECT_GT(copies.prefetch_seconds, 0.0);
  EXPECT_GT(copies.step_seconds, 0.0);
}

TEST(Executor, ResNet20LossFallsOver50Steps) {
  const auto losses = run_steps(testing::load_config("resnet20-cifar.json", 16), options(), 50);
  EXPECT_LT(mean(losses.losses, 45, 50), 0.7 * mean(losses.losses, 0, 5));
}

TEST(Executor, ResNet20RunsAreBitwiseIdentical) {
  EXPECT_EQ(run_steps(testing::load_config("resnet20-cifar.json", 4), options(), 5).losses,
            run_steps(testing::load_config("resnet20-cifar.json", 4), options(), 5).losses);
}

TEST(Executor, LabelsOutOfRangeThrowAndLeaveItUsable) {
  Session session(Graph::build(testing::small_residual_net(), 2), options(Policy::VdnnAll));
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.f);
  std::vector<std::int32_t> labels = {0, 9};
  EXPECT_THROW(session.executor().train_step(images.data(), labels.data(), 0.01),
               runtime::InvalidArgument);
  labels = {0, 1};
  EXPECT_NO_THROW(session.executor().train_step(images.data(), labels.data(), 0.01));
  EXPECT_EQ(session.executor().memory().device_current, session.plan().resident_bytes);
}

TEST(Executor, TimelineNeedsProfilingAndFollowsThePlan) {
  Session plain(Graph::build(testing::small_residual_net(), 4), options(Policy::VdnnAll));
  std::vector<std::int32_t> labels = {0, 1, 2, 3};
  plain.executor().train_step(plain.executor().input_staging(), labels.data(), 0.01);
  EXPECT_THROW(static_cast<void>(plain.executor().timeline()), runtime::InvalidArgument);

  SessionOptions o = options(Policy::VdnnAll);
  o.executor.profile_layers = true;
  Session session(Graph::build(testing::small_residual_net(), 4), o);
  session.executor().train_step(session.executor().input_staging(), labels.data(), 0.01);
  const StepTimeline timeline = session.executor().timeline();
  const Plan& plan = session.plan();
  ASSERT_EQ(timeline.memory.size(), plan.actions.size());
  for (std::size_t i = 0; i < plan.actions.size(); ++i) {
    EXPECT_EQ(timeline.memory[i].device_bytes, plan.resident_bytes + plan.actions[i].device_bytes);
  }
  EXPECT_EQ(timeline.memory.back().pinned_bytes, 0u);  // every pinned buffer came back
  std::size_t layers = 0;
  std::size_t offloads = 0;
  for (const TimelineEvent& e : timeline.events) {
    EXPECT_LE(e.start, e.end);
    layers += e.op == Op::Forward || e.op == Op::Backward ? 1 : 0;
    offloads += e.op == Op::Offload ? 1 : 0;
  }
  EXPECT_EQ(layers, 2 * session.graph().nodes().size());
  EXPECT_GT(offloads, 0u);
}

}  // namespace
}  // namespace vdnn::graph
