// vdnn::Predictor: a Trainer that never trains (no data, no steps) on a checkpoint's weights, so
// that its logits are those of Trainer::predict by construction.
#include <vdnn/Error.hpp>
#include <vdnn/Predictor.hpp>

#include <utility>

#include "models/api/NetworkDefinition.hpp"

namespace vdnn {
namespace {

// The train split of a Predictor's run: the loader never draws from it (nothing steps).
class NoTrainingData final : public DataSource {
 public:
  void next_batch(const BatchFormat& /*format*/, void* /*images*/,
                  std::int32_t* /*labels*/) override {
    throw InvalidArgument("a Predictor does not train");
  }
  std::string description() const override { return "no training data (a Predictor)"; }
};

TrainerConfig trainer_config(const PredictorConfig& p) {
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
  c.data_source = std::make_shared<NoTrainingData>();
  return c;
}

}  // namespace

struct Predictor::Run {
  Trainer trainer;
  std::int64_t num_classes = 0;

  Run(const Network& network, const PredictorConfig& config)
      : trainer(network, trainer_config(config)),
        num_classes(network.definition().def.num_classes) {}
};

Predictor::Predictor(const Network& network, const std::string& checkpoint,
                     const PredictorConfig& config)
    : run_(std::make_unique<Run>(network, config)) {
  run_->trainer.init_from(checkpoint);
}

Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&&) noexcept = default;
Predictor::~Predictor() = default;

std::vector<float> Predictor::predict(const float* images, std::int64_t count) {
  return run_->trainer.predict(images, count);
}

std::vector<float> Predictor::probabilities(const float* images, std::int64_t count) {
  return run_->trainer.probabilities(images, count);
}

std::int64_t Predictor::num_classes() const noexcept { return run_->num_classes; }

Backend Predictor::backend() const noexcept { return run_->trainer.backend(); }

}  // namespace vdnn
