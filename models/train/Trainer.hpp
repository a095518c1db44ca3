// Trainer: the training loop as a library type: a session for one network, policy and budget,
// its data source and learning-rate schedule, and one call per step. `vdnn train` and
// `vdnn compare` are clients of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/LrSchedule.hpp"
#include "graph/NetworkDef.hpp"
#include "graph/Session.hpp"
#include "models/data/Dataset.hpp"
#include "runtime/DiskCache.hpp"

namespace vdnn::models {

class BatchLoader;

/// Every default of a training run lives here (the CLI's defaults are set from its own options).
struct TrainerOptions {
  graph::SessionOptions session;  // backend, policy, budget, seed (session.executor.seed), ...
  // With session.executor.communicator of several ranks, each rank trains on its shard of the
  // data (ShardedDataset) at `batch` per rank (Note [Data parallelism]).
  std::string data = "synthetic";  // synthetic | cifar10:DIR | imagefolder:DIR | webdataset:...
  std::optional<Augment> augment;  // of the train split; unset: default_augment(data)
  bool skip_bad_images = false;    // image sources: skip what cannot be read (make_dataset)
  Decode decode = Decode::Auto;    // image sources: where JPEGs decode (resolve_decode)
  std::size_t data_workers = 0;    // image sources: decode threads; 0: default_data_workers
  double gpu_decode_share = 1.0;   // image sources on the GPU: its share of each batch (gpu_slot)
  bool evaluation = false;         // load the test split too, for evaluate()
  /// The source evaluate() runs on (all of it, or its test split where it has one: Split::Whole);
  /// empty: the test split of `data`. Image files and other sources do not mix (the network
  /// takes one form of input).
  std::string eval_data;
  /// A dataset the caller made (the public API's DataSource), drawn from instead of
  /// make_dataset(data); its image_bytes() decides whether the network takes image bytes. `data`
  /// then only names it in messages.
  std::shared_ptr<Dataset> custom_data;
  graph::LrSchedule schedule;    // the learning rate of each step
  bool check_gradients = false;  // throw Diverged at the first non-finite parameter gradient
  std::string config_json;       // recorded verbatim in every checkpoint's metadata
  /// The setup cache on disk (runtime::DiskCache; Note [Cost model]): measured convolution
  /// algorithms and cost models, kept between runs. Its directory (an empty path: none) and
  /// whether it is used at all; when the directory cannot be made, the run goes on without it
  /// after a warning.
  std::filesystem::path cache_dir = runtime::default_cache_dir();
  bool cache = true;
  /// Told what setup is doing as it goes ("measuring convolutions 23/53"); empty: silent.
  graph::SetupProgress::Sink setup_progress;
};

/// What one step did, as metrics.jsonl records it.
struct StepRecord {
  std::int64_t iteration = 0;  // zero-based
  double loss = 0.0;
  double accuracy = 0.0;
  double lr = 0.0;
  double ms = 0.0;  // host wall time of the step, from the call (waiting for the batch
                    // included) to the loss being known
  double images_per_s = 0.0;
  double data_wait_ms = 0.0;  // of ms, the time spent waiting for the batch from the loader
  std::uint64_t peak_device_bytes = 0;  // measured by the executor's allocator statistics
  graph::TransferReport transfers;      // the step's copies and migrations
  std::vector<double> rank_ms;          // several ranks: every rank's ms, in rank order; else empty
};

/// What one evaluation measured over the test split, as metrics.jsonl records it.
struct EvalRecord {
  std::int64_t iteration = 0;  // steps trained when it ran
  double loss = 0.0;           // mean over the images
  double accuracy = 0.0;       // top-1: fraction of the images classified right
  /// Fraction of the images whose label is among the 5 largest logits (torchvision's acc5; with
  /// fewer than 5 classes, among all of them: 1). Ties and NaN as layers::LossStats ranks them.
  double top5 = 0.0;
  std::int64_t images = 0;  // images evaluated
};

/// Owns one training run. Not thread-safe (its batch loader thread is internal: Note [Data
/// loading]). Many trainers may live in one process one after
/// another or side by side (no global state).
class Trainer {
 public:
  using StepCallback = std::function<void(const StepRecord&)>;

  /// Checks that the run fits the host (graph::HostMemoryExceeded), builds the dataset and, with
  /// options.evaluation, its test split (runtime::InvalidArgument, runtime::DataError) and the
  /// session (graph::DoesNotFit,
  /// runtime::OversubscriptionRefused, runtime::OutOfMemory, runtime::InvalidArgument).
  Trainer(const graph::NetworkDef& def, std::int64_t batch, TrainerOptions options);
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;
  Trainer(Trainer&&) = delete;
  Trainer& operator=(Trainer&&) = delete;
  ~Trainer();

  /// Trains one iteration: next batch (drawn by the loader thread while the previous step ran),
  /// forward, backward, update; calls every callback. Throws Diverged when the loss (or, with
  /// check_gradients, a gradient) is not finite; what the dataset threw while drawing the batch
  /// (e.g. runtime::DataError); the executor's errors otherwise.
  const StepRecord& step();
  /// One step on the caller's batch instead of the data source's: `images` in the network input's
  /// form (as Dataset::next_batch writes it: batch x C x H x W floats, or image bytes for a
  /// network with image input) and `labels`, batch class indices, in host memory valid until the
  /// call returns. The data source is not drawn from (its next batch stays next). Throws as
  /// step(), and runtime::InvalidArgument for a label out of range (from the loss layer).
  const StepRecord& step(const void* images, const std::int32_t* labels);
  /// As step(images, labels) with both in memory of the run's device, written by work on the
  /// caller's `stream` (CUDA: a cudaStream_t): the compute stream waits for that work
  /// (ExecutionContext::wait_for_caller), the labels come to the host for the loss's checks and the
  /// images are read in place (Executor::read_input_in_place). Throws as step(images, labels), and
  /// runtime::InvalidArgument for a null stream or on the CPU backend.
  const StepRecord& step_on_device(const void* images, const std::int32_t* labels, void* stream);
  /// Runs the network in inference mode over the test split (Executor::evaluate), in its order,
  /// in full batches only: max(1, size / batch) of them, a split smaller than a batch wrapping
  /// around (CIFAR-10 at batch 128: 78 batches, 9984 of the 10000 images). Changes nothing the
  /// training steps see, so a run trains the same with or without evaluations. Throws
  /// runtime::InvalidArgument without options.evaluation; the executor's errors.
  EvalRecord evaluate();
  /// From the next step on, every step uses `lr` instead of the schedule's rate (a schedule the
  /// caller owns sets it before each step). Throws runtime::InvalidArgument unless lr is finite
  /// and not negative.
  void set_learning_rate(double lr);
  /// Registers `callback`, called after every step in registration order.
  void on_step(StepCallback callback);
  /// Registers `hook`, called in each step after the backward pass and before the update, in
  /// registration order: it may read and replace gradients (read_parameter, write_parameter with
  /// ParameterPart::Gradient), e.g. to clip them. What it throws abandons the step.
  void on_gradients(std::function<void()> hook);

  /// Writes a checkpoint of the run so far (models/train/Checkpoint: parameters, BatchNorm
  /// statistics, optimizer state, the iteration; atomically). Throws CheckpointError.
  void save(const std::filesystem::path& path);
  /// Continues the run `path` recorded: loads it whole and moves the data stream past the
  /// batches already trained (Dataset::seek), so the steps that follow are bitwise those of an
  /// uninterrupted run. Only before the first step. Throws CheckpointError,
  /// runtime::InvalidArgument.
  void resume(const std::filesystem::path& path);
  /// Starts from the weights (and BatchNorm statistics) in `path`, e.g. written by PyTorch with
  /// the same names; optimizer state and iteration start afresh. Throws CheckpointError.
  void init_from(const std::filesystem::path& path);

  /// Steps trained so far (a resumed run counts the checkpoint's).
  std::int64_t iteration() const noexcept {
    return start_ + static_cast<std::int64_t>(history_.size());
  }
  /// Every step's record since construction (or resume), in order.
  const std::vector<StepRecord>& history() const noexcept { return history_; }
  graph::Session& session() noexcept { return *session_; }
  const graph::Session& session() const noexcept { return *session_; }
  /// The train split (description() and size() only: the loader thread draws from it).
  const Dataset& dataset() const noexcept { return *dataset_; }
  const TrainerOptions& options() const noexcept { return options_; }
  /// How long each part of the construction took (data, context, planning, ...).
  const graph::SetupProgress& setup() const noexcept { return setup_; }

 private:
  TrainerOptions options_;
  graph::SetupProgress setup_;
  std::shared_ptr<Dataset> dataset_;                // shared with options_.custom_data when set
  std::unique_ptr<Dataset> test_data_;              // with options_.evaluation
  std::unique_ptr<runtime::DiskCache> disk_cache_;  // with options_.cache; before its users
  std::unique_ptr<graph::CostCache> cost_cache_;    // before the session, which reads it
  std::unique_ptr<graph::Session> session_;
  // Declared after what it uses (the dataset, the executor's staging): destroyed, and its thread
  // joined, first.
  std::unique_ptr<BatchLoader> loader_;
  std::vector<std::int32_t> test_labels_;
  std::vector<float> gradient_scratch_;
  std::vector<std::int32_t> device_labels_;  // step_on_device's labels, copied to the host
  std::int64_t start_ = 0;                   // the iteration a resumed run started from
  std::vector<StepRecord> history_;
  std::vector<StepCallback> callbacks_;
  std::vector<std::function<void()>> gradient_hooks_;
  std::optional<double> learning_rate_;  // set_learning_rate's, over the schedule

  // The step on `images` and `labels` (the loader's or the caller's), started at `start`; an
  // error ends the group of ranks there is one.
  const StepRecord& train_on(const void* images, const std::int32_t* labels,
                             std::chrono::steady_clock::time_point start, double data_wait_ms);
  const StepRecord& record_step(const void* images, const std::int32_t* labels,
                                std::chrono::steady_clock::time_point start, double data_wait_ms);
};

/// Medians over the steps of a run after `warmup` steps (all steps when there are no more).
struct RunMedians {
  double ms = 0.0;
  double images_per_s = 0.0;  // batch / median ms
  double data_wait_ms = 0.0;  // the median step's wait for its batch
};
RunMedians run_medians(const std::vector<StepRecord>& history, std::int64_t batch,
                       std::int64_t warmup);

/// The median of `values` (0 when empty).
double median(std::vector<double> values);

}  // namespace vdnn::models
