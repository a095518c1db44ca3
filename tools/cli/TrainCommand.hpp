// `vdnn train`: trains a JSON-defined network and writes metrics.jsonl and summary.json.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace vdnn::tools {

/// Every default of `vdnn train` lives here.
struct TrainOptions {
  std::string config;
  std::int64_t batch = 32;
  std::int64_t iters = 100;
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 5e-4;
  std::string schedule = "constant";  // constant | step | cosine (over --iters)
  std::uint64_t seed = 1;
  std::string device = "auto";            // auto | cpu | cuda
  std::string data = "synthetic";         // synthetic | cifar10:DIR
  std::string out;                        // default: runs/<network name>
  std::string policy = "baseline";        // graph::policy_names()
  std::string mem_budget;                 // e.g. 6GiB; empty: all the device can give
  std::int64_t debug_stream_delays = -1;  // >= 0: random stream delays from this seed (CPU)
  bool debug_poison = false;              // NaN-fill freed and offloaded device memory
  bool deterministic = false;             // CUDA: deterministic algorithms only
  std::string math = "tf32";              // CUDA convolutions: tf32 | fp32
  bool profile_layers = false;            // layers.json: device time per layer, last step
  bool check_gradients = false;           // exit 4 at the first non-finite parameter gradient
  std::string trace;                      // Chrome Trace Event JSON of the last step
  bool allow_oversubscription = false;    // UVM: managed memory beyond the device's free memory
  bool count_migrations = true;           // UVM: CUPTI's migration counters each step
  std::string debug_device_free;          // CPU: free device memory the managed guard sees
};

/// Registers the `train` subcommand; `options` receives the parsed values.
CLI::App* add_train_command(CLI::App& app, TrainOptions& options);

/// Runs training. Throws the library's typed errors; returns 0.
int run_train(const TrainOptions& options);

}  // namespace vdnn::tools
