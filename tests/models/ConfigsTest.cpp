// The shipped configs: each one builds, parameter counts match the reference implementations,
// depths match the papers, and the schema knows every layer type.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"

namespace vdnn::models {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigDir = fs::path(VDNN_SOURCE_DIR) / "configs";

graph::Graph build(const std::string& config) {
  return graph::Graph::build(load_network((kConfigDir / config).string()), 2);
}

std::int64_t trainable_parameters(const graph::Graph& g) {
  std::int64_t total = 0;
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(g.nodes().size()); ++id) {
    for (const layers::ParamSpec& p : layers::param_specs(g.node(id).spec, g.input_shapes(id))) {
      if (p.kind == layers::ParamKind::Trainable) total += p.shape.numel();
    }
  }
  return total;
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
  EXPECT_GE(count, 7);
}

TEST(Configs, TorchvisionParameterCounts) {
  EXPECT_EQ(trainable_parameters(build("resnet18.json")), 11'689'512);
  EXPECT_EQ(trainable_parameters(build("resnet50.json")), 25'557'032);
  EXPECT_EQ(trainable_parameters(build("vgg16.json")), 138'357'544);
}

TEST(Configs, CifarNetworksMatchThePapers) {
  const graph::Graph resnet20 = build("resnet20-cifar.json");
  EXPECT_EQ(depth(resnet20), 20);
  EXPECT_EQ(trainable_parameters(resnet20), 272'474);  // "0.27M", with projection shortcuts
  const graph::Graph densenet = build("densenet40-cifar.json");
  EXPECT_EQ(depth(densenet), 40);
  EXPECT_EQ(densenet.node(densenet.logits_node() - 1).output_shape.c(), 448);  // 16 + 3 * 12 * 12
  EXPECT_EQ(trainable_parameters(densenet), 1'019'722);                        // "1.0M"
  const graph::Graph resnet1001 = build("resnet1001-cifar.json");
  EXPECT_EQ(depth(resnet1001), 1001);
  EXPECT_EQ(trainable_parameters(resnet1001), 10'327'706);  // "10.2M"; counted independently
}

TEST(Configs, ImageNetFeatureMapShapes) {
  const graph::Graph resnet50 = build("resnet50.json");
  const auto shape_of = [&](const std::string& name) {
    for (const graph::Node& n : resnet50.nodes()) {
      if (n.name == name) return n.output_shape;
    }
    return runtime::Shape{};
  };
  EXPECT_EQ(shape_of("maxpool"), runtime::Shape::nchw(2, 64, 56, 56));
  EXPECT_EQ(shape_of("layer1.000.relu3"), runtime::Shape::nchw(2, 256, 56, 56));
  EXPECT_EQ(shape_of("layer4.002.relu3"), runtime::Shape::nchw(2, 2048, 7, 7));
}

TEST(Configs, ExpandedNamesAreDeterministic) {
  const graph::NetworkDef a = load_network((kConfigDir / "resnet1001-cifar.json").string());
  const graph::NetworkDef b = load_network((kConfigDir / "resnet1001-cifar.json").string());
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (std::size_t i = 0; i < a.layers.size(); ++i) EXPECT_EQ(a.layers[i].name, b.layers[i].name);
  const auto conv2 = std::find_if(a.layers.begin(), a.layers.end(), [](const graph::LayerDef& l) {
    return l.name == "stage2.017.conv2";
  });
  ASSERT_NE(conv2, a.layers.end());
  EXPECT_EQ(conv2->inputs, std::vector<std::string>{"stage2.017.relu2"});
  EXPECT_NE(conv2->origin.find("resnet1001-cifar.json at /templates/preact_bottleneck/5 "
                               "(expanded as stage2.017.conv2)"),
            std::string::npos)
      << conv2->origin;
}

TEST(Configs, SchemaKnowsEveryLayerType) {
  std::ifstream in(kConfigDir / "schema" / "network.schema.json");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  for (const std::string_view type : layers::known_type_names()) {
    EXPECT_NE(text.str().find("{\"const\": \"" + std::string(type) + "\"}"), std::string::npos)
        << type;
  }
}

}  // namespace
}  // namespace vdnn::models
