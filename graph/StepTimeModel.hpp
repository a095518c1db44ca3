// StepTimeModel: the predicted duration of one training step of a plan, from a cost model, by
// replaying the plan's actions on three stream clocks and the host's, and in a data-parallel step
// a fourth, the gradient all-reduces' (Note [Cost model], Note [Data parallelism]).
#pragma once

#include <cstddef>
#include <vector>

#include "graph/CostModel.hpp"
#include "graph/GradientSync.hpp"
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
/// rate on the same offload or prefetch stream (Note [Peer tier]). A plan of several ranks has its
/// gradient all-reduces on a stream of their own (all_reduce_of, predict_step).
double predict_step_seconds(const Graph& graph, const Plan& plan, const CostModel& costs,
                            const std::vector<std::vector<NodeId>>& waits = {});

/// The gradient all-reduces of a data-parallel step as the model replays them: each bucket is
/// launched on a stream of its own once the backward of its ready_after node is done on the
/// compute stream, after the bucket before it, and takes all_reduce_seconds(bytes); the update
/// waits for every bucket. No stream at all for a world of one (or none), no buckets, or a zero
/// bandwidth.
struct AllReduceStream {
  std::vector<GradientBucket> buckets;  // in launch order (backward order)
  int world_size = 1;
  /// NCCL's bus bandwidth of a large all-reduce on this world, in bytes per second (nccl-tests'
  /// busbw: algorithm bandwidth times 2 (n - 1) / n).
  double bus_bytes_per_second = 0.0;

  bool active() const noexcept {
    return world_size > 1 && !buckets.empty() && bus_bytes_per_second > 0.0;
  }
  /// Seconds of one all-reduce of `bytes`: bytes * 2 (n - 1) / n / bus bandwidth (a ring moves
  /// each byte 2 (n - 1) / n times over the slowest link). 0 where !active().
  double all_reduce_seconds(std::size_t bytes) const noexcept;
};

/// The all-reduce stream of `plan`'s data_parallel: its world, bandwidth and the buckets cut from
/// the plan's gradients (gradient_spans); inactive for a world of one.
AllReduceStream all_reduce_of(const Graph& graph, const Plan& plan);

/// A predicted step with its all-reduce stream.
struct StepTime {
  double seconds = 0.0;             // as predict_step_seconds, the update's waits included
  double all_reduce_seconds = 0.0;  // the stream's busy time: every bucket's all-reduce
  double exposed_seconds = 0.0;     // how long the compute stream waits for it after backward
};

/// predict_step_seconds with `all_reduce` beside compute, offload and prefetch: the step ends
/// once the last backward and the last bucket's all-reduce are both done (and the next batch is
/// uploaded). Without an active stream: the same seconds as predict_step_seconds, bit for bit,
/// and no all-reduce time.
StepTime predict_step(const Graph& graph, const Plan& plan, const CostModel& costs,
                      const AllReduceStream& all_reduce,
                      const std::vector<std::vector<NodeId>>& waits = {});

}  // namespace vdnn::graph
