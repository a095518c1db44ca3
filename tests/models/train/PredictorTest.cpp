// models::Predictor (Note [Inference plan]): on a Trainer's checkpoint it plans and measures a
// lower peak than the Trainer, holds no gradient or optimizer state, runs under a budget the
// Trainer does not fit, and gives bitwise the Trainer's logits in fp32 and bf16.
#include "models/train/Predictor.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "graph/TestNetworks.hpp"
#include "models/ConfigLoader.hpp"
#include "models/train/SafetensorsBytes.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

graph::NetworkDef resnet20() {
  return load_network(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json");
}

TrainerOptions trainer_options(runtime::DType precision = runtime::DType::F32) {
  TrainerOptions o;
  o.session.executor.seed = 3;
  o.session.precision = precision;
  o.cache = false;
  return o;
}

PredictorOptions predictor_options(const TrainerOptions& t, std::uint64_t budget = 0) {
  PredictorOptions p;
  p.session = t.session;
  p.session.budget_bytes = budget;
  p.cache = false;
  return p;
}

// Three steps (batch-norm statistics move), saved under `dir`.
fs::path trained_checkpoint(Trainer& trainer, const fs::path& dir) {
  for (int i = 0; i < 3; ++i) trainer.step();
  const fs::path path = dir / "trained.safetensors";
  trainer.save(path);
  return path;
}

std::vector<float> images(std::int64_t count) {
  std::vector<float> v(static_cast<std::size_t>(count) * 3 * 32 * 32);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97) / 48.0f - 1.0f;
  return v;
}

std::vector<float> logits(graph::Session& session, const std::vector<float>& in,
                          std::int64_t count) {
  std::vector<float> out(static_cast<std::size_t>(count * session.graph().num_classes()));
  predict_logits(session, in.data(), count, out.data());
  return out;
}

TEST(Predictor, PlansAndMeasuresLessThanTheTrainerAndHoldsNoTrainingState) {
  const TempDir dir("predictor-memory");
  Trainer trainer(resnet20(), 8, trainer_options());
  const fs::path checkpoint = trained_checkpoint(trainer, dir.path());
  Predictor predictor(resnet20(), 8, predictor_options(trainer.options()), checkpoint);
  const std::vector<float> in = images(8);
  const std::vector<float> expected = logits(trainer.session(), in, 8);
  EXPECT_EQ(logits(predictor.session(), in, 8), expected);

  const graph::Plan& plan = predictor.session().plan();
  const graph::Plan& step = trainer.session().plan();
  EXPECT_EQ(plan.purpose, graph::Purpose::Inference);
  EXPECT_LT(plan.predicted_peak, step.predicted_peak);
  EXPECT_LT(plan.pool_bytes, step.pool_bytes);
  const graph::MemoryReport measured = predictor.session().executor().memory();
  EXPECT_EQ(measured.device_peak, plan.predicted_peak);
  EXPECT_LT(measured.device_peak, trainer.session().executor().memory().device_peak);
  EXPECT_EQ(measured.pinned_capacity, 0u);
  for (const graph::Parameter& p : predictor.session().executor().parameters().all()) {
    EXPECT_TRUE(p.grad.empty()) << p.name;
    for (const runtime::Buffer& s : p.state) EXPECT_TRUE(s.empty()) << p.name;
  }
}

TEST(Predictor, RunsUnderABudgetTheTrainerDoesNotFit) {
  const TempDir dir("predictor-budget");
  Trainer trainer(resnet20(), 8, trainer_options());
  const fs::path checkpoint = trained_checkpoint(trainer, dir.path());
  const std::uint64_t budget =
      Predictor(resnet20(), 8, predictor_options(trainer.options()), checkpoint)
          .session()
          .plan()
          .pool_bytes +
      (std::uint64_t{64} << 10);
  Predictor tight(resnet20(), 8, predictor_options(trainer.options(), budget), checkpoint);
  const std::vector<float> in = images(5);
  EXPECT_EQ(logits(tight.session(), in, 5), logits(trainer.session(), in, 5));
  EXPECT_LE(tight.session().executor().memory().device_peak, budget);
  for (const graph::Policy policy : {graph::Policy::Baseline, graph::Policy::VdnnAll,
                                     graph::Policy::Recompute, graph::Policy::Auto}) {
    TrainerOptions o = trainer_options();
    o.session.policy = policy;
    o.session.budget_bytes = budget;
    EXPECT_THROW(Trainer(resnet20(), 8, o), graph::DoesNotFit) << graph::policy_name(policy);
  }
  PredictorOptions too_small = predictor_options(trainer.options(), budget / 2);
  EXPECT_THROW(Predictor(resnet20(), 8, too_small, checkpoint), graph::DoesNotFit);
}

TEST(Predictor, GivesTheTrainersLogitsBitwiseInBf16) {
  const TempDir dir("predictor-bf16");
  Trainer trainer(resnet20(), 4, trainer_options(runtime::DType::BF16));
  const fs::path checkpoint = trained_checkpoint(trainer, dir.path());
  Predictor predictor(resnet20(), 4, predictor_options(trainer.options()), checkpoint);
  const std::vector<float> in = images(6);  // a batch and a padded one
  EXPECT_EQ(logits(predictor.session(), in, 6), logits(trainer.session(), in, 6));
  EXPECT_LT(predictor.session().plan().predicted_peak, trainer.session().plan().predicted_peak);
}

}  // namespace
}  // namespace vdnn::models
