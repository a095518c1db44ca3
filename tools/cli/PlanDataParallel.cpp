// `vdnn plan --gpus N`: the gradient buckets cut from the plan's backward order, NCCL's memory
// taken out of the budget, and the all-reduce stream of the step-time model.
#include "tools/cli/PlanDataParallel.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "graph/GradientSync.hpp"
#include "graph/Planner.hpp"
#include "graph/StepTimeModel.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Error.hpp"

namespace vdnn::tools {
namespace {

std::uint64_t nccl_bytes(const DataParallelPlanOptions& o) {
  return o.gpus > 1 && !o.nccl_bytes.empty() ? runtime::parse_bytes(o.nccl_bytes) : 0;
}

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", seconds * 1e3);
  return text;
}

}  // namespace

void add_data_parallel_options(CLI::App& cmd, DataParallelPlanOptions& o) {
  cmd.add_option("--gpus,--world-size", o.gpus,
                 "Plan one rank of a data-parallel run on this many GPUs (as vdnn train --gpus): "
                 "the gradient buckets, NCCL's memory and the exposed all-reduce")
      ->check(CLI::Range(1, 4096));
  cmd.add_option("--nccl-bytes", o.nccl_bytes,
                 "NCCL's own device memory per GPU (e.g. 600MiB), kept inside --mem-budget "
                 "(default: not measured, counted as 0)");
  cmd.add_option("--allreduce-bw", o.allreduce_gbps,
                 "NCCL's all-reduce bus bandwidth in GB/s (default: 329, measured on 2 H100s)")
      ->check(CLI::PositiveNumber);
}

graph::DataParallelPlan data_parallel_plan(const DataParallelPlanOptions& o) {
  graph::DataParallelPlan plan;
  plan.world_size = o.gpus;
  plan.bus_bytes_per_second = o.allreduce_gbps * 1e9;
  return plan;
}

std::uint64_t budget_beside_nccl(std::uint64_t budget, const DataParallelPlanOptions& o) {
  const std::uint64_t nccl = nccl_bytes(o);
  if (budget == 0 || nccl == 0) return budget;
  if (budget <= nccl) {
    throw graph::DoesNotFit("NCCL's " + runtime::format_bytes(nccl) + " (--nccl-bytes) take the " +
                                "whole budget of " + runtime::format_bytes(budget),
                            nccl, 0, budget);
  }
  return budget - nccl;
}

DataParallelReport data_parallel_report(const graph::Graph& graph, const graph::Plan& plan,
                                        const graph::CostModel& costs,
                                        const DataParallelPlanOptions& o) {
  DataParallelReport r;
  r.gpus = o.gpus;
  r.nccl_bytes = nccl_bytes(o);
  const graph::AllReduceStream stream = graph::all_reduce_of(graph, plan);
  for (const graph::GradientBucket& b : stream.buckets) r.gradient_bytes += b.bytes;
  r.buckets = stream.buckets.size();
  const graph::StepTime t = graph::predict_step(graph, plan, costs, stream);
  r.all_reduce_seconds = t.all_reduce_seconds;
  r.exposed_seconds = t.exposed_seconds;
  r.step_seconds = plan.predicted_step_seconds;
  return r;
}

std::string format_data_parallel(const DataParallelReport& r, const DataParallelPlanOptions& o) {
  const graph::BucketCaps caps;
  std::string out = "data parallel:         " + std::to_string(r.gpus) +
                    " GPUs, one process each, this plan on every GPU\n";
  out += "gradient buffer:       " + runtime::format_bytes(r.gradient_bytes) + " in " +
         std::to_string(r.buckets) + " buckets (" + runtime::format_bytes(caps.first_bytes) +
         " first, then " + runtime::format_bytes(caps.bytes) +
         "), in the resident bytes as on one GPU\n";
  out += r.nccl_bytes > 0 ? "NCCL memory:           " + runtime::format_bytes(r.nccl_bytes) +
                                " (--nccl-bytes), kept inside the budget\n"
                          : "NCCL memory:           not measured (pass --nccl-bytes)\n";
  char bandwidth[32];
  std::snprintf(bandwidth, sizeof(bandwidth), "%.0f GB/s", o.allreduce_gbps);
  out += "all-reduce:            " + ms(r.all_reduce_seconds) + " a step at " + bandwidth +
         " bus bandwidth, exposed " + ms(r.exposed_seconds) + " (step " + ms(r.step_seconds) +
         ")\n";
  return out;
}

nlohmann::json data_parallel_json(const DataParallelReport& r) {
  nlohmann::json out = {{"gpus", r.gpus},
                        {"gradient_bytes", r.gradient_bytes},
                        {"gradient_buckets", r.buckets},
                        {"allreduce_ms", r.all_reduce_seconds * 1e3},
                        {"allreduce_exposed_ms", r.exposed_seconds * 1e3},
                        {"predicted_step_with_allreduce_ms", r.step_seconds * 1e3}};
  out["nccl_bytes"] = r.nccl_bytes > 0 ? nlohmann::json(r.nccl_bytes) : nlohmann::json(nullptr);
  return out;
}

}  // namespace vdnn::tools
