// Inference plans (Note [Inference plan]): a forward pass over the parameters once, whatever the
// policy; the budget rule of a training step; an inference session holds no gradient, optimizer
// state or loss seed, measures the peak it predicts and gives the logits of a training session.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graph/LayerSet.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

PlanRequest request(const Graph& g, Policy policy, std::uint64_t budget, Purpose purpose) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  r.purpose = purpose;
  return r;
}

Plan inference(const Graph& g, Policy policy, std::uint64_t budget = 0) {
  return make_plan(g, request(g, policy, budget, Purpose::Inference));
}

Plan training(const Graph& g, Policy policy, std::uint64_t budget = 0) {
  return make_plan(g, request(g, policy, budget, Purpose::Training));
}

// The message of the DoesNotFit that planning throws, or "" when it fits.
template <typename Planning>
std::string does_not_fit(Planning planning) {
  try {
    planning();
  } catch (const DoesNotFit& e) {
    return e.what();
  }
  return "";
}

SessionOptions session_options(Purpose purpose) {
  SessionOptions o;
  o.executor.seed = 3;
  o.purpose = purpose;
  return o;
}

TEST(InferencePlan, HoldsTheParametersOnceAndRunsTheForwardPassAlone) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const Plan p = inference(g, Policy::Baseline);
  const Plan step = training(g, Policy::Baseline);
  EXPECT_EQ(p.purpose, Purpose::Inference);
  EXPECT_EQ(step.purpose, Purpose::Training);
  EXPECT_EQ(p.optimizer_state_buffers, 0);
  EXPECT_EQ(p.resident_bytes, parameter_bytes(g) + p.shared_workspace_bytes);
  EXPECT_LT(parameter_bytes(g), resident_bytes(g, 1));
  ASSERT_EQ(p.actions.size(), p.inference.size());
  for (std::size_t i = 0; i < p.actions.size(); ++i) {
    EXPECT_EQ(p.actions[i].op, p.inference[i].op);
    EXPECT_EQ(p.actions[i].device_bytes, p.inference[i].device_bytes);
    EXPECT_TRUE(p.actions[i].op == Op::Allocate || p.actions[i].op == Op::Forward ||
                p.actions[i].op == Op::Free || p.actions[i].op == Op::AllocateWorkspace ||
                p.actions[i].op == Op::FreeWorkspace)
        << op_name(p.actions[i].op);
  }
  EXPECT_TRUE(std::all_of(p.placement.begin(), p.placement.end(),
                          [](Placement x) { return x == Placement::ForwardOnly; }));
  std::uint64_t peak = 0;
  for (const Action& a : p.actions) peak = std::max(peak, a.device_bytes);
  EXPECT_EQ(p.predicted_peak, p.resident_bytes + peak);
  EXPECT_EQ(p.actions.back().device_bytes, 0u);  // every map freed after its last consumer
  EXPECT_EQ(p.pinned_bytes, 0u);
  EXPECT_LT(p.predicted_peak, step.predicted_peak);
  EXPECT_LT(p.pool_bytes, step.pool_bytes);
  EXPECT_GE(p.pool_bytes, p.predicted_peak);
}

TEST(InferencePlan, PoliciesHaveNothingToMoveAndSaySo) {
  const Graph g = testing::load_config("resnet20-cifar.json", 4);
  const Plan base = inference(g, Policy::Baseline);
  for (const std::string& name : policy_names()) {
    const Policy policy = parse_policy(name);
    const Plan p = inference(g, policy);
    EXPECT_EQ(p.requested, policy) << name;
    EXPECT_EQ(p.policy, policy == Policy::VdnnDyn ? Policy::Baseline : policy) << name;
    EXPECT_EQ(p.memory,
              uses_managed_memory(policy) ? DeviceMemory::Managed : DeviceMemory::Dedicated)
        << name;
    EXPECT_EQ(p.predicted_peak, base.predicted_peak) << name;
    EXPECT_EQ(p.offloaded_bytes + p.prefetched_bytes + p.evicted_bytes + p.recomputed_bytes, 0u)
        << name;
    const std::string text = format_plan(g, p);
    EXPECT_NE(text.find(std::string(policy_name(p.policy)) +
                        " has nothing to offload, prefetch or recompute"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("no gradients or optimizer state"), std::string::npos) << text;
  }
}

TEST(InferencePlan, ABudgetTheForwardPassFitsButNoTrainingStepDoes) {
  const Graph g = testing::load_config("resnet20-cifar.json", 8);
  const Plan unbounded = inference(g, Policy::Baseline);
  const std::uint64_t budget = unbounded.pool_bytes + (std::uint64_t{64} << 10);
  const Plan p = inference(g, Policy::Baseline, budget);
  EXPECT_LE(p.predicted_peak, budget);
  EXPECT_LE(p.pool_bytes, budget);
  for (const std::string& name : policy_names()) {
    EXPECT_NE(does_not_fit([&] { training(g, parse_policy(name), budget); }), "") << name;
  }
  // Below the forward pass's own peak: DoesNotFit in the words of a training step's.
  const std::string message =
      does_not_fit([&] { inference(g, Policy::VdnnAll, unbounded.predicted_peak - 1024); });
  EXPECT_NE(message.find("inference under policy vdnn-all needs"), std::string::npos) << message;
  EXPECT_NE(message.find("short by 1.00 KiB"), std::string::npos) << message;
  EXPECT_NE(message.find("a smaller batch might fit"), std::string::npos) << message;
}

TEST(InferencePlan, SessionHoldsNoGradientOrOptimizerStateAndMeasuresItsPeak) {
  const Graph g = Graph::build(testing::small_residual_net(), 4);
  Session session(g, session_options(Purpose::Inference));
  Executor& exec = session.executor();
  EXPECT_EQ(session.plan().purpose, Purpose::Inference);
  for (const Parameter& p : exec.parameters().all()) {
    EXPECT_FALSE(p.value.empty()) << p.name;
    EXPECT_TRUE(p.grad.empty()) << p.name;
    for (const runtime::Buffer& s : p.state) EXPECT_TRUE(s.empty()) << p.name;
  }
  EXPECT_EQ(exec.memory().device_current, session.plan().resident_bytes);
  std::vector<float> images(static_cast<std::size_t>(session.graph().input_shape().numel()), 0.5f);
  const std::vector<std::int32_t> labels = {0, 1, 2, 3};
  std::vector<float> logits(4 * static_cast<std::size_t>(session.graph().num_classes()));
  exec.evaluate(images.data(), labels.data(), logits.data());
  EXPECT_EQ(exec.memory().device_peak, session.plan().predicted_peak);
  EXPECT_EQ(exec.memory().device_current, session.plan().resident_bytes);
  EXPECT_THROW(exec.train_step(images.data(), labels.data(), 0.01), runtime::InvalidArgument);

  // A training session of the same seed gives the same logits from a larger peak.
  Session step(g, session_options(Purpose::Training));
  std::vector<float> trained(logits.size());
  step.executor().evaluate(images.data(), labels.data(), trained.data());
  EXPECT_EQ(trained, logits);
  EXPECT_LT(exec.memory().device_peak, step.executor().memory().device_peak);
  EXPECT_GT(step.executor().memory().device_current, exec.memory().device_current);
}

}  // namespace
}  // namespace vdnn::graph
