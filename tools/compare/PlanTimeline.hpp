// PlanTimeline: a plan's memory over one step, action by forward and backward action, for the
// report's figure in the manner of the vDNN paper's.
#pragma once

#include "graph/Graph.hpp"
#include "graph/Plan.hpp"
#include "tools/compare/CompareResults.hpp"

namespace vdnn::tools {

/// After every Forward and Backward action of `plan`: the device bytes in use (resident bytes
/// included; the plan's prediction, which the executor's measurement equals byte for byte) and
/// the bytes offloaded or evicted and not yet brought back. Thread-safe.
MemoryTimeline plan_timeline(const graph::Graph& graph, const graph::Plan& plan);

}  // namespace vdnn::tools
