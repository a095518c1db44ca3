// The totals of a plan as JSON, the same keys in `vdnn plan --json` and in summary.json.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/MoveReasons.hpp"
#include "graph/Plan.hpp"

namespace vdnn::tools {

/// Policy (requested and chosen), device memory kind, budget, resident bytes, predicted peaks,
/// pools, and the bytes each action kind moves per step.
nlohmann::json plan_totals(const graph::Plan& plan);

/// Dense block storage of `g` (graph::block_totals, Note [Dense block storage]): concatenations,
/// buffers, buffer_bytes and apart_bytes (what those concatenations would take apart).
nlohmann::json dense_blocks_json(const graph::Graph& g);

/// The maps a plan moves off the device and why (graph::explain_moves), one object each: tensor,
/// to ("offload" or "rebuild"), tier, bytes, copy_ms, rebuild_ms (null for the network input,
/// which cannot be rebuilt), why.
nlohmann::json moves_json(const std::vector<graph::MoveReason>& moves);

}  // namespace vdnn::tools
