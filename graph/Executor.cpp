// The plan interpreter: each action of the plan becomes residency transitions and work on the
// context's streams (Note [Offload lifetime], Note [Stream choreography], Note [Managed memory],
// Note [Recomputation]).
#include "graph/Executor.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <new>
#include <utility>

#include "graph/DenseBlocks.hpp"

namespace vdnn::graph {

using runtime::Buffer;
using runtime::DType;
using runtime::TensorView;

// Arguments of a node's forward and backward, built once and refreshed each step, so a step
// allocates nothing on the host either.
struct Executor::NodeArgs {
  layers::ForwardArgs forward;
  layers::BackwardArgs backward;
  layers::BackwardNeeds needs;
};

namespace {

bool managed(const Plan& plan) { return plan.memory == DeviceMemory::Managed; }
bool for_training(const Plan& plan) { return plan.purpose == Purpose::Training; }

// Training with other ranks (an inference plan has no gradients to average).
bool distributed(const ExecutorOptions& options, const Plan& plan) {
  return options.communicator != nullptr && options.communicator->size() > 1 && for_training(plan);
}

// The phase timed() leaves untimed: evaluation keeps the last step's layer times.
constexpr std::size_t kUntimed = 4;

bool moves_data(Op op) {
  return op == Op::Offload || op == Op::Prefetch || op == Op::Evict || op == Op::Migrate ||
         op == Op::StageInput;
}

// A profiler range (NVTX on CUDA) around the work enqueued while it lives.
class ScopedRange {
 public:
  ScopedRange(runtime::ExecutionContext& context, const char* name) : context_(context) {
    context_.range_begin(name);
  }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
  ScopedRange(ScopedRange&&) = delete;
  ScopedRange& operator=(ScopedRange&&) = delete;
  ~ScopedRange() { context_.range_end(); }

 private:
  runtime::ExecutionContext& context_;
};

// Every trainable parameter as the optimizer updates it; 1-D ones (biases, batch norm's weight and
// bias) excluded from weight decay unless options.decay_biases_and_norms. None for inference.
std::vector<layers::OptimizerSlot> optimizer_slots(const ParameterStore& params, const Plan& plan,
                                                   const ExecutorOptions& options) {
  std::vector<layers::OptimizerSlot> slots;
  if (!for_training(plan)) return slots;
  const int states = layers::state_buffers(options.optimizer.kind);
  for (const Parameter& p : params.all()) {
    if (!p.trainable()) continue;
    layers::OptimizerSlot& s = slots.emplace_back();
    s.param = p.value_view(DType::F32);
    s.grad = p.grad_view(DType::F32);
    for (int i = 0; i < states; ++i) s.state.at(i) = p.state_view(i, DType::F32);
    s.excluded = !options.decay_biases_and_norms && p.spec.shape.rank() == 1;
  }
  return slots;
}

// Note [Precision]: what rounds the bf16 weight copies from their masters; null without copies.
std::unique_ptr<layers::WeightCopier> weight_copier(const ParameterStore& params,
                                                    const LayerSet& layers) {
  std::vector<layers::WeightCopy> copies;
  for (const Parameter& p : params.all()) {
    if (!p.copy.empty()) copies.push_back({p.value_view(DType::F32), p.copy_view()});
  }
  if (copies.empty()) return nullptr;
  return layers::make_weight_copier(layers.backend(), layers.options(), std::move(copies));
}

// Note [Peer tier]: the peer GPU's memory behind the check of its free memory; null without a
// peer tier. Throws InvalidArgument for a peer this device cannot reach.
std::unique_ptr<runtime::PeerMemoryResource> make_peer_upstream(
    const Plan& plan, runtime::ExecutionContext& context) {
  if (plan.peer_device < 0) return nullptr;
  const int peer = plan.peer_device;
  return std::make_unique<runtime::PeerMemoryResource>(
      context.peer_upstream(peer), peer,
      [&context, peer] { return context.free_peer_bytes(peer); });
}

}  // namespace

// The driver's migration counters for a managed plan, or null and why it has none.
Executor::MigrationMeter Executor::make_migration_meter(const Plan& plan,
                                                        runtime::ExecutionContext& context,
                                                        bool count) {
  if (!managed(plan)) return {};
  if (!count) return {nullptr, "plan (migration counters switched off)"};
  std::string why_not;
  MigrationMeter meter{context.make_migration_counters(why_not), {}};
  meter.source = meter.counters ? "cupti" : "plan (" + why_not + ")";
  return meter;
}

Executor::Executor(const Graph& graph, LayerSet& layers, const Plan& plan,
                   runtime::ExecutionContext& context, const ExecutorOptions& options)
    : graph_(graph),
      layers_(layers),
      plan_(plan),
      context_(context),
      options_(options),
      migration_(make_migration_meter(plan, context, options.count_migrations)),
      managed_guard_(
          context.managed_upstream(), [&context] { return context.free_device_bytes(); },
          options.allow_oversubscription),
      device_upstream_(managed(plan) ? static_cast<runtime::MemoryResource&>(managed_guard_)
                                     : context.device_upstream()),
      device_pool_(device_upstream_, plan.pool_bytes, plan.device_blocks),
      device_(device_pool_),
      pinned_upstream_(context.pinned_upstream()),
      pinned_pool_(pinned_upstream_, plan.pinned_bytes),
      pinned_(pinned_pool_),
      peer_upstream_(make_peer_upstream(plan, context)),
      peer_pool_(peer_upstream_ ? *peer_upstream_
                                : static_cast<runtime::MemoryResource&>(pinned_upstream_),
                 plan.peer_bytes),
      peer_(peer_pool_),
      params_(std::make_unique<ParameterStore>(
          graph, device_, options.seed, context.compute(), plan.optimizer_state_buffers,
          plan.purpose, distributed(options, plan) ? backward_order(plan) : std::vector<NodeId>{})),
      label_staging_(pinned_upstream_,
                     static_cast<std::size_t>(graph.batch()) * sizeof(std::int32_t)),
      loss_stats_buffer_(pinned_upstream_, sizeof(layers::LossStats)),
      loss_stats_(new (loss_stats_buffer_.data()) layers::LossStats{}),
      shared_workspace_(device_, plan.shared_workspace_bytes),
      loss_seed_(device_, for_training(plan) ? sizeof(float) : 0),
      optimizer_slots_(optimizer_slots(*params_, plan, options)),
      optimizer_(for_training(plan)
                     ? layers::make_optimizer(layers.backend(), layers.options(), options.optimizer,
                                              optimizer_slots_.size())
                     : nullptr),
      copier_(weight_copier(*params_, layers)),
      step_started_(context.make_event(/*timing=*/true)),
      step_done_(context.make_event(/*timing=*/true)),
      eviction_gate_(
          managed(plan) && plan.budget_bytes > 0 ? plan.budget_bytes - plan.resident_bytes : 0) {
  VDNN_EXPECTS(options.input_slots >= 1, "an executor needs at least one input staging slot");
  VDNN_EXPECTS(!for_training(plan) ||
                   plan.optimizer_state_buffers == layers::state_buffers(options.optimizer.kind),
               std::string("the plan counts ") + std::to_string(plan.optimizer_state_buffers) +
                   " optimizer state tensors per parameter, " +
                   layers::optimizer_name(options.optimizer.kind) + " keeps " +
                   std::to_string(layers::state_buffers(options.optimizer.kind)));
  if (distributed(options, plan)) {
    sync_ =
        std::make_unique<GradientSync>(*options.communicator, *params_, options.buckets, context);
    sync_->broadcast_parameters(context.compute(), *params_);
  }
  for (std::size_t i = 0; i < options.input_slots; ++i) {
    staging_.emplace_back(pinned_upstream_, graph.tensor_bytes(kNetworkInput));
  }
  const float one = 1.0f;
  if (!loss_seed_.empty()) context.compute().copy_async(loss_seed_.data(), &one, sizeof(one));
  context.compute().synchronize();
  const std::size_t n = graph.nodes().size();
  for (NodeId t = 0; t < static_cast<NodeId>(n); ++t) {
    tensors_.push_back(std::make_unique<runtime::ResidentTensor>(
        graph.node(t).name, graph.node(t).output_shape, context, graph.node(t).layout,
        graph.node(t).dtype));
  }
  tensors_.push_back(std::make_unique<runtime::ResidentTensor>(
      kInputName, graph.input_shape(), context, graph.network_input_layout(),
      graph.dtype(kNetworkInput)));
  staged_input_ = std::make_unique<runtime::ResidentTensor>(kInputName, graph.input_shape(),
                                                            context, graph.network_input_layout(),
                                                            graph.dtype(kNetworkInput));
  grads_.resize(n);
  grad_written_.assign(n, false);
  if (options.profile_layers) {
    for (std::size_t i = 0; i < 4 * n; ++i) layer_events_.push_back(context.make_event(true));
    layer_times_.resize(n);
    host_by_op_.assign(kOpCount, 0.0);
  }
  args_.resize(n);
  for (NodeId id = 0; id < static_cast<NodeId>(n); ++id) {
    const Node& node = graph.node(id);
    NodeArgs& a = args_[static_cast<std::size_t>(id)];
    a.needs = layers::backward_needs(node.spec);
    a.forward.inputs.resize(node.inputs.size());
    a.backward.inputs.resize(node.inputs.size());
    a.backward.grad_inputs.resize(node.inputs.size());
    for (std::size_t p : params_->of_node(id)) {
      const Parameter& param = params_->all()[p];
      // Note [Precision]: a BF16 layer reads its weight's bf16 copy.
      a.forward.params.push_back(param.copy.empty() ? param.value_view(DType::F32)
                                                    : param.copy_view());
      if (param.trainable()) a.backward.grad_params.push_back(param.grad_view(DType::F32));
    }
    a.backward.params = a.forward.params;
  }
  // The host runs ahead of the compute stream, so a recompute cannot reuse the arguments of the
  // node's first forward, which may not have run yet: each Recompute action has its own.
  for (const Action& a : plan.actions) {
    if (a.op != Op::Recompute) continue;
    recompute_args_.push_back(args_[static_cast<std::size_t>(a.tensor)].forward);
  }
  managed_device_peak_ = device_.stats().current_bytes;
  range_names_.resize(plan.actions.size());
  for (std::size_t i = 0; i < plan.actions.size(); ++i) {
    const Action& a = plan.actions[i];
    if (moves_data(a.op))
      range_names_[i] = std::string(op_name(a.op)) + " " + tensor(a.tensor).name();
  }
}

Executor::~Executor() { abandon_step(); }

runtime::ResidentTensor& Executor::tensor(NodeId t) {
  return const_cast<runtime::ResidentTensor&>(std::as_const(*this).tensor(t));
}

const runtime::ResidentTensor& Executor::tensor(NodeId t) const {
  return *tensors_[t == kNetworkInput ? tensors_.size() - 1 : static_cast<std::size_t>(t)];
}

runtime::TensorView Executor::map_view(NodeId t) const {
  const std::vector<NodeId>& storage = graph_.storage();
  const NodeId buffer =
      storage[t == kNetworkInput ? storage.size() - 1 : static_cast<std::size_t>(t)];
  if (buffer == t) return tensor(t).view();
  return block_view(graph_, t, buffer, tensor(buffer).view().data);
}

// The workspace of the pass about to run: allocated by the plan's AllocateWorkspace right before
// it, else the shared one (Note [Workspace]), or none.
TensorView Executor::workspace_view() const {
  const Buffer& w = workspace_.empty() ? shared_workspace_ : workspace_;
  if (w.empty()) return {};
  return {w.data(), runtime::Shape{static_cast<std::int64_t>(w.bytes() / sizeof(float))},
          DType::F32};
}

void* Executor::input_staging(std::size_t slot) {
  VDNN_EXPECTS(slot < staging_.size(), "input staging slot " + std::to_string(slot) +
                                           " of an executor with " +
                                           std::to_string(staging_.size()));
  return staging_[slot].data();
}

// Pinned, because a copy from pageable memory would wait for everything queued before it.
void Executor::stage_labels(const std::int32_t* labels) {
  labels_ = static_cast<const std::int32_t*>(label_staging_.data());
  std::copy_n(labels, graph_.batch(), static_cast<std::int32_t*>(label_staging_.data()));
}

bool Executor::is_staging_slot(const void* images) const {
  return std::any_of(staging_.begin(), staging_.end(),
                     [&](const Buffer& b) { return b.data() == images; });
}

void Executor::stage_next(const void* images) {
  VDNN_EXPECTS(is_staging_slot(images),
               "stage_next: the next batch must be in an input_staging() slot");
  next_images_ = images;
}

// Note [Input staging]: the memory the previous step's StageInput kept becomes this pass's input,
// already holding `images` when that step uploaded them.
void Executor::take_staged_input(const void* images) {
  input_held_ = staged_input_->residency() != runtime::Residency::Absent;
  input_uploaded_ = input_held_ && staged_from_ == images;
  staged_from_ = nullptr;
  if (!input_held_) return;
  std::swap(tensors_.back(), staged_input_);  // the previous input was freed by its pass
  runtime::ResidentTensor& input = tensor(kNetworkInput);
  if (input.residency() == runtime::Residency::Prefetching) input.await_prefetch();
}

StepResult Executor::train_step(const void* images, const std::int32_t* labels, double lr,
                                const std::function<void()>& before_update) {
  VDNN_EXPECTS(for_training(plan_), "train_step: an inference plan has no training step");
  stage_labels(labels);
  next_recompute_ = 0;
  try {
    const auto enqueue_start = std::chrono::steady_clock::now();
    step_started_->record(context_.compute());
    start_host_profile();
    waits_at_start_ = pool_waits();
    time_copies();
    refresh_copies();
    take_staged_input(images);
    input_in_place_ = std::exchange(in_place_images_, nullptr) == images && !managed(plan_);
    if (sync_) sync_->begin_step();
    run_actions(plan_.actions, images, /*training=*/true);
    if (sync_) sync_->before_update(context_.compute());
    input_in_place_ = false;
    next_images_ = nullptr;  // named for this step's StageInput only
    if (before_update) before_update();
    update(lr);
    step_done_->record(context_.compute());
    finish_step(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - enqueue_start).count());
    if (sync_) sync_->check_completed();
  } catch (...) {
    if (sync_) sync_->abort(std::current_exception());  // no other rank waits for this one
    abandon_step();
    if (sync_) sync_->raise_other_ranks_failure();
    throw;
  }
  ++step_;
  return {loss_stats_->loss, loss_stats_->accuracy, loss_stats_->top5};
}

// Note [Evaluation memory]: the inference actions only allocate and free on the compute stream,
// so synchronizing it ends the pass; the pools forget its frees as at the end of a step.
StepResult Executor::evaluate(const void* images, const std::int32_t* labels, float* logits) {
  stage_labels(labels);
  logits_out_ = logits;
  try {
    take_staged_input(images);
    refresh_copies();
    run_actions(plan_.inference, images, /*training=*/false);
    context_.compute().synchronize();
    device_pool_.retire_completed();
    if (logits != nullptr && !bf16_logits_.empty()) {
      runtime::to_float(bf16_logits_.data(), logits, bf16_logits_.size());
    }
  } catch (...) {
    logits_out_ = nullptr;
    abandon_step();
    throw;
  }
  logits_out_ = nullptr;
  return {loss_stats_->loss, loss_stats_->accuracy, loss_stats_->top5};
}

void Executor::run_actions(const std::vector<Action>& actions, const void* images, bool training) {
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const Action& action = actions[i];
    if (managed(plan_)) gate_managed(action);
    if (moves_data(action.op)) {  // only plan_.actions move data: range_names_ follows them
      const ScopedRange range(context_, range_names_[i].c_str());
      run_timed(action, images, training);
    } else {
      run_timed(action, images, training);
    }
    if (managed(plan_)) track_residency(action);
  }
}

void Executor::run_timed(const Action& action, const void* images, bool training) {
  if (host_by_op_.empty()) {
    run(action, images, training);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  run(action, images, training);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  host_by_op_[static_cast<std::size_t>(action.op)] += s;
  if (action.tensor == kNetworkInput) return;  // the input's "forward" is its upload
  LayerTime& t = layer_times_[static_cast<std::size_t>(action.tensor)];
  if (action.op == Op::Forward || action.op == Op::Recompute) t.forward_host += s;
  if (action.op == Op::Backward) t.backward_host += s;
}

// The loss layer's input, still held while the loss runs (its last consumer); bf16 logits are
// widened once the pass is done (evaluate).
void Executor::copy_logits() {
  const TensorView logits = tensor(graph_.logits_node()).view();
  if (logits.dtype == runtime::DType::F32) {
    context_.compute().copy_async(logits_out_, logits.data, logits.bytes());
    return;
  }
  VDNN_EXPECTS(logits.dtype == runtime::DType::BF16, "evaluate: logits are F32 or BF16");
  bf16_logits_.resize(static_cast<std::size_t>(logits.shape.numel()));
  context_.compute().copy_async(bf16_logits_.data(), logits.data, logits.bytes());
}

// A staging slot uploads at the copy engines' speed; other host memory (a caller's batch) is
// copied from where it is, never through a slot, which a data loader may be filling; a caller's
// device batch that is not read in place (managed plans) is copied on the device (copy_async
// takes any direction).
void Executor::upload_input(const void* images) {
  const TensorView input = tensor(kNetworkInput).view();
  context_.compute().copy_async(input.data, images, input.bytes());
}

void Executor::forward_input(const void* images) {
  if (input_in_place_) {
    tensor(kNetworkInput).alias(images);
  } else if (!input_uploaded_) {
    upload_input(images);
  }
}

// The memory is kept whether or not a next batch was named, so that the pool sees the same
// allocations whatever the caller does (Note [Input staging]).
void Executor::stage_input() {
  if (next_images_ == nullptr) {
    staged_input_->allocate(device_);
    return;
  }
  staged_input_->upload(device_, next_images_, context_.offload());
  staged_from_ = std::exchange(next_images_, nullptr);
}

void Executor::run(const Action& action, const void* images, bool training) {
  const NodeId t = action.tensor;
  const bool poison = options_.poison_freed;
  switch (action.op) {
    case Op::Allocate:
      if (t != kNetworkInput || !input_held_) tensor(t).allocate(device_);
      break;
    case Op::Forward:
      if (t == kNetworkInput) {
        forward_input(images);
      } else {
        forward(t, training, /*recompute=*/false);
        if (t == graph_.loss_node() && logits_out_ != nullptr) copy_logits();
      }
      break;
    case Op::Recompute:
      tensor(t).allocate(device_);
      forward(t, /*training=*/true, /*recompute=*/true);
      break;
    case Op::Offload:
      tensor(t).offload(action.tier == Tier::Peer ? peer_ : pinned_);
      break;
    case Op::Release:
      tensor(t).release(poison);
      break;
    case Op::Free:
      tensor(t).free(poison);
      break;
    case Op::Prefetch:
      tensor(t).prefetch(device_);
      break;
    case Op::AwaitPrefetch:
      tensor(t).await_prefetch();
      break;
    case Op::Evict:
      tensor(t).evict();
      break;
    case Op::Migrate:
      tensor(t).migrate_back();
      break;
    case Op::FaultIn:
      tensor(t).fault_in();
      break;
    case Op::AllocateGrad:
      grads_[static_cast<std::size_t>(t)] = Buffer(device_, graph_.tensor_bytes(t));
      grad_written_[static_cast<std::size_t>(t)] = false;
      break;
    case Op::Backward:
      backward(t);
      if (sync_) sync_->after_backward(context_.compute(), t);
      break;
    case Op::AllocateWorkspace:
      workspace_ = Buffer(device_, action.bytes);
      break;
    case Op::FreeWorkspace:
      workspace_.reset();
      break;
    case Op::StageInput:
      if (training) stage_input();
      break;
    case Op::FreeGrad: {
      Buffer& grad = grads_[static_cast<std::size_t>(t)];
      if (poison) context_.fill_nan_async(context_.compute(), grad.data(), grad.bytes());
      grad.reset();
      break;
    }
  }
}

void Executor::forward(NodeId id, bool training, bool recompute) {
  const Node& node = graph_.node(id);
  layers::ForwardArgs& a = recompute ? recompute_args_.at(next_recompute_++)
                                     : args_[static_cast<std::size_t>(id)].forward;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) a.inputs[i] = map_view(node.inputs[i]);
  a.output = map_view(id);
  a.workspace = workspace_view();
  a.training = training;
  a.recompute = recompute;
  a.step = static_cast<std::uint64_t>(step_);
  const bool loss = id == graph_.loss_node();
  a.labels = loss ? labels_ : nullptr;
  a.loss_stats = loss ? loss_stats_ : nullptr;
  layers::Layer* layer = &layers_.at(id);
  // A recompute keeps the first forward's times; it shows in the backward's.
  timed(id, training && !recompute ? 0 : kUntimed,
        [&] { context_.compute().enqueue([layer, &a] { layer->forward(a); }); });
}

void Executor::backward(NodeId id) {
  const Node& node = graph_.node(id);
  NodeArgs& args = args_[static_cast<std::size_t>(id)];
  layers::BackwardArgs& a = args.backward;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const NodeId in = node.inputs[i];
    a.inputs[i] = args.needs.input(i) ? map_view(in) : TensorView{};
    layers::GradTarget& target = a.grad_inputs[i];
    target = {};
    // Nothing needs the input's gradient, nor that of a tensor computed from it alone.
    if (in == kNetworkInput || !graph_.node(in).needs_grad) continue;
    const Buffer& grad = grads_[static_cast<std::size_t>(in)];
    target.tensor = {grad.data(), graph_.node(in).output_shape, graph_.dtype(in),
                     graph_.node(in).layout};
    target.accumulate = grad_written_[static_cast<std::size_t>(in)];
    grad_written_[static_cast<std::size_t>(in)] = true;
  }
  a.output = args.needs.output ? map_view(id) : TensorView{};
  a.workspace = workspace_view();
  const Buffer& grad_out =
      id == graph_.loss_node() ? loss_seed_ : grads_[static_cast<std::size_t>(id)];
  a.grad_output = {grad_out.data(), node.output_shape, node.dtype, node.layout};
  a.step = static_cast<std::uint64_t>(step_);
  a.labels = id == graph_.loss_node() ? labels_ : nullptr;
  layers::Layer* layer = &layers_.at(id);
  timed(id, 2, [&] { context_.compute().enqueue([layer, &a] { layer->backward(a); }); });
}

template <typename Enqueue>
void Executor::timed(NodeId id, std::size_t phase, Enqueue enqueue) {
  const ScopedRange range(context_, graph_.node(id).name.c_str());
  if (layer_events_.empty() || phase == kUntimed) {
    enqueue();
    return;
  }
  const std::size_t at = 4 * static_cast<std::size_t>(id) + phase;
  layer_events_[at]->record(context_.compute());
  enqueue();
  layer_events_[at + 1]->record(context_.compute());
}

void Executor::set_steps(std::int64_t steps) {
  VDNN_EXPECTS(steps >= 0, "a step count is never negative, got " + std::to_string(steps));
  step_ = steps;
}

runtime::PoolMemoryResource::Waits Executor::pool_waits() const {
  runtime::PoolMemoryResource::Waits sum;
  for (const runtime::PoolMemoryResource* pool : {&device_pool_, &pinned_pool_, &peer_pool_}) {
    const runtime::PoolMemoryResource::Waits w = pool->waits();
    sum.count += w.count;
    sum.seconds += w.seconds;
  }
  return sum;
}

void Executor::time_copies() {
  copies_timed_ = options_.profile_layers ||
                  step_ % std::max<std::int64_t>(1, options_.copy_timing_period) == 0;
  for (auto& t : tensors_) t->time_copies(copies_timed_);
  staged_input_->time_copies(copies_timed_);
}

// Note [Precision]: the bf16 weight copies from the masters as they are now (the last update, or
// a caller's writes), one launch on the compute stream before the pass reads them.
void Executor::refresh_copies() {
  if (copier_) context_.compute().enqueue([this] { copier_->refresh(); });
}

void Executor::update(double lr) {
  context_.compute().enqueue(
      [this, lr, steps = step_] { optimizer_->step(optimizer_slots_, lr, steps); });
}

// Managed memory: the bytes on the device are the pool's less what was evicted and is not back.
void Executor::track_residency(const Action& action) {
  if (action.op == Op::Evict) evicted_now_ += action.bytes;
  if (action.op == Op::Migrate || action.op == Op::FaultIn) evicted_now_ -= action.bytes;
  managed_device_peak_ =
      std::max(managed_device_peak_, device_.stats().current_bytes - evicted_now_);
}

// Before device bytes rise, evictions the budget counts on complete; an eviction is tracked until
// its map comes back (Note [Managed memory]).
void Executor::gate_managed(const Action& action) {
  switch (action.op) {
    case Op::Allocate:
    case Op::AllocateGrad:
    case Op::Recompute:
    case Op::AllocateWorkspace:
      eviction_gate_.before_rise(context_.compute(), action.device_bytes);
      break;
    case Op::Migrate:
    case Op::FaultIn:
      eviction_gate_.returned(tensor(action.tensor));
      eviction_gate_.before_rise(context_.compute(), action.device_bytes);
      break;
    case Op::Evict:
      eviction_gate_.evicted(tensor(action.tensor), action.bytes);
      break;
    default:
      break;
  }
}

void Executor::start_host_profile() {
  std::fill(host_by_op_.begin(), host_by_op_.end(), 0.0);
  for (LayerTime& t : layer_times_) t.forward_host = t.backward_host = 0.0;
}

void Executor::finish_step(double host_seconds) {
  context_.compute().synchronize();
  context_.offload().synchronize();
  context_.prefetch().synchronize();
  // Every stream is synchronized: each pending free's event has completed.
  device_pool_.retire_all();
  pinned_pool_.retire_all();
  peer_pool_.retire_all();
  eviction_gate_.clear();
  transfers_ = {};
  transfers_.step_seconds = step_done_->seconds_since(*step_started_);
  transfers_.host_seconds = host_seconds;
  const runtime::PoolMemoryResource::Waits waits = pool_waits();
  transfers_.allocation_waits = waits.count - waits_at_start_.count;
  transfers_.allocation_wait_seconds = waits.seconds - waits_at_start_.seconds;
  for (std::size_t i = 0; i < layer_times_.size(); ++i) {
    layer_times_[i].forward = layer_events_[4 * i + 1]->seconds_since(*layer_events_[4 * i]);
    layer_times_[i].backward = layer_events_[4 * i + 3]->seconds_since(*layer_events_[4 * i + 2]);
  }
  measure_copies();
  if (sync_) {
    transfers_.allreduced_bytes = params_->flat_gradients().bytes();
    transfers_.allreduce_exposed_seconds = sync_->exposed_seconds();
  }
}

// Durations of the copies and migrations from their events where they were timed, their bytes,
// and what the driver moved.
void Executor::measure_copies() {
  TransferReport& r = transfers_;
  r.copies_timed = copies_timed_;
  // One query of the driver per timed copy; none where the step's copies were not timed.
  const auto offload_seconds = [&](const runtime::ResidentTensor& t) {
    return copies_timed_ ? t.offload_seconds() : 0.0;
  };
  const auto prefetch_seconds = [&](const runtime::ResidentTensor& t) {
    return copies_timed_ ? t.prefetch_seconds() : 0.0;
  };
  for (const Action& a : plan_.actions) {
    const runtime::ResidentTensor& t = tensor(a.tensor);
    const bool peer = a.tier == Tier::Peer;
    if (a.op == Op::Offload) {
      const double seconds = offload_seconds(t);
      r.offload_seconds += seconds;
      r.offloaded_bytes += t.bytes();
      r.peer_offload_seconds += peer ? seconds : 0.0;
      r.peer_offloaded_bytes += peer ? t.bytes() : 0;
    } else if (a.op == Op::Prefetch) {
      const double seconds = prefetch_seconds(t);
      r.prefetch_seconds += seconds;
      r.prefetched_bytes += t.bytes();
      r.peer_prefetch_seconds += peer ? seconds : 0.0;
      r.peer_prefetched_bytes += peer ? t.bytes() : 0;
    } else if (a.op == Op::Evict) {
      r.evict_seconds += offload_seconds(t);
      r.evicted_bytes += t.bytes();
    } else if (a.op == Op::Migrate) {
      r.migrate_seconds += prefetch_seconds(t);
      r.migrated_bytes += t.bytes();
    }
  }
  if (staged_from_ != nullptr) {
    r.staged_input_bytes = staged_input_->bytes();
    r.stage_input_seconds = prefetch_seconds(*staged_input_);
  }
  if (migration_.counters) {
    r.migration = migration_.counters->collect();
  } else if (managed(plan_)) {
    // Faults are neither counted nor timed without the driver's counters.
    r.migration = {plan_.migrated_bytes + plan_.faulted_bytes, plan_.evicted_bytes, 0, 0.0, 0.0};
  }
}

void Executor::abandon_step() noexcept {
  // Queued work may still use the buffers: drain every stream before anything is freed.
  if (sync_) sync_->drain();
  for (runtime::Stream* s : {&context_.compute(), &context_.offload(), &context_.prefetch()}) {
    try {
      s->synchronize();
    } catch (...) {  // the error that abandoned the step is already on its way to the caller
    }
  }
  for (auto& t : tensors_) t->drop();
  staged_input_->drop();
  staged_from_ = nullptr;
  next_images_ = nullptr;
  input_held_ = input_uploaded_ = input_in_place_ = false;
  for (Buffer& g : grads_) g.reset();
  workspace_.reset();
  evicted_now_ = 0;
  eviction_gate_.clear();
  // Every event has completed: the pools forget them before the tensors owning them go.
  device_pool_.retire_completed();
  pinned_pool_.retire_completed();
  peer_pool_.retire_completed();
}

StepTimeline Executor::timeline() const {
  VDNN_EXPECTS(!layer_times_.empty() && step_ > 0,
               "a step timeline needs profile_layers and a step that has run");
  const runtime::Event& origin = *step_started_;
  StepTimeline timeline;
  auto interval = [&](Op op, NodeId t, const char* stream, const runtime::Event& start,
                      const runtime::Event& end, std::uint64_t bytes) {
    timeline.events.push_back(
        {op, t, stream, start.seconds_since(origin), end.seconds_since(origin), bytes});
  };
  double now = 0.0;  // where the compute stream was at the latest action
  std::uint64_t pinned = 0;
  for (const Action& a : plan_.actions) {
    const runtime::ResidentTensor& t = tensor(a.tensor);
    if ((a.op == Op::Forward && a.tensor != kNetworkInput) || a.op == Op::Backward) {
      const std::size_t at = 4 * static_cast<std::size_t>(a.tensor) + (a.op == Op::Forward ? 0 : 2);
      interval(a.op, a.tensor, "compute", *layer_events_[at], *layer_events_[at + 1], 0);
      now = timeline.events.back().end;
    } else if (a.op == Op::Offload || a.op == Op::Evict) {
      const char* stream = a.tier == Tier::Peer ? "peer offload" : "offload";
      interval(a.op, a.tensor, stream, t.offload_started(), t.offload_ended(), t.bytes());
    } else if (a.op == Op::Prefetch || a.op == Op::Migrate) {
      const char* stream = a.tier == Tier::Peer ? "peer prefetch" : "prefetch";
      interval(a.op, a.tensor, stream, t.prefetch_started(), t.prefetch_ended(), t.bytes());
    } else if (a.op == Op::StageInput && staged_from_ != nullptr) {
      const runtime::ResidentTensor& next = *staged_input_;
      interval(a.op, a.tensor, "offload", next.prefetch_started(), next.prefetch_ended(),
               next.bytes());
    }
    if (a.op == Op::Offload && a.tier == Tier::Host) pinned += t.bytes();
    if (a.op == Op::AwaitPrefetch && a.tier == Tier::Host &&
        plan_.placement_of(a.tensor) == Placement::Offloaded) {
      pinned -= t.bytes();
    }
    timeline.memory.push_back({now, plan_.resident_bytes + a.device_bytes, pinned});
  }
  return timeline;
}

MemoryReport Executor::memory() const {
  MemoryReport r;
  r.device_capacity = device_pool_.capacity();
  r.pool_peak = device_.stats().peak_bytes;
  r.device_peak = managed(plan_) ? managed_device_peak_ : r.pool_peak;
  r.device_current = device_.stats().current_bytes;
  r.device_upstream_allocations = device_upstream_.stats().allocations;
  r.pinned_capacity = pinned_pool_.capacity();
  r.pinned_peak = pinned_.stats().peak_bytes;
  r.pinned_upstream_allocations = pinned_upstream_.stats().allocations;
  r.peer_capacity = peer_pool_.capacity();
  r.peer_peak = peer_.stats().peak_bytes;
  return r;
}

}  // namespace vdnn::graph
