// PlanBuilder: the planner's internals shared by its policies: where each policy puts a map, the
// ordered actions of one step for a placement (Note [Offload lifetime], Note [Recomputation]),
// and the checks and searches that make a plan fit a budget. Planner-internal.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/CostModel.hpp"
#include "graph/Liveness.hpp"
#include "graph/Planner.hpp"

namespace vdnn::graph::planner {

std::uint64_t tensor_bytes(const Graph& g, NodeId t);
/// The index of `t` in Plan::placement (the network input last).
std::size_t index_of(const Graph& g, NodeId t);
const std::vector<NodeId>& consumers_of(const Graph& g, NodeId t);
/// True when the loss layer reads `t`: its backward runs right after its forward, so it stays.
bool read_by_loss(const Graph& g, NodeId t);
/// Maps that leave the device between their last forward use and their first backward use.
bool leaves_device(Placement p);

/// The bytes the peer tier may hold at once under `request` (Note [Peer tier]); 0: no peer tier.
std::uint64_t peer_budget(const PlanRequest& request);

/// Each map's placement under a fixed policy (not Auto, not VdnnDyn).
std::vector<Placement> place(const Graph& g, const Liveness& live, Policy policy);

/// Without a budget, early prefetches never raise the peak above what forward needed.
inline constexpr std::uint64_t kForwardPeak = 0;

/// The plan of `placement` whose early prefetches keep device bytes (beyond the resident ones)
/// under `prefetch_cap` (kForwardPeak: under the forward pass's peak). Pools are not sized yet.
Plan plan_for(const Graph& g, const Liveness& live, Policy policy,
              const std::vector<Placement>& placement, const PlanRequest& request,
              std::uint64_t prefetch_cap);

/// The plan of an inference pass (Note [Inference plan]): every map ForwardOnly, `actions` and
/// `inference` the same forward pass, the parameters resident once, forward workspaces only;
/// plan.policy is request.policy (vdnn-dyn: baseline, the first it tries, as all plan alike).
/// Pools are not sized yet.
Plan inference_plan(const Graph& g, const Liveness& live, const PlanRequest& request);

/// Inserts the plan's StageInput at the earliest point of backward from which the input's bytes
/// fit until the step ends without device bytes (beyond the resident ones) passing `peak`: the
/// next batch's upload then overlaps the rest of backward and raises no peak. Nothing with managed
/// memory, or where no such point exists (Note [Input staging]).
void stage_next_input(const Graph& g, Plan& plan, std::uint64_t peak);

/// The device pool a budget allows: never more than the budget, in whole allocation units.
std::uint64_t pool_for_budget(std::uint64_t budget);

/// The offloaded maps' pinned copies are within the host budget, and under a device budget the
/// predicted peak is within it and, with dedicated memory, the real allocator places every
/// allocation in it.
bool fits(const Graph& g, const Plan& plan);

/// Keeps resident, in `order` (empty: from the last-produced map backwards), the maps that leave
/// the device while the plan still fits the budget (see its definition).
Plan keep_what_fits(const Graph& g, const Liveness& live, Plan plan, const PlanRequest& request,
                    std::vector<NodeId> order);

/// Sets placement `to` on `maps`, in order, while the plan still fits the budget: the longest
/// prefix that fits by bisection, then one by one past it until a few do not fit (see
/// keep_what_fits). Without a budget the placement stands.
Plan place_while_fits(const Graph& g, const Liveness& live, Plan plan, const PlanRequest& request,
                      const std::vector<NodeId>& maps, Placement to);

/// The device bytes (beyond the resident ones) that prefetch_early first lets the prefetches of a
/// plan under `request`'s budget use: its earliest prefetches.
std::uint64_t prefetch_room(const PlanRequest& request, const Plan& plan);

/// The plan with its prefetches issued as early as the budget allows (Note [Offload lifetime]):
/// prefetch_room's room less margin / 16 of it, for the first margin in [first_margin, 8] whose
/// plan fits; else the plan unchanged. A caller that has seen the room itself not fit starts
/// from margin 1.
Plan prefetch_early(const Graph& g, const Liveness& live, Plan plan, const PlanRequest& request,
                    std::uint64_t first_margin = 0);

/// A plan of a fixed `policy` that fits the request, if any.
std::optional<Plan> fitting_plan(const Graph& g, const Liveness& live, Policy policy,
                                 const PlanRequest& request);

/// The plan of policy Auto (Note [Automatic placement]): per map keep, offload or recompute, the
/// placement whose plan fits the request with the least predicted step time; nullopt when none
/// fits.
std::optional<Plan> auto_plan(const Graph& g, const Liveness& live, const PlanRequest& request,
                              const CostModel& costs);

/// Auto's `plan` with its offloaded maps rebuilt in backward instead, one at a time, where the
/// plan still fits and is predicted faster (Note [Automatic placement]).
Plan rebuild_instead_of_copying(const Graph& g, const Liveness& live, const PlanRequest& request,
                                const CostModel& costs, Plan plan);

/// The plan's predicted step time under `costs`, in its pool (before sizing: of the budget, or of
/// its peak), where the allocator's waits for offload copies block the host.
double predicted_seconds(const Graph& g, const Plan& plan, const CostModel& costs);

}  // namespace vdnn::graph::planner
