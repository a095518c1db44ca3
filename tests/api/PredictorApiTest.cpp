// vdnn::Predictor: a checkpoint's logits are bitwise those of the Trainer that saved it, in full
// and partial batches, fp32 and bf16; probabilities are the Trainer's; it holds less memory than
// the Trainer and runs under a budget the Trainer does not fit; errors are typed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Predictor.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/CallerData.hpp"
#include "api/TinyNetwork.hpp"

namespace {

namespace fs = std::filesystem;

// A fresh directory under the temporary one, removed with the object.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() / ("vdnn-api-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

vdnn::PredictorConfig cpu_inference(std::int64_t batch) {
  vdnn::PredictorConfig config;
  config.batch = batch;
  config.backend = vdnn::Backend::Cpu;
  return config;
}

TEST(PredictorApi, GivesTheLogitsOfTheTrainerThatSaved) {
  const ScratchDir dir("predictor");
  const std::string path = (dir.path / "trained.safetensors").string();
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer trainer(network, vdnn::testing::tiny_cpu_config());
  for (int i = 0; i < 3; ++i) trainer.step();  // batch norm's statistics move too
  trainer.save(path);
  const std::vector<float> images = vdnn::testing::CallerBatches(7, 3, 8, 8).floats(0);
  const std::vector<float> expected = trainer.predict(images.data(), 7);  // a batch, 3 padded

  vdnn::Predictor predictor(network, path, cpu_inference(4));
  EXPECT_EQ(predictor.num_classes(), 10);
  EXPECT_EQ(predictor.backend(), vdnn::Backend::Cpu);
  EXPECT_EQ(predictor.predict(images.data(), 7), expected);
  EXPECT_EQ(predictor.probabilities(images.data(), 7), trainer.probabilities(images.data(), 7));
  // Other batch sizes give the same rows to float rounding (other padding, same images).
  vdnn::Predictor single(network, path, cpu_inference(1));
  const std::vector<float> one_by_one = single.predict(images.data(), 7);
  ASSERT_EQ(one_by_one.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(one_by_one[i], expected[i], 1e-4);
  // A moved predictor keeps its run.
  vdnn::Predictor moved = std::move(predictor);
  EXPECT_EQ(moved.predict(images.data(), 7), expected);
}

// A tiny network trained 3 steps in `precision` and saved under `dir`.
std::string trained_checkpoint(vdnn::Trainer& trainer, const ScratchDir& dir) {
  for (int i = 0; i < 3; ++i) trainer.step();
  const std::string path = (dir.path / "trained.safetensors").string();
  trainer.save(path);
  return path;
}

TEST(PredictorApi, GivesTheTrainersLogitsBitwiseInBf16) {
  const ScratchDir dir("predictor-bf16");
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.precision = "bf16";
  vdnn::Trainer trainer(network, config);
  const std::string path = trained_checkpoint(trainer, dir);
  vdnn::PredictorConfig inference = cpu_inference(4);
  inference.precision = "bf16";
  vdnn::Predictor predictor(network, path, inference);
  const std::vector<float> images = vdnn::testing::CallerBatches(6, 3, 8, 8).floats(0);
  EXPECT_EQ(predictor.predict(images.data(), 6), trainer.predict(images.data(), 6));
}

TEST(PredictorApi, HoldsLessMemoryThanTheTrainer) {
  const ScratchDir dir("predictor-memory");
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer trainer(network, vdnn::testing::tiny_cpu_config());
  const std::string path = trained_checkpoint(trainer, dir);
  vdnn::Predictor predictor(network, path, cpu_inference(4));
  const std::vector<float> images = vdnn::testing::CallerBatches(4, 3, 8, 8).floats(0);
  predictor.predict(images.data(), 4);
  const vdnn::MemoryStats inference = predictor.memory();
  const vdnn::MemoryStats training = trainer.memory();
  EXPECT_GT(inference.device_peak, 0u);
  EXPECT_LT(inference.device_peak, training.device_peak);
  EXPECT_LT(inference.device_capacity, training.device_capacity);
  EXPECT_LE(inference.device_peak, inference.device_capacity);
  EXPECT_EQ(inference.pinned_capacity, 0u);
}

TEST(PredictorApi, RunsUnderABudgetTheTrainerDoesNotFit) {
  const ScratchDir dir("predictor-budget");
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer trainer(network, vdnn::testing::tiny_cpu_config());
  const std::string path = trained_checkpoint(trainer, dir);
  vdnn::PredictorConfig tight = cpu_inference(4);
  tight.memory_budget = vdnn::Predictor(network, path, tight).memory().device_capacity + 4096;
  vdnn::Predictor predictor(network, path, tight);
  const std::vector<float> images = vdnn::testing::CallerBatches(3, 3, 8, 8).floats(0);
  EXPECT_EQ(predictor.predict(images.data(), 3), trainer.predict(images.data(), 3));
  EXPECT_LE(predictor.memory().device_peak, tight.memory_budget);
  for (const char* policy : {"baseline", "vdnn-all", "recompute", "auto"}) {
    vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
    config.memory_budget = tight.memory_budget;
    config.policy = policy;
    EXPECT_THROW(vdnn::Trainer(network, config), vdnn::DoesNotFit) << policy;
  }
  tight.memory_budget /= 4;
  EXPECT_THROW(vdnn::Predictor(network, path, tight), vdnn::DoesNotFit);
}

TEST(PredictorApi, ErrorsAreTyped) {
  const ScratchDir dir("predictor-errors");
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const std::string missing = (dir.path / "missing.safetensors").string();
  EXPECT_THROW(vdnn::Predictor(network, missing, cpu_inference(4)), vdnn::CheckpointError);
  const std::string other = (dir.path / "other.safetensors").string();
  vdnn::NetworkBuilder net("other", 3, 8, 8, 10);
  vdnn::Tensor x = net.flatten("flatten", net.global_avgpool("avgpool", net.input()));
  vdnn::Trainer(net.softmax_cross_entropy("loss", net.linear("fc", x, 10)),
                vdnn::testing::tiny_cpu_config())
      .save(other);
  EXPECT_THROW(vdnn::Predictor(network, other, cpu_inference(4)), vdnn::CheckpointError);
  vdnn::PredictorConfig unknown_policy = cpu_inference(4);
  unknown_policy.policy = "nope";
  EXPECT_THROW(vdnn::Predictor(network, other, unknown_policy), vdnn::InvalidArgument);
  const std::string trained = (dir.path / "trained.safetensors").string();
  vdnn::Trainer(network, vdnn::testing::tiny_cpu_config()).save(trained);
  vdnn::Predictor predictor(network, trained, cpu_inference(4));
  const std::vector<float> images(4 * 3 * 8 * 8, 0.5F);
  EXPECT_THROW(predictor.predict(images.data(), 0), vdnn::InvalidArgument);
  EXPECT_THROW(predictor.probabilities(nullptr, 1), vdnn::InvalidArgument);
}

}  // namespace
