// Executor: runs training steps of a Graph exactly as its Plan says: forward in topological order,
// backward in reverse, SGD; feature maps allocated, offloaded, prefetched, evicted, migrated and
// freed (or recomputed) by the plan's actions on the context's compute, offload and prefetch
// streams; and forward-only evaluation passes in the same pools. See Note [Offload lifetime], Note
// [Stream choreography], Note [Managed memory], Note [Evaluation memory] and Note [Recomputation]
// in docs/ARCHITECTURE.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/EvictionGate.hpp"
#include "graph/GradientSync.hpp"
#include "graph/Graph.hpp"
#include "graph/LayerSet.hpp"
#include "graph/ParameterStore.hpp"
#include "graph/Plan.hpp"
#include "layers/Layer.hpp"
#include "layers/Optimizer.hpp"
#include "layers/WeightCopies.hpp"
#include "runtime/BFloat16.hpp"
#include "runtime/ExecutionContext.hpp"
#include "runtime/MigrationCounters.hpp"
#include "runtime/ResidentTensor.hpp"
#include "runtime/memory/OversubscriptionGuard.hpp"
#include "runtime/memory/PeerMemoryResource.hpp"
#include "runtime/memory/PoolMemoryResource.hpp"
#include "runtime/memory/StatisticsAdaptor.hpp"

namespace vdnn::graph {

struct ExecutorOptions {
  std::uint64_t seed = 0;             // parameter initialization
  layers::OptimizerConfig optimizer;  // the update after each backward pass
  bool poison_freed = false;          // fill freed and offloaded device memory with NaN (debugging)
  bool profile_layers = false;  // time every forward and backward with events (a little slower)
  /// The copies (and migrations) of one step in this many are timed with events, those of every
  /// step under profile_layers: a timing event beside a copy costs the copy engine a few
  /// microseconds (runtime::TimedCopy), so the steps between run their copies untimed.
  std::int64_t copy_timing_period = 8;
  /// Managed memory: allow a pool larger than the device's free memory (can hang a shared GPU).
  bool allow_oversubscription = false;
  /// Managed memory: read the driver's migration counters (CUPTI) each step where it has them.
  bool count_migrations = true;
  /// Pinned input staging buffers (input_staging(slot)): two let a data loader fill one while a
  /// step uploads the other; three let it also hold the next batch for stage_next().
  std::size_t input_slots = 1;
  /// Weight decay on 1-D parameters (biases, batch norm's weight and bias) too; false leaves them
  /// undecayed and, under LARS, unscaled by the trust ratio: the usual recipe for large batches
  /// (--no-decay-bn-bias).
  bool decay_biases_and_norms = true;

  /// Data parallelism (Note [Data parallelism]): this rank's endpoint of a group of several (not
  /// owned; outlives the executor), which the gradients are averaged over, in buckets as the
  /// backward pass completes them, and the parameters taken from rank 0 at construction. Null or
  /// a group of one: a single process, gradients in buffers of their own as always.
  runtime::Communicator* communicator = nullptr;
  BucketCaps buckets;
  /// Synchronized batch norm (--sync-bn): the group whose ranks batch norm's training statistics
  /// are taken over (layers::LayerOptions::batch_norm_group; not owned, outlives the executor).
  /// The CPU's LocalCommunicatorGroup needs a group of its own here, apart from `communicator`'s:
  /// the layers' collectives run on the compute stream while the gradients' run beside it. Null
  /// or a group of one: each rank's statistics are its own (PyTorch DDP's default).
  runtime::Communicator* batch_norm_communicator = nullptr;
};

/// Device seconds of one node's forward and backward in the last step (profile_layers only).
struct LayerTime {
  double forward = 0.0;
  double backward = 0.0;
  double forward_host = 0.0;   // host seconds enqueuing the forward (and any recompute)
  double backward_host = 0.0;  // host seconds enqueuing the backward
};

/// One interval of the last step on one stream, from the events around it (profile_layers).
struct TimelineEvent {
  Op op = Op::Forward;  // Forward, Backward, Offload, Prefetch, Evict, Migrate or StageInput
  NodeId tensor = 0;    // the node (Forward, Backward) or the feature map moved
  /// "compute", "offload" or "prefetch"; a copy of the peer tier "peer offload" or "peer
  /// prefetch": the same stream, over the peer link (Note [Peer tier])
  const char* stream = "compute";
  double start = 0.0;  // seconds since the step started on the compute stream
  double end = 0.0;
  std::uint64_t bytes = 0;  // bytes moved (copies and migrations)
};

/// Memory in use after an action of the last step, when the compute stream had reached it.
struct MemorySample {
  double time = 0.0;               // seconds since the step started
  std::uint64_t device_bytes = 0;  // parameters and everything allocated (managed: on the device)
  std::uint64_t pinned_bytes = 0;  // pinned buffers of offloaded maps
};

/// The last step as intervals per stream and memory samples (see Executor::timeline()).
struct StepTimeline {
  std::vector<TimelineEvent> events;
  std::vector<MemorySample> memory;
};

/// What one training step or evaluation pass reports (means over the batch; the accuracies as
/// layers::LossStats defines them).
struct StepResult {
  double loss = 0.0;
  double accuracy = 0.0;  // top-1
  double top5 = 0.0;
};

/// Device and pinned-host memory as measured by the executor's own statistics adaptors.
struct MemoryReport {
  std::uint64_t device_capacity = 0;  // the device pool (the budget, or what the plan needs)
  /// Measured: the most bytes on the device at once, parameters included: the pool's peak with
  /// dedicated memory; with managed memory, bytes allocated from the pool less the bytes the
  /// executor had evicted, after each action.
  std::uint64_t device_peak = 0;
  std::uint64_t pool_peak = 0;  // measured: the most bytes allocated from the device pool at once
  std::uint64_t device_current = 0;
  std::uint64_t device_upstream_allocations = 0;  // calls to the device's own allocator, ever
  std::uint64_t pinned_capacity = 0;
  std::uint64_t pinned_peak = 0;
  std::uint64_t pinned_upstream_allocations = 0;
  std::uint64_t peer_capacity = 0;  // the peer tier's pool on the peer GPU (Note [Peer tier])
  std::uint64_t peer_peak = 0;
};

/// Copy traffic of the last step, timed with events on the copy streams where copies_timed.
struct TransferReport {
  /// Whether this step's copies were timed (ExecutorOptions::copy_timing_period): else every
  /// duration below is 0 and only the bytes count.
  bool copies_timed = false;
  double step_seconds = 0.0;  // compute stream, from the batch upload to the SGD update
  /// Host seconds the step took to enqueue its work, up to the SGD update: close to step_seconds
  /// means the device waited for the host (the step is host-bound).
  double host_seconds = 0.0;
  /// Of those, the host's waits inside allocations: the pending frees the pools landed on whose
  /// copies had not finished (Note [Deferred frees]), and the seconds waited for them.
  std::uint64_t allocation_waits = 0;
  double allocation_wait_seconds = 0.0;
  double offload_seconds = 0.0;   // sum of the offload copies' durations (the stream's busy time)
  double prefetch_seconds = 0.0;  // likewise for the prefetch copies
  std::uint64_t offloaded_bytes = 0;
  std::uint64_t prefetched_bytes = 0;
  /// The part of the four above over the peer link (Note [Peer tier]); the rest crossed the host's.
  double peer_offload_seconds = 0.0;
  double peer_prefetch_seconds = 0.0;
  std::uint64_t peer_offloaded_bytes = 0;
  std::uint64_t peer_prefetched_bytes = 0;
  double evict_seconds = 0.0;    // sum of the evictions' durations on the offload stream
  double migrate_seconds = 0.0;  // sum of the migrations back on the prefetch stream
  std::uint64_t evicted_bytes = 0;
  std::uint64_t migrated_bytes = 0;
  /// The next batch, uploaded on the offload stream during this step (Note [Input staging]).
  std::uint64_t staged_input_bytes = 0;
  double stage_input_seconds = 0.0;
  /// Managed memory: what the driver moved, from its counters when migrations_counted(), else
  /// the plan's bytes with the event-timed evictions and migrations (faults untimed, uncounted).
  runtime::MigrationTraffic migration;
  /// Data parallelism: the gradient bytes averaged over the ranks, and how long the compute
  /// stream waited for them after its backward pass (Note [Data parallelism]).
  std::uint64_t allreduced_bytes = 0;
  double allreduce_exposed_seconds = 0.0;
};

/// Owns the memory pools, parameters and feature maps of one graph run under one plan. The graph,
/// the layers, the plan and the context must outlive it. Not thread-safe; one host thread drives
/// it and the context's streams.
class Executor {
 public:
  /// Takes the device pool (plan.pool_bytes: the budget, or what the plan needs without one) and
  /// the pinned pool (plan.pinned_bytes) and, with a peer tier, the peer pool (plan.peer_bytes on
  /// GPU plan.peer_device; Note [Peer tier]) from the context and allocates the parameters with the
  /// optimizer state that options.optimizer keeps (an inference plan: the parameters alone, no
  /// gradients, optimizer or loss seed; Note [Inference plan]). Throws OutOfMemory (a peer with
  /// less free memory than the peer pool: PeerMemoryRefused), InvalidArgument (a peer this device
  /// cannot reach, layers/backend mismatch, an invalid optimizer configuration, a plan made for
  /// another number of optimizer state tensors).
  Executor(const Graph& graph, LayerSet& layers, const Plan& plan,
           runtime::ExecutionContext& context, const ExecutorOptions& options);
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  Executor(Executor&&) = delete;
  Executor& operator=(Executor&&) = delete;
  /// Waits for queued work; never throws.
  ~Executor();

  /// Pinned host memory for one batch of images (graph.tensor_bytes(kNetworkInput): F32 NCHW, or
  /// u8 NHWC bytes when graph.image_input()), one buffer per slot < options.input_slots (else
  /// InvalidArgument): a data loader that writes here saves a copy, and the upload runs at the
  /// copy engines' full speed. Valid as long as the executor.
  void* input_staging(std::size_t slot = 0);

  /// One step on a batch: `images` holds one batch of the network input (as input_staging(); an
  /// input_staging() slot, or any host memory, uploaded from where it is; or memory of the device,
  /// read in place after read_input_in_place(), else copied on the compute stream, which the
  /// caller makes wait for its writer first: ExecutionContext::wait_for_caller) and
  /// `labels` graph.batch() class indices, valid until the call returns. Throws what a layer throws
  /// (e.g. InvalidArgument for labels out of range), OutOfMemory; the executor stays usable
  /// afterwards. `before_update`, when set, runs on this thread after the backward pass is
  /// enqueued and before the SGD update is: it may read and replace parameter gradients through
  /// the compute stream (models::read_parameter); what it throws abandons the step, as above.
  /// Throws InvalidArgument for an inference plan (it has no training step).
  StepResult train_step(const void* images, const std::int32_t* labels, double lr,
                        const std::function<void()>& before_update = {});
  /// Names the batch the train_step after the next one trains on, so that the next one uploads
  /// it where the plan's StageInput says, overlapped with its backward, and the one after starts
  /// without an upload (Note [Input staging]). `images` must be an input_staging() slot that
  /// the caller leaves unchanged until the step that trains on it (not slot 0 when train_step
  /// gets other host memory). No effect when the plan has no StageInput; when the next pass
  /// (train_step or evaluate) is on other images, it uploads those as usual. Throws
  /// InvalidArgument when `images` is not a slot.
  void stage_next(const void* images);
  /// Makes the next train_step read its images in place from `images`, memory of the device that
  /// the caller keeps valid and unchanged until that step returns and orders before it
  /// (ExecutionContext::wait_for_caller): the input's Forward then aliases it
  /// (ResidentTensor::alias) instead of uploading it, and an Offload copies from it. The input's
  /// own memory is allocated and freed as the plan says, unread, so the pool's allocations stay
  /// the plan's. That train_step must be given the same pointer. Under a managed-memory plan,
  /// whose pages move, that step uploads the images into its input instead, as from any memory.
  void read_input_in_place(const void* images) noexcept { in_place_images_ = images; }
  /// The loss and accuracies of the network on a batch (arguments as train_step), in inference
  /// mode: forward only with ForwardArgs::training false (batch norm uses and keeps its running
  /// statistics, dropout passes its input through), by plan().inference in the same pools
  /// (Note [Evaluation memory]). Changes no training state: parameters, statistics, optimizer
  /// state, steps(), transfers(), layer_times() and timeline() stay as they were. With `logits`,
  /// also copies the loss layer's input there: batch x num_classes F32 values. Throws as
  /// train_step.
  StepResult evaluate(const void* images, const std::int32_t* labels, float* logits = nullptr);

  const Graph& graph() const noexcept { return graph_; }
  const Plan& plan() const noexcept { return plan_; }
  const ParameterStore& parameters() const noexcept { return *params_; }
  /// The optimizer the steps update with (options.optimizer).
  const layers::OptimizerConfig& optimizer() const noexcept { return options_.optimizer; }
  MemoryReport memory() const;
  /// The last step's copies (valid after a step).
  const TransferReport& transfers() const noexcept { return transfers_; }
  /// Per node, the last step's layer times; empty unless options.profile_layers.
  const std::vector<LayerTime>& layer_times() const noexcept { return layer_times_; }
  /// Host seconds the last step spent enqueuing each kind of action, indexed by Op; empty unless
  /// options.profile_layers.
  const std::vector<double>& host_seconds_by_op() const noexcept { return host_by_op_; }
  /// The last step: every layer's forward and backward on the compute stream, every copy and
  /// migration on its stream, and the memory in use after each action. Times come from the
  /// backend's events (CUDA: the device clock). Throws InvalidArgument unless
  /// options.profile_layers and a step has run.
  StepTimeline timeline() const;
  /// The gradient exchange with the other ranks; null in a single process.
  const GradientSync* gradient_sync() const noexcept { return sync_.get(); }
  /// Steps taken so far.
  std::int64_t steps() const noexcept { return step_; }
  /// Continues as after `steps` steps (resuming from a checkpoint): the next update uses the
  /// optimizer state as it is instead of starting it (AdamW's bias corrections count from
  /// steps + 1), and step-seeded layers (dropout) continue their sequence. Throws InvalidArgument
  /// when `steps` is negative.
  void set_steps(std::int64_t steps);
  /// Managed memory: true when transfers().migration comes from the driver's counters.
  bool migrations_counted() const noexcept { return migration_.counters != nullptr; }
  /// Where transfers().migration comes from: "cupti", or "plan" and why the counters are missing;
  /// empty with dedicated memory.
  const std::string& migration_source() const noexcept { return migration_.source; }

 private:
  struct NodeArgs;
  struct MigrationMeter {
    std::unique_ptr<runtime::MigrationCounters> counters;
    std::string source;
  };
  static MigrationMeter make_migration_meter(const Plan& plan, runtime::ExecutionContext& context,
                                             bool count);

  /// Runs `actions` (plan_.actions or plan_.inference) in order.
  void run_actions(const std::vector<Action>& actions, const void* images, bool training);
  /// run() timed on the host into host_by_op_ and the node's LayerTime (profile_layers).
  void run_timed(const Action& action, const void* images, bool training);
  void run(const Action& action, const void* images, bool training);
  void stage_labels(const std::int32_t* labels);
  bool is_staging_slot(const void* images) const;
  void copy_logits();
  /// Makes the memory the previous step's StageInput kept, if any, this pass's input.
  void take_staged_input(const void* images);
  /// The input's Forward: its upload, unless it is there already or read in place.
  void forward_input(const void* images);
  void upload_input(const void* images);
  void stage_input();
  /// `recompute`: the node's forward again in backward (Recompute), with ForwardArgs::recompute.
  void forward(NodeId node, bool training, bool recompute);
  void backward(NodeId node);
  /// Runs `enqueue`, between timing events of (node, phase) when profiling and `phase` is not
  /// kUntimed.
  template <typename Enqueue>
  void timed(NodeId node, std::size_t phase, Enqueue enqueue);
  void update(double lr);
  void refresh_copies();
  /// Whether this step's copies are timed, told to every tensor (copy_timing_period).
  void time_copies();
  /// The device, pinned and peer pools' waits so far, summed.
  runtime::PoolMemoryResource::Waits pool_waits() const;
  /// Zeroes the host times of profile_layers at the start of a step.
  void start_host_profile();
  /// Waits for the step's work and measures it; `host_seconds`: what enqueuing it took.
  void finish_step(double host_seconds);
  void measure_copies();
  void abandon_step() noexcept;
  void track_residency(const Action& action);
  void gate_managed(const Action& action);
  runtime::ResidentTensor& tensor(NodeId t);
  const runtime::ResidentTensor& tensor(NodeId t) const;
  /// Map `t` on the device for a layer: its own memory, or its part of its dense block's buffer
  /// (Note [Dense block storage]).
  runtime::TensorView map_view(NodeId t) const;
  runtime::TensorView workspace_view() const;

  const Graph& graph_;
  LayerSet& layers_;
  const Plan& plan_;
  runtime::ExecutionContext& context_;
  ExecutorOptions options_;
  // Managed memory: the driver's migration counters (or null, and why), made before the managed
  // pool, since CUPTI watches only memory allocated after it started.
  MigrationMeter migration_;
  // Memory stacks: upstream counters, the pool, and the measured statistics on top. A managed
  // pool asks its upstream through the oversubscription guard.
  runtime::OversubscriptionGuard managed_guard_;
  runtime::StatisticsAdaptor device_upstream_;
  runtime::PoolMemoryResource device_pool_;
  runtime::StatisticsAdaptor device_;
  runtime::StatisticsAdaptor pinned_upstream_;
  runtime::PoolMemoryResource pinned_pool_;
  runtime::StatisticsAdaptor pinned_;
  // The peer tier (Note [Peer tier]): the peer GPU's memory behind its free-memory check (null
  // without a peer tier, whose pool is empty and asks pinned_upstream_ for nothing).
  std::unique_ptr<runtime::PeerMemoryResource> peer_upstream_;
  runtime::PoolMemoryResource peer_pool_;
  runtime::StatisticsAdaptor peer_;
  std::unique_ptr<ParameterStore> params_;
  std::unique_ptr<GradientSync> sync_;    // with a communicator of several ranks
  std::vector<runtime::Buffer> staging_;  // pinned input batches, one per slot
  runtime::Buffer label_staging_;         // pinned labels: their upload never waits for the stream
  // Pinned, so that the CUDA loss copies its statistics here instead of calling the host back.
  runtime::Buffer loss_stats_buffer_;
  layers::LossStats* loss_stats_ = nullptr;  // in loss_stats_buffer_
  runtime::Buffer shared_workspace_;         // of every pass with at most kSharedWorkspaceBytes
  runtime::Buffer workspace_;  // of the pass between AllocateWorkspace and FreeWorkspace
  runtime::Buffer loss_seed_;
  std::vector<layers::OptimizerSlot> optimizer_slots_;  // every trainable parameter, in store order
  std::unique_ptr<layers::Optimizer> optimizer_;
  std::unique_ptr<layers::WeightCopier> copier_;  // the bf16 weight copies (null: none)
  std::vector<std::unique_ptr<runtime::ResidentTensor>> tensors_;  // per node; input last
  // Note [Input staging]: the next pass's input, kept by this step's StageInput and uploaded
  // there from staged_from_, which stage_next() named as next_images_.
  std::unique_ptr<runtime::ResidentTensor> staged_input_;
  const void* next_images_ = nullptr;
  const void* staged_from_ = nullptr;
  const void* in_place_images_ = nullptr;  // read_input_in_place's, for the next train_step
  bool input_in_place_ = false;            // this step reads in_place_images_ in place
  bool input_held_ = false;      // this pass's input memory is what the previous step kept...
  bool input_uploaded_ = false;  // ...and holds this pass's images
  float* logits_out_ = nullptr;  // evaluate's copy of the logits, during the pass
  std::vector<runtime::BFloat16> bf16_logits_;  // bf16 logits before widening (bf16 runs)
  std::vector<runtime::Buffer> grads_;          // per node output
  std::vector<bool> grad_written_;
  std::vector<NodeArgs> args_;
  std::vector<layers::ForwardArgs> recompute_args_;  // per Recompute action, in plan order
  std::size_t next_recompute_ = 0;                   // in this step
  const std::int32_t* labels_ = nullptr;
  std::unique_ptr<runtime::Event> step_started_;  // compute stream, timing
  std::unique_ptr<runtime::Event> step_done_;     // compute stream, timing
  TransferReport transfers_;
  // profile_layers: per node, events around forward and backward (start, end, start, end).
  std::vector<std::unique_ptr<runtime::Event>> layer_events_;
  std::vector<LayerTime> layer_times_;
  std::vector<double> host_by_op_;        // profile_layers: this step's host seconds per Op
  std::vector<std::string> range_names_;  // per action: profiler range names of copies
  // Managed memory: bytes evicted now, the measured peak of bytes on the device, and the gate that
  // keeps the pages really on the device within the budget.
  std::uint64_t evicted_now_ = 0;
  EvictionGate eviction_gate_;
  std::uint64_t managed_device_peak_ = 0;
  std::int64_t step_ = 0;
  bool copies_timed_ = true;  // this step's copies are timed (copy_timing_period)
  runtime::PoolMemoryResource::Waits waits_at_start_;  // the pools' waits() before this step
};

}  // namespace vdnn::graph
