// The public optimizer settings: SGD (Nesterov, dampening), AdamW and LARS, gradient clipping and
// label smoothing train and resume bitwise through vdnn::Trainer; bad values and a resume with
// another optimizer are typed errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/TinyNetwork.hpp"

namespace {

namespace fs = std::filesystem;

vdnn::TrainerConfig cpu_config(const std::string& optimizer) {
  vdnn::TrainerConfig config;
  config.batch = 4;
  config.backend = vdnn::Backend::Cpu;
  config.seed = 7;
  config.optimizer = optimizer;
  return config;
}

// A fresh directory that removes itself.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : path_(fs::temp_directory_path() / ("vdnn-api-optim-" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path file(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::vector<double> losses(vdnn::Trainer& trainer, int steps) {
  std::vector<double> out;
  for (int i = 0; i < steps; ++i) out.push_back(trainer.step().loss);
  return out;
}

// Every optimizer, with the settings that change its update.
std::vector<vdnn::TrainerConfig> configurations() {
  vdnn::TrainerConfig nesterov = cpu_config("sgd");
  nesterov.nesterov = true;
  vdnn::TrainerConfig adamw = cpu_config("adamw");
  adamw.weight_decay = 0.05;
  adamw.learning_rate = 1e-3;
  adamw.clip_grad_norm = 1.0;
  adamw.label_smoothing = 0.1;
  vdnn::TrainerConfig lars = cpu_config("lars");
  lars.decay_bn_bias = false;
  lars.dampening = 0.1;
  return {nesterov, adamw, lars};
}

TEST(OptimizerApi, EveryOptimizerResumesBitwise) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const Scratch dir("resume");
  const std::string path = dir.file("ckpt.safetensors").string();
  for (const vdnn::TrainerConfig& config : configurations()) {
    SCOPED_TRACE(config.optimizer);
    vdnn::Trainer straight(network, config);
    const std::vector<double> all = losses(straight, 4);
    vdnn::Trainer first(network, config);
    losses(first, 2);
    first.save(path);
    vdnn::Trainer second(network, config);
    second.resume(path);
    EXPECT_EQ(losses(second, 2), std::vector<double>(all.begin() + 2, all.end()));
  }
}

TEST(OptimizerApi, OptimizersAndSmoothingChangeTheRun) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer sgd(network, cpu_config("sgd"));
  vdnn::Trainer adamw(network, cpu_config("adamw"));
  vdnn::Trainer lars(network, cpu_config("lars"));
  const std::vector<double> a = losses(sgd, 2);
  const std::vector<double> b = losses(adamw, 2);
  const std::vector<double> c = losses(lars, 2);
  EXPECT_EQ(a[0], b[0]);  // the same weights before the first update
  EXPECT_NE(a[1], b[1]);
  EXPECT_NE(a[1], c[1]);
  vdnn::TrainerConfig smoothed = cpu_config("sgd");
  smoothed.label_smoothing = 0.2;
  vdnn::Trainer smooth(network, smoothed);
  EXPECT_NE(smooth.step().loss, a[0]);
}

TEST(OptimizerApi, BadValuesAreInvalidArgument) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const std::vector<std::function<void(vdnn::TrainerConfig&)>> changes = {
      [](vdnn::TrainerConfig& c) { c.optimizer = "adam"; },
      [](vdnn::TrainerConfig& c) {
        c.nesterov = true;
        c.momentum = 0.0;
      },
      [](vdnn::TrainerConfig& c) {
        c.nesterov = true;
        c.dampening = 0.5;
      },
      [](vdnn::TrainerConfig& c) { c.dampening = 2.0; },
      [](vdnn::TrainerConfig& c) { c.adam_beta1 = 1.0; },
      [](vdnn::TrainerConfig& c) { c.adam_beta2 = -0.1; },
      [](vdnn::TrainerConfig& c) { c.adam_eps = 0.0; },
      [](vdnn::TrainerConfig& c) { c.lars_trust = 0.0; },
      [](vdnn::TrainerConfig& c) { c.clip_grad_norm = -1.0; },
      [](vdnn::TrainerConfig& c) { c.label_smoothing = 1.5; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    vdnn::TrainerConfig config = cpu_config("sgd");
    changes[i](config);
    EXPECT_THROW(vdnn::Trainer(network, config), vdnn::InvalidArgument) << "change " << i;
  }
  try {
    vdnn::Trainer(network, cpu_config("adam"));
  } catch (const vdnn::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("\"lars\""), std::string::npos) << e.what();
  }
}

TEST(OptimizerApi, ResumingWithAnotherOptimizerIsACheckpointError) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  const Scratch dir("mismatch");
  const std::string path = dir.file("ckpt.safetensors").string();
  vdnn::Trainer adamw(network, cpu_config("adamw"));
  adamw.step();
  adamw.save(path);
  vdnn::Trainer sgd(network, cpu_config("sgd"));
  EXPECT_THROW(sgd.resume(path), vdnn::CheckpointError);
  EXPECT_NO_THROW(sgd.init_from(path));  // the weights alone
}

}  // namespace
