// `vdnn train`: load config, build graph and executor, run iterations, report.
#include "tools/cli/TrainCommand.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "graph/LrSchedule.hpp"
#include "graph/MemoryCheck.hpp"
#include "graph/Session.hpp"
#include "layers/Registry.hpp"
#include "models/ConfigLoader.hpp"
#include "models/data/Dataset.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Device.hpp"
#include "runtime/HostMemory.hpp"
#include "tools/cli/Divergence.hpp"
#include "tools/cli/OutputDir.hpp"
#include "tools/cli/PlanJson.hpp"
#include "tools/cli/Progress.hpp"
#include "tools/cli/TraceWriter.hpp"
#include "tools/cli/Validators.hpp"

namespace vdnn::tools {
namespace {

using Json = nlohmann::json;

layers::Backend resolve_device(const std::string& device) {
  if (device == "cpu") return layers::Backend::Cpu;
  if (device == "cuda") return layers::Backend::Cuda;
  // auto: the GPU when one is present and this build can train on it.
  const bool gpu = runtime::cuda_device_count() > 0 && layers::has_backend(layers::Backend::Cuda);
  return gpu ? layers::Backend::Cuda : layers::Backend::Cpu;
}

void write_json(const std::filesystem::path& path, const Json& value) {
  std::ofstream out(path);
  out << value.dump(2) << "\n";
  if (!out) throw runtime::Error("cannot write " + path.string());
}

// Achieved copy bandwidth in GB/s (1e9 bytes), 0 without copies.
double gbps(std::uint64_t bytes, double seconds) {
  return seconds > 0.0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

// Fraction of the step a copy stream was busy.
double busy(double copy_seconds, double step_seconds) {
  return step_seconds > 0.0 ? copy_seconds / step_seconds : 0.0;
}

// Per layer and per layer type, the last step's forward and backward device milliseconds.
void write_layer_times(const std::filesystem::path& path, const graph::Graph& g,
                       const graph::Executor& executor) {
  Json layers = Json::array();
  std::map<std::string, std::pair<double, double>> by_type;
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
    const graph::LayerTime& t = executor.layer_times()[static_cast<std::size_t>(id)];
    const std::string type(layers::type_name(g.node(id).spec));
    layers.push_back({{"name", g.node(id).name},
                      {"type", type},
                      {"forward_ms", 1e3 * t.forward},
                      {"backward_ms", 1e3 * t.backward}});
    by_type[type].first += 1e3 * t.forward;
    by_type[type].second += 1e3 * t.backward;
  }
  Json types = Json::object();
  for (const auto& [type, ms] : by_type)
    types[type] = {{"forward_ms", ms.first}, {"backward_ms", ms.second}};
  write_json(path, Json{{"layers", layers}, {"by_type", types}});
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

// One step's copies and, with managed memory, migrations: metrics.jsonl fields, each also
// summarized as `<name>_median` in summary.json.
Json transfer_metrics(const graph::TransferReport& c, bool managed) {
  Json j{{"offloaded_bytes", c.offloaded_bytes},
         {"prefetched_bytes", c.prefetched_bytes},
         {"offload_gbps", gbps(c.offloaded_bytes, c.offload_seconds)},
         {"prefetch_gbps", gbps(c.prefetched_bytes, c.prefetch_seconds)},
         {"offload_busy", busy(c.offload_seconds, c.step_seconds)},
         {"prefetch_busy", busy(c.prefetch_seconds, c.step_seconds)}};
  if (!managed) return j;
  const runtime::MigrationTraffic& m = c.migration;
  j.update(Json{{"evicted_bytes", c.evicted_bytes},
                {"migrated_bytes", c.migrated_bytes},
                {"evict_gbps", gbps(c.evicted_bytes, c.evict_seconds)},
                {"migrate_gbps", gbps(c.migrated_bytes, c.migrate_seconds)},
                {"evict_busy", busy(c.evict_seconds, c.step_seconds)},
                {"migrate_busy", busy(c.migrate_seconds, c.step_seconds)},
                {"migrated_to_device_bytes", m.to_device_bytes},
                {"migrated_to_host_bytes", m.to_host_bytes},
                {"gpu_page_faults", m.gpu_page_faults},
                {"migration_to_device_gbps", gbps(m.to_device_bytes, m.to_device_seconds)},
                {"migration_to_host_gbps", gbps(m.to_host_bytes, m.to_host_seconds)}});
  return j;
}

// What summary.json says about managed memory (empty with dedicated memory).
Json managed_summary(graph::Session& session) {
  graph::Executor& executor = session.executor();
  const graph::Plan& plan = session.plan();
  if (plan.memory != graph::DeviceMemory::Managed) return Json::object();
  return {{"managed_memory", session.context().managed_memory_is_real()
                                 ? "cudaMallocManaged"
                                 : "emulated: the CPU backend runs the plan on host memory, "
                                   "migrations move nothing"},
          {"migration_source", executor.migration_source()},
          {"pool_peak_bytes", executor.memory().pool_peak}};
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
  cmd->add_option("--lr", o.lr, "Base learning rate")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::PositiveNumber);
  cmd->add_option("--momentum", o.momentum, "SGD momentum")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--weight-decay", o.weight_decay, "L2 weight decay")
      ->capture_default_str()
      ->check(finite_number())
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--schedule", o.schedule, "Learning-rate schedule over --iters")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "step", "cosine"}));
  cmd->add_option("--seed", o.seed, "Seed of initialization, data and dropout")
      ->capture_default_str();
  cmd->add_option("--device", o.device, "auto: CUDA when a GPU is present, else CPU")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--data", o.data, "synthetic or cifar10:DIR")->capture_default_str();
  cmd->add_option("--out", o.out, "Output directory (default runs/<network name>)");
  cmd->add_option("--policy", o.policy,
                  "What leaves device memory: baseline, vdnn-all, vdnn-conv, vdnn-dyn (pinned "
                  "copies), uvm, uvm-evict, uvm-prefetch (managed memory)")
      ->capture_default_str()
      ->check(CLI::IsMember(graph::policy_names()));
  cmd->add_flag("--allow-oversubscription", o.allow_oversubscription,
                "UVM policies: allow more managed memory than the device has free (the driver "
                "pages under the kernels; this can hang a shared GPU)");
  cmd->add_flag("!--no-migration-counters", o.count_migrations,
                "UVM policies: do not read CUPTI's migration counters (report the plan's bytes)");
  cmd->add_option("--debug-device-free", o.debug_device_free,
                  "CPU backend: the free device memory the managed-memory guard sees, e.g. 1GiB");
  cmd->add_option("--mem-budget", o.mem_budget,
                  "Device memory budget, e.g. 6GiB or 512MiB (default: all the device can give)");
  cmd->add_option("--debug-stream-delays", o.debug_stream_delays,
                  "CPU backend: random delays on every stream operation, from this seed");
  cmd->add_flag("--debug-poison", o.debug_poison,
                "Fill freed and offloaded device memory with NaN");
  cmd->add_flag("--deterministic", o.deterministic,
                "CUDA: deterministic algorithms only (bitwise reproducible runs)");
  cmd->add_option("--trace", o.trace,
                  "Write the last step as Chrome Trace Event JSON (Perfetto): streams, layers, "
                  "copies, memory; times every layer like --profile-layers");
  cmd->add_flag("--check-gradients", o.check_gradients,
                "Stop with exit code 4 when a parameter gradient is not finite (reads every "
                "gradient back each step)");
  cmd->add_flag("--profile-layers", o.profile_layers,
                "Time every layer with events; writes layers.json (the last step)");
  cmd->add_option("--math", o.math, "CUDA convolutions: tf32 (tensor cores) or fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"tf32", "fp32"}));
  return cmd;
}

int run_train(const TrainOptions& o) {
  const graph::NetworkDef def = models::load_network(o.config);
  graph::Graph graph = graph::Graph::build(def, o.batch);
  const std::filesystem::path out = o.out.empty() ? "runs/" + def.name : o.out;
  prepare_output_dir(out);
  const layers::Backend backend = resolve_device(o.device);

  graph::LrSchedule schedule;
  schedule.policy = graph::parse_lr_policy(o.schedule);
  schedule.base_lr = o.lr;
  schedule.total_steps = o.iters;
  schedule.step_size = std::max<std::int64_t>(1, o.iters / 3);

  graph::SessionOptions options;
  options.backend = backend;
  options.policy = graph::parse_policy(o.policy);
  options.budget_bytes = o.mem_budget.empty() ? 0 : runtime::parse_bytes(o.mem_budget);
  options.executor = {o.seed, o.momentum, o.weight_decay, o.debug_poison,
                      o.profile_layers || !o.trace.empty()};
  options.deterministic = o.deterministic;
  options.allow_tf32 = o.math == "tf32";
  options.stress.enabled = o.debug_stream_delays >= 0;
  options.stress.seed = static_cast<std::uint64_t>(o.debug_stream_delays);
  options.executor.allow_oversubscription = o.allow_oversubscription;
  options.executor.count_migrations = o.count_migrations;
  if (!o.debug_device_free.empty()) {
    options.cpu_free_device_bytes = runtime::parse_bytes(o.debug_device_free);
  }
  const models::SampleFormat format{def.channels, def.height, def.width, def.num_classes};
  graph::check_host_memory(
      graph, options.policy, options.budget_bytes, backend,
      {{"the " + o.data + " dataset", models::dataset_host_bytes(o.data, format)}},
      runtime::available_host_memory());
  auto dataset = models::make_dataset(o.data, format, o.seed);
  graph::Session session(std::move(graph), options);
  graph::Executor& executor = session.executor();
  const graph::Plan& plan = session.plan();
  const std::int64_t batch = session.graph().batch();

  std::ofstream metrics(out / "metrics.jsonl");
  if (!metrics) throw runtime::Error("cannot write " + (out / "metrics.jsonl").string());

  std::vector<std::int32_t> labels(static_cast<std::size_t>(batch));
  std::vector<double> losses;
  std::vector<double> iter_ms;
  std::map<std::string, std::vector<double>> transfer_series;
  std::vector<float> gradient_scratch;
  const bool managed = plan.memory == graph::DeviceMemory::Managed;
  Progress progress(o.iters);
  for (std::int64_t it = 0; it < o.iters; ++it) {
    float* images = executor.input_staging();  // the loader writes straight to pinned memory
    dataset->next_batch(batch, images, labels.data());
    const double lr = schedule.at(it);
    const auto start = std::chrono::steady_clock::now();
    const graph::StepResult r = executor.train_step(images, labels.data(), lr);
    const graph::TransferReport& copies = executor.transfers();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    losses.push_back(r.loss);
    iter_ms.push_back(ms);
    const Json rates = transfer_metrics(copies, managed);
    for (const auto& [name, value] : rates.items()) {
      transfer_series[name].push_back(value.get<double>());
    }
    const double images_per_s = static_cast<double>(batch) * 1000.0 / ms;
    Json row{{"iter", it},
             {"loss", r.loss},
             {"accuracy", r.accuracy},
             {"lr", lr},
             {"ms", ms},
             {"images_per_s", images_per_s},
             {"peak_device_bytes", executor.memory().device_peak}};
    row.update(rates);
    metrics << row.dump() << "\n";
    check_loss_finite(r.loss, it, o.iters, lr);
    if (o.check_gradients) check_gradients_finite(session, it, o.iters, gradient_scratch);
    progress.update(it + 1, r.loss, r.accuracy, images_per_s);
  }

  if (o.profile_layers) write_layer_times(out / "layers.json", session.graph(), executor);
  const double median_ms = median(iter_ms);
  Json summary = plan_totals(plan);
  summary.update(Json{{"config", o.config},
                      {"network", def.name},
                      {"device", layers::backend_name(backend)},
                      {"deterministic", o.deterministic},
                      {"math", o.math},
                      {"pinned_bytes", executor.memory().pinned_capacity},
                      {"batch", o.batch},
                      {"iters", o.iters},
                      {"lr", o.lr},
                      {"schedule", o.schedule},
                      {"seed", o.seed},
                      {"data", dataset->description()},
                      {"parameters", executor.parameters().trainable_count()},
                      {"losses", losses},
                      {"peak_device_bytes", executor.memory().device_peak},
                      {"upstream_allocations", executor.memory().device_upstream_allocations},
                      {"device_pool_bytes", executor.memory().device_capacity},
                      {"workspace_bytes", session.layers().workspace_bytes()},
                      {"lean_algorithm_layers", session.layers().lean_layers()},
                      {"iter_ms_median", median_ms},
                      {"images_per_s", static_cast<double>(batch) * 1000.0 / median_ms}});
  for (const auto& [name, values] : transfer_series) summary[name + "_median"] = median(values);
  summary.update(managed_summary(session));
  write_json(out / "summary.json", summary);
  if (!o.trace.empty()) write_trace(o.trace, session);
  std::cout << "vdnn: trained " << def.name << " for " << o.iters << " iterations on "
            << layers::backend_name(backend) << " with " << graph::policy_name(plan.policy)
            << "; loss " << losses.front() << " -> " << losses.back() << "\nvdnn: results in "
            << out.string() << "/ (summary.json, "
            << "metrics.jsonl)\n";
  return 0;
}

}  // namespace vdnn::tools
