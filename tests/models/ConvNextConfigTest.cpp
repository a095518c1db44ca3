// configs/convnext_tiny.json and convnext_base.json: torchvision's state_dict keys (their parameter
// counts are pinned in ConfigsTest; ZooConfigTrainingTest trains them).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"

namespace vdnn::models {
namespace {

const std::filesystem::path kConfigDir = std::filesystem::path(VDNN_SOURCE_DIR) / "configs";

// The state_dict keys of torchvision's ConvNeXt with `depths` blocks per stage, written out from
// its module names.
std::set<std::string> torchvision_convnext_keys(const std::vector<int>& depths) {
  std::set<std::string> keys;
  const auto weight_and_bias = [&](const std::string& module) {
    keys.insert(module + ".weight");
    keys.insert(module + ".bias");
  };
  weight_and_bias("features.0.0");  // stem conv
  weight_and_bias("features.0.1");  // its LayerNorm2d
  for (int s = 0; s < static_cast<int>(depths.size()); ++s) {
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

// The parameter and buffer names of the config's graph, as a checkpoint holds them.
std::set<std::string> tensor_names(const std::string& config) {
  const graph::Graph g = graph::Graph::build(load_network((kConfigDir / config).string()), 2);
  std::set<std::string> keys;
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
    for (const layers::ParamSpec& p : layers::param_specs(g.node(id).spec, g.input_shapes(id))) {
      keys.insert(g.node(id).name + "." + p.name);
    }
  }
  return keys;
}

TEST(ConvNextConfig, TinyTensorNamesAreTorchvisions) {
  const std::set<std::string> keys = tensor_names("convnext_tiny.json");
  EXPECT_EQ(keys.size(), 182u);  // len(torchvision.models.convnext_tiny().state_dict())
  EXPECT_EQ(keys, torchvision_convnext_keys({3, 3, 9, 3}));
}

TEST(ConvNextConfig, BaseTensorNamesAreTorchvisions) {
  const std::set<std::string> keys = tensor_names("convnext_base.json");
  EXPECT_EQ(keys.size(), 344u);  // len(torchvision.models.convnext_base().state_dict())
  EXPECT_EQ(keys, torchvision_convnext_keys({3, 3, 27, 3}));
}

}  // namespace
}  // namespace vdnn::models
