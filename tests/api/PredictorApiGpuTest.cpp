// vdnn::Predictor on the GPU (skips without a CUDA device): on ResNet-20 its inference plan holds
// less device memory than the Trainer's run, measured by the run's own allocator, and its logits
// are bitwise Trainer::predict's in fp32 (NCHW and NHWC) and bf16, the two sharing the setup
// cache so that they run the same convolution algorithms.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vdnn/Predictor.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/CallerData.hpp"

namespace {

namespace fs = std::filesystem;

struct Case {
  const char* precision;
  const char* layout;
};

TEST(PredictorApiGpu, HoldsLessThanTheTrainerAndGivesItsLogitsBitwise) {
  if (!vdnn::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const fs::path dir = fs::temp_directory_path() / "vdnn-api-predictor-gpu";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const vdnn::Network network =
      vdnn::Network::from_file(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json");
  const std::vector<float> images = vdnn::testing::CallerBatches(21, 3, 32, 32).floats(0);
  for (const Case c : {Case{"fp32", "nchw"}, Case{"fp32", "nhwc"}, Case{"bf16", "auto"}}) {
    const std::string name = std::string(c.precision) + " " + c.layout;
    vdnn::TrainerConfig config;
    config.batch = 16;
    config.backend = vdnn::Backend::Cuda;
    config.deterministic = true;
    config.precision = c.precision;
    config.layout = c.layout;
    config.cost_cache = (dir / "cache").string();
    vdnn::Trainer trainer(network, config);
    for (int i = 0; i < 3; ++i) trainer.step();
    const std::string path = (dir / "trained.safetensors").string();
    trainer.save(path);
    vdnn::PredictorConfig inference;
    inference.batch = config.batch;
    inference.backend = config.backend;
    inference.deterministic = config.deterministic;
    inference.precision = config.precision;
    inference.layout = config.layout;
    inference.cost_cache = config.cost_cache;
    vdnn::Predictor predictor(network, path, inference);
    EXPECT_EQ(predictor.predict(images.data(), 21), trainer.predict(images.data(), 21)) << name;
    EXPECT_LT(predictor.memory().device_peak, trainer.memory().device_peak) << name;
    EXPECT_LT(predictor.memory().device_capacity, trainer.memory().device_capacity) << name;
  }
  fs::remove_all(dir);
}

}  // namespace
