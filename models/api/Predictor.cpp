// vdnn::Predictor: the public face of models::Predictor, a run planned for inference only (Note
// [Inference plan]) from the same options a Trainer of the config would use, so that its logits
// are those of Trainer::predict.
#include <vdnn/Error.hpp>
#include <vdnn/Predictor.hpp>

#include <utility>

#include "models/api/NetworkDefinition.hpp"
#include "models/api/PublicErrors.hpp"
#include "models/api/SessionResults.hpp"
#include "models/api/TrainerOptions.hpp"
#include "models/train/Predictor.hpp"

namespace vdnn {
namespace {

// The Trainer's options for the fields a Predictor shares with it, the rest their defaults.
models::PredictorOptions predictor_options(const Network& network, const PredictorConfig& p) {
  TrainerConfig c;
  c.batch = p.batch;
  c.backend = p.backend;
  c.device = p.device;
  c.policy = p.policy;
  c.memory_budget = p.memory_budget;
  c.deterministic = p.deterministic;
  c.tf32 = p.tf32;
  c.fuse = p.fuse;
  c.layout = p.layout;
  c.precision = p.precision;
  c.cost_cache = p.cost_cache;
  c.cache = p.cache;
  const Network::Definition& definition = network.definition();
  models::TrainerOptions t = api::trainer_options(c, definition.def, definition.config_json);
  return {std::move(t.session), std::move(t.cache_dir), t.cache};
}

}  // namespace

struct Predictor::Run {
  models::Predictor predictor;

  Run(const Network& network, const std::string& checkpoint, const PredictorConfig& config)
      : predictor(network.definition().def, config.batch, predictor_options(network, config),
                  checkpoint) {}
};

Predictor::Predictor(const Network& network, const std::string& checkpoint,
                     const PredictorConfig& config)
    : run_(api::translate_errors(
          [&] { return std::make_unique<Run>(network, checkpoint, config); })) {}

Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&&) noexcept = default;
Predictor::~Predictor() = default;

std::vector<float> Predictor::predict(const float* images, std::int64_t count) {
  return api::translate_errors(
      [&] { return api::predict_floats(run_->predictor.session(), images, count); });
}

std::vector<float> Predictor::probabilities(const float* images, std::int64_t count) {
  std::vector<float> p = predict(images, count);
  api::softmax_rows(p, static_cast<std::size_t>(num_classes()));
  return p;
}

std::int64_t Predictor::num_classes() const noexcept {
  return run_->predictor.session().graph().num_classes();
}

Backend Predictor::backend() const noexcept {
  return run_->predictor.options().session.backend == layers::Backend::Cuda ? Backend::Cuda
                                                                            : Backend::Cpu;
}

MemoryStats Predictor::memory() const { return api::memory_stats(run_->predictor.session()); }

}  // namespace vdnn
