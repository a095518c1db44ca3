// vdnn::Trainer: the public face of models::Trainer (configuration, stats, errors).
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>

#include "graph/Plan.hpp"
#include "graph/Precision.hpp"
#include "layers/Optimizer.hpp"
#include "layers/Registry.hpp"
#include "models/api/BatchInput.hpp"
#include "models/api/DataSourceDataset.hpp"
#include "models/api/NetworkDefinition.hpp"
#include "models/api/PublicErrors.hpp"
#include "models/api/SessionResults.hpp"
#include "models/api/TrainerOptions.hpp"
#include "models/data/Augmentation.hpp"
#include "models/train/Distributed.hpp"
#include "models/train/ParameterAccess.hpp"
#include "models/train/Trainer.hpp"
#include "runtime/Device.hpp"
#include "runtime/Rendezvous.hpp"

namespace vdnn {
namespace {

layers::Backend resolve_backend(Backend backend) {
  switch (backend) {
    case Backend::Cpu:
      return layers::Backend::Cpu;
    case Backend::Cuda:
      return layers::Backend::Cuda;
    case Backend::Auto:
      break;
  }
  return cuda_available() ? layers::Backend::Cuda : layers::Backend::Cpu;
}

// The caller's DataSource as the run's train split; "custom" names it where `data` would.
void use_data_source(const TrainerConfig& c, const graph::NetworkDef& def,
                     models::TrainerOptions& t) {
  if (c.evaluation && c.eval_data.empty()) {
    throw InvalidArgument(
        "evaluation with a data_source needs eval_data: the test data of a built-in source");
  }
  if (!c.augment.empty()) {
    throw InvalidArgument(
        "augment applies to the built-in sources; a data_source augments its own");
  }
  t.custom_data = std::make_shared<api::DataSourceDataset>(
      c.data_source, models::SampleFormat{def.channels, def.height, def.width, def.num_classes});
  t.data = "custom";
}

// Throws runtime::InvalidArgument (translated by the caller) for a value out of range.
layers::OptimizerConfig optimizer_config(const TrainerConfig& c) {
  layers::OptimizerConfig o;
  o.kind = layers::parse_optimizer(c.optimizer);
  o.momentum = c.momentum;
  o.dampening = c.dampening;
  o.nesterov = c.nesterov;
  o.weight_decay = c.weight_decay;
  o.adam_beta1 = c.adam_beta1;
  o.adam_beta2 = c.adam_beta2;
  o.adam_eps = c.adam_eps;
  o.lars_trust = c.lars_trust;
  o.clip_grad_norm = c.clip_grad_norm;
  layers::validate(o);
  return o;
}

models::DistributedOptions distributed_options(const TrainerConfig& c) {
  const DistributedConfig& d = c.distributed;
  if (!(d.timeout_seconds > 0.0 && d.timeout_seconds <= 1e6)) {
    throw InvalidArgument("distributed.timeout_seconds must be in (0, 1e6], got " +
                          std::to_string(d.timeout_seconds));
  }
  models::DistributedOptions o;
  o.launch = {d.rank, d.world_size, d.local_rank, d.master_addr, d.master_port};
  o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(d.timeout_seconds * 1000.0));
  o.deterministic = c.deterministic;
  return o;
}

}  // namespace

models::TrainerOptions api::trainer_options(const TrainerConfig& c, const graph::NetworkDef& def,
                                            const std::string& config_json) {
  if (c.batch <= 0) throw InvalidArgument("batch must be positive, got " + std::to_string(c.batch));
  if (c.total_steps <= 0) {
    throw InvalidArgument("total_steps must be positive, got " + std::to_string(c.total_steps));
  }
  const std::optional<runtime::DType> precision = graph::parse_precision(c.precision);
  if (!precision) {
    throw InvalidArgument("precision must be \"fp32\" or \"bf16\", got \"" + c.precision + "\"");
  }
  models::TrainerOptions t;
  t.data = c.data;
  t.skip_bad_images = c.skip_bad_images;
  t.decode = models::parse_decode(c.decode);
  t.data_workers = c.data_workers;
  if (!(c.gpu_decode_share > 0.0 && c.gpu_decode_share <= 1.0)) {
    throw InvalidArgument("gpu_decode_share must be in (0, 1], got " +
                          std::to_string(c.gpu_decode_share));
  }
  t.gpu_decode_share = c.gpu_decode_share;
  t.eval_data = c.eval_data;
  if (!c.augment.empty()) t.augment = models::parse_augment(c.augment);
  t.evaluation = c.evaluation;
  t.schedule.policy = graph::parse_lr_policy(c.lr_schedule);
  t.schedule.base_lr = c.learning_rate;
  t.schedule.total_steps = c.total_steps;
  t.schedule.step_size = std::max<std::int64_t>(1, c.total_steps / 3);  // as `vdnn train`
  if (c.warmup_steps < 0) {
    throw InvalidArgument("warmup_steps must not be negative, got " +
                          std::to_string(c.warmup_steps));
  }
  t.schedule.warmup_steps = c.warmup_steps;
  t.check_gradients = c.check_gradients;
  t.config_json = config_json;
  if (!c.cost_cache.empty()) t.cache_dir = c.cost_cache;
  t.cache = c.cache;
  graph::SessionOptions& s = t.session;
  s.measure_costs = c.measure_costs;
  s.backend = resolve_backend(c.backend);
  s.device = c.device;
  s.policy = graph::parse_policy(c.policy);
  s.budget_bytes = c.memory_budget;
  if ((c.offload_peer >= 0) != (c.peer_budget > 0)) {
    throw InvalidArgument(
        "offload_peer and peer_budget go together: set both (a peer GPU and a "
        "budget above 0) or neither");
  }
  s.peer_device = c.offload_peer;
  s.peer_budget_bytes = c.peer_budget;
  if (c.host_budget > 0) s.host_budget_bytes = c.host_budget;
  s.deterministic = c.deterministic;
  s.allow_tf32 = c.tf32;
  s.fuse = c.fuse;
  s.layout = graph::parse_layout_choice(c.layout);
  s.precision = *precision;
  s.executor.seed = c.seed;
  s.executor.optimizer = optimizer_config(c);
  s.executor.decay_biases_and_norms = c.decay_bn_bias;
  if (!(c.label_smoothing >= 0.0 && c.label_smoothing <= 1.0)) {
    throw InvalidArgument("label_smoothing must be in [0, 1], got " +
                          std::to_string(c.label_smoothing));
  }
  s.label_smoothing = c.label_smoothing;
  if (c.data_source != nullptr) use_data_source(c, def, t);
  return t;
}

namespace {

// The run's options, joined to the other ranks through `communicator` when there are any (on
// the rank's own GPU).
models::TrainerOptions run_options(const TrainerConfig& c, const Network& network,
                                   runtime::Communicator* communicator) {
  models::TrainerOptions t =
      api::trainer_options(c, network.definition().def, network.definition().config_json);
  t.session.executor.communicator = communicator;
  if (c.sync_batch_norm) t.session.executor.batch_norm_communicator = communicator;
  if (communicator != nullptr) t.session.device = c.distributed.local_rank;
  return t;
}

StepStats step_stats(const models::StepRecord& r) {
  StepStats s;
  s.iteration = r.iteration;
  s.loss = r.loss;
  s.accuracy = r.accuracy;
  s.learning_rate = r.lr;
  s.milliseconds = r.ms;
  s.images_per_second = r.images_per_s;
  s.peak_device_bytes = r.peak_device_bytes;
  s.offloaded_bytes = r.transfers.offloaded_bytes;
  s.prefetched_bytes = r.transfers.prefetched_bytes;
  s.staged_input_bytes = r.transfers.staged_input_bytes;
  return s;
}

}  // namespace

bool cuda_available() noexcept {
  return layers::has_backend(layers::Backend::Cuda) && runtime::cuda_device_count() > 0;
}

std::vector<std::string> policy_names() { return graph::policy_names(); }

DistributedConfig distributed_from_environment() {
  return api::translate_errors([] {
    DistributedConfig d;
    if (const std::optional<runtime::LaunchConfig> l = runtime::launch_from_env()) {
      d.world_size = l->world_size;
      d.rank = l->rank;
      d.local_rank = l->local_rank;
      d.master_addr = l->master_addr;
      d.master_port = l->master_port;
    }
    return d;
  });
}

struct Trainer::Run {
  TrainerConfig config;
  // Before the trainer, which talks through it, and destroyed after it.
  std::unique_ptr<runtime::Communicator> communicator;
  models::Trainer trainer;
  Trainer* owner = nullptr;  // the object on_gradients callbacks are given (kept across moves)
  std::vector<std::byte> batch_scratch;  // caller batches converted to the network input's form

  Run(const Network& network, const TrainerConfig& c)
      : config(c),
        communicator(models::make_communicator(distributed_options(c), resolve_backend(c.backend))),
        trainer(network.definition().def, c.batch, run_options(c, network, communicator.get())) {}
};

Trainer::Trainer(const Network& network, const TrainerConfig& config)
    : run_(api::translate_errors([&] { return std::make_unique<Run>(network, config); })) {
  run_->owner = this;
}

Trainer::Trainer(Trainer&& other) noexcept : run_(std::move(other.run_)) {
  if (run_) run_->owner = this;
}

Trainer& Trainer::operator=(Trainer&& other) noexcept {
  run_ = std::move(other.run_);
  if (run_) run_->owner = this;
  return *this;
}
Trainer::~Trainer() = default;

StepStats Trainer::step() {
  return api::translate_errors([&] { return step_stats(run_->trainer.step()); });
}

StepStats Trainer::step(const Batch& batch) {
  return api::translate_errors([&] {
    models::Trainer& trainer = run_->trainer;
    api::check_batch(batch, trainer, "step(batch)");
    if (batch.on_device) {
      return step_stats(trainer.step_on_device(batch.images, batch.labels, batch.stream));
    }
    const void* images = api::network_input(batch, trainer.session().graph(), run_->batch_scratch);
    return step_stats(trainer.step(images, batch.labels));
  });
}

std::vector<float> Trainer::predict(const float* images, std::int64_t count) {
  return api::translate_errors(
      [&] { return api::predict_floats(run_->trainer.session(), images, count); });
}

std::vector<float> Trainer::probabilities(const float* images, std::int64_t count) {
  std::vector<float> p = predict(images, count);
  api::softmax_rows(p, static_cast<std::size_t>(run_->trainer.session().graph().num_classes()));
  return p;
}

EvalStats Trainer::evaluate() {
  return api::translate_errors([&] {
    const models::EvalRecord r = run_->trainer.evaluate();
    return EvalStats{r.iteration, r.loss, r.accuracy, r.top5, r.images};
  });
}

void Trainer::on_step(std::function<void(const StepStats&)> callback) {
  run_->trainer.on_step(
      [callback = std::move(callback)](const models::StepRecord& r) { callback(step_stats(r)); });
}

void Trainer::set_learning_rate(double lr) {
  api::translate_errors([&] { run_->trainer.set_learning_rate(lr); });
}

void Trainer::on_gradients(std::function<void(Trainer&)> callback) {
  Run* run = run_.get();
  run_->trainer.on_gradients([run, callback = std::move(callback)] { callback(*run->owner); });
}

std::vector<ParameterInfo> Trainer::named_parameters() const {
  return api::translate_errors([&] {
    std::vector<ParameterInfo> out;
    for (models::NamedTensor& t : models::named_tensors(run_->trainer.session())) {
      out.push_back({std::move(t.name), std::move(t.shape), t.trainable});
    }
    return out;
  });
}

void Trainer::get_parameter(const std::string& name, float* out, std::size_t count) {
  api::translate_errors([&] {
    models::read_parameter(run_->trainer.session(), name, models::ParameterPart::Value, out, count);
  });
}

void Trainer::set_parameter(const std::string& name, const float* values, std::size_t count) {
  api::translate_errors([&] {
    models::write_parameter(run_->trainer.session(), name, models::ParameterPart::Value, values,
                            count);
  });
}

void Trainer::get_gradient(const std::string& name, float* out, std::size_t count) {
  api::translate_errors([&] {
    models::read_parameter(run_->trainer.session(), name, models::ParameterPart::Gradient, out,
                           count);
  });
}

void Trainer::set_gradient(const std::string& name, const float* values, std::size_t count) {
  api::translate_errors([&] {
    models::write_parameter(run_->trainer.session(), name, models::ParameterPart::Gradient, values,
                            count);
  });
}

std::int64_t Trainer::iteration() const noexcept { return run_->trainer.iteration(); }

MemoryStats Trainer::memory() const { return api::memory_stats(run_->trainer.session()); }

Backend Trainer::backend() const noexcept {
  return run_->trainer.options().session.backend == layers::Backend::Cuda ? Backend::Cuda
                                                                          : Backend::Cpu;
}

double Trainer::predicted_step_milliseconds() const noexcept {
  return run_->trainer.session().plan().predicted_step_seconds * 1e3;
}

const TrainerConfig& Trainer::config() const noexcept { return run_->config; }

void Trainer::save(const std::string& path) {
  api::translate_errors([&] { run_->trainer.save(path); });
}

void Trainer::resume(const std::string& path) {
  api::translate_errors([&] { run_->trainer.resume(path); });
}

void Trainer::init_from(const std::string& path) {
  api::translate_errors([&] { run_->trainer.init_from(path); });
}

}  // namespace vdnn
