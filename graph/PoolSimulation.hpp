// PoolSimulation: replays a plan's allocations, in the executor's order, on the real pool
// allocator over address space that is never touched, to size the pools with fragmentation
// counted. Planner-internal.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/Plan.hpp"

namespace vdnn::graph {

/// Sizes of pools that hold every allocation of consecutive steps of `plan` (until one starts as
/// an earlier one did: Note [Input staging]) and then of its inference pass.
struct PoolSizes {
  std::uint64_t device = 0;
  std::uint64_t pinned = 0;
  std::uint64_t peer = 0;  // the peer tier's pool (Note [Peer tier])
};

/// True when a device pool of `capacity` bytes places every allocation of those steps and an
/// inference pass.
bool device_pool_fits(const Graph& graph, const Plan& plan, std::uint64_t capacity);

/// Per action of plan.actions, in a steady-state step (the last of those) in a device pool of
/// `capacity` bytes, the offloaded maps whose Release the allocator waits for before it places the
/// action's allocation: their blocks are reused before their copies may have finished (the host
/// then blocks; graph/StepTimeModel). Empty when the pool cannot place the plan.
std::vector<std::vector<NodeId>> release_waits(const Graph& graph, const Plan& plan,
                                               std::uint64_t capacity);

/// The smallest pools (to within 1/64 of the predicted peak) that run `plan` without failing.
PoolSizes pool_sizes(const Graph& graph, const Plan& plan);

}  // namespace vdnn::graph
