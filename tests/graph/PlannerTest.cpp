// Planner: placements per policy, the order of offload/prefetch actions, predicted peaks, budgets.
#include "graph/Planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "models/ConfigLoader.hpp"

namespace vdnn::graph {
namespace {

Graph load(const std::string& name, std::int64_t batch) {
  return Graph::build(models::load_network(std::string(VDNN_SOURCE_DIR) + "/configs/" + name),
                      batch);
}

Plan plan(const Graph& g, Policy policy, std::uint64_t budget = 0) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.workspace_bytes = 1 << 20;
  return make_plan(g, r);
}

// Index of the first action matching (op, tensor), or -1.
long find(const Plan& p, Op op, NodeId tensor) {
  for (std::size_t i = 0; i < p.actions.size(); ++i) {
    if (p.actions[i].op == op && p.actions[i].tensor == tensor) return static_cast<long>(i);
  }
  return -1;
}

TEST(Planner, BaselineKeepsEverythingBackwardNeeds) {
  const Graph g = load("resnet20-cifar.json", 8);
  const Plan p = plan(g, Policy::Baseline);
  EXPECT_EQ(p.offloaded_bytes, 0u);
  EXPECT_EQ(p.pinned_bytes, 0u);
  for (const Action& a : p.actions) {
    EXPECT_NE(a.op, Op::Offload);
    EXPECT_NE(a.op, Op::Prefetch);
  }
  // Every allocation is matched by a free: the step returns to the resident bytes.
  EXPECT_EQ(p.actions.back().device_bytes, 0u);
  EXPECT_EQ(p.predicted_peak,
            p.resident_bytes + std::max_element(p.actions.begin(), p.actions.end(),
                                                [](const Action& a, const Action& b) {
                                                  return a.device_bytes < b.device_bytes;
                                                })
                                   ->device_bytes);
}

TEST(Planner, VdnnAllOffloadsEachConvInputAfterItsLastConsumerAndPrefetchesBeforeBackward) {
  const Graph g = load("resnet20-cifar.json", 8);
  const Liveness live(g);
  const Plan p = plan(g, Policy::VdnnAll);
  int conv_inputs = 0;
  for (NodeId c = 0; c < static_cast<NodeId>(g.nodes().size()); ++c) {
    if (!std::holds_alternative<layers::Conv2dSpec>(g.node(c).spec)) continue;
    const NodeId t = g.node(c).inputs.front();
    ++conv_inputs;
    ASSERT_EQ(p.placement_of(t), Placement::Offloaded) << g.node(c).name;
    const long produced = find(p, Op::Forward, t);
    const long offload = find(p, Op::Offload, t);
    const long last_consumer = find(p, Op::Forward, live.of(t).last_forward_use);
    const long release = find(p, Op::Release, t);
    const long prefetch = find(p, Op::Prefetch, t);
    const long await = find(p, Op::AwaitPrefetch, t);
    const long first_backward = find(p, Op::Backward, live.of(t).backward_readers.back());
    const long conv_backward = find(p, Op::Backward, c);
    EXPECT_LT(produced, offload);
    EXPECT_LT(last_consumer, release) << "released before its last forward consumer ran";
    EXPECT_LT(release, prefetch);
    EXPECT_LT(prefetch, await);
    EXPECT_LT(await, first_backward);
    EXPECT_LE(first_backward, conv_backward);
  }
  EXPECT_EQ(conv_inputs, 21);  // 19 convs on the main path and 2 projection shortcuts
}

TEST(Planner, VdnnConvOffloadsOnlyConvolutionInputs) {
  const Graph g = load("resnet20-cifar.json", 8);
  const Plan p = plan(g, Policy::VdnnConv);
  for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (p.placement_of(t) != Placement::Offloaded) continue;
    const auto& consumers = g.node(t).consumers;
    EXPECT_TRUE(std::any_of(consumers.begin(), consumers.end(), [&](NodeId c) {
      return std::holds_alternative<layers::Conv2dSpec>(g.node(c).spec);
    })) << g.node(t).name;
  }
  EXPECT_GT(p.offloaded_bytes, 0u);
}

TEST(Planner, OffloadingLowersThePredictedPeak) {
  for (const char* config :
       {"resnet20-cifar.json", "densenet40-cifar.json", "googlenet-mini.json"}) {
    const Graph g = load(config, 16);
    const Plan base = plan(g, Policy::Baseline);
    const Plan conv = plan(g, Policy::VdnnConv);
    const Plan all = plan(g, Policy::VdnnAll);
    EXPECT_LT(conv.predicted_peak, base.predicted_peak) << config;
    EXPECT_LE(all.predicted_peak, conv.predicted_peak) << config;
    EXPECT_GT(all.pinned_bytes, 0u) << config;
    EXPECT_EQ(all.offloaded_bytes, all.prefetched_bytes) << config;
  }
}

TEST(Planner, BudgetBetweenPeaksRejectsBaselineAndAdvisesVdnnAll) {
  const Graph g = load("resnet20-cifar.json", 32);
  const std::uint64_t base = plan(g, Policy::Baseline).predicted_peak;
  const std::uint64_t all = plan(g, Policy::VdnnAll).predicted_peak;
  const std::uint64_t budget = (base + all) / 2;
  try {
    plan(g, Policy::Baseline, budget);
    FAIL() << "expected DoesNotFit";
  } catch (const DoesNotFit& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("short by"), std::string::npos) << what;
    EXPECT_NE(what.find("fits"), std::string::npos) << what;
    EXPECT_EQ(e.bytes_limit(), budget);
  }
  const Plan p = plan(g, Policy::VdnnAll, budget);
  EXPECT_LE(p.predicted_peak, budget);
}

TEST(Planner, DynPicksTheFastestPolicyThatFits) {
  const Graph g = load("resnet20-cifar.json", 32);
  // pool_bytes: the smallest pool the dry run of the allocator places every allocation in.
  const Plan base = plan(g, Policy::Baseline);
  EXPECT_EQ(plan(g, Policy::VdnnDyn, base.pool_bytes).policy, Policy::Baseline);
  const Plan conv = plan(g, Policy::VdnnConv);
  EXPECT_EQ(plan(g, Policy::VdnnDyn, conv.pool_bytes).policy, Policy::VdnnConv);
  const Plan all = plan(g, Policy::VdnnAll);
  EXPECT_EQ(plan(g, Policy::VdnnDyn, all.pool_bytes).policy, Policy::VdnnAll);
  EXPECT_THROW(plan(g, Policy::VdnnDyn, all.resident_bytes), DoesNotFit);
}

TEST(Planner, UnderABudgetOffloadsOnlyWhatTheBudgetCannotHold) {
  const Graph g = load("resnet20-cifar.json", 32);
  const Plan all = plan(g, Policy::VdnnAll);
  const Plan base = plan(g, Policy::Baseline);
  const std::uint64_t budget = all.predicted_peak + (base.predicted_peak - all.predicted_peak) / 3;
  const Plan p = plan(g, Policy::VdnnAll, budget);
  EXPECT_LE(p.predicted_peak, budget);
  EXPECT_GT(p.offloaded_bytes, 0u);
  EXPECT_LT(p.offloaded_bytes, all.offloaded_bytes);
  // The maps kept are the last ones produced: every offloaded map comes before every kept one.
  NodeId last_offloaded = kNetworkInput;
  NodeId first_kept = static_cast<NodeId>(g.nodes().size());
  for (NodeId t = kNetworkInput; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (p.placement_of(t) == Placement::Offloaded) last_offloaded = t;
    if (p.placement_of(t) == Placement::Resident && all.placement_of(t) == Placement::Offloaded) {
      first_kept = std::min(first_kept, t);
    }
  }
  EXPECT_LT(last_offloaded, first_kept + 8);  // a few misses may leave gaps near the boundary
}

TEST(Planner, ParsesPolicyNames) {
  EXPECT_EQ(parse_policy("vdnn-conv"), Policy::VdnnConv);
  EXPECT_STREQ(policy_name(parse_policy("vdnn-dyn")), "vdnn-dyn");
  EXPECT_THROW(parse_policy("vdnn-some"), runtime::InvalidArgument);
}

}  // namespace
}  // namespace vdnn::graph
