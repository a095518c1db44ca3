// `vdnn train`: load config, build graph and executor, run iterations, report.
#include "tools/cli/TrainCommand.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "graph/Session.hpp"
#include "layers/Registry.hpp"
#include "models/ConfigLoader.hpp"
#include "models/data/image/ClassIndex.hpp"
#include "models/train/Trainer.hpp"
#include "runtime/Rendezvous.hpp"
#include "tools/cli/CheckpointFiles.hpp"
#include "tools/cli/Launcher.hpp"
#include "tools/cli/OutputDir.hpp"
#include "tools/cli/PlanJson.hpp"
#include "tools/cli/ProcessClock.hpp"
#include "tools/cli/Progress.hpp"
#include "tools/cli/RankRun.hpp"
#include "tools/cli/RunJson.hpp"
#include "tools/cli/StopSignal.hpp"
#include "tools/cli/TraceWriter.hpp"

namespace vdnn::tools {
namespace {

using Json = nlohmann::json;

// Per layer and per layer type, the last step's forward and backward device milliseconds; per
// layer also its layout and, for layers that choose among algorithms, the ones that ran.
void write_layer_times(const std::filesystem::path& path, graph::Session& session) {
  const graph::Graph& g = session.graph();
  const graph::Executor& executor = session.executor();
  Json layers = Json::array();
  struct TypeTotals {
    double forward_ms = 0.0, backward_ms = 0.0, forward_host_ms = 0.0, backward_host_ms = 0.0;
  };
  std::map<std::string, TypeTotals> by_type;
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
    const graph::LayerTime& t = executor.layer_times()[static_cast<std::size_t>(id)];
    const std::string type(layers::type_name(g.node(id).spec));
    layers.push_back({{"name", g.node(id).name},
                      {"type", type},
                      {"forward_ms", 1e3 * t.forward},
                      {"backward_ms", 1e3 * t.backward},
                      {"forward_host_ms", 1e3 * t.forward_host},
                      {"backward_host_ms", 1e3 * t.backward_host},
                      {"layout", runtime::layout_name(g.node(id).layout)}});
    const std::string algorithms = session.layers().at(id).algorithms();
    if (!algorithms.empty()) layers.back()["algorithms"] = algorithms;
    TypeTotals& sum = by_type[type];
    sum.forward_ms += 1e3 * t.forward;
    sum.backward_ms += 1e3 * t.backward;
    sum.forward_host_ms += 1e3 * t.forward_host;
    sum.backward_host_ms += 1e3 * t.backward_host;
  }
  Json types = Json::object();
  for (const auto& [type, sum] : by_type) {
    types[type] = {{"forward_ms", sum.forward_ms},
                   {"backward_ms", sum.backward_ms},
                   {"forward_host_ms", sum.forward_host_ms},
                   {"backward_host_ms", sum.backward_host_ms}};
  }
  // Host time per kind of action: where a host-bound step's enqueue goes.
  Json host = Json::object();
  const std::vector<double>& by_op = executor.host_seconds_by_op();
  for (std::size_t op = 0; op < by_op.size(); ++op) {
    host[graph::op_name(static_cast<graph::Op>(op))] = 1e3 * by_op[op];
  }
  write_json(path, Json{{"layers", layers}, {"by_type", types}, {"host_ms_by_action", host}});
}

}  // namespace

namespace {

void add_checkpoint_options(CLI::App& cmd, TrainOptions& o) {
  cmd.add_option("--checkpoint-every", o.checkpoint_every,
                 "Write OUT/checkpoints/iter-N.safetensors every N steps and at the end")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd.add_option("--keep", o.keep, "Checkpoints kept (the newest)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd.add_option("--resume", o.resume,
                 "Continue from a checkpoint (PATH, or latest: the newest good one under OUT) up "
                 "to --iters in total");
  cmd.add_option("--init-from", o.init_from,
                 "Start from these weights (safetensors, PyTorch names), optimizer afresh")
      ->excludes("--resume");
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// --resume and --init-from, before the first step.
void restore(models::Trainer& trainer, const TrainOptions& o, const std::filesystem::path& out) {
  if (!o.init_from.empty()) trainer.init_from(o.init_from);
  if (o.resume.empty()) return;
  const std::filesystem::path from =
      o.resume == "latest" ? latest_good_checkpoint(out) : std::filesystem::path(o.resume);
  trainer.resume(from);
  if (trainer.iteration() >= o.iters) {
    throw runtime::InvalidArgument("--resume " + from.string() + " is at iteration " +
                                   std::to_string(trainer.iteration()) + " and --iters is " +
                                   std::to_string(o.iters) + ": nothing is left to train");
  }
  std::cerr << "vdnn: resumed from " << from.string() << " at iteration " << trainer.iteration()
            << "\n";
}

// Every --checkpoint-every steps and after the last: a checkpoint, then the oldest beyond --keep
// go.
void checkpoint_if_due(models::Trainer& trainer, const TrainOptions& o,
                       const std::filesystem::path& out) {
  const std::int64_t it = trainer.iteration();
  if (o.checkpoint_every == 0 || (it % o.checkpoint_every != 0 && it != o.iters)) return;
  std::filesystem::create_directories(checkpoint_path(out, it).parent_path());
  trainer.save(checkpoint_path(out, it));
  prune_checkpoints(out, o.keep);
}

// A signal asked to stop: the step has finished; checkpoint it (whatever --checkpoint-every
// says), then stop with Interrupted.
[[noreturn]] void stop_now(models::Trainer& trainer, const TrainOptions& o,
                           const std::filesystem::path& out, const StopSignal& stop) {
  const std::filesystem::path path = checkpoint_path(out, trainer.iteration());
  if (!std::filesystem::exists(path)) {
    std::filesystem::create_directories(path.parent_path());
    trainer.save(path);
    prune_checkpoints(out, o.keep);
  }
  throw Interrupted(signal_name(stop) + " after iteration " + std::to_string(trainer.iteration()) +
                    " of " + std::to_string(o.iters) + "; checkpoint " + path.string() +
                    " (continue with --resume latest)");
}

}  // namespace

CLI::App* add_train_command(CLI::App& app, TrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("train", "Train a network defined in a JSON config");
  cmd->add_option("--config", o.config, "Network config (JSON)")->required();
  cmd->add_option("--batch", o.batch, "Mini-batch size")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_option("--iters", o.iters, "Training iterations")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--out", o.out, "Output directory (default runs/<network name>)");
  cmd->add_option("--policy", o.policy,
                  "What leaves device memory: baseline, vdnn-all, vdnn-conv, vdnn-dyn (pinned "
                  "copies), uvm, uvm-evict, uvm-prefetch (managed memory), recompute (cheap "
                  "layers run again in backward)")
      ->capture_default_str()
      ->check(CLI::IsMember(graph::policy_names()));
  cmd->add_option("--mem-budget", o.mem_budget,
                  "Device memory budget, e.g. 6GiB or 512MiB (default: all the device can give)");
  add_run_options(*cmd, o.run, true);
  cmd->add_option("--trace", o.trace,
                  "Write the last step as Chrome Trace Event JSON (Perfetto): streams, layers, "
                  "copies, memory; times every layer like --profile-layers");
  cmd->add_flag("--check-gradients", o.check_gradients,
                "Stop with exit code 4 when a parameter gradient is not finite (reads every "
                "gradient back each step)");
  cmd->add_flag("--profile-layers", o.profile_layers,
                "Time every layer with events; writes layers.json (the last step)");
  add_checkpoint_options(*cmd, o);
  cmd->add_option("--eval-every", o.eval_every,
                  "Evaluate the test split (cifar10: test_batch.bin; synthetic: 1000 held-out "
                  "images) in inference mode every N steps and at the end; writes eval lines to "
                  "metrics.jsonl. 0: never")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  cmd->add_option("--gpus", o.gpus,
                  "Data parallelism on this host: N processes, one per GPU, each at --batch on "
                  "its shard of the data (so N x --batch in all); under torchrun or mpirun the "
                  "launch comes from their variables instead")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--sync-bn", o.sync_bn,
                "Synchronized batch norm with several processes: every batch norm normalizes "
                "with the statistics of all ranks' batches together (torch.nn.SyncBatchNorm); "
                "without it each rank's own");
  cmd->add_option("--nccl-timeout", o.nccl_timeout,
                  "Seconds a rank waits for the others (setup, each all-reduce) before it stops "
                  "with exit code 6")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 1e6));
  cmd->add_option(
      "--eval-data", o.eval_data,
      "Evaluate on this source instead of --data's test split: its test split where "
      "it has one (imagefolder:DIR: DIR/val), else all of it (e.g. webdataset:PATTERN)");
  return cmd;
}

namespace {

Json eval_json(const models::EvalRecord& e) {
  return {{"iteration", e.iteration},
          {"loss", e.loss},
          {"accuracy", e.accuracy},
          {"top5", e.top5},
          {"images", e.images}};
}

// summary.json: the plan's totals, the run's settings, losses, memory and medians, and the last
// evaluation (if any).
// {"total": seconds, and each part's}.
Json setup_json(const graph::SetupProgress& setup) {
  Json parts{{"total", setup.total()}};
  for (const auto& [part, seconds] : setup.parts()) parts[part] = seconds;
  return parts;
}

nlohmann::json summary_json(const TrainOptions& o, models::Trainer& trainer,
                            const TransferSeries& transfers,
                            const std::optional<models::EvalRecord>& last_eval,
                            double first_step_end) {
  graph::Session& session = trainer.session();
  graph::Executor& executor = session.executor();
  const std::int64_t batch = session.graph().batch();
  const models::RunMedians medians = models::run_medians(trainer.history(), batch, 0);
  std::vector<double> losses;
  for (const models::StepRecord& r : trainer.history()) losses.push_back(r.loss);
  Json summary = plan_totals(session.plan());
  summary.update(Json{
      {"config", o.config},
      {"network", session.graph().name()},
      {"device", layers::backend_name(trainer.options().session.backend)},
      {"deterministic", o.run.deterministic},
      {"math", o.run.math},
      {"layout", runtime::layout_name(session.layout().layout)},
      {"precision", o.run.precision},
      {"layout_reason", session.layout().reason},
      {"fused_chains", session.fusion().size()},
      {"unfused_chains", session.declined_fusion().size()},
      {"dense_blocks", dense_blocks_json(session.graph())},
      {"choices", session.reasons()},
      {"moves", moves_json(graph::explain_moves(session.graph(), session.plan(), session.costs()))},
      {"pinned_bytes", executor.memory().pinned_capacity},
      {"batch", o.batch},
      {"iters", o.iters},
      {"lr", o.run.lr},
      {"schedule", o.run.schedule},
      {"seed", o.run.seed},
      {"data", trainer.dataset().description()},
      {"bad_images", trainer.dataset().bad_images().size()},
      {"augment", models::augment_name(*trainer.options().augment)},
      {"parameters", executor.parameters().trainable_count()},
      {"losses", losses},
      {"peak_device_bytes", executor.memory().device_peak},
      {"upstream_allocations", executor.memory().device_upstream_allocations},
      {"device_pool_bytes", executor.memory().device_capacity},
      {"workspace_bytes", session.layers().workspace_bytes()},
      {"workspace_limited_layers", session.layers().limited_layers()},
      {"iter_ms_median", medians.ms},
      {"data_wait_ms_median", medians.data_wait_ms},
      {"images_per_s", medians.images_per_s},
      {"setup_seconds", setup_json(trainer.setup())},
      {"first_step_end_seconds", first_step_end}});
  summary.update(transfers.medians());
  summary.update(managed_summary(session));
  if (const runtime::Communicator* c = trainer.options().session.executor.communicator) {
    summary["world_size"] = c->size();  // --batch per rank: world_size x batch in all
  }
  if (last_eval) summary["eval"] = eval_json(*last_eval);
  return summary;
}

}  // namespace

int run_train(const TrainOptions& o) {
  const std::optional<runtime::LaunchConfig> launch = runtime::launch_from_env();
  if (!launch && o.gpus > 1) return launch_local_ranks(o.gpus);
  // Rank 0 alone writes the output directory (Note [Data parallelism]).
  const bool writer = !launch || launch->rank == 0;
  const graph::NetworkDef def = models::load_network(o.config);
  const std::filesystem::path out = o.out.empty() ? "runs/" + def.name : o.out;
  if (writer) prepare_output_dir(out);
  Progress progress(o.iters);
  models::TrainerOptions options =
      trainer_options(o.run, o.policy, o.mem_budget, o.iters, o.profile_layers || !o.trace.empty());
  if (writer) options.setup_progress = progress.setup_sink();
  options.config_json = file_text(o.config);
  options.evaluation = o.eval_every > 0;
  options.eval_data = o.eval_data;
  const std::unique_ptr<runtime::Communicator> communicator = join_run(launch, o, options);
  models::Trainer trainer(def, o.batch, std::move(options));
  restore(trainer, o, out);
  if (!writer) return train_quietly(trainer, o);
  if (const std::vector<std::string> classes = trainer.dataset().class_names(); !classes.empty()) {
    models::write_class_index((out / models::kClassIndexFileName).string(), classes);
  }
  // A resumed run appends to the metrics of the run it continues.
  std::ofstream metrics(out / "metrics.jsonl", o.resume.empty() ? std::ios::trunc : std::ios::app);
  if (!metrics) throw runtime::Error("cannot write " + (out / "metrics.jsonl").string());
  const bool managed = trainer.session().plan().memory == graph::DeviceMemory::Managed;
  TransferSeries transfers;
  double first_step_end = -1.0;
  trainer.on_step([&](const models::StepRecord& r) {
    if (first_step_end < 0.0) first_step_end = seconds_since_process_start();
    const Json rates = transfer_metrics(r.transfers, managed);
    transfers.add(rates);
    Json row{{"iter", r.iteration},
             {"loss", r.loss},
             {"accuracy", r.accuracy},
             {"lr", r.lr},
             {"ms", r.ms},
             {"images_per_s", r.images_per_s},
             {"data_wait_ms", r.data_wait_ms},
             {"peak_device_bytes", r.peak_device_bytes}};
    row.update(rates);
    if (!r.rank_ms.empty()) row["rank_ms"] = r.rank_ms;  // several ranks: each one's step
    metrics << row.dump() << "\n";
    progress.update(r.iteration + 1, r.loss, r.accuracy, r.images_per_s);
  });
  std::optional<models::EvalRecord> last_eval;
  const StopSignal stop;
  while (trainer.iteration() < o.iters) {
    trainer.step();
    const std::int64_t it = trainer.iteration();
    if (o.eval_every > 0 && (it % o.eval_every == 0 || it == o.iters)) {
      last_eval = trainer.evaluate();
      metrics << Json{{"eval", eval_json(*last_eval)}}.dump() << "\n";
    }
    checkpoint_if_due(trainer, o, out);
    if (stopping(communicator.get(), stop)) stop_now(trainer, o, out, stop);
  }

  graph::Session& session = trainer.session();
  if (o.profile_layers) write_layer_times(out / "layers.json", session);
  write_json(out / "summary.json", summary_json(o, trainer, transfers, last_eval, first_step_end));
  write_plan(out / "plan.txt", session);
  if (!o.trace.empty()) {
    const std::string label = "vdnn " + def.name + " batch " + std::to_string(o.batch) + ", " +
                              graph::policy_name(session.plan().policy);
    write_trace(o.trace, trace_events(session, 1, label));
  }
  for (const std::string& why : trainer.dataset().bad_images()) {
    std::cerr << "vdnn: warning: skipped " << why << "\n";
  }
  const std::vector<models::StepRecord>& h = trainer.history();
  std::cout << "vdnn: trained " << def.name << " for " << o.iters << " iterations on "
            << layers::backend_name(trainer.options().session.backend) << " with "
            << graph::policy_name(session.plan().policy) << "; loss " << h.front().loss << " -> "
            << h.back().loss << "\nvdnn: results in " << out.string()
            << "/ (summary.json, metrics.jsonl, plan.txt)\n";
  return 0;
}

}  // namespace vdnn::tools
