// `vdnn train`: trains a JSON-defined network and writes metrics.jsonl and summary.json.
#pragma once

#include <cstdint>
#include <string>

#include "models/train/Distributed.hpp"
#include "tools/cli/RunOptions.hpp"

namespace CLI {
class App;
}

namespace vdnn::tools {

/// Every default of `vdnn train` lives here (the shared ones in RunOptions).
struct TrainOptions {
  std::string config;
  std::int64_t batch = 32;
  std::int64_t iters = 100;
  std::string out;                    // default: runs/<network name>
  std::string policy = "baseline";    // graph::policy_names()
  std::string mem_budget;             // e.g. 6GiB; empty: all the device can give
  bool profile_layers = false;        // layers.json: device time per layer, last step
  bool check_gradients = false;       // exit 4 at the first non-finite parameter gradient
  std::string trace;                  // Chrome Trace Event JSON of the last step
  std::int64_t checkpoint_every = 0;  // write a checkpoint every N steps and at the end; 0: none
  std::int64_t keep = 3;              // checkpoints kept under OUT/checkpoints
  std::string resume;                 // PATH or "latest": continue that run up to --iters
  std::string init_from;              // weights (PyTorch names) to start from
  std::int64_t eval_every = 0;  // evaluate the test split every N steps and at the end; 0: never
  std::string eval_data;        // what to evaluate on; empty: the test split of --data
  int gpus = 1;                 // processes on this host, one per GPU (issue 27)
  /// Seconds: the longest wait for a rank or a collective.
  bool sync_bn = false;  // batch norm statistics over every rank (issue 27)
  double nccl_timeout = static_cast<double>(models::kDefaultDistributedTimeout.count());
  RunOptions run;
};

/// Registers the `train` subcommand; `options` receives the parsed values.
CLI::App* add_train_command(CLI::App& app, TrainOptions& options);

/// Runs training: one process; with --gpus N (and no torchrun or mpirun variables), the launcher
/// of N ranks (launch_local_ranks); under torchrun, mpirun or the launcher, one rank of the run,
/// rank 0 alone writing the output directory. Throws the library's typed errors; returns 0, or
/// the launcher's code.
int run_train(const TrainOptions& options);

}  // namespace vdnn::tools
