// Making a plan fit a budget: the allocator check, keeping what the budget holds, and early
// prefetches (Note [Offload lifetime]).
#include "graph/PoolSimulation.hpp"
#include "graph/planner/PlanBuilder.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph::planner {

std::uint64_t pool_for_budget(std::uint64_t budget) {
  return budget / runtime::MemoryResource::kAlignment * runtime::MemoryResource::kAlignment;
}

namespace {

// With managed memory the budget bounds the pages on the device, not the pool's address range
// (Note [Managed memory]).
bool fits_device(const Graph& g, const Plan& plan) {
  return plan.budget_bytes == 0 ||
         (plan.predicted_peak <= plan.budget_bytes &&
          (plan.memory == DeviceMemory::Managed ||
           device_pool_fits(g, plan, pool_for_budget(plan.budget_bytes))));
}

}  // namespace

// The offloaded maps' pinned copies stay within the host budget too (Note [Host budget]).
bool fits(const Graph& g, const Plan& plan) {
  return plan.pinned_bytes <= plan.host_budget_bytes && fits_device(g, plan);
}

// Under a budget, offloading (or evicting) a map costs two transfers, and recomputing it a second
// forward, and buys nothing if the budget could hold it. In `order` (by default from the
// last-produced map that leaves the device backwards: the ones needed again soonest), keep each one
// resident while the plan stays within the budget and the allocator still places everything; stop
// after a few that do not fit. Without a budget the placement stands.
//
// Each trial is a plan and an allocator replay, O(N) for N maps, so trying the maps one by one
// is O(N^2): minutes at ResNet-5000. Keeping more maps never lowers the peak, so the longest run
// of maps that all fit, which the one-by-one walk would keep first, is found by bisection
// (O(N log N)); the walk goes on from the first map that does not fit.
Plan keep_what_fits(const Graph& g, const Liveness& live, Plan plan, const PlanRequest& request,
                    std::vector<NodeId> order) {
  if (request.budget_bytes == 0) return plan;
  if (order.empty()) {
    for (auto t = static_cast<NodeId>(g.nodes().size()) - 1; t >= kNetworkInput; --t) {
      order.push_back(t);
    }
  }
  std::vector<NodeId> leaving;  // in `order`
  for (NodeId t : order) {
    if (leaves_device(plan.placement_of(t))) leaving.push_back(t);
  }
  return place_while_fits(g, live, std::move(plan), request, leaving, Placement::Resident);
}

Plan place_while_fits(const Graph& g, const Liveness& live, Plan plan, const PlanRequest& request,
                      const std::vector<NodeId>& maps, Placement to) {
  constexpr int kMisses = 4;
  if (request.budget_bytes == 0) return plan;
  const auto keeping = [&](const std::vector<Placement>& base, std::size_t from, std::size_t end) {
    std::vector<Placement> placement = base;
    for (std::size_t i = from; i < end; ++i) placement[index_of(g, maps[i])] = to;
    return plan_for(g, live, plan.policy, placement, request, kForwardPeak);
  };
  // Device memory alone: a map placed so pins nothing more (Note [Host budget]).
  const auto fit = [&](const Plan& p) {
    return p.predicted_peak <= request.budget_bytes && fits_device(g, p);
  };
  std::size_t good = 0;
  std::size_t bad = maps.size() + 1;
  while (bad - good > 1) {
    const std::size_t mid = good + (bad - good) / 2;
    (fit(keeping(plan.placement, 0, mid)) ? good : bad) = mid;
  }
  if (good > 0) plan = keeping(plan.placement, 0, good);
  int misses = 0;
  for (std::size_t i = good; i < maps.size() && misses < kMisses; ++i) {
    Plan kept = keeping(plan.placement, i, i + 1);
    if (fit(kept)) {
      plan = std::move(kept);
    } else {
      ++misses;
    }
  }
  return plan;
}

// Early prefetches may use what the budget leaves, less a margin that grows until the allocator
// (fragmentation included) places everything.
std::uint64_t prefetch_room(const PlanRequest& request, const Plan& plan) {
  return request.budget_bytes - plan.resident_bytes;
}

Plan prefetch_early(const Graph& g, const Liveness& live, Plan plan, const PlanRequest& request,
                    std::uint64_t first_margin) {
  if (request.budget_bytes == 0) return plan;
  const std::uint64_t room = prefetch_room(request, plan);
  for (std::uint64_t margin = first_margin; margin <= 8; ++margin) {
    Plan ahead = plan_for(g, live, plan.policy, plan.placement, request, room - room * margin / 16);
    if (fits(g, ahead)) return ahead;
  }
  return plan;
}

// Dropping offloads saves copies, prefetching early only hides them: drop first, then let the
// prefetches use what the budget still leaves. The maps kept pin nothing, so the host budget is
// checked on the plan that keeps them.
std::optional<Plan> fitting_plan(const Graph& g, const Liveness& live, Policy policy,
                                 const PlanRequest& request) {
  Plan plan = plan_for(g, live, policy, place(g, live, policy), request, kForwardPeak);
  if (request.budget_bytes == 0) return plan;
  if (!fits_device(g, plan)) return std::nullopt;
  plan = prefetch_early(g, live, keep_what_fits(g, live, std::move(plan), request, {}), request);
  if (!fits(g, plan)) return std::nullopt;
  return plan;
}

}  // namespace vdnn::graph::planner
