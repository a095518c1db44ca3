// StepTimeModel: the predicted duration of one training step of a plan, from a cost model, by
// replaying the plan's actions on three stream clocks and the host's (Note [Cost model]).
#pragma once

#include <vector>

#include "graph/CostModel.hpp"
#include "graph/Graph.hpp"
#include "graph/Plan.hpp"

namespace vdnn::graph {

/// Seconds from the batch upload to the end of the last backward on the compute stream (with a
/// StageInput, from the first layer to the later of that and the next batch's upload: the steady
/// state of a caller that stages its batches, Note [Input staging]), as the executor runs `plan`:
/// layers on the compute stream (each plus the model's gap), offloads and prefetches on their
/// streams with the same event waits as the executor's, and the host blocked before action i until
/// the Releases of the maps in waits[i] are done (the allocator reuses their blocks: release_waits
/// in graph/PoolSimulation; no waits: the host never blocks). Managed-memory migrations count as
/// copies at the link's rates and faults at a tenth of it. A peer-tier copy takes the peer link's
/// rate on the same offload or prefetch stream (Note [Peer tier]).
double predict_step_seconds(const Graph& graph, const Plan& plan, const CostModel& costs,
                            const std::vector<std::vector<NodeId>>& waits = {});

}  // namespace vdnn::graph
