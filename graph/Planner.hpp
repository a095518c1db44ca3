// Planner: turns a graph, a policy and a memory budget into a Plan, without running a kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/CostModel.hpp"
#include "graph/Liveness.hpp"
#include "graph/Plan.hpp"
#include "layers/Layer.hpp"
#include "runtime/Error.hpp"

namespace vdnn::graph {

/// A peer tier as the searches pass it on (Note [Peer tier]): GPU `device`, at most `budget_bytes`
/// of maps there at once; the default is none.
struct PeerTier {
  int device = -1;
  std::uint64_t budget_bytes = 0;
};

/// Where offloaded maps may wait, as the searches pass it on: the peer tier first, then pinned
/// host memory up to `host_budget_bytes` at once (Note [Host budget]).
struct OffloadTiers {
  PeerTier peer;
  std::uint64_t host_budget_bytes = kNoHostBudget;
};

struct PlanRequest {
  Policy policy = Policy::Baseline;
  std::uint64_t budget_bytes = 0;  // 0: no budget
  /// Per node, the scratch memory of its forward and its backward (LayerSet::workspaces()),
  /// allocated around each pass (Note [Workspace]); empty: none.
  std::vector<layers::WorkspaceBytes> workspace;
  /// What layers and copies cost (policies auto and vdnn-dyn choose by it; every plan's predicted
  /// step time comes from it). Null: estimate_costs(graph). Must outlive make_plan only.
  const CostModel* costs = nullptr;
  /// F32 optimizer state tensors per trainable parameter, resident beside it and its gradient
  /// (layers::state_buffers: SGD and LARS 1, AdamW 2). Unused for inference.
  int optimizer_state_buffers = 1;
  /// Inference: a forward pass alone over the parameters once, every map freed after its last
  /// forward consumer whatever the policy (Note [Inference plan]).
  Purpose purpose = Purpose::Training;
  /// The peer tier (Note [Peer tier]): offloaded maps go, in the order they are offloaded, to a
  /// pool on GPU `peer_device` while the maps there at once stay within `peer_budget_bytes`, the
  /// rest to pinned host memory. -1 or 0: every offloaded map goes to the host.
  int peer_device = -1;
  std::uint64_t peer_budget_bytes = 0;
  /// The most pinned host memory the offloaded maps may take at once (Note [Host budget]): a
  /// placement that pins more does not fit, and auto rebuilds in backward what the host cannot
  /// hold. kNoHostBudget: no limit.
  std::uint64_t host_budget_bytes = kNoHostBudget;
  /// Training: the ranks the plan runs on; their all-reduces count in its predicted step time.
  DataParallelPlan data_parallel;
  /// How the device pool places blocks (Plan::device_blocks). From BestFit, make_plan also plans
  /// SettledFirst for auto and vdnn-dyn under a budget and where the host is predicted to wait
  /// for offload copies, and keeps the faster.
  runtime::BlockChoice device_blocks = runtime::BlockChoice::BestFit;
};

/// No plan of the requested policy fits the budget. what() says by how much, and which policy
/// would fit (if any).
class DoesNotFit : public runtime::OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

/// Builds the plan (of request.purpose); vdnn-dyn takes, of baseline, vdnn-conv, vdnn-all and auto,
/// the plan that fits with the least predicted step time. Throws DoesNotFit when the step cannot
/// run within the budget: the predicted peak exceeds it, or the device pool (simulated with the
/// real allocator, so fragmentation counts) cannot place every allocation.
Plan make_plan(const Graph& graph, const PlanRequest& request);

/// Auto's `plan` (made for `request`) with offloaded maps rebuilt in backward instead, one at a
/// time, wherever the plan still fits and is predicted faster: candidates guess how many copies
/// the link hides, and where it hides fewer the forward pass waits for it (Note [Automatic
/// placement]). Its pools sized again. O(M) plans for M offloaded maps, times the rounds. A plan
/// of another policy, or that offloads nothing, is returned as it is.
Plan rebuild_where_faster(const Graph& graph, const PlanRequest& request, Plan plan);

/// Device bytes that stay allocated across steps: parameters and buffers, gradients and
/// `optimizer_state_buffers` optimizer state tensors of trainable parameters, the bf16 copies of
/// the weights BF16 layers read (graph::has_bf16_copy), and the loss gradient seed.
std::uint64_t resident_bytes(const Graph& graph, int optimizer_state_buffers);
/// Device bytes that stay allocated for inference: parameters and buffers, once, and the bf16
/// weight copies.
std::uint64_t parameter_bytes(const Graph& graph);

/// Per node, the device bytes a plan under a budget leaves free while its forward (or recompute)
/// and its backward run: what each pass's workspace could take there (Note [Workspace]). Nodes
/// that never run a pass get the whole budget for it.
std::vector<layers::WorkspaceBytes> room_for_workspace(const Graph& graph, const Plan& plan);

/// The peer tier `plan` was made with.
inline PeerTier peer_tier(const Plan& plan) { return {plan.peer_device, plan.peer_budget_bytes}; }
/// The offload tiers `plan` was made with.
inline OffloadTiers offload_tiers(const Plan& plan) {
  return {peer_tier(plan), plan.host_budget_bytes};
}

/// Human-readable plan: one line per action grouped by step, then the totals.
std::string format_plan(const Graph& graph, const Plan& plan);

}  // namespace vdnn::graph
