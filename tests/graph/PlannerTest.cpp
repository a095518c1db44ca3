// Planner: placements per policy, the order of offload/prefetch actions, predicted peaks, budgets.
#include "graph/LayerSet.hpp"
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
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  return make_plan(g, r);
}

// The bytes of the plan's StageInput (Note [Input staging]), 0 without one.
std::uint64_t staged_bytes(const Plan& p) {
  for (const Action& a : p.actions) {
    if (a.op == Op::StageInput) return a.bytes;
  }
  return 0;
}

// The plan as it was before its StageInput was inserted.
Plan without_staging(Plan p) {
  const auto at = std::find_if(p.actions.begin(), p.actions.end(),
                               [](const Action& a) { return a.op == Op::StageInput; });
  if (at == p.actions.end()) return p;
  const std::uint64_t bytes = at->bytes;
  for (auto later = at + 1; later != p.actions.end(); ++later) later->device_bytes -= bytes;
  p.actions.erase(at);
  return p;
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
  // Every allocation is matched by a free: the step returns to the resident bytes and the next
  // batch.
  EXPECT_EQ(p.actions.back().device_bytes, g.input_shape().bytes(runtime::DType::F32));
  EXPECT_EQ(staged_bytes(p), g.input_shape().bytes(runtime::DType::F32));
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

TEST(Planner, DynPicksThePolicyPredictedFastestThatFits) {
  const Graph g = load("resnet20-cifar.json", 32);
  // pool_bytes: the smallest pool the dry run of the allocator places every allocation in.
  const Plan base = plan(g, Policy::Baseline);
  EXPECT_EQ(plan(g, Policy::VdnnDyn, base.pool_bytes).policy, Policy::Baseline);
  for (const std::uint64_t budget :
       {plan(g, Policy::VdnnConv).pool_bytes, plan(g, Policy::VdnnAll).pool_bytes}) {
    const Plan dyn = plan(g, Policy::VdnnDyn, budget);
    EXPECT_LE(dyn.predicted_peak, budget);
    EXPECT_NE(dyn.policy, Policy::Baseline);
    for (Policy p : {Policy::VdnnConv, Policy::VdnnAll, Policy::Auto}) {
      try {
        EXPECT_LE(dyn.predicted_step_seconds, plan(g, p, budget).predicted_step_seconds)
            << policy_name(p);
      } catch (const DoesNotFit&) {
      }
    }
  }
  EXPECT_THROW(plan(g, Policy::VdnnDyn, plan(g, Policy::VdnnAll).resident_bytes), DoesNotFit);
}

// A budget a third of the way from vdnn-all's peak to baseline's.
std::uint64_t budget_between(const Graph& g) {
  const std::uint64_t all = plan(g, Policy::VdnnAll).predicted_peak;
  return all + (plan(g, Policy::Baseline).predicted_peak - all) / 3;
}

TEST(Planner, UnderABudgetOffloadsOnlyWhatTheBudgetCannotHold) {
  const Graph g = load("resnet20-cifar.json", 32);
  const Plan all = plan(g, Policy::VdnnAll);
  const std::uint64_t budget = budget_between(g);
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
  for (const std::string& name : policy_names()) EXPECT_EQ(policy_name(parse_policy(name)), name);
  EXPECT_TRUE(uses_managed_memory(parse_policy("uvm-prefetch")));
  EXPECT_FALSE(uses_managed_memory(parse_policy("vdnn-all")));
}

// The tensor of the nearest `op` action before (direction -1) or after (+1) action `at`.
NodeId nearest(const Plan& p, Op op, long at, int direction) {
  for (long i = at + direction; i >= 0 && i < static_cast<long>(p.actions.size()); i += direction) {
    if (p.actions[static_cast<std::size_t>(i)].op == op) {
      return p.actions[static_cast<std::size_t>(i)].tensor;
    }
  }
  return kNetworkInput - 1;
}

std::size_t count(const Plan& p, Op op) {
  return static_cast<std::size_t>(std::count_if(p.actions.begin(), p.actions.end(),
                                                [op](const Action& a) { return a.op == op; }));
}

TEST(Planner, UvmIsBaselineInManagedMemory) {
  const Graph g = load("resnet20-cifar.json", 8);
  const Plan staged = plan(g, Policy::Baseline);
  const Plan base = without_staging(staged);  // managed memory stages no input
  const Plan uvm = plan(g, Policy::Uvm);
  EXPECT_EQ(uvm.memory, DeviceMemory::Managed);
  EXPECT_EQ(base.memory, DeviceMemory::Dedicated);
  ASSERT_EQ(uvm.actions.size(), base.actions.size());
  for (std::size_t i = 0; i < uvm.actions.size(); ++i) {
    EXPECT_EQ(uvm.actions[i].op, base.actions[i].op) << i;
    EXPECT_EQ(uvm.actions[i].device_bytes, base.actions[i].device_bytes) << i;
  }
  EXPECT_EQ(uvm.predicted_pool_peak, uvm.predicted_peak);
  EXPECT_EQ(uvm.predicted_peak, staged.predicted_peak);
  EXPECT_LE(uvm.pool_bytes, staged.pool_bytes);
  EXPECT_EQ(uvm.evicted_bytes, 0u);
}

// Note [Input staging]: the next batch goes up at the earliest point of backward from which its
// bytes fit under the step's peak until the step ends; managed memory stages nothing.
TEST(Planner, StagesTheNextBatchInBackwardWhereThePeakHasRoom) {
  const Graph g = load("resnet20-cifar.json", 8);
  const std::uint64_t input = g.input_shape().bytes(runtime::DType::F32);
  for (const Policy policy :
       {Policy::Baseline, Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute}) {
    const Plan p = plan(g, policy);
    const Plan unstaged = without_staging(p);
    const std::string name = policy_name(policy);
    ASSERT_EQ(count(p, Op::StageInput), 1u) << name;
    const auto at = static_cast<std::size_t>(find(p, Op::StageInput, kNetworkInput));
    const auto first_backward = static_cast<std::size_t>(std::distance(
        p.actions.begin(), std::find_if(p.actions.begin(), p.actions.end(),
                                        [](const Action& a) { return a.op == Op::Backward; })));
    EXPECT_GT(at, first_backward) << name;
    EXPECT_EQ(p.actions[at].bytes, input) << name;
    std::uint64_t peak = 0;
    for (const Action& a : unstaged.actions) peak = std::max(peak, a.device_bytes);
    EXPECT_EQ(p.predicted_peak, p.resident_bytes + peak) << name;
    for (std::size_t i = at; i < p.actions.size(); ++i) {
      EXPECT_LE(p.actions[i].device_bytes, peak) << name << " " << i;
    }
    // One action earlier, the next batch would have passed the peak.
    if (at > first_backward + 1) {
      std::uint64_t from = unstaged.actions[at - 2].device_bytes;
      for (std::size_t i = at - 1; i < unstaged.actions.size(); ++i) {
        from = std::max(from, unstaged.actions[i].device_bytes);
      }
      EXPECT_GT(from + input, peak) << name;
    }
  }
  EXPECT_EQ(count(plan(g, Policy::UvmPrefetch), Op::StageInput), 0u);
}

// uvm-evict and uvm-prefetch move exactly the maps vdnn-all offloads, at the same points, with the
// same device bytes; the maps keep their range in the pool, and nothing needs pinned memory.
TEST(Planner, UvmEvictAndPrefetchFollowVdnnAllsSchedule) {
  const Graph g = load("resnet20-cifar.json", 8);
  const Liveness live(g);
  const Plan base = plan(g, Policy::Baseline);
  const Plan all = plan(g, Policy::VdnnAll);
  for (Policy policy : {Policy::UvmEvict, Policy::UvmPrefetch}) {
    const Plan p = plan(g, policy);
    const Placement moved = policy == Policy::UvmEvict ? Placement::Evicted : Placement::Migrated;
    for (NodeId t = kNetworkInput; t < static_cast<NodeId>(g.nodes().size()); ++t) {
      EXPECT_EQ(p.placement_of(t) == moved, all.placement_of(t) == Placement::Offloaded) << t;
      if (p.placement_of(t) != moved) continue;
      const long evict = find(p, Op::Evict, t);
      EXPECT_EQ(nearest(p, Op::Forward, evict, -1), live.of(t).last_forward_use);
      const long first_backward = find(p, Op::Backward, live.of(t).backward_readers.back());
      if (policy == Policy::UvmEvict) {
        EXPECT_EQ(nearest(p, Op::Backward, find(p, Op::FaultIn, t), 1),
                  live.of(t).backward_readers.back())
            << "faults in right before its first reader";
      } else {
        EXPECT_LT(evict, find(p, Op::Migrate, t));
        EXPECT_LT(find(p, Op::Migrate, t), find(p, Op::AwaitPrefetch, t));
        EXPECT_LT(find(p, Op::AwaitPrefetch, t), first_backward);
      }
    }
    EXPECT_EQ(count(p, Op::Offload) + count(p, Op::Prefetch) + count(p, Op::Release), 0u);
    EXPECT_EQ(p.pinned_bytes, 0u);
    EXPECT_EQ(p.evicted_bytes, all.offloaded_bytes);
    EXPECT_EQ(p.migrated_bytes + p.faulted_bytes, all.prefetched_bytes);
    EXPECT_EQ(policy == Policy::UvmEvict ? p.migrated_bytes : p.faulted_bytes, 0u);
    EXPECT_EQ(p.predicted_pool_peak, base.predicted_peak);
    EXPECT_EQ(p.pool_bytes, base.pool_bytes);
    EXPECT_EQ(p.actions.back().device_bytes, 0u);
  }
  EXPECT_EQ(plan(g, Policy::UvmPrefetch).predicted_peak, all.predicted_peak);
  EXPECT_GE(plan(g, Policy::UvmEvict).predicted_peak, all.predicted_peak);
}

TEST(Planner, UnderABudgetUvmBoundsDevicePagesNotThePool) {
  const Graph g = load("resnet20-cifar.json", 32);
  const std::uint64_t budget = budget_between(g);
  const Plan p = plan(g, Policy::UvmPrefetch, budget);
  EXPECT_LE(p.predicted_peak, budget);
  EXPECT_GT(p.pool_bytes, budget);  // evicted maps keep their range
  EXPECT_GT(p.evicted_bytes, 0u);
  EXPECT_LT(p.evicted_bytes, plan(g, Policy::UvmPrefetch).evicted_bytes);
  try {
    plan(g, Policy::Uvm, budget);
    FAIL() << "expected DoesNotFit";
  } catch (const DoesNotFit& e) {
    EXPECT_NE(std::string(e.what()).find("Policy uvm-prefetch fits"), std::string::npos)
        << e.what();
  }
}

// Note [Recomputation]: maps of cheap layers leave after forward and their layers run again right
// before the first backward reader; convolutions' and linear layers' outputs and the input stay.
TEST(Planner, RecomputeRebuildsCheapMapsJustBeforeTheirFirstBackwardReader) {
  const Graph g = load("resnet20-cifar.json", 8);
  const Liveness live(g);
  const Plan base = plan(g, Policy::Baseline);
  const Plan p = plan(g, Policy::Recompute);
  EXPECT_EQ(count(p, Op::Offload) + count(p, Op::Prefetch) + count(p, Op::Evict), 0u);
  EXPECT_EQ(p.pinned_bytes, 0u);
  std::size_t recomputed = 0;
  for (NodeId t = kNetworkInput; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (p.placement_of(t) != Placement::Recomputed) continue;
    ++recomputed;
    const std::string_view type = layers::type_name(g.node(t).spec);
    EXPECT_TRUE(type != "conv2d" && type != "linear") << g.node(t).name;
    EXPECT_EQ(nearest(p, Op::Forward, find(p, Op::Free, t), -1), live.of(t).last_forward_use);
    const long rebuilt = find(p, Op::Recompute, t);
    ASSERT_GT(rebuilt, find(p, Op::Free, t)) << g.node(t).name;
    EXPECT_EQ(nearest(p, Op::Backward, rebuilt, 1), live.of(t).backward_readers.back());
    EXPECT_EQ(nearest(p, Op::Backward, rebuilt, -1), live.of(t).backward_readers.back() + 1);
  }
  EXPECT_GT(recomputed, 10u);
  EXPECT_EQ(p.placement_of(kNetworkInput), Placement::Resident);
  EXPECT_GE(count(p, Op::Recompute), recomputed);  // temporaries are rebuilt too
  EXPECT_GT(p.recomputed_bytes, 0u);
  EXPECT_EQ(p.actions.back().device_bytes, staged_bytes(p));
  EXPECT_LT(p.predicted_peak, base.predicted_peak);
}

TEST(Planner, RecomputeFitsABudgetBaselineDoesNotAndNotOneBelowItsPeak) {
  const Graph g = load("resnet20-cifar.json", 32);
  const std::uint64_t least = plan(g, Policy::Recompute).predicted_peak;
  const std::uint64_t budget = least + (plan(g, Policy::Baseline).predicted_peak - least) / 2;
  const Plan p = plan(g, Policy::Recompute, budget);
  EXPECT_LE(p.predicted_peak, budget);
  EXPECT_LE(p.pool_bytes, budget);
  EXPECT_GT(p.recomputed_bytes, 0u);
  EXPECT_LT(p.recomputed_bytes, plan(g, Policy::Recompute).recomputed_bytes);  // kept what fits
  EXPECT_THROW(plan(g, Policy::Baseline, budget), DoesNotFit);
  EXPECT_THROW(plan(g, Policy::Recompute, least - 1), DoesNotFit);
}

// Note [Workspace]: a pass's workspace above kSharedWorkspaceBytes is allocated right before it and
// freed right after, so it counts in the peak only while the pass runs; smaller ones share one
// resident buffer.
TEST(Planner, LargeWorkspacesAreHeldOnlyWhileTheirPassRunsAndSmallOnesShareOne) {
  const Graph g = load("resnet20-cifar.json", 8);
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  PlanRequest r;
  r.policy = Policy::Recompute;
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    r.workspace.push_back({(i % 2 == 0 ? 3 : 100) * kMiB, 80 * kMiB});
  }
  const Plan p = make_plan(g, r);
  EXPECT_EQ(p.shared_workspace_bytes, 3 * kMiB);
  EXPECT_EQ(p.resident_bytes, resident_bytes(g, 1) + 3 * kMiB);
  int own = 0;
  for (std::size_t i = 0; i < p.actions.size(); ++i) {
    const Action& a = p.actions[i];
    const bool forward =
        (a.op == Op::Forward && a.tensor != kNetworkInput) || a.op == Op::Recompute;
    if (!forward && a.op != Op::Backward) continue;
    const layers::WorkspaceBytes& w = r.workspace[static_cast<std::size_t>(a.tensor)];
    const std::uint64_t bytes = forward ? w.forward : w.backward;
    ASSERT_GT(i, 0u);
    ASSERT_LT(i + 1, p.actions.size());
    const Action& before = p.actions[i - 1];
    const Action& after = p.actions[i + 1];
    if (bytes <= kSharedWorkspaceBytes) {
      EXPECT_NE(before.op, Op::AllocateWorkspace);
      continue;
    }
    ++own;
    EXPECT_EQ(before.op, Op::AllocateWorkspace);
    EXPECT_EQ(before.tensor, a.tensor);
    EXPECT_EQ(before.bytes, bytes);
    EXPECT_EQ(after.op, Op::FreeWorkspace);
    EXPECT_EQ(after.bytes, bytes);
    EXPECT_EQ(after.device_bytes + bytes, a.device_bytes);
  }
  EXPECT_GT(own, static_cast<int>(g.nodes().size()));  // every backward, half the forwards
  EXPECT_EQ(p.actions.back().device_bytes, staged_bytes(p));
}

// What a plan under a budget leaves free around each pass is what that pass's workspace could take.
TEST(Planner, RoomForWorkspaceIsTheBudgetLessWhatIsInUseWhereThePassRuns) {
  const Graph g = load("resnet20-cifar.json", 32);
  const std::uint64_t least = plan(g, Policy::Recompute).predicted_peak;
  const std::uint64_t budget = least + (plan(g, Policy::Baseline).predicted_peak - least) / 2;
  const Plan p = plan(g, Policy::Recompute, budget);
  const std::vector<layers::WorkspaceBytes> room = room_for_workspace(g, p);
  ASSERT_EQ(room.size(), g.nodes().size());
  std::vector<bool> tight(g.nodes().size(), false);
  for (const Action& a : p.actions) {
    if (a.op != Op::Backward) continue;
    const std::uint64_t in_use = p.resident_bytes + a.device_bytes;
    const std::uint64_t free = room[static_cast<std::size_t>(a.tensor)].backward;
    EXPECT_LE(in_use + free, budget);
    tight[static_cast<std::size_t>(a.tensor)] = in_use + free + 4096 > budget;
  }
  EXPECT_EQ(std::count(tight.begin(), tight.end(), true), static_cast<long>(g.nodes().size()));
}

}  // namespace
}  // namespace vdnn::graph
