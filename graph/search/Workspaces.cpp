// Workspace moves of the search: fit, raise and trade (Note [Workspace], Note [Search]). Each
// changes a pass's algorithm and shifts that layer's cost by cudnnFind's times: nothing is measured
// again.
#include "graph/search/Workspaces.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace vdnn::graph::search {
namespace {

// When the plan with every layer's fastest algorithms does not fit the budget, each pass's
// workspace is limited to what a plan without any workspace leaves free where that pass runs (a
// fraction of it when fragmentation leaves less), so only the layers at the peak take slower
// algorithms; failing that, the largest workspace shrinks one algorithm at a time (vDNN's
// per-layer downgrades) until the plan fits or nothing shrinks.
std::optional<Plan> fit_workspaces(const Graph& graph, LayerSet& layers, const PlanRequest& request,
                                   const std::function<std::optional<Plan>()>& attempt) {
  PlanRequest without = request;
  without.workspace.clear();
  const std::vector<layers::WorkspaceBytes> room =
      room_for_workspace(graph, make_plan(graph, without));  // throws when nothing helps
  const std::vector<layers::WorkspaceBytes> before = layers.workspace_limits();
  for (const std::size_t share : {1, 2, 4}) {
    std::vector<layers::WorkspaceBytes> limits = before;
    for (std::size_t i = 0; i < limits.size(); ++i) {
      limits[i] = {std::min(limits[i].forward, room[i].forward / share),
                   std::min(limits[i].backward, room[i].backward / share)};
    }
    layers.limit_workspaces(limits);
    if (std::optional<Plan> plan = attempt()) return plan;
  }
  while (layers.downgrade_largest_workspace()) {
    if (std::optional<Plan> plan = attempt()) return plan;
  }
  return std::nullopt;
}

// The pass's time under its current algorithm by cudnnFind, and under the option of `workspace`
// (negative when not measured).
double option_seconds(const layers::Layer& layer, bool backward, std::size_t workspace) {
  for (const layers::WorkspaceOption& o : layer.workspace_options(backward)) {
    if (o.workspace == workspace) return o.seconds;
  }
  return -1.0;
}

std::size_t pass_workspace(const layers::Layer& layer, bool backward) {
  const layers::WorkspaceBytes w = layer.workspace();
  return backward ? w.backward : w.forward;
}

// Each layer's workspaces as the layer states them (workspace_options' units, not aligned).
std::vector<layers::WorkspaceBytes> raw_workspaces(LayerSet& layers) {
  std::vector<layers::WorkspaceBytes> w;
  for (std::size_t i = 0; i < layers.workspace_limits().size(); ++i) {
    w.push_back(layers.at(static_cast<NodeId>(i)).workspace());
  }
  return w;
}

}  // namespace

PlanRequest request_for(const LayerSet& layers, Policy policy, std::uint64_t budget,
                        const CostModel& costs, int state_buffers, Purpose purpose,
                        OffloadTiers tiers, const DataParallelPlan& data_parallel) {
  PlanRequest r;
  r.policy = policy;
  r.budget_bytes = budget;
  r.workspace = layers.workspaces();
  r.costs = &costs;
  r.optimizer_state_buffers = state_buffers;
  r.purpose = purpose;
  r.peer_device = tiers.peer.device;
  r.peer_budget_bytes = tiers.peer.budget_bytes;
  r.host_budget_bytes = tiers.host_budget_bytes;
  r.data_parallel = data_parallel;
  return r;
}

PlanRequest request_for(const LayerSet& layers, const Plan& plan, const CostModel& costs) {
  return request_for(layers, plan.requested, plan.budget_bytes, costs, plan.optimizer_state_buffers,
                     plan.purpose, offload_tiers(plan), plan.data_parallel);
}

Plan plan_with_downgrades(const Graph& graph, LayerSet& layers, std::uint64_t budget,
                          const CostModel& costs, Policy policy, int state_buffers, Purpose purpose,
                          OffloadTiers tiers, const DataParallelPlan& data_parallel) {
  PlanRequest request =
      request_for(layers, policy, budget, costs, state_buffers, purpose, tiers, data_parallel);
  std::exception_ptr failure;
  const std::function<std::optional<Plan>()> attempt = [&]() -> std::optional<Plan> {
    request.workspace = layers.workspaces();
    try {
      return make_plan(graph, request);
    } catch (const DoesNotFit&) {
      failure = std::current_exception();
      return std::nullopt;
    }
  };
  if (std::optional<Plan> plan = attempt()) return *std::move(plan);
  if (budget == 0) std::rethrow_exception(failure);
  std::optional<Plan> plan = fit_workspaces(graph, layers, request, attempt);
  if (!plan) std::rethrow_exception(failure);
  return *std::move(plan);
}

void raise_where_faster(const Graph& graph, LayerSet& layers, CostModel& costs, Plan& plan) {
  for (NodeId node = 0; node < static_cast<NodeId>(graph.nodes().size()); ++node) {
    for (const bool backward : {false, true}) {
      layers::Layer& layer = layers.at(node);
      const std::vector<layers::WorkspaceOption> choices = layer.workspace_options(backward);
      if (choices.empty() || pass_workspace(layer, backward) == choices.back().workspace) {
        continue;  // not limited
      }
      double seconds = option_seconds(layer, backward, pass_workspace(layer, backward));
      for (const layers::WorkspaceOption& c : choices) {
        if (c.workspace <= pass_workspace(layer, backward) || c.seconds < 0.0 || seconds < 0.0 ||
            c.seconds >= seconds) {
          continue;
        }
        const std::vector<layers::WorkspaceBytes> before = layers.workspace_limits();
        std::vector<layers::WorkspaceBytes> limits = before;
        (backward ? limits[node].backward : limits[node].forward) = c.workspace;
        layers.limit_workspaces(limits);
        CostModel trial = costs;
        LayerCost& cost = trial.layers.at(static_cast<std::size_t>(node));
        (backward ? cost.backward : cost.forward) += c.seconds - seconds;
        try {
          Plan faster = make_plan(graph, request_for(layers, plan, trial));
          if (faster.predicted_step_seconds < plan.predicted_step_seconds) {
            plan = std::move(faster);
            costs = std::move(trial);
            seconds = c.seconds;
            continue;
          }
        } catch (const DoesNotFit&) {
        }
        layers.limit_workspaces(before);
      }
    }
  }
}

void trade_workspace_for_maps(const Graph& graph, LayerSet& layers, CostModel& costs, Plan& plan) {
  constexpr int kWorkspaceTrials = 3;
  for (int trial = 0; trial < kWorkspaceTrials; ++trial) {
    const std::vector<layers::WorkspaceBytes> before = layers.workspace_limits();
    const std::vector<layers::WorkspaceBytes> sizes = raw_workspaces(layers);
    if (!layers.downgrade_largest_workspace()) return;  // nothing shrinks
    // The pass that shrank, and its cost shifted by cudnnFind's times.
    CostModel leaner_costs = costs;
    const std::vector<layers::WorkspaceBytes> now = raw_workspaces(layers);
    bool timed = true;
    for (std::size_t i = 0; i < now.size(); ++i) {
      for (const bool backward : {false, true}) {
        const std::size_t was = backward ? sizes[i].backward : sizes[i].forward;
        const std::size_t is = backward ? now[i].backward : now[i].forward;
        if (was == is) continue;
        const layers::Layer& layer = layers.at(static_cast<NodeId>(i));
        const double from = option_seconds(layer, backward, was);
        const double to = option_seconds(layer, backward, is);
        timed = timed && from >= 0.0 && to >= 0.0;
        LayerCost& cost = leaner_costs.layers.at(i);
        (backward ? cost.backward : cost.forward) += to - from;
      }
    }
    if (timed) {
      try {
        Plan leaner = plan_with_downgrades(graph, layers, plan.budget_bytes, leaner_costs,
                                           plan.requested, plan.optimizer_state_buffers,
                                           plan.purpose, offload_tiers(plan), plan.data_parallel);
        if (leaner.predicted_step_seconds < plan.predicted_step_seconds) {
          costs = std::move(leaner_costs);
          plan = std::move(leaner);
          continue;
        }
      } catch (const DoesNotFit&) {
      }
    }
    layers.limit_workspaces(before);
    return;
  }
}

}  // namespace vdnn::graph::search
