// The training loop: one step of data, compute and bookkeeping per call.
#include "models/train/Trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <utility>

#include "graph/ImageInput.hpp"
#include "graph/MemoryCheck.hpp"
#include "models/data/BatchLoader.hpp"
#include "models/data/ShardedDataset.hpp"
#include "models/data/image/ImageSource.hpp"
#include "models/train/Checkpoint.hpp"
#include "models/train/Divergence.hpp"
#include "models/train/SetupCache.hpp"
#include "runtime/HostMemory.hpp"

namespace vdnn::models {
namespace {

SampleFormat sample_format(const graph::NetworkDef& def) {
  return {def.channels, def.height, def.width, def.num_classes};
}

// The loader's ring of pinned input batches: the one trained on, the next (staged on the device
// during the step, Note [Input staging]) and those being drawn (Note [Data loading]). Batches of
// image files vary in cost (the same files at the same positions in every run: the dearest take
// the workers ~1.4x the mean), so their workers draw up to four batches ahead, to keep ahead of
// the steps on average rather than batch by batch (Note [Image pipeline]).
std::size_t input_slots(bool image_input) { return image_input ? 6 : 3; }

// Throws HostMemoryExceeded before anything large is allocated: the datasets, the loader's other
// pinned batches and the pinned pool. Without a host budget, sets the one they leave (Note [Host
// budget]).
void check_host(const graph::Graph& graph, const graph::NetworkDef& def, TrainerOptions& o) {
  const std::uint64_t data = dataset_host_bytes(o.data, sample_format(def));
  std::vector<graph::HostNeed> extra{
      {"the " + o.data + " dataset", data},
      {"the data loader's other pinned input batches",
       (o.session.executor.input_slots - 1) *
           graph.input_shape().bytes(graph.image_input() ? runtime::DType::U8
                                                         : runtime::DType::F32)}};
  if (o.evaluation) extra.push_back({"the " + o.data + " test split", data});
  const runtime::HostMemory machine = runtime::available_host_memory();
  graph::check_host_memory(graph, o.session.policy, o.session.budget_bytes, o.session.backend,
                           extra, machine);
  if (!o.session.host_budget_bytes) {
    o.session.host_budget_bytes = graph::pinned_room(
        graph, o.session.policy, o.session.budget_bytes, o.session.backend, extra, machine);
  }
}

// A rank's shard of the training stream (Note [Data parallelism]); the stream itself in a single
// process.
std::shared_ptr<Dataset> shard(std::shared_ptr<Dataset> data,
                               const runtime::Communicator* communicator, std::int64_t batch) {
  if (communicator == nullptr || communicator->size() == 1) return data;
  return std::make_shared<ShardedDataset>(std::move(data), communicator->rank(),
                                          communicator->size(), batch);
}

}  // namespace

Trainer::Trainer(const graph::NetworkDef& def, std::int64_t batch, TrainerOptions options)
    : options_(std::move(options)), setup_(options_.setup_progress) {
  options_.session.progress = &setup_;
  setup_.begin("host", "checking host memory");
  options_.augment = options_.augment.value_or(default_augment(options_.data));
  graph::Graph graph = graph::Graph::build(def, batch);
  // Image files reach the device as bytes, normalized there (Note [Image input]).
  const bool image_input = options_.custom_data != nullptr ? options_.custom_data->image_bytes()
                                                           : is_image_source(options_.data);
  if (image_input) {
    graph = graph::with_image_input(graph, graph::kImageNetStatistics);
  }
  options_.session.executor.input_slots = input_slots(image_input);
  check_host(graph, def, options_);
  const SampleFormat format = sample_format(def);
  const std::uint64_t seed = options_.session.executor.seed;
  const bool cuda = options_.session.backend == layers::Backend::Cuda;
  const ImageOptions image{options_.skip_bad_images,
                           is_image_source(options_.data)
                               ? resolve_decode(options_.decode, cuda,
                                                options_.data_workers > 0 ? options_.data_workers
                                                                          : default_data_workers())
                               : Decode::Cpu,
                           options_.session.device, options_.data_workers,
                           options_.gpu_decode_share};
  // The data loads (or is generated) on a thread of its own while the session sets up: neither
  // waits for the other. Its errors come out of get(), after the session's.
  std::future<std::shared_ptr<Dataset>> train = std::async(std::launch::async, [&] {
    if (options_.custom_data != nullptr) return options_.custom_data;
    return std::shared_ptr<Dataset>(
        make_dataset(options_.data, format, seed, Split::Train, *options_.augment, image, batch));
  });
  std::future<std::unique_ptr<Dataset>> test;
  if (options_.evaluation) {
    const bool own = !options_.eval_data.empty();
    if (own && is_image_source(options_.eval_data) != image_input) {
      throw runtime::InvalidArgument("--eval-data " + options_.eval_data + " and --data " +
                                     options_.data +
                                     " must both be image files or neither: the "
                                     "network takes one form of input");
    }
    test = std::async(std::launch::async, [this, own, format, seed, image, batch] {
      return make_dataset(own ? options_.eval_data : options_.data, format, seed,
                          own ? Split::Whole : Split::Test, Augment::None, image, batch);
    });
    test_labels_.resize(static_cast<std::size_t>(batch));
  }
  SetupCache cache = open_setup_cache(options_.cache_dir, options_.cache, options_.session);
  disk_cache_ = std::move(cache.disk);
  cost_cache_ = std::move(cache.costs);
  session_ = std::make_unique<graph::Session>(std::move(graph), options_.session);
  setup_.begin("data", "loading the data");
  dataset_ = shard(train.get(), options_.session.executor.communicator, batch);
  if (test.valid()) test_data_ = test.get();
  graph::Executor& executor = session_->executor();
  std::vector<void*> slots;
  for (std::size_t i = 0; i < options_.session.executor.input_slots; ++i) {
    slots.push_back(executor.input_staging(i));
  }
  loader_ = std::make_unique<BatchLoader>(*dataset_, batch, std::move(slots));
  setup_.end();
}

Trainer::~Trainer() = default;

const StepRecord& Trainer::step() {
  const auto start = std::chrono::steady_clock::now();
  const Batch data = loader_->next();                       // in the executor's pinned staging
  session_->executor().stage_next(loader_->peek().images);  // uploaded during this step's backward
  const double wait_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return train_on(data.images, data.labels, start, wait_ms);
}

const StepRecord& Trainer::step(const void* images, const std::int32_t* labels) {
  VDNN_EXPECTS(images != nullptr && labels != nullptr, "step: a batch needs images and labels");
  return train_on(images, labels, std::chrono::steady_clock::now(), 0.0);
}

const StepRecord& Trainer::step_on_device(const void* images, const std::int32_t* labels,
                                          void* stream) {
  VDNN_EXPECTS(images != nullptr && labels != nullptr, "step: a batch needs images and labels");
  const auto start = std::chrono::steady_clock::now();
  runtime::ExecutionContext& context = session_->context();
  context.wait_for_caller(context.compute(), stream);
  // Back to the host, where the loss checks the labels; the previous step ended synchronized, so
  // this waits for the caller's work only.
  device_labels_.resize(static_cast<std::size_t>(session_->graph().batch()));
  context.compute().copy_async(device_labels_.data(), labels,
                               device_labels_.size() * sizeof(std::int32_t));
  context.compute().synchronize();
  session_->executor().read_input_in_place(images);
  return train_on(images, device_labels_.data(), start, 0.0);
}

const StepRecord& Trainer::train_on(const void* images, const std::int32_t* labels,
                                    std::chrono::steady_clock::time_point start,
                                    double data_wait_ms) {
  runtime::Communicator* communicator = options_.session.executor.communicator;
  if (communicator == nullptr) return record_step(images, labels, start, data_wait_ms);
  try {
    return record_step(images, labels, start, data_wait_ms);
  } catch (const std::exception& e) {
    // A divergence or a hook's error here: no other rank waits for this one to come.
    communicator->abort(e.what());
    throw;
  }
}

const StepRecord& Trainer::record_step(const void* images, const std::int32_t* labels,
                                       std::chrono::steady_clock::time_point start,
                                       double data_wait_ms) {
  graph::Executor& executor = session_->executor();
  const std::int64_t batch = session_->graph().batch();
  const std::int64_t it = iteration();
  StepRecord r;
  r.data_wait_ms = data_wait_ms;
  r.iteration = it;
  r.lr = learning_rate_.value_or(options_.schedule.at(it));
  const graph::StepResult result = executor.train_step(images, labels, r.lr, [this] {
    for (const auto& hook : gradient_hooks_) hook();
  });
  r.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.loss = result.loss;
  r.accuracy = result.accuracy;
  r.images_per_s = static_cast<double>(batch) * 1000.0 / r.ms;
  r.peak_device_bytes = executor.memory().device_peak;
  r.transfers = executor.transfers();
  if (runtime::Communicator* c = options_.session.executor.communicator; c != nullptr) {
    r.rank_ms = c->all_gather(r.ms);
  }
  history_.push_back(r);
  // The callbacks see a diverged step too (metrics.jsonl records the NaN) before the throw.
  for (const StepCallback& callback : callbacks_) callback(history_.back());
  const std::int64_t total = options_.schedule.total_steps;
  check_loss_finite(r.loss, it, total, r.lr);
  if (options_.check_gradients) check_gradients_finite(*session_, it, total, gradient_scratch_);
  return history_.back();
}

EvalRecord Trainer::evaluate() {
  VDNN_EXPECTS(test_data_ != nullptr, "evaluate() needs TrainerOptions::evaluation");
  graph::Executor& executor = session_->executor();
  const std::int64_t batch = session_->graph().batch();
  const std::int64_t batches = std::max<std::int64_t>(1, test_data_->size() / batch);
  // Pinned staging the loader leaves alone until the next step.
  void* images = loader_->idle_images();
  test_data_->seek(0);
  double loss = 0.0;
  double accuracy = 0.0;
  double top5 = 0.0;
  for (std::int64_t b = 0; b < batches; ++b) {
    test_data_->next_batch(batch, images, test_labels_.data());
    const graph::StepResult result = executor.evaluate(images, test_labels_.data());
    loss += result.loss;
    accuracy += result.accuracy;
    top5 += result.top5;
  }
  const auto n = static_cast<double>(batches);
  return {iteration(), loss / n, accuracy / n, top5 / n, batches * batch};
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
  // Every sample is a function of the seed and its number: continue after the trained ones.
  dataset_->seek(state.iteration * session_->graph().batch());
  start_ = state.iteration;
}

void Trainer::init_from(const std::filesystem::path& path) {
  LoadOptions options;
  options.weights_only = true;
  load_checkpoint(path, *session_, options);
}

void Trainer::set_learning_rate(double lr) {
  VDNN_EXPECTS(std::isfinite(lr) && lr >= 0.0,
               "a learning rate is finite and not negative, got " + std::to_string(lr));
  learning_rate_ = lr;
}

void Trainer::on_step(StepCallback callback) { callbacks_.push_back(std::move(callback)); }

void Trainer::on_gradients(std::function<void()> hook) {
  gradient_hooks_.push_back(std::move(hook));
}

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
  std::vector<double> waits;
  for (std::size_t i = skip < history.size() ? skip : 0; i < history.size(); ++i) {
    ms.push_back(history[i].ms);
    waits.push_back(history[i].data_wait_ms);
  }
  RunMedians m;
  m.ms = median(ms);
  m.data_wait_ms = median(std::move(waits));
  m.images_per_s = m.ms > 0.0 ? static_cast<double>(batch) * 1000.0 / m.ms : 0.0;
  return m;
}

}  // namespace vdnn::models
