// The totals of a plan as JSON, the same keys in `vdnn plan --json` and in summary.json.
#pragma once

#include <nlohmann/json.hpp>

#include "graph/Plan.hpp"

namespace vdnn::tools {

/// Policy (requested and chosen), device memory kind, budget, resident bytes, predicted peaks,
/// pools, and the bytes each action kind moves per step.
nlohmann::json plan_totals(const graph::Plan& plan);

}  // namespace vdnn::tools
