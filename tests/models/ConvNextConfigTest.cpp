// configs/convnext_tiny.json: torchvision's state_dict keys (its parameter count is pinned in
// ConfigsTest), and 5 training steps of it on the CPU at a small resolution.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::models {
namespace {

const std::filesystem::path kConvNextTiny =
    std::filesystem::path(VDNN_SOURCE_DIR) / "configs" / "convnext_tiny.json";

// torchvision.models.convnext_tiny()'s state_dict keys, written out from its module names.
std::set<std::string> torchvision_convnext_tiny_keys() {
  std::set<std::string> keys;
  const auto weight_and_bias = [&](const std::string& module) {
    keys.insert(module + ".weight");
    keys.insert(module + ".bias");
  };
  weight_and_bias("features.0.0");  // stem conv
  weight_and_bias("features.0.1");  // its LayerNorm2d
  const int depths[] = {3, 3, 9, 3};
  for (int s = 0; s < 4; ++s) {
    const std::string stage = "features." + std::to_string(2 * s + 1);
    if (s > 0) {  // downsampling: LayerNorm2d, then a 2x2 stride-2 conv
      const std::string down = "features." + std::to_string(2 * s);
      weight_and_bias(down + ".0");
      weight_and_bias(down + ".1");
    }
    for (int b = 0; b < depths[s]; ++b) {
      const std::string cnblock = stage + "." + std::to_string(b);
      for (const char* m : {".block.0", ".block.2", ".block.3", ".block.5"}) {
        weight_and_bias(cnblock + m);
      }
      keys.insert(cnblock + ".layer_scale");
    }
  }
  weight_and_bias("classifier.0");  // LayerNorm2d
  weight_and_bias("classifier.2");  // Linear
  return keys;
}

TEST(ConvNextTinyConfig, TensorNamesAreTorchvisions) {
  const graph::Graph g = graph::Graph::build(load_network(kConvNextTiny.string()), 2);
  std::set<std::string> keys;
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
    for (const layers::ParamSpec& p : layers::param_specs(g.node(id).spec, g.input_shapes(id))) {
      keys.insert(g.node(id).name + "." + p.name);
    }
  }
  EXPECT_EQ(keys.size(), 182u);  // len(torchvision.models.convnext_tiny().state_dict())
  EXPECT_EQ(keys, torchvision_convnext_tiny_keys());  // the count is pinned in ConfigsTest
}

TEST(ConvNextTinyConfig, TrainsFiveStepsOnTheCpuAtASmallResolution) {
  graph::NetworkDef def = load_network(kConvNextTiny.string());
  def.height = def.width = 32;  // 8 x 8 after the stem, 1 x 1 in the last stage
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

}  // namespace
}  // namespace vdnn::models
