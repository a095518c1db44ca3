// CostProfiler: measures a cost model on the session's own backend at setup: layer times from a
// few profiled training steps, the copy rates from timed pinned copies, and the gap between
// compute-stream operations (Note [Cost model]).
#pragma once

#include "graph/CostModel.hpp"
#include "graph/Executor.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Plan.hpp"
#include "runtime/ExecutionContext.hpp"

namespace vdnn::graph {

/// Runs `steps` (at least 2; the last is measured) training steps of `plan` on zeros staged in
/// pinned memory with layer profiling, then as many without (timing events slow a step), each in
/// an executor of its own that is gone on return (so the session's parameters and statistics start
/// as if none ran), then times copies both ways at once (and, with a peer tier, to
/// the peer and back: Note [Peer tier]). The gap is what the unprofiled step took
/// beyond the step-time model's replay of the plan with no gap, per compute operation; where the
/// replay is longer (the events inflated small layers' times), the layer times are scaled down to
/// the step instead.
CostModel measure_costs(const Graph& graph, LayerSet& layers, const Plan& plan,
                        runtime::ExecutionContext& context, const ExecutorOptions& options,
                        int steps);

/// A link as a copy of b bytes takes it: latency + b / bytes_per_second.
struct LinkFit {
  double bytes_per_second = 0.0;
  double latency = 0.0;
};
/// The line through two copy sizes' seconds per copy (Note [Peer tier]); where timing noise makes
/// it absurd (the larger copies no slower, or a negative latency), the larger copies' rate alone,
/// without latency.
LinkFit fit_link(double small_bytes, double small_seconds, double large_bytes,
                 double large_seconds);

}  // namespace vdnn::graph
