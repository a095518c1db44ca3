// PlanDataParallel: what `vdnn plan --gpus N` adds to a plan: the gradient buffer and its buckets,
// NCCL's own memory inside the budget, and the all-reduce stream's predicted time (Note [Data
// parallelism]).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "graph/CostModel.hpp"
#include "graph/Graph.hpp"
#include "graph/Plan.hpp"

namespace CLI {
class App;
}

namespace vdnn::tools {

/// NCCL's bus bandwidth of a 1 GiB all-reduce measured on this workplace's machines, NVLink
/// multicast off (issue 27): 329 GB/s on 2 H100s (355 GB/s on 4), in GB/s.
inline constexpr double kMeasuredAllReduceGbps = graph::kAllReduceBusBytesPerSecond / 1e9;

struct DataParallelPlanOptions {
  int gpus = 1;            // --gpus / --world-size: the processes, one per GPU
  std::string nccl_bytes;  // --nccl-bytes; empty: not measured
  double allreduce_gbps = kMeasuredAllReduceGbps;  // --allreduce-bw: bus bandwidth, GB/s
};

/// Adds --gpus (--world-size), --nccl-bytes and --allreduce-bw to `cmd`.
void add_data_parallel_options(CLI::App& cmd, DataParallelPlanOptions& options);

/// The ranks a plan is made for: --gpus at --allreduce-bw, the executor's default buckets (a
/// world of one without --gpus).
graph::DataParallelPlan data_parallel_plan(const DataParallelPlanOptions& options);

/// The budget each rank's search gets: `budget` (0: none) less NCCL's bytes when several GPUs are
/// asked for, as a data-parallel session keeps NCCL's memory inside it. Throws
/// runtime::InvalidArgument for a malformed --nccl-bytes, graph::DoesNotFit when NCCL's bytes take
/// the whole budget.
std::uint64_t budget_beside_nccl(std::uint64_t budget, const DataParallelPlanOptions& options);

/// What a data-parallel run of `plan` adds (a plan made for gpus > 1 ranks): the gradient buffer in
/// the plan's buckets, NCCL's bytes, and the all-reduce stream the plan's predicted step replays
/// (graph::all_reduce_of, graph::predict_step).
struct DataParallelReport {
  int gpus = 1;
  std::uint64_t gradient_bytes = 0;
  std::size_t buckets = 0;
  std::uint64_t nccl_bytes = 0;  // 0: not measured
  double all_reduce_seconds = 0.0;
  double exposed_seconds = 0.0;
  double step_seconds = 0.0;  // the plan's predicted step, the exposed all-reduce included
};

/// Throws runtime::InvalidArgument for a malformed --nccl-bytes.
DataParallelReport data_parallel_report(const graph::Graph& graph, const graph::Plan& plan,
                                        const graph::CostModel& costs,
                                        const DataParallelPlanOptions& options);

/// The report as the text plan's lines, and as JSON fields.
std::string format_data_parallel(const DataParallelReport& report,
                                 const DataParallelPlanOptions& options);
nlohmann::json data_parallel_json(const DataParallelReport& report);

}  // namespace vdnn::tools
