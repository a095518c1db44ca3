// The training loop: one step of data, compute and bookkeeping per call.
#include "models/train/Trainer.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "graph/MemoryCheck.hpp"
#include "models/train/Checkpoint.hpp"
#include "models/train/Divergence.hpp"
#include "runtime/HostMemory.hpp"

namespace vdnn::models {
namespace {

SampleFormat sample_format(const graph::NetworkDef& def) {
  return {def.channels, def.height, def.width, def.num_classes};
}

// Throws HostMemoryExceeded before anything large is allocated: the dataset and the pinned pool.
void check_host(const graph::Graph& graph, const graph::NetworkDef& def, const TrainerOptions& o) {
  graph::check_host_memory(
      graph, o.session.policy, o.session.budget_bytes, o.session.backend,
      {{"the " + o.data + " dataset", dataset_host_bytes(o.data, sample_format(def))}},
      runtime::available_host_memory());
}

}  // namespace

Trainer::Trainer(const graph::NetworkDef& def, std::int64_t batch, TrainerOptions options)
    : options_(std::move(options)), labels_(static_cast<std::size_t>(batch)) {
  graph::Graph graph = graph::Graph::build(def, batch);
  check_host(graph, def, options_);
  dataset_ = make_dataset(options_.data, sample_format(def), options_.session.executor.seed);
  session_ = std::make_unique<graph::Session>(std::move(graph), options_.session);
}

Trainer::~Trainer() = default;

const StepRecord& Trainer::step() {
  graph::Executor& executor = session_->executor();
  const std::int64_t batch = session_->graph().batch();
  const std::int64_t it = iteration();
  float* images = executor.input_staging();  // the loader writes straight to pinned memory
  dataset_->next_batch(batch, images, labels_.data());
  StepRecord r;
  r.iteration = it;
  r.lr = options_.schedule.at(it);
  const auto start = std::chrono::steady_clock::now();
  const graph::StepResult result = executor.train_step(images, labels_.data(), r.lr);
  r.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.loss = result.loss;
  r.accuracy = result.accuracy;
  r.images_per_s = static_cast<double>(batch) * 1000.0 / r.ms;
  r.peak_device_bytes = executor.memory().device_peak;
  r.transfers = executor.transfers();
  history_.push_back(r);
  // The callbacks see a diverged step too (metrics.jsonl records the NaN) before the throw.
  for (const StepCallback& callback : callbacks_) callback(history_.back());
  const std::int64_t total = options_.schedule.total_steps;
  check_loss_finite(r.loss, it, total, r.lr);
  if (options_.check_gradients) check_gradients_finite(*session_, it, total, gradient_scratch_);
  return history_.back();
}

void Trainer::save(const std::filesystem::path& path) {
  save_checkpoint(path, *session_,
                  {iteration(), options_.session.executor.seed, options_.config_json});
}

void Trainer::resume(const std::filesystem::path& path) {
  if (!history_.empty() || start_ != 0) {
    throw runtime::InvalidArgument("resume " + path.string() + ": the run has already started");
  }
  const CheckpointState state = load_checkpoint(path, *session_);
  if (state.seed != options_.session.executor.seed) {
    throw runtime::InvalidArgument(
        "resume " + path.string() + ": it was trained with seed " + std::to_string(state.seed) +
        ", this run has seed " + std::to_string(options_.session.executor.seed) +
        "; the data would differ (pass --seed " + std::to_string(state.seed) + ")");
  }
  // The data stream is a function of the seed and the batches drawn: draw the trained ones again.
  const std::int64_t batch = session_->graph().batch();
  float* staging = session_->executor().input_staging();
  for (std::int64_t i = 0; i < state.iteration; ++i) {
    dataset_->next_batch(batch, staging, labels_.data());
  }
  start_ = state.iteration;
}

void Trainer::init_from(const std::filesystem::path& path) {
  LoadOptions options;
  options.weights_only = true;
  load_checkpoint(path, *session_, options);
}

void Trainer::on_step(StepCallback callback) { callbacks_.push_back(std::move(callback)); }

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

RunMedians run_medians(const std::vector<StepRecord>& history, std::int64_t batch,
                       std::int64_t warmup) {
  const auto skip = static_cast<std::size_t>(std::max<std::int64_t>(0, warmup));
  std::vector<double> ms;
  for (std::size_t i = skip < history.size() ? skip : 0; i < history.size(); ++i) {
    ms.push_back(history[i].ms);
  }
  RunMedians m;
  m.ms = median(ms);
  m.images_per_s = m.ms > 0.0 ? static_cast<double>(batch) * 1000.0 / m.ms : 0.0;
  return m;
}

}  // namespace vdnn::models
