// The public training API: steps, callbacks, memory, checkpoints and errors, on the CPU backend
// (and on CUDA where a device is present).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/TinyNetwork.hpp"

namespace {

namespace fs = std::filesystem;

vdnn::TrainerConfig cpu_config(const std::string& policy = "baseline") {
  vdnn::TrainerConfig config;
  config.batch = 4;
  config.backend = vdnn::Backend::Cpu;
  config.policy = policy;
  config.seed = 7;
  return config;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("vdnn-api-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<double> losses(vdnn::Trainer& trainer, int steps) {
  std::vector<double> out;
  for (int i = 0; i < steps; ++i) out.push_back(trainer.step().loss);
  return out;
}

TEST(TrainerApi, StepsCallBackAndMeasureMemory) {
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), cpu_config("vdnn-all"));
  EXPECT_EQ(trainer.backend(), vdnn::Backend::Cpu);
  std::vector<std::int64_t> seen;
  trainer.on_step([&](const vdnn::StepStats& s) { seen.push_back(s.iteration); });
  for (int i = 0; i < 3; ++i) {
    const vdnn::StepStats s = trainer.step();
    EXPECT_TRUE(std::isfinite(s.loss));
    EXPECT_GT(s.peak_device_bytes, 0U);
    EXPECT_GT(s.offloaded_bytes, 0U);  // vdnn-all moves the feature maps out and back
    EXPECT_EQ(s.offloaded_bytes, s.prefetched_bytes);
  }
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(trainer.iteration(), 3);
  const vdnn::MemoryStats m = trainer.memory();
  EXPECT_GT(m.device_peak, 0U);
  EXPECT_LE(m.device_peak, m.device_capacity);
  EXPECT_GT(m.pinned_peak, 0U);
}

TEST(TrainerApi, EvaluatesWithoutChangingTraining) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::TrainerConfig config = cpu_config("vdnn-all");
  config.evaluation = true;
  vdnn::Trainer plain(network, cpu_config("vdnn-all"));
  EXPECT_THROW(plain.evaluate(), vdnn::InvalidArgument);
  vdnn::Trainer evaluated(network, config);
  std::vector<double> with_eval;
  for (int i = 0; i < 4; ++i) {
    with_eval.push_back(evaluated.step().loss);
    const vdnn::EvalStats e = evaluated.evaluate();
    EXPECT_EQ(e.iteration, i + 1);
    EXPECT_GT(e.images, 0);
    EXPECT_TRUE(e.accuracy >= 0.0 && e.accuracy <= 1.0);
    EXPECT_TRUE(e.top5 >= e.accuracy && e.top5 <= 1.0);  // 10 classes
    EXPECT_TRUE(std::isfinite(e.loss));
  }
  EXPECT_EQ(with_eval, losses(plain, 4));
  config.augment = "sideways";
  EXPECT_THROW(vdnn::Trainer(network, config), vdnn::InvalidArgument);
}

TEST(TrainerApi, PoliciesGiveTheSameLossesAndTrainersCoexist) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer baseline(network, cpu_config("baseline"));
  vdnn::Trainer offload(network, cpu_config("vdnn-all"));
  EXPECT_EQ(losses(baseline, 4), losses(offload, 4));
}

TEST(TrainerApi, AutoMeasuresCostsOnceAndPredictsTheStep) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const fs::path dir = scratch("costs");
  vdnn::TrainerConfig config = cpu_config("auto");
  config.cost_cache = (dir / "costs").string();
  vdnn::Trainer first(network, config);
  EXPECT_GT(first.predicted_step_milliseconds(), 0.0);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "costs"), fs::directory_iterator()), 1);
  vdnn::Trainer second(network, config);  // from the cache: the same costs, the same plan
  EXPECT_DOUBLE_EQ(second.predicted_step_milliseconds(), first.predicted_step_milliseconds());
  EXPECT_EQ(losses(first, 3), losses(second, 3));
}

TEST(TrainerApi, ResumeContinuesBitwise) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const fs::path dir = scratch("resume");
  vdnn::Trainer straight(network, cpu_config());
  const std::vector<double> all = losses(straight, 6);

  vdnn::Trainer first(network, cpu_config());
  losses(first, 3);
  first.save((dir / "ckpt.safetensors").string());
  vdnn::Trainer second(network, cpu_config());
  second.resume((dir / "ckpt.safetensors").string());
  EXPECT_EQ(second.iteration(), 3);
  EXPECT_EQ(losses(second, 3), std::vector<double>(all.begin() + 3, all.end()));
  EXPECT_THROW(second.resume((dir / "ckpt.safetensors").string()), vdnn::InvalidArgument);
}

TEST(TrainerApi, CheckpointErrorsAreTyped) {
  const fs::path dir = scratch("errors");
  vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), cpu_config());
  EXPECT_THROW(trainer.resume((dir / "missing.safetensors").string()), vdnn::CheckpointError);

  vdnn::NetworkBuilder other("other", 3, 8, 8, 10);
  const vdnn::Tensor x = other.conv2d("conv1", other.input(), 4, 3, 1, 1);
  vdnn::Trainer small(
      other.softmax_cross_entropy("loss", other.linear("fc", other.flatten("flatten", x), 10)),
      cpu_config());
  small.save((dir / "other.safetensors").string());
  try {
    trainer.init_from((dir / "other.safetensors").string());
    FAIL() << "expected CheckpointError";
  } catch (const vdnn::CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("conv1.weight"), std::string::npos) << what;  // wrongly shaped
    EXPECT_NE(what.find("bn1.weight"), std::string::npos) << what;    // missing
  }
}

TEST(TrainerApi, ConfigErrorsAreTyped) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::TrainerConfig config = cpu_config("no-such-policy");
  try {
    vdnn::Trainer trainer(network, config);
    FAIL() << "expected InvalidArgument";
  } catch (const vdnn::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("vdnn-all"), std::string::npos) << e.what();
  }
  config = cpu_config("vdnn-all");
  config.memory_budget = 1024;
  EXPECT_THROW(vdnn::Trainer(network, config), vdnn::DoesNotFit);
  config = cpu_config();
  config.batch = 0;
  EXPECT_THROW(vdnn::Trainer(network, config), vdnn::InvalidArgument);
  config = cpu_config();
  config.data = "cifar10:/nonexistent";
  EXPECT_THROW(vdnn::Trainer(network, config), vdnn::InvalidArgument);  // 8x8 images
  const vdnn::Network cifar =
      vdnn::Network::from_file(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json");
  EXPECT_THROW(vdnn::Trainer(cifar, config), vdnn::DataError);
}

// bf16 feature maps on the CPU (emulated): it trains, its maps take less device memory than fp32's,
// and its losses are fp32's to bf16's precision but not bit for bit (the precision took effect).
TEST(TrainerApi, TrainsInBf16) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::TrainerConfig config = cpu_config("vdnn-all");
  config.precision = "bf16";
  vdnn::Trainer bf16(network, config);
  vdnn::Trainer fp32(network, cpu_config("vdnn-all"));
  EXPECT_EQ(bf16.config().precision, "bf16");
  for (int i = 0; i < 3; ++i) {
    const vdnn::StepStats a = bf16.step();
    const vdnn::StepStats b = fp32.step();
    ASSERT_TRUE(std::isfinite(a.loss));
    EXPECT_NEAR(a.loss, b.loss, 0.05 * std::abs(b.loss)) << i;
    if (i == 0) EXPECT_NE(a.loss, b.loss);
    EXPECT_GT(a.offloaded_bytes, 0U);
    EXPECT_LT(a.offloaded_bytes, b.offloaded_bytes);
  }
  EXPECT_EQ(bf16.iteration(), 3);
  EXPECT_LT(bf16.memory().device_peak, fp32.memory().device_peak);
}

TEST(TrainerApi, AnUnknownPrecisionIsAnInvalidArgumentNamingTheChoices) {
  vdnn::TrainerConfig config = cpu_config();
  config.precision = "fp16";
  try {
    vdnn::Trainer trainer(vdnn::testing::tiny_resnet("tiny"), config);
    FAIL() << "expected InvalidArgument";
  } catch (const vdnn::InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("fp16"), std::string::npos) << message;
    EXPECT_NE(message.find("bf16"), std::string::npos) << message;
  }
}

TEST(TrainerApi, AGpuDecodeShareOutsideZeroToOneIsAnInvalidArgument) {
  for (const double share : {0.0, -0.5, 1.5}) {
    vdnn::TrainerConfig config = cpu_config();
    config.gpu_decode_share = share;
    EXPECT_THROW(vdnn::Trainer(vdnn::testing::tiny_resnet("tiny"), config), vdnn::InvalidArgument)
        << share;
  }
}

TEST(TrainerApiGpu, CudaMatchesTheCpuFirstLoss) {
  if (!vdnn::cuda_available()) GTEST_SKIP() << "no CUDA device";
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::TrainerConfig config = cpu_config("vdnn-all");
  config.backend = vdnn::Backend::Auto;
  config.deterministic = true;
  config.tf32 = false;
  vdnn::Trainer gpu(network, config);
  EXPECT_EQ(gpu.backend(), vdnn::Backend::Cuda);
  vdnn::Trainer cpu(network, cpu_config("vdnn-all"));
  EXPECT_NEAR(gpu.step().loss, cpu.step().loss, 1e-4);
}

}  // namespace
