// `vdnn compare`: policies x precisions x batches x budgets on one config (or the largest batch, or
// the deepest generated network, each policy trains under a budget), written to results.csv,
// results.json and report.html.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/cli/RunOptions.hpp"

namespace CLI {
class App;
}

namespace vdnn::tools {

/// Every default of `vdnn compare` lives here (the shared ones in RunOptions).
struct CompareOptions {
  std::string config;  // required unless --depth-sweep
  std::vector<std::string> policies{"baseline", "vdnn-all", "vdnn-conv"};
  std::vector<std::int64_t> batches{32};
  std::vector<std::string> budgets;     // empty: no budget
  std::vector<std::string> precisions;  // fp32 | bf16; empty: run.precision alone
  std::int64_t warmup = 2;
  std::int64_t iters = 5;
  std::string out;                 // default: runs/compare-<network>
  bool max_batch = false;          // per policy and budget, the largest batch that fits
  std::string depth_sweep;         // resnet | densenet: the deepest network that fits
  std::string input = "cifar";     // depth sweep: cifar | imagenet
  std::int64_t max_depth = 10000;  // depth sweep: the deepest network tried
  std::string timeline;            // whose memory timeline the report draws (default: vdnn-all)
  std::string trace;               // Chrome Trace Event JSON of every cell's last step
  RunOptions run;
};

/// Registers the `compare` subcommand; `options` receives the parsed values.
CLI::App* add_compare_command(CLI::App& app, CompareOptions& options);

/// Runs the comparison. Throws the library's typed errors: runtime::InvalidArgument for bad
/// usage (before any cell runs), graph::DoesNotFit when no cell fits, runtime::Error when a cell
/// failed; the results files hold every cell either way.
int run_compare(const CompareOptions& options);

}  // namespace vdnn::tools
