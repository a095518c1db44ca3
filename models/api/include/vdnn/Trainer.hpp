// Training from C++: a Trainer runs one network under one memory policy and budget, one step per
// call, and saves, resumes and initializes from safetensors checkpoints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <vdnn/Batch.hpp>
#include <vdnn/DataSource.hpp>
#include <vdnn/Export.hpp>
#include <vdnn/Network.hpp>

namespace vdnn {

enum class Backend : std::uint8_t {
  Auto,  // CUDA when this build has it and a device is present, else the CPU
  Cpu,   // Eigen kernels; device memory is emulated in host memory, policies behave the same
  Cuda,  // cuDNN and cuBLAS on `TrainerConfig::device`
};

/// True when this build has the CUDA backend and a CUDA device is present.
VDNN_EXPORT bool cuda_available() noexcept;

/// The memory policies `TrainerConfig::policy` accepts: "baseline", "vdnn-all", "vdnn-conv",
/// "vdnn-dyn", "uvm", "uvm-evict", "uvm-prefetch", "recompute", "auto" (README.md explains each).
VDNN_EXPORT std::vector<std::string> policy_names();

/// Data parallelism over processes, one GPU each (NCCL): every process of the run builds the same
/// Trainer with its own rank; each trains on its shard of every global batch of world_size x
/// batch (the rank-th slice), gradients are averaged over the processes as the backward pass
/// completes them, and the parameters start as rank 0's, so the processes train as one at
/// world_size x batch. Batch norm keeps per-process statistics. Needs the CUDA backend; the CPU
/// runs a single process. A rank that fails or hangs past the timeout makes the others' steps
/// throw DistributedError.
struct DistributedConfig {
  int world_size = 1;  // processes in the run; 1: this process alone (the rest unused)
  int rank = 0;        // this process's, in [0, world_size)
  int local_rank = 0;  // its GPU on its host: the run's device (TrainerConfig::device unused)
  std::string master_addr = "127.0.0.1";  // rank 0's host, where the ranks meet at setup
  int master_port = 29500;                // and its port
  double timeout_seconds = 300.0;  // the longest wait for a rank or a collective (--nccl-timeout)
};

/// This process's place in a run as torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
/// MASTER_PORT) or Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK with MASTER_ADDR and
/// MASTER_PORT) describe it; a single process when neither does. Throws InvalidArgument naming a
/// malformed variable.
VDNN_EXPORT DistributedConfig distributed_from_environment();

/// Everything a training run needs besides the network. The defaults are those of `vdnn train`.
struct TrainerConfig {
  std::int64_t batch = 32;
  Backend backend = Backend::Auto;
  int device = 0;                   // CUDA device ordinal
  std::string policy = "baseline";  // one of policy_names()
  std::uint64_t memory_budget = 0;  // device bytes for the run; 0: what the device has free
  /// The peer tier (`vdnn train --offload-peer GPU --peer-budget SIZE`): offloaded feature maps go
  /// first to a pool on CUDA device `offload_peer` (the CPU backend emulates one, device 1), at
  /// most `peer_budget` bytes of them at once, the rest to pinned host memory; -1 and 0: none.
  /// One without the other makes the Trainer's constructor throw InvalidArgument, as does a peer
  /// the device cannot reach directly; a peer with less free memory than the pool DoesNotFit.
  int offload_peer = -1;
  std::uint64_t peer_budget = 0;
  /// The most pinned host memory offloaded feature maps may take at once (`vdnn train
  /// --host-budget SIZE`); `auto` rebuilds in backward what the host cannot hold. 0: what the
  /// machine has available, less the run's other host memory and an eighth of it (at least 4 GiB).
  std::uint64_t host_budget = 0;
  /// "synthetic", "cifar10:DIR" (CIFAR-10 binary files), "imagefolder:DIR" (torchvision's
  /// ImageFolder of JPEG/PNG files; DIR/train and DIR/val when present) or "webdataset:PATTERN"
  /// (tar shards, brace patterns: "shards-{000..146}.tar").
  std::string data = "synthetic";
  /// "crop-flip", "imagenet" or "none"; empty: crop-flip for cifar10, imagenet for image files,
  /// none for synthetic.
  std::string augment;
  bool skip_bad_images = false;  // image files: skip (and count) what cannot be read or decoded
  /// Image files: where JPEGs decode, "cpu" (worker threads), "gpu" (nvJPEG, the CPU for what it
  /// does not take) or "auto" (the GPU on CUDA with nvJPEG when there are fewer than 10 workers).
  std::string decode = "auto";
  /// Image files: decode threads; 0: the cores less two.
  std::size_t data_workers = 0;
  /// Image files with GPU decode: the fraction of each batch's images, in (0, 1], the GPU may take
  /// (spread evenly over the batch); the workers make the rest. Any other value: the Trainer's
  /// constructor throws InvalidArgument.
  double gpu_decode_share = 1.0;
  bool evaluation = false;  // load the test split too, for Trainer::evaluate()
  /// What Trainer::evaluate() runs on: a source as `data` takes, its test split where it has one
  /// (imagefolder:DIR: DIR/val), else all of it; empty: the test split of `data`.
  std::string eval_data;
  std::uint64_t seed = 1;                // parameters and data order
  double learning_rate = 0.05;           // the base rate; see lr_schedule
  std::string lr_schedule = "constant";  // "constant", "step" (x0.1 every third) or "cosine"
  std::int64_t total_steps = 100;        // what "step" and "cosine" schedule over
  /// Steps of linear warmup from 0.01 x learning_rate before the schedule, which then runs over
  /// the remaining steps (PyTorch's LinearLR then the schedule, in a SequentialLR).
  std::int64_t warmup_steps = 0;
  /// The update, with PyTorch's semantics: "sgd" (torch.optim.SGD: momentum, dampening,
  /// nesterov), "adamw" (torch.optim.AdamW, amsgrad off) or "lars" (SGD whose decayed gradient
  /// each parameter scales by the trust ratio lars_trust * ||w|| / (||g|| + weight_decay * ||w||),
  /// 1 where a norm is 0: apex's LARC without clipping, eps 0). Another name, or one of the
  /// values below out of its range, makes the Trainer's constructor throw InvalidArgument.
  std::string optimizer = "sgd";
  double momentum = 0.9;   // SGD and LARS, in [0, 1]
  double dampening = 0.0;  // SGD and LARS, in [0, 1]; applies from the second step on
  bool nesterov = false;   // SGD and LARS; needs momentum > 0 and dampening 0
  /// SGD and LARS: L2 added to the gradient. AdamW: decoupled (p *= 1 - lr * weight_decay); AdamW
  /// users usually want 0.01 to 0.05.
  double weight_decay = 5e-4;
  double adam_beta1 = 0.9;    // AdamW, in [0, 1)
  double adam_beta2 = 0.999;  // AdamW, in [0, 1)
  double adam_eps = 1e-8;     // AdamW, positive
  double lars_trust = 0.001;  // LARS: the trust coefficient eta, positive
  /// > 0: before the update, gradients are scaled as torch.nn.utils.clip_grad_norm_(params, N)
  /// scales them (N / (total L2 norm + 1e-6) where that is below 1), as the update reads them
  /// (get_gradient still reads them unclipped); 0: off.
  double clip_grad_norm = 0.0;
  /// The loss's label smoothing in [0, 1], as torch.nn.CrossEntropyLoss(label_smoothing=...).
  double label_smoothing = 0.0;
  /// Weight decay on biases and batch norm's weight and bias (1-D parameters) too; false leaves
  /// them undecayed (and, under LARS, unscaled by the trust ratio), the usual recipe for large
  /// batches.
  bool decay_bn_bias = true;
  bool deterministic = false;    // CUDA: deterministic kernels only (bitwise repeatable)
  bool tf32 = true;              // CUDA: TF32 tensor-core math in convolutions
  bool check_gradients = false;  // throw Diverged at the first non-finite gradient
  /// The setup cache: "auto" and "vdnn-dyn" measure layer and copy costs at setup (a few profiled
  /// steps), CUDA convolutions measure their algorithms; this directory keeps both per network,
  /// batch, problem and device (driver and library versions included) for later runs. Empty: the
  /// default, $XDG_CACHE_HOME/vdnn, else $HOME/.cache/vdnn. A directory that cannot be made is a
  /// warning on stderr, not an error (the run measures instead); so is a damaged cache file.
  std::string cost_cache;
  bool cache = true;           // false: no setup cache (cost_cache is then unused)
  bool measure_costs = false;  // measure costs for any policy (predicted_step_milliseconds)
  /// Merge batchnorm2d -> relu and batchnorm2d -> add -> relu chains into fused layers (the same
  /// parameter names; false to compare).
  bool fuse = true;
  /// Memory order of feature maps on CUDA: "nchw", "nhwc" (channels-last) or "auto" (the faster
  /// for the network's convolutions, measured at setup). The CPU runs "nchw"; parameters,
  /// checkpoints and shapes are NCHW-logical in every layout.
  std::string layout = "auto";
  /// Element type of feature maps and their gradients: "fp32", or "bf16" (bfloat16 storage with
  /// FP32 parameters, optimizer, batch-norm statistics, loss and accumulation; channels-last on
  /// CUDA; emulated on the CPU). Any other value: the Trainer's constructor throws
  /// InvalidArgument.
  std::string precision = "fp32";

  // Custom data (issue 26).
  /// The caller's training data instead of `data`: the background loader draws its batches into
  /// the run's staging buffers as for the built-in sources. Its element_type() decides what the
  /// network takes (floats, or image bytes it normalizes). With `evaluation`, `eval_data` must
  /// name the test data (a built-in source of the same element type). Null: `data`.
  std::shared_ptr<DataSource> data_source;

  // Several GPUs (issue 27).
  /// The data-parallel run this process belongs to; the default is a single process. Values out
  /// of range, or several processes on the CPU backend: the constructor throws InvalidArgument.
  DistributedConfig distributed;
  /// Synchronized batch norm (--sync-bn): in a run of several processes, every batch norm's
  /// training statistics are the global batch's (its sums taken over the ranks, as
  /// torch.nn.SyncBatchNorm); false: each rank's own (PyTorch DDP's default). No effect on a single
  /// process.
  bool sync_batch_norm = false;
};

/// What one step did.
struct StepStats {
  std::int64_t iteration = 0;  // zero-based
  double loss = 0.0;
  double accuracy = 0.0;  // of this batch, before the update
  double learning_rate = 0.0;
  double milliseconds = 0.0;  // host wall time of the step
  double images_per_second = 0.0;
  std::uint64_t peak_device_bytes = 0;   // measured by the run's own allocator, since the start
  std::uint64_t offloaded_bytes = 0;     // copied to pinned host memory in this step
  std::uint64_t prefetched_bytes = 0;    // copied back in this step
  std::uint64_t staged_input_bytes = 0;  // the next batch, uploaded while this step ran
};

/// What one evaluation over the test split measured.
struct EvalStats {
  std::int64_t iteration = 0;  // steps trained when it ran
  double loss = 0.0;           // mean over the images
  double accuracy = 0.0;       // fraction of the images classified right (top-1)
  /// Fraction of the images whose label is among the 5 largest logits (with fewer than 5 classes,
  /// among all of them: 1). Of equal logits the lower class ranks first; NaN ranks above numbers.
  double top5 = 0.0;
  std::int64_t images = 0;  // images evaluated (full batches only)
};

/// A parameter or buffer of the network as PyTorch names it (Trainer::named_parameters).
struct ParameterInfo {
  std::string name;                 // "layer1.0.conv1.weight", as in torchvision's state_dict
  std::vector<std::int64_t> shape;  // PyTorch's, e.g. [64, 64, 3, 3]
  bool trainable = false;           // false: a buffer (batch norm's running statistics)
};

/// Device and pinned host memory of the run, measured by its allocators.
struct MemoryStats {
  std::uint64_t device_capacity = 0;  // the device pool: the budget, or what the plan needs
  std::uint64_t device_peak = 0;      // the most bytes on the device at once, parameters included
  std::uint64_t pinned_capacity = 0;  // the pinned pool offloaded feature maps go to
  std::uint64_t pinned_peak = 0;
};

/// Owns one training run: its device memory, parameters, optimizer state and data stream. Many
/// trainers may live in one process, one after another or side by side (nothing is global).
/// Not thread-safe: one thread drives a trainer.
class VDNN_EXPORT Trainer {
 public:
  /// Plans the run and allocates its memory. Throws InvalidArgument (a bad config value, an
  /// unknown policy or precision, the CUDA backend in a build without it), NetworkError (a shape
  /// that does not fit at this batch), DoesNotFit (the budget, the host or the device is too
  /// small), OutOfMemory, DataError (a dataset file), DeviceError.
  Trainer(const Network& network, const TrainerConfig& config);
  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;
  /// Waits for the run's queued device work; never throws.
  ~Trainer();

  /// Trains one iteration (next batch, forward, backward, SGD update), then calls every step
  /// callback. Throws Diverged when the loss is not finite (after the callbacks saw the step),
  /// DataError, OutOfMemory, DeviceError.
  StepStats step();
  /// Trains one iteration on the caller's batch instead of the data source's (which is not drawn
  /// from), then calls every step callback. Batch says which types, layouts and memory it takes;
  /// the losses are bitwise those of the same images given as F32 NCHW in host memory. Throws
  /// InvalidArgument (null pointers, a size that is not the run's batch, a shape that is not the
  /// network's input, a type or layout the network does not take, device memory not marked
  /// on_device or on a CPU run, on_device memory that is not the run's device's or without a
  /// stream, a label out of range), and as step().
  StepStats step(const Batch& batch);
  /// The logits of `count` images (count x channels x height x width floats, NCHW, in host
  /// memory): count x num_classes values, in inference mode (batch norm's running statistics, no
  /// dropout), a batch at a time (the last one padded, which changes no other image's logits).
  /// Changes no training state. Throws InvalidArgument (null images, a count below 1, a network
  /// that takes image bytes), OutOfMemory, DeviceError.
  std::vector<float> predict(const float* images, std::int64_t count);
  /// The softmax of predict()'s logits, per image: count x num_classes probabilities that sum to
  /// 1 (computed in double from the float logits). Throws as predict().
  std::vector<float> probabilities(const float* images, std::int64_t count);
  /// Runs the network in inference mode (batch norm's running statistics, no dropout) over the
  /// test split (CIFAR-10's test_batch.bin; synthetic: 1000 held-out images) in full batches.
  /// Training afterwards is bitwise what it would have been without it. Throws InvalidArgument
  /// unless config().evaluation; OutOfMemory, DeviceError.
  EvalStats evaluate();
  /// Calls `callback` after every step, in registration order. Exceptions it throws pass through
  /// step().
  void on_step(std::function<void(const StepStats&)> callback);
  /// From the next step on, every step uses `lr` instead of the config's schedule (a schedule
  /// you own: set it before each step). StepStats::learning_rate reports it. Throws
  /// InvalidArgument unless lr is finite and not negative.
  void set_learning_rate(double lr);
  /// Calls `callback` in every step after the backward pass and before the update, in
  /// registration order, e.g. to log or clip gradients with get_gradient and set_gradient. What it
  /// throws passes through step(), which then makes no update (batch norm's running statistics
  /// have moved with the forward pass).
  void on_gradients(std::function<void(Trainer&)> callback);

  /// Every parameter (trainable) and buffer of the network, with PyTorch's names and shapes, in
  /// the network's order: the tensors of a checkpoint, less its optimizer state and counters.
  std::vector<ParameterInfo> named_parameters() const;
  /// Copies parameter or buffer `name` as the run holds it now (after its queued work) into
  /// `out`: `count` floats, its element count, in PyTorch's element order whatever the run's
  /// layout. Throws InvalidArgument (an unknown name, a count that is not the element count),
  /// DeviceError.
  void get_parameter(const std::string& name, float* out, std::size_t count);
  /// Replaces parameter or buffer `name` by `count` floats from `values` (PyTorch's order); the
  /// next step uses them. Throws as get_parameter.
  void set_parameter(const std::string& name, const float* values, std::size_t count);
  /// Copies the gradient of trainable parameter `name` from the last backward pass (the sum over
  /// the batch's mean loss, before weight decay). Throws as get_parameter, and InvalidArgument for
  /// a buffer.
  void get_gradient(const std::string& name, float* out, std::size_t count);
  /// Replaces that gradient: inside an on_gradients callback the update then uses these values.
  /// Throws as get_gradient.
  void set_gradient(const std::string& name, const float* values, std::size_t count);

  /// Steps trained so far (a resumed run counts the checkpoint's).
  std::int64_t iteration() const noexcept;
  MemoryStats memory() const;
  /// The backend the run uses (Backend::Auto resolved).
  Backend backend() const noexcept;
  /// The plan's predicted time of one step, from the measured costs (policies "auto" and
  /// "vdnn-dyn", or measure_costs), else from costs estimated from arithmetic and bytes.
  double predicted_step_milliseconds() const noexcept;
  const TrainerConfig& config() const noexcept;

  /// Writes a safetensors checkpoint of the run (parameters, BatchNorm statistics, the
  /// optimizer's state under PyTorch's names, iteration, seed, network, optimizer) atomically: a
  /// crash never leaves a damaged file at `path`. Throws CheckpointError.
  void save(const std::string& path);
  /// Continues the run `path` recorded, so that the following steps are bitwise those of an
  /// uninterrupted run (same network, batch, seed, data and optimizer). Only before the first
  /// step. Throws CheckpointError (damaged, written by another optimizer, or not this network:
  /// every difference listed), InvalidArgument.
  void resume(const std::string& path);
  /// Starts from the weights and BatchNorm statistics of `path` (e.g. saved by PyTorch with the
  /// same names); optimizer state and iteration start afresh. Throws CheckpointError.
  void init_from(const std::string& path);

 private:
  struct Run;
  std::unique_ptr<Run> run_;
};

}  // namespace vdnn
