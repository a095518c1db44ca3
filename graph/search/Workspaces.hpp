// The search's workspace moves (Note [Workspace]): fitting each convolution pass's algorithm to the
// room a plan leaves, raising it where a faster one fits, and trading workspace for maps. Internal
// to graph/search.
#pragma once

#include <cstdint>

#include "graph/CostModel.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Planner.hpp"

namespace vdnn::graph::search {

/// The request for `policy` under `budget` with the layers' current workspaces, `costs` and
/// `state_buffers` optimizer state tensors per trainable parameter, for `purpose`, with `tiers`, on
/// the ranks of `data_parallel`.
PlanRequest request_for(const LayerSet& layers, Policy policy, std::uint64_t budget,
                        const CostModel& costs, int state_buffers,
                        Purpose purpose = Purpose::Training, OffloadTiers tiers = {},
                        const DataParallelPlan& data_parallel = {});

/// The request `plan` was made for (its policy, budget, optimizer state, purpose, tiers and ranks)
/// with the layers' current workspaces and `costs`.
PlanRequest request_for(const LayerSet& layers, const Plan& plan, const CostModel& costs);

/// The plan of `policy` under `budget` with the fastest algorithms; when that does not fit, each
/// pass's workspace limited to what the plan leaves free where it runs, then vDNN's per-layer
/// downgrades. Leaves the limits that fitted set on `layers`. Throws DoesNotFit.
Plan plan_with_downgrades(const Graph& graph, LayerSet& layers, std::uint64_t budget,
                          const CostModel& costs, Policy policy, int state_buffers,
                          Purpose purpose = Purpose::Training, OffloadTiers tiers = {},
                          const DataParallelPlan& data_parallel = {});

/// Each limited pass tries its faster algorithms (cudnnFind's times shift the layer's cost) and
/// keeps one when the plan made again fits and is predicted faster. Updates `costs` and `plan`.
void raise_where_faster(const Graph& graph, LayerSet& layers, CostModel& costs, Plan& plan);

/// Auto under a budget weighs workspace against maps: the pass with the largest workspace takes
/// its next smaller algorithm (its cost shifted by cudnnFind's times) while the plan is predicted
/// faster, at most a few times. Updates `costs` and `plan`.
void trade_workspace_for_maps(const Graph& graph, LayerSet& layers, CostModel& costs, Plan& plan);

}  // namespace vdnn::graph::search
