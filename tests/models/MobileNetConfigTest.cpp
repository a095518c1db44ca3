// configs/mobilenet_v2.json and mobilenet_v3_large.json: torchvision's state_dict keys, the
// activations where torchvision has them, and 5 training steps of each on the CPU at a small
// resolution. Their parameter counts are pinned in ConfigsTest.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "tests/models/ZooChecks.hpp"

namespace vdnn::models {
namespace {

graph::Graph shipped(const std::string& config) {
  return graph::Graph::build(
      load_network((std::filesystem::path(VDNN_SOURCE_DIR) / "configs" / config).string()), 2);
}

// Conv2dNormActivation "<module>": conv "<module>.0", batch norm "<module>.1".
void add_conv_bn(std::set<std::string>& keys, const std::string& module) {
  test::add_conv(keys, module + ".0");
  test::add_bn(keys, module + ".1");
}

// torchvision.models.mobilenet_v2()'s state_dict keys, written out from its module names: 17
// InvertedResidual blocks features.1-17, the first without the expand conv.
std::set<std::string> torchvision_mobilenet_v2_keys() {
  std::set<std::string> keys;
  add_conv_bn(keys, "features.0");
  for (int b = 1; b <= 17; ++b) {
    const std::string conv = "features." + std::to_string(b) + ".conv.";
    int index = 0;
    if (b > 1) add_conv_bn(keys, conv + std::to_string(index++));  // expand
    add_conv_bn(keys, conv + std::to_string(index++));             // depthwise
    test::add_conv(keys, conv + std::to_string(index++));          // linear projection
    test::add_bn(keys, conv + std::to_string(index));
  }
  add_conv_bn(keys, "features.18");
  test::add_weight_and_bias(keys, "classifier.1");
  return keys;
}

// torchvision.models.mobilenet_v3_large()'s state_dict keys: 15 blocks features.1-15, the first
// without the expand conv, squeeze-excitation (fc1, fc2) in blocks 4-6 and 11-15.
std::set<std::string> torchvision_mobilenet_v3_large_keys() {
  const std::set<int> with_se = {4, 5, 6, 11, 12, 13, 14, 15};
  std::set<std::string> keys;
  add_conv_bn(keys, "features.0");
  for (int b = 1; b <= 15; ++b) {
    const std::string block = "features." + std::to_string(b) + ".block.";
    int index = 0;
    if (b > 1) add_conv_bn(keys, block + std::to_string(index++));  // expand
    add_conv_bn(keys, block + std::to_string(index++));             // depthwise
    if (with_se.count(b) != 0) {
      const std::string se = block + std::to_string(index++);
      test::add_weight_and_bias(keys, se + ".fc1");
      test::add_weight_and_bias(keys, se + ".fc2");
    }
    add_conv_bn(keys, block + std::to_string(index));  // projection
  }
  add_conv_bn(keys, "features.16");
  test::add_weight_and_bias(keys, "classifier.0");
  test::add_weight_and_bias(keys, "classifier.3");
  return keys;
}

std::string type_of(const graph::Graph& g, const std::string& name) {
  const auto it = std::find_if(g.nodes().begin(), g.nodes().end(),
                               [&](const graph::Node& n) { return n.name == name; });
  return it == g.nodes().end() ? "missing" : std::string(layers::type_name(it->spec));
}

TEST(MobileNetConfig, TensorNamesAreTorchvisions) {
  const std::set<std::string> v2 = test::state_dict_keys(shipped("mobilenet_v2.json"));
  EXPECT_EQ(v2.size(), 314u);  // len(torchvision.models.mobilenet_v2().state_dict())
  EXPECT_EQ(v2, torchvision_mobilenet_v2_keys());
  const std::set<std::string> v3 = test::state_dict_keys(shipped("mobilenet_v3_large.json"));
  EXPECT_EQ(v3.size(), 312u);  // len(torchvision.models.mobilenet_v3_large().state_dict())
  EXPECT_EQ(v3, torchvision_mobilenet_v3_large_keys());
}

TEST(MobileNetConfig, ActivationsAreTorchvisions) {
  const graph::Graph v2 = shipped("mobilenet_v2.json");
  EXPECT_EQ(type_of(v2, "features.0.2"), "relu6");
  EXPECT_EQ(type_of(v2, "features.2.conv.1.2"), "relu6");
  EXPECT_EQ(type_of(v2, "features.3.add"), "add");      // 24 -> 24, stride 1
  EXPECT_EQ(type_of(v2, "features.4.add"), "missing");  // 24 -> 32, stride 2
  const graph::Graph v3 = shipped("mobilenet_v3_large.json");
  EXPECT_EQ(type_of(v3, "features.0.2"), "hardswish");
  EXPECT_EQ(type_of(v3, "features.4.block.1.2"), "relu");  // "RE" blocks 1-6
  EXPECT_EQ(type_of(v3, "features.4.block.2.activation"), "relu");
  EXPECT_EQ(type_of(v3, "features.4.block.2.scale_activation"), "hardsigmoid");
  EXPECT_EQ(type_of(v3, "features.4.block.2"), "mul");
  EXPECT_EQ(type_of(v3, "features.7.block.1.2"), "hardswish");  // "HS" blocks 7-15
  EXPECT_EQ(type_of(v3, "classifier.1"), "hardswish");
}

TEST(MobileNetConfig, TrainsFiveStepsOnTheCpuAtASmallResolution) {
  test::expect_trains_on_the_cpu("mobilenet_v2.json", 32, 2, 5);
  test::expect_trains_on_the_cpu("mobilenet_v3_large.json", 32, 2, 5);
}

}  // namespace
}  // namespace vdnn::models
