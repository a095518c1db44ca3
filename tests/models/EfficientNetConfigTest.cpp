// configs/efficientnet_b0.json and efficientnet_b7.json and their generator (`vdnn gen
// efficientnet`): torchvision's state_dict keys, the shipped files are the generator's output,
// torchvision's rounding, schedule, batch norm and parameter counts, the option rules, and
// 5 training steps of each on the CPU at a small resolution. Counts of the files: ConfigsTest.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "models/EfficientNetGenerator.hpp"
#include "runtime/Error.hpp"
#include "tests/models/ZooChecks.hpp"

namespace vdnn::models {
namespace {

using Stages = std::vector<std::int64_t>;

const std::filesystem::path kConfigDir = std::filesystem::path(VDNN_SOURCE_DIR) / "configs";

graph::NetworkDef preset_network(const std::string& preset) {
  return parse_network(generate_efficientnet_config(efficientnet_preset(preset)), preset);
}

graph::Graph shipped(const std::string& config) {
  return graph::Graph::build(load_network((kConfigDir / config).string()), 2);
}

const graph::LayerDef& layer_named(const graph::NetworkDef& def, const std::string& name) {
  const auto it = std::find_if(def.layers.begin(), def.layers.end(),
                               [&](const graph::LayerDef& l) { return l.name == name; });
  if (it == def.layers.end()) throw std::runtime_error("no layer " + name);
  return *it;
}

// torchvision.models.efficientnet_bN()'s state_dict keys, written out from its module names for
// `blocks` MBConvs per stage (the first stage's expand ratio is 1: no expand conv).
std::set<std::string> torchvision_efficientnet_keys(const Stages& blocks) {
  std::set<std::string> keys;
  const auto conv_bn = [&](const std::string& module) {
    test::add_conv(keys, module + ".0");
    test::add_bn(keys, module + ".1");
  };
  conv_bn("features.0");
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    for (std::int64_t b = 0; b < blocks[s]; ++b) {
      const std::string block =
          "features." + std::to_string(s + 1) + "." + std::to_string(b) + ".block.";
      int index = 0;
      if (s > 0) conv_bn(block + std::to_string(index++));  // expand
      conv_bn(block + std::to_string(index++));             // depthwise
      const std::string se = block + std::to_string(index++);
      test::add_weight_and_bias(keys, se + ".fc1");
      test::add_weight_and_bias(keys, se + ".fc2");
      conv_bn(block + std::to_string(index));  // project
    }
  }
  conv_bn("features.8");
  test::add_weight_and_bias(keys, "classifier.1");
  return keys;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(EfficientNetConfig, TensorNamesAreTorchvisions) {
  const std::set<std::string> b0 = test::state_dict_keys(shipped("efficientnet_b0.json"));
  EXPECT_EQ(b0.size(), 360u);  // len(torchvision.models.efficientnet_b0().state_dict())
  EXPECT_EQ(b0, torchvision_efficientnet_keys({1, 2, 2, 3, 3, 4, 1}));
  const std::set<std::string> b7 = test::state_dict_keys(shipped("efficientnet_b7.json"));
  EXPECT_EQ(b7.size(), 1200u);
  EXPECT_EQ(b7, torchvision_efficientnet_keys({4, 7, 7, 10, 10, 13, 4}));  // 55 blocks
}

TEST(EfficientNetConfig, ShippedConfigsAreWhatVdnnGenWrites) {
  for (const char* preset : {"b0", "b7"}) {
    EXPECT_EQ(read_text(kConfigDir / ("efficientnet_" + std::string(preset) + ".json")),
              generate_efficientnet_config(efficientnet_preset(preset)))
        << preset;
  }
}

TEST(EfficientNetGenerator, PresetsHaveTorchvisionsParameterCounts) {
  // torchvision's EfficientNet_BN_Weights meta "num_params"; b0 and b7 through the shipped files.
  const std::vector<std::pair<const char*, std::int64_t>> counts = {
      {"b1", 7'794'184},  {"b2", 9'109'994},  {"b3", 12'233'232},
      {"b4", 19'341'616}, {"b5", 30'389'784}, {"b6", 43'040'704}};
  for (const auto& [preset, count] : counts) {
    EXPECT_EQ(graph::Graph::build(preset_network(preset), 1).trainable_parameters(), count)
        << preset;
  }
  EXPECT_EQ(efficientnet_preset("b7").resolution, 600);
  EXPECT_EQ(efficientnet_preset("b2").resolution, 288);  // its weights' crop, not the paper's 260
}

TEST(EfficientNetGenerator, ChannelsAndDepthsRoundAsTorchvision) {
  EXPECT_EQ(efficientnet_channels(32, 2.0), 64);
  EXPECT_EQ(efficientnet_channels(24, 1.4), 32);   // 33.6 rounds down to a multiple of 8
  EXPECT_EQ(efficientnet_channels(40, 1.1), 48);   // 44 rounds half up
  EXPECT_EQ(efficientnet_channels(119, 0.1), 16);  // 8 < 90% of 11.9: one more step
  EXPECT_EQ(efficientnet_channels(32, 0.1), 8);    // at least 8
  EXPECT_EQ(efficientnet_stages(1.0), (Stages{1, 2, 2, 3, 3, 4, 1}));
  EXPECT_EQ(efficientnet_stages(1.1), (Stages{2, 3, 3, 4, 4, 5, 2}));
  EXPECT_EQ(efficientnet_stages(3.1), (Stages{4, 7, 7, 10, 10, 13, 4}));
}

TEST(EfficientNetGenerator, StochasticDepthGrowsLinearlyOverTheResidualBlocks) {
  const graph::NetworkDef b0 = preset_network("b0");
  const auto p = [&](const std::string& block) {
    return std::get<layers::StochasticDepthSpec>(layer_named(b0, block + ".stochastic_depth").spec)
        .p;
  };
  EXPECT_EQ(p("features.2.1"), 0.2 * 2 / 16);  // block 2 of 16, torchvision's float exactly
  EXPECT_EQ(p("features.6.3"), 0.2 * 14 / 16);
  // Only blocks with stride 1 and equal channels have the residual: 16 blocks less 7 stage heads.
  const auto drops = std::count_if(b0.layers.begin(), b0.layers.end(), [](const auto& l) {
    return std::holds_alternative<layers::StochasticDepthSpec>(l.spec);
  });
  EXPECT_EQ(drops, 9);
  EXPECT_THROW(layer_named(b0, "features.7.0.stochastic_depth"), std::runtime_error);
}

TEST(EfficientNetGenerator, BatchNormAndDropoutFollowThePreset) {
  const auto bn = [](const graph::NetworkDef& def) {
    return std::get<layers::BatchNorm2dSpec>(layer_named(def, "features.8.1").spec);
  };
  const auto dropout = [](const graph::NetworkDef& def) {
    return std::get<layers::DropoutSpec>(layer_named(def, "classifier.0").spec).p;
  };
  const graph::NetworkDef b0 = preset_network("b0");
  EXPECT_EQ(bn(b0).eps, 1e-5);
  EXPECT_EQ(bn(b0).momentum, 0.1);
  EXPECT_EQ(dropout(b0), 0.2);
  const graph::NetworkDef b7 = preset_network("b7");  // ported from TensorFlow
  EXPECT_EQ(bn(b7).eps, 1e-3);
  EXPECT_EQ(bn(b7).momentum, 0.01);
  EXPECT_EQ(dropout(b7), 0.5);
  EXPECT_EQ(b7.height, 600);
}

TEST(EfficientNetGenerator, AnyWidthDepthAndResolution) {
  EfficientNetOptions o;
  o.width = 1.2;
  o.depth = 1.4;
  o.resolution = 100;
  o.num_classes = 10;
  const graph::NetworkDef def = parse_network(generate_efficientnet_config(o), "custom");
  EXPECT_EQ(def.name, "efficientnet_w1p2_d1p4");
  EXPECT_EQ(def.height, 100);
  const graph::Graph g = graph::Graph::build(def, 2);
  EXPECT_EQ(g.node(g.logits_node()).output_shape, (runtime::Shape{2, 10}));
  // torchvision's B3 is width 1.2, depth 1.4: the same layers, a 10-class classifier.
  EXPECT_EQ(g.trainable_parameters(), 12'233'232 - (1536 + 1) * 990);
}

TEST(EfficientNetGenerator, InvalidOptionsNameTheRule) {
  const auto message = [](EfficientNetOptions o) {
    try {
      generate_efficientnet_config(o);
    } catch (const runtime::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto with = [](auto member, auto value) {
    EfficientNetOptions o;
    o.*member = value;
    return o;
  };
  using O = EfficientNetOptions;
  EXPECT_NE(message(with(&O::width, 0.0)).find("width must be in (0, 8]; 0.0 is not"),
            std::string::npos);
  EXPECT_NE(message(with(&O::width, std::nan(""))).find("width must be"), std::string::npos);
  EXPECT_NE(message(with(&O::depth, -1.0)).find("depth must be in (0, 8]"), std::string::npos);
  EXPECT_NE(message(with(&O::depth, 8.5)).find("8.5 is not"), std::string::npos);
  EXPECT_NE(message(with(&O::resolution, std::int64_t{31})).find("[32, 2048]"), std::string::npos);
  EXPECT_NE(message(with(&O::resolution, std::int64_t{4096})).find("4096 is not"),
            std::string::npos);
  EXPECT_NE(message(with(&O::dropout, 1.0)).find("dropout must be in [0, 1)"), std::string::npos);
  EXPECT_NE(message(with(&O::num_classes, std::int64_t{1})).find("num_classes"), std::string::npos);
  EXPECT_EQ(message(EfficientNetOptions{}), "no error");
  EXPECT_THROW(efficientnet_preset("b8"), runtime::InvalidArgument);
  EfficientNetOptions unknown;
  unknown.preset = "b8";
  EXPECT_NE(message(unknown).find("presets: b0, b1"), std::string::npos);
}

TEST(EfficientNetConfig, B0TrainsFiveStepsOnTheCpuAtASmallResolution) {
  // 32 x 32: 16 x 16 after the stem, 1 x 1 in the last stages.
  test::expect_trains_on_the_cpu("efficientnet_b0.json", 32, 2, 5);
}

TEST(EfficientNetConfig, B7TrainsFiveStepsOnTheCpuAtASmallResolution) {
  // 64 x 64, 2 x 2 in the last stages: batch norms over 2 values a channel (1 x 1 maps of 2
  // samples) would blow the gradients up through its 55 blocks, as they would PyTorch's.
  test::expect_trains_on_the_cpu("efficientnet_b7.json", 64, 2, 5);
}

}  // namespace
}  // namespace vdnn::models
