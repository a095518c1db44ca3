// Issue 29's zoo configs train: 5 steps of each on the CPU at batch 2 and a small resolution, every
// loss finite.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::models {
namespace {

class ZooConfigTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooConfigTraining, TrainsFiveStepsOnTheCpuAtASmallResolution) {
  graph::NetworkDef def = load_network(
      (std::filesystem::path(VDNN_SOURCE_DIR) / "configs" / (GetParam() + ".json")).string());
  def.height = def.width = 32;  // 1 x 1 after the last stage of these stride-32 networks
  TrainerOptions options;
  options.data = "synthetic";
  options.session.executor.seed = 5;
  options.schedule.base_lr = 0.01;
  options.schedule.total_steps = 5;
  Trainer trainer(def, 2, options);
  for (int step = 0; step < 5; ++step) {
    const double loss = trainer.step().loss;
    EXPECT_TRUE(std::isfinite(loss)) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(Torchvision, ZooConfigTraining,
                         ::testing::Values("convnext_tiny", "convnext_base", "regnet_y_16gf"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace vdnn::models
