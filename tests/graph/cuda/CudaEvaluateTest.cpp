// Evaluation on the CUDA backend: inference-mode batch norm and dropout agree with the CPU
// backend, and the trainer (background loader, pinned staging) trains bitwise the same with or
// without evaluations.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "graph/SessionHarness.hpp"
#include "models/train/Trainer.hpp"
#include "runtime/Device.hpp"

namespace vdnn::graph {
namespace {

class CudaEvaluate : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

SessionOptions options(layers::Backend backend, Policy policy = Policy::Baseline) {
  SessionOptions o;
  o.backend = backend;
  o.policy = policy;
  o.deterministic = true;
  o.allow_tf32 = false;
  o.executor.seed = 5;
  return o;
}

// Trains 4 steps of ResNet-20 at batch 8, then evaluates 2 held-out batches.
std::vector<double> eval_losses(const SessionOptions& o) {
  Session session(testing::load_config("resnet20-cifar.json", 8), o);
  auto data = models::make_dataset("synthetic", {3, 32, 32, 10}, 5);
  auto test = models::make_dataset("synthetic", {3, 32, 32, 10}, 5, models::Split::Test);
  std::vector<float> images(8 * 3072);
  std::vector<std::int32_t> labels(8);
  for (int i = 0; i < 4; ++i) {
    data->next_batch(8, images.data(), labels.data());
    session.executor().train_step(images.data(), labels.data(), 0.05);
  }
  std::vector<double> losses;
  for (int i = 0; i < 2; ++i) {
    test->next_batch(8, images.data(), labels.data());
    losses.push_back(session.executor().evaluate(images.data(), labels.data()).loss);
  }
  return losses;
}

TEST_F(CudaEvaluate, AgreesWithTheCpuBackend) {
  const std::vector<double> cpu = eval_losses(options(layers::Backend::Cpu));
  const std::vector<double> gpu = eval_losses(options(layers::Backend::Cuda));
  ASSERT_EQ(cpu.size(), gpu.size());
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_NEAR(gpu[i], cpu[i], 1e-2 * std::abs(cpu[i])) << "batch " << i;
  }
}

TEST_F(CudaEvaluate, TrainerTrainsTheSameWithEvaluationsUnderVdnnAll) {
  models::TrainerOptions o;
  o.session = options(layers::Backend::Cuda, Policy::VdnnAll);
  o.session.executor.poison_freed = true;
  o.augment = models::Augment::CropFlip;
  const graph::NetworkDef def =
      models::load_network(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json");
  models::Trainer plain(def, 16, o);
  o.evaluation = true;
  models::Trainer evaluated(def, 16, o);
  for (int i = 0; i < 6; ++i) {
    plain.step();
    evaluated.step();
    const models::EvalRecord first = evaluated.evaluate();
    EXPECT_EQ(evaluated.evaluate().loss, first.loss);
    EXPECT_EQ(first.images, 992);
    EXPECT_EQ(plain.history().back().loss, evaluated.history().back().loss) << "step " << i;
  }
  EXPECT_EQ(evaluated.session().executor().memory().device_peak,
            evaluated.session().plan().predicted_peak);
}

}  // namespace
}  // namespace vdnn::graph
