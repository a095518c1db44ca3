// `vdnn compare`: options, checks made before any cell runs, then one of the three modes.
#include "tools/cli/CompareCommand.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>

#include "graph/Plan.hpp"
#include "graph/Session.hpp"
#include "models/ConfigLoader.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Device.hpp"
#include "tools/cli/OutputDir.hpp"
#include "tools/compare/CompareModes.hpp"

namespace vdnn::tools {
namespace {

void add_sweep_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("--policies", o.policies, "Policies to compare, comma-separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember(graph::policy_names()));
  cmd.add_option("--batches", o.batches, "Mini-batch sizes, comma-separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd.add_option("--mem-budget", o.budgets,
                 "Device memory budgets, comma-separated, e.g. none,4GiB,16GiB (default: none)")
      ->delimiter(',');
  cmd.add_option("--precisions", o.precisions,
                 "Precisions of the feature maps, comma-separated, e.g. fp32,bf16: every cell runs "
                 "in each (default: the one --precision gives)")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd.add_option("--warmup", o.warmup, "Untimed steps per cell")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1000}));
  cmd.add_option("--iters", o.iters, "Timed steps per cell (medians)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}));
}

void add_mode_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_flag("--max-batch", o.max_batch,
               "Per policy and budget, the largest batch that trains (planner search, confirmed "
               "by real steps)");
  cmd.add_option("--depth-sweep", o.depth_sweep,
                 "Per policy and budget, the deepest generated network that trains at the first "
                 "--batches size")
      ->check(CLI::IsMember({"resnet", "densenet"}));
  cmd.add_option("--input", o.input, "Depth sweep: cifar or imagenet networks")
      ->capture_default_str()
      ->check(CLI::IsMember({"cifar", "imagenet"}));
  cmd.add_option("--max-depth", o.max_depth, "Depth sweep: the deepest network tried")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{11}, std::int64_t{100000}));
}

// Usage errors found before any cell runs (CLI11 checked the single values).
void check_usage(const CompareOptions& o) {
  const bool sweep = !o.depth_sweep.empty();
  if (sweep == !o.config.empty()) {
    throw runtime::InvalidArgument(sweep ? "--depth-sweep generates its networks: drop --config"
                                         : "--config is required (or --depth-sweep)");
  }
  if (o.max_batch && sweep) {
    throw runtime::InvalidArgument("--max-batch and --depth-sweep are different modes: pick one");
  }
  if ((o.max_batch || sweep) && o.budgets.empty()) {
    throw runtime::InvalidArgument(
        std::string(o.max_batch ? "--max-batch" : "--depth-sweep") +
        " searches under a budget: give --mem-budget, e.g. --mem-budget 16GiB");
  }
  for (const std::string& budget : o.budgets) {
    if (budget == "none") {
      if (o.max_batch || sweep) throw runtime::InvalidArgument("a search needs a budget, not none");
      continue;
    }
    if (runtime::parse_bytes(budget) == 0) {
      throw runtime::InvalidArgument("--mem-budget " + budget + ": a budget must be above 0");
    }
  }
  for (auto p = o.precisions.begin(); p != o.precisions.end(); ++p) {
    if (std::find(o.precisions.begin(), p, *p) != p) {
      throw runtime::InvalidArgument("--precisions names " + *p + " twice");
    }
  }
  if (!o.timeline.empty() &&
      std::find(o.policies.begin(), o.policies.end(), o.timeline) == o.policies.end()) {
    throw runtime::InvalidArgument("--timeline " + o.timeline + " is not one of --policies");
  }
  if (!o.trace.empty() && !std::ofstream(o.trace)) {
    throw runtime::InvalidArgument("--trace " + o.trace + ": cannot write this file");
  }
}

std::string device_description(layers::Backend backend, int ordinal) {
  if (backend == layers::Backend::Cpu) return "cpu";
  return "cuda (" + runtime::cuda_device_name(ordinal) + ")";
}

// The searches' view of the machine (`t`: the run's options): the managed-memory guard's limit
// and the dataset.
FitLimits machine_limits(const CompareOptions& o, const models::TrainerOptions& t,
                         const graph::NetworkDef& def) {
  FitLimits l;
  l.backend = t.session.backend;
  if (l.backend == layers::Backend::Cuda) {
    const std::uint64_t free_bytes = runtime::cuda_free_memory(t.session.device);
    l.managed_limit_bytes = free_bytes > graph::kCudaReserve ? free_bytes - graph::kCudaReserve : 1;
  } else if (!o.run.debug_device_free.empty()) {
    l.managed_limit_bytes = runtime::parse_bytes(o.run.debug_device_free);
  }
  l.host_extra_bytes = models::dataset_host_bytes(
      o.run.data, {def.channels, def.height, def.width, def.num_classes});
  l.fuse = !o.run.no_fuse;
  l.precision = t.session.precision;  // each precision's search replaces it
  return l;
}

DepthLadder ladder_of(const CompareOptions& o) {
  return {o.depth_sweep == "resnet" ? models::ZooFamily::ResNet : models::ZooFamily::DenseNet,
          o.input == "cifar" ? models::ZooInput::Cifar : models::ZooInput::ImageNet};
}

}  // namespace

CLI::App* add_compare_command(CLI::App& app, CompareOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("compare",
                         "Compare policies x batches x budgets on one network: results.csv, "
                         "results.json, report.html");
  cmd->add_option("--config", o.config, "Network config (JSON)");
  add_sweep_options(*cmd, o);
  add_mode_options(*cmd, o);
  cmd->add_option("--out", o.out, "Output directory (default runs/compare-<network>)");
  cmd->add_option("--timeline", o.timeline,
                  "Policy whose largest cell the report's memory timeline shows, in the first "
                  "precision (default vdnn-all when compared, else the first policy)");
  cmd->add_option("--trace", o.trace,
                  "Chrome Trace Event JSON of every cell's last step, one process per cell "
                  "(times every layer)");
  add_run_options(*cmd, o.run, false);
  cmd->get_option("--precisions")->excludes(cmd->get_option("--precision"));
  return cmd;
}

int run_compare(const CompareOptions& o) {
  check_usage(o);
  const bool sweep = !o.depth_sweep.empty();
  const DepthLadder ladder = ladder_of(o);
  const graph::NetworkDef def =
      sweep ? models::parse_network(
                  models::generate_zoo_config(ladder.family, ladder.input, ladder.depth(0)),
                  "generated " + o.depth_sweep)
            : models::load_network(o.config);
  const std::string family = o.depth_sweep + " (" + o.input + ")";
  const std::filesystem::path out =
      o.out.empty() ? "runs/compare-" + (sweep ? o.depth_sweep + "-" + o.input : def.name) : o.out;
  prepare_output_dir(out);

  const bool has_vdnn_all =
      std::find(o.policies.begin(), o.policies.end(), "vdnn-all") != o.policies.end();
  ComparisonSetup setup;
  setup.out = out;
  setup.trace = o.trace;
  setup.timeline_policy = !o.timeline.empty() ? o.timeline
                          : has_vdnn_all      ? "vdnn-all"
                                              : o.policies.front();
  setup.cells = {o.run, o.warmup, o.iters, !o.trace.empty()};
  Sweep s{o.policies, o.batches, o.budgets.empty() ? std::vector<std::string>{""} : o.budgets,
          o.precisions.empty() ? std::vector<std::string>{o.run.precision} : o.precisions};
  for (std::string& budget : s.budgets) budget = budget == "none" ? "" : budget;
  setup.timeline_precision = s.precisions.front();
  const bool matrix = !o.max_batch && !sweep;
  setup.planned_cells = matrix ? static_cast<std::int64_t>(s.policies.size() * s.batches.size() *
                                                           s.budgets.size() * s.precisions.size())
                               : 0;
  const models::TrainerOptions t = trainer_options(o.run, "baseline", "", 1, false);
  CompareResults header;
  header.network = sweep ? family : def.name;
  header.device = device_description(t.session.backend, t.session.device);
  header.mode = matrix  ? CompareMode::Matrix
                : sweep ? CompareMode::DepthSweep
                        : CompareMode::MaxBatch;
  Comparison comparison(std::move(header), setup);
  if (matrix) run_matrix(comparison, def, s);
  if (o.max_batch) run_max_batch(comparison, def, s, machine_limits(o, t, def));
  if (sweep) run_depth_sweep(comparison, ladder, o.max_depth, s, machine_limits(o, t, def));
  std::cout << "vdnn: compared " << comparison.results().cells.size() << " cells; results in "
            << out.string() << "/ (results.csv, results.json, report.html)\n";
  comparison.check_outcome();
  return 0;
}

}  // namespace vdnn::tools
