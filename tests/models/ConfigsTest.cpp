// The shipped configs: each one builds and plans under every policy, parameter counts and ResNet
// tensor names match the reference implementations, depths match the papers, the generated ones
// are exactly what `vdnn gen` writes, and the schema knows every layer type. Also the zoo
// generator's depth rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Planner.hpp"
#include "models/ConfigLoader.hpp"
#include "models/ZooGenerator.hpp"
#include "runtime/Error.hpp"
#include "tests/models/ZooChecks.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;
using test::add_bn;
using test::add_conv;
using test::state_dict_keys;

const fs::path kConfigDir = fs::path(VDNN_SOURCE_DIR) / "configs";

graph::Graph build(const std::string& config) {
  return graph::Graph::build(load_network((kConfigDir / config).string()), 2);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

graph::Graph generated(ZooFamily family, ZooInput input, std::int64_t depth) {
  return graph::Graph::build(parse_network(generate_zoo_config(family, input, depth), "gen"), 2);
}

// Plans one step of `g` under `policy` as `vdnn plan` does (CPU workspaces, no budget).
graph::Plan plan(const graph::Graph& g, graph::Policy policy, std::uint64_t budget = 0) {
  graph::PlanRequest request;
  request.policy = policy;
  request.budget_bytes = budget;
  request.workspace = graph::LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  return graph::make_plan(g, request);
}

// Weighted layers on the main path, as papers count depth: convs and linears, not shortcuts.
std::int64_t depth(const graph::Graph& g) {
  return std::count_if(g.nodes().begin(), g.nodes().end(), [](const graph::Node& n) {
    const bool weighted = std::holds_alternative<layers::Conv2dSpec>(n.spec) ||
                          std::holds_alternative<layers::LinearSpec>(n.spec);
    return weighted && n.name.find("downsample") == std::string::npos;
  });
}

TEST(Configs, EveryConfigLoadsAndBuilds) {
  int count = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kConfigDir)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const graph::NetworkDef def = load_network(entry.path().string());
    EXPECT_EQ(def.name + ".json", entry.path().filename().string());
    const graph::Graph g = graph::Graph::build(def, 2);
    EXPECT_EQ(g.node(g.logits_node()).output_shape, (runtime::Shape{2, def.num_classes}));
    ++count;
  }
  EXPECT_EQ(count, 20);
}

TEST(Configs, EveryConfigPlansUnderEveryPolicy) {
  for (const fs::directory_entry& entry : fs::directory_iterator(kConfigDir)) {
    if (entry.path().extension() != ".json") continue;
    const graph::Graph g = graph::Graph::build(load_network(entry.path().string()), 2);
    graph::PlanRequest request;
    request.workspace = graph::LayerSet(g, layers::Backend::Cpu, {}).workspaces();
    for (const std::string& policy : graph::policy_names()) {
      SCOPED_TRACE(entry.path().filename().string() + " under " + policy);
      request.policy = graph::parse_policy(policy);
      const graph::Plan plan = graph::make_plan(g, request);
      EXPECT_FALSE(plan.actions.empty());
    }
  }
}

TEST(Configs, TorchvisionParameterCounts) {
  EXPECT_EQ(build("alexnet.json").trainable_parameters(), 61'100'840);
  EXPECT_EQ(build("vgg16.json").trainable_parameters(), 138'357'544);
  EXPECT_EQ(build("googlenet.json").trainable_parameters(), 6'624'904);  // aux_logits=False
  EXPECT_EQ(build("resnet18.json").trainable_parameters(), 11'689'512);
  EXPECT_EQ(build("resnet50.json").trainable_parameters(), 25'557'032);
  EXPECT_EQ(build("resnet152.json").trainable_parameters(), 60'192'808);
  EXPECT_EQ(build("densenet121.json").trainable_parameters(), 7'978'856);
  EXPECT_EQ(build("convnext_tiny.json").trainable_parameters(), 28'589'128);
}

// The mobile and compound-scaled networks (issue 29): torchvision's num_params of each.
TEST(Configs, TorchvisionMobileNetAndEfficientNetParameterCounts) {
  EXPECT_EQ(build("mobilenet_v2.json").trainable_parameters(), 3'504'872);
  EXPECT_EQ(build("mobilenet_v3_large.json").trainable_parameters(), 5'483'032);
  EXPECT_EQ(build("efficientnet_b0.json").trainable_parameters(), 5'288'548);
  EXPECT_EQ(build("efficientnet_b7.json").trainable_parameters(), 66'347'960);
}

// Issue 29's ConvNeXt and RegNet (written by tools/torchvision_configs.py): torchvision's counts.
TEST(Configs, TorchvisionConvNextAndRegNetParameterCounts) {
  EXPECT_EQ(build("convnext_base.json").trainable_parameters(), 88'591'464);
  EXPECT_EQ(build("regnet_y_16gf.json").trainable_parameters(), 83'590'140);
}

TEST(Configs, DeepImageNetNetworksMatchThePapers) {
  const graph::Graph resnet1001 = build("resnet1001.json");
  EXPECT_EQ(depth(resnet1001), 1001);
  EXPECT_EQ(resnet1001.trainable_parameters(), 377'754'408);  // counted by vdnn
  const graph::Graph densenet264 = build("densenet264.json");
  EXPECT_EQ(depth(densenet264), 265);  // 2 * (6 + 12 + 64 + 48) + 5: "264" is the paper's name
  EXPECT_EQ(densenet264.node(densenet264.logits_node() - 1).output_shape.c(), 2688);
  EXPECT_EQ(densenet264.trainable_parameters(), 33'337'704);  // "33.3M" is often quoted
}

TEST(Configs, GeneratedConfigsAreWhatVdnnGenWrites) {
  EXPECT_EQ(read_text(kConfigDir / "resnet1001-cifar.json"),
            generate_zoo_config(ZooFamily::ResNet, ZooInput::Cifar, 1001));
  EXPECT_EQ(read_text(kConfigDir / "resnet1001.json"),
            generate_zoo_config(ZooFamily::ResNet, ZooInput::ImageNet, 1001));
  EXPECT_EQ(read_text(kConfigDir / "densenet121.json"),
            generate_zoo_config(ZooFamily::DenseNet, ZooInput::ImageNet, 121));
  EXPECT_EQ(read_text(kConfigDir / "densenet264.json"),
            generate_zoo_config(ZooFamily::DenseNet, ZooInput::ImageNet, 264));
}

TEST(Configs, CifarNetworksMatchThePapers) {
  const graph::Graph resnet20 = build("resnet20-cifar.json");
  EXPECT_EQ(depth(resnet20), 20);
  EXPECT_EQ(resnet20.trainable_parameters(), 272'474);  // "0.27M", with projection shortcuts
  const graph::Graph densenet = build("densenet40-cifar.json");
  EXPECT_EQ(depth(densenet), 40);
  EXPECT_EQ(densenet.node(densenet.logits_node() - 1).output_shape.c(), 448);  // 16 + 3 * 12 * 12
  EXPECT_EQ(densenet.trainable_parameters(), 1'019'722);                       // "1.0M"
  const graph::Graph resnet1001 = build("resnet1001-cifar.json");
  EXPECT_EQ(depth(resnet1001), 1001);
  EXPECT_EQ(resnet1001.trainable_parameters(), 10'327'706);  // "10.2M"; counted independently
}

TEST(ZooGenerator, StagesFollowTheDocumentedRules) {
  using Stages = std::vector<std::int64_t>;
  EXPECT_EQ(zoo_stages(ZooFamily::ResNet, ZooInput::Cifar, 1001), (Stages{111, 111, 111}));
  EXPECT_EQ(zoo_stages(ZooFamily::ResNet, ZooInput::Cifar, 5000), (Stages{556, 555, 555}));
  EXPECT_EQ(zoo_stages(ZooFamily::ResNet, ZooInput::ImageNet, 152), (Stages{3, 8, 36, 3}));
  EXPECT_EQ(zoo_stages(ZooFamily::ResNet, ZooInput::ImageNet, 200), (Stages{3, 24, 36, 3}));
  EXPECT_EQ(zoo_stages(ZooFamily::ResNet, ZooInput::ImageNet, 1001), (Stages{20, 53, 240, 20}));
  EXPECT_EQ(zoo_stages(ZooFamily::ResNet, ZooInput::ImageNet, 14), (Stages{1, 1, 1, 1}));
  EXPECT_EQ(zoo_stages(ZooFamily::DenseNet, ZooInput::Cifar, 100), (Stages{16, 16, 16}));
  EXPECT_EQ(zoo_stages(ZooFamily::DenseNet, ZooInput::ImageNet, 121), (Stages{6, 12, 24, 16}));
  EXPECT_EQ(zoo_stages(ZooFamily::DenseNet, ZooInput::ImageNet, 45), (Stages{6, 12, 1, 1}));
}

TEST(ZooGenerator, GeneratedNetworksHaveTheRequestedDepth) {
  for (const auto& [family, input, requested] :
       std::vector<std::tuple<ZooFamily, ZooInput, std::int64_t>>{
           {ZooFamily::ResNet, ZooInput::Cifar, 11},
           {ZooFamily::ResNet, ZooInput::Cifar, 164},
           {ZooFamily::ResNet, ZooInput::ImageNet, 14},
           {ZooFamily::ResNet, ZooInput::ImageNet, 50},
           {ZooFamily::DenseNet, ZooInput::Cifar, 10},
           {ZooFamily::DenseNet, ZooInput::ImageNet, 45},
           {ZooFamily::DenseNet, ZooInput::ImageNet, 169}}) {
    SCOPED_TRACE(std::to_string(requested));
    const graph::Graph g = generated(family, input, requested);
    EXPECT_EQ(depth(g), requested);
    EXPECT_EQ(g.node(g.logits_node()).output_shape.c(), input == ZooInput::Cifar ? 10 : 1000);
  }
}

TEST(ZooGenerator, MatchesPublishedCounts) {
  // bamos/densenet.pytorch reports 769,162 for DenseNet-BC (L=100, k=12), the paper "0.8M".
  EXPECT_EQ(generated(ZooFamily::DenseNet, ZooInput::Cifar, 100).trainable_parameters(), 769'162);
  EXPECT_EQ(generated(ZooFamily::ResNet, ZooInput::Cifar, 1001).trainable_parameters(),
            build("resnet1001-cifar.json").trainable_parameters());
}

TEST(ZooGenerator, ResNet2000PlansUnderVdnnAll) {
  // 2000 = 3 * 666 + 2: 222 blocks per stage.
  const graph::Graph g = generated(ZooFamily::ResNet, ZooInput::Cifar, 2000);
  EXPECT_EQ(depth(g), 2000);
  const graph::Plan all = plan(g, graph::Policy::VdnnAll);
  const graph::Plan baseline = plan(g, graph::Policy::Baseline);
  EXPECT_LT(all.predicted_peak, baseline.predicted_peak);
  // Under a budget between the two, the planner keeps what fits (a bisection over thousands of
  // maps: seconds, where trying them one by one took minutes).
  const std::uint64_t budget = (all.predicted_peak + baseline.predicted_peak) / 2;
  const graph::Plan kept = plan(g, graph::Policy::VdnnAll, budget);
  EXPECT_LE(kept.predicted_peak, budget);
  EXPECT_GT(kept.predicted_peak, all.predicted_peak);
  EXPECT_LT(kept.offloaded_bytes, all.offloaded_bytes);
}

TEST(ZooGenerator, InvalidDepthsNameTheRule) {
  const auto message = [](ZooFamily family, ZooInput input, std::int64_t depth) {
    try {
      generate_zoo_config(family, input, depth);
    } catch (const runtime::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(ZooFamily::ResNet, ZooInput::Cifar, 1000).find("3b+2"), std::string::npos);
  EXPECT_NE(message(ZooFamily::ResNet, ZooInput::Cifar, 1000).find("1000 is not"),
            std::string::npos);
  EXPECT_NE(message(ZooFamily::ResNet, ZooInput::Cifar, 8).find("b >= 3"), std::string::npos);
  EXPECT_NE(message(ZooFamily::ResNet, ZooInput::ImageNet, 11).find("b >= 4"), std::string::npos);
  EXPECT_NE(message(ZooFamily::DenseNet, ZooInput::Cifar, 41).find("6n+4"), std::string::npos);
  EXPECT_NE(message(ZooFamily::DenseNet, ZooInput::ImageNet, 122).find("2b+5"), std::string::npos);
  EXPECT_NE(message(ZooFamily::ResNet, ZooInput::Cifar, -7).find("-7 is not"), std::string::npos);
}

TEST(Configs, ImageNetFeatureMapShapes) {
  const auto shape_of = [](const graph::Graph& g, const std::string& name) {
    for (const graph::Node& n : g.nodes()) {
      if (n.name == name) return n.output_shape;
    }
    return runtime::Shape{};
  };
  const graph::Graph resnet50 = build("resnet50.json");
  EXPECT_EQ(shape_of(resnet50, "maxpool"), runtime::Shape::nchw(2, 64, 56, 56));
  EXPECT_EQ(shape_of(resnet50, "layer1.0.relu3"), runtime::Shape::nchw(2, 256, 56, 56));
  EXPECT_EQ(shape_of(resnet50, "layer4.2.relu3"), runtime::Shape::nchw(2, 2048, 7, 7));
  // torchvision's GoogLeNet pools in ceil mode: 112 -> 56 -> 28 -> 14 -> 7.
  const graph::Graph googlenet = build("googlenet.json");
  EXPECT_EQ(shape_of(googlenet, "pool1"), runtime::Shape::nchw(2, 64, 56, 56));
  EXPECT_EQ(shape_of(googlenet, "pool2"), runtime::Shape::nchw(2, 192, 28, 28));
  EXPECT_EQ(shape_of(googlenet, "inception3b.0.concat"), runtime::Shape::nchw(2, 480, 28, 28));
  EXPECT_EQ(shape_of(googlenet, "pool3"), runtime::Shape::nchw(2, 480, 14, 14));
  EXPECT_EQ(shape_of(googlenet, "pool4"), runtime::Shape::nchw(2, 832, 7, 7));
  EXPECT_EQ(shape_of(googlenet, "inception5b.0.concat"), runtime::Shape::nchw(2, 1024, 7, 7));
}

TEST(Configs, ExpandedNamesAreDeterministic) {
  const graph::NetworkDef a = load_network((kConfigDir / "resnet1001-cifar.json").string());
  const graph::NetworkDef b = load_network((kConfigDir / "resnet1001-cifar.json").string());
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (std::size_t i = 0; i < a.layers.size(); ++i) EXPECT_EQ(a.layers[i].name, b.layers[i].name);
  const auto conv2 = std::find_if(a.layers.begin(), a.layers.end(), [](const graph::LayerDef& l) {
    return l.name == "layer2.17.conv2";
  });
  ASSERT_NE(conv2, a.layers.end());
  EXPECT_EQ(conv2->inputs, std::vector<std::string>{"layer2.17.relu2"});
  EXPECT_NE(conv2->origin.find("resnet1001-cifar.json at /templates/preact_bottleneck/5 "
                               "(expanded as layer2.17.conv2)"),
            std::string::npos)
      << conv2->origin;
}

// torchvision.models.resnet.ResNet's state_dict keys, written out from its module names: `blocks`
// per stage of BasicBlock (2 convs) or Bottleneck (3), downsample = Sequential(conv1x1, BN) in the
// first block of every stage but, where `plain_first_stage`, the first.
std::set<std::string> torchvision_resnet_keys(const std::vector<int>& blocks, int convs,
                                              bool plain_first_stage) {
  std::set<std::string> keys;
  add_conv(keys, "conv1");
  add_bn(keys, "bn1");
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    for (int b = 0; b < blocks[s]; ++b) {
      const std::string block = "layer" + std::to_string(s + 1) + "." + std::to_string(b);
      for (int c = 1; c <= convs; ++c) {
        add_conv(keys, block + ".conv" + std::to_string(c));
        add_bn(keys, block + ".bn" + std::to_string(c));
      }
      if (b == 0 && !(s == 0 && plain_first_stage)) {
        add_conv(keys, block + ".downsample.0");
        add_bn(keys, block + ".downsample.1");
      }
    }
  }
  keys.insert("fc.weight");
  keys.insert("fc.bias");
  return keys;
}

TEST(Configs, ResNetTensorNamesAreTorchvisions) {
  EXPECT_EQ(state_dict_keys(build("resnet18.json")),
            torchvision_resnet_keys({2, 2, 2, 2}, 2, true));
  const std::set<std::string> resnet50 = state_dict_keys(build("resnet50.json"));
  EXPECT_EQ(resnet50.size(), 320u);  // len(torchvision.models.resnet50().state_dict())
  EXPECT_EQ(resnet50, torchvision_resnet_keys({3, 4, 6, 3}, 3, false));
  EXPECT_EQ(state_dict_keys(build("resnet152.json")),
            torchvision_resnet_keys({3, 8, 36, 3}, 3, false));
  // ResNet-20 is torchvision's ResNet class with BasicBlocks, 3 stages and a 16-channel stem.
  EXPECT_EQ(state_dict_keys(build("resnet20-cifar.json")),
            torchvision_resnet_keys({3, 3, 3}, 2, true));
}

TEST(ZooGenerator, PreactivationResNetNamesAreThoseOfItsPyTorchPort) {
  // bearpaw/pytorch-classification preresnet(depth=11, block_name="Bottleneck"): a conv1 stem,
  // blocks bn1 conv1 bn2 conv2 bn3 conv3 and downsample = Sequential(conv1x1) in each first block,
  // then bn and fc.
  std::set<std::string> expected;
  add_conv(expected, "conv1");
  for (int s = 1; s <= 3; ++s) {
    const std::string block = "layer" + std::to_string(s) + ".0";
    for (int c = 1; c <= 3; ++c) {
      add_bn(expected, block + ".bn" + std::to_string(c));
      add_conv(expected, block + ".conv" + std::to_string(c));
    }
    add_conv(expected, block + ".downsample.0");
  }
  add_bn(expected, "bn");
  expected.insert("fc.weight");
  expected.insert("fc.bias");
  EXPECT_EQ(state_dict_keys(generated(ZooFamily::ResNet, ZooInput::Cifar, 11)), expected);
}

TEST(Configs, SchemaKnowsEveryLayerType) {
  const std::string text = read_text(kConfigDir / "schema" / "network.schema.json");
  ASSERT_FALSE(text.empty());
  for (const std::string_view type : layers::known_type_names()) {
    EXPECT_NE(text.find("{\"const\": \"" + std::string(type) + "\"}"), std::string::npos) << type;
  }
}

}  // namespace
}  // namespace vdnn::models
