// `vdnn plan`: prints the memory plan of one training step (what is allocated, offloaded,
// prefetched and freed, with predicted device bytes), or of an inference pass, as a table or JSON.
#pragma once

#include <cstdint>
#include <string>

#include "tools/cli/PlanDataParallel.hpp"
#include "tools/cli/RunOptions.hpp"

namespace CLI {
class App;
}

namespace vdnn::tools {

struct PlanOptions {
  std::string config;
  std::int64_t batch = 32;
  std::string policy = "baseline";
  std::string mem_budget;          // empty: no budget
  std::string costs;               // a cost file (models::read_cost_file); empty: estimated costs
  bool no_fuse = false;            // plan the unfused graph
  std::string precision = "fp32";  // feature maps: fp32 | bf16 (as vdnn train --precision)
  std::string optimizer = "sgd";   // whose state the plan holds (as vdnn train --optimizer)
  bool inference = false;          // plan a Predictor's forward pass (Note [Inference plan])
  bool json = false;
  TierOptions tiers;                      // the offload tiers (Note [Peer tier])
  DataParallelPlanOptions data_parallel;  // --gpus N: one rank of N (Note [Data parallelism])
};

CLI::App* add_plan_command(CLI::App& app, PlanOptions& options);

/// Prints the plan to stdout. Throws the library's typed errors (DoesNotFit: exit code 3).
int run_plan(const PlanOptions& options);

}  // namespace vdnn::tools
