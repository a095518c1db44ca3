// The smooth activations in the JSON network format: each type name reads into its spec, and,
// having no attributes, refuses any key beyond the structural ones. Also ConvNeXt's layer types
// (layernorm2d's eps, stochastic_depth's required p, the ranges the loader enforces) and layer
// names as PyTorch module paths.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "graph/Graph.hpp"
#include "models/ConfigError.hpp"
#include "models/ConfigLoader.hpp"

namespace vdnn::models {
namespace {

constexpr const char* kSource = "act.json";

std::string network(const std::string& activation_layers) {
  return R"({"name": "act", "input": {"channels": 3, "height": 4, "width": 4}, "num_classes": 2,
             "layers": [)" +
         activation_layers +
         R"(, {"name": "pool", "type": "global_avgpool"},
              {"name": "fc", "type": "linear", "out_features": 2},
              {"name": "loss", "type": "softmax_cross_entropy"}]})";
}

TEST(ActivationConfig, ReadsEachActivationType) {
  const graph::NetworkDef def =
      parse_network(network(R"({"name": "a", "type": "silu"}, {"name": "b", "type": "gelu"},
                               {"name": "c", "type": "sigmoid"}, {"name": "d", "type": "hardswish"},
                               {"name": "e", "type": "relu6"}, {"name": "f", "type": "hardsigmoid"})"),
                    kSource);
  ASSERT_GE(def.layers.size(), 6u);
  EXPECT_TRUE(std::holds_alternative<layers::SiluSpec>(def.layers[0].spec));
  EXPECT_TRUE(std::holds_alternative<layers::GeluSpec>(def.layers[1].spec));
  EXPECT_TRUE(std::holds_alternative<layers::SigmoidSpec>(def.layers[2].spec));
  EXPECT_TRUE(std::holds_alternative<layers::HardswishSpec>(def.layers[3].spec));
  EXPECT_TRUE(std::holds_alternative<layers::Relu6Spec>(def.layers[4].spec));
  EXPECT_TRUE(std::holds_alternative<layers::HardsigmoidSpec>(def.layers[5].spec));
}

TEST(ActivationConfig, RefusesAttributesNamingTheType) {
  try {
    parse_network(network(R"({"name": "a", "type": "gelu", "approximate": "tanh"})"), kSource);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key \"approximate\" in a gelu layer"),
              std::string::npos)
        << e.what();
  }
}

std::string config_error(const std::string& layers) {
  try {
    parse_network(network(layers), kSource);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ConvNextLayersConfig, ReadsEachTypeAndItsAttributes) {
  const graph::NetworkDef def =
      parse_network(network(R"({"name": "a", "type": "layernorm2d", "eps": 1e-6},
                 {"name": "b", "type": "layernorm2d"},
                 {"name": "c", "type": "layer_scale"},
                 {"name": "d", "type": "stochastic_depth", "p": 0.1})"),
                    kSource);
  ASSERT_GE(def.layers.size(), 4u);
  EXPECT_EQ(std::get<layers::LayerNorm2dSpec>(def.layers[0].spec).eps, 1e-6);
  EXPECT_EQ(std::get<layers::LayerNorm2dSpec>(def.layers[1].spec).eps, 1e-5);
  EXPECT_EQ(std::get<layers::LayerScaleSpec>(def.layers[2].spec).init, 1e-6);  // torchvision's
  EXPECT_EQ(std::get<layers::StochasticDepthSpec>(def.layers[3].spec).p, 0.1);
}

TEST(ConvNextLayersConfig, RefusesMissingOrOutOfRangeAttributes) {
  EXPECT_NE(config_error(R"({"name": "d", "type": "stochastic_depth"})").find("\"p\""),
            std::string::npos);
  EXPECT_NE(config_error(R"({"name": "d", "type": "stochastic_depth", "p": 1})").find(kSource),
            std::string::npos);
  EXPECT_NE(config_error(R"({"name": "a", "type": "layernorm2d", "eps": 0})"), "no error");
  EXPECT_NE(config_error(R"({"name": "c", "type": "layer_scale", "init": 0})"), "no error");
  EXPECT_NE(config_error(R"({"name": "c", "type": "layer_scale", "scale": 1e-6})")
                .find("unknown key \"scale\" in a layer_scale layer"),
            std::string::npos);
}

TEST(ConvNextLayersConfig, LayerNamesMayBeDottedModulePaths) {
  const graph::NetworkDef def =
      parse_network(network(R"({"name": "features.1.0.block.0", "type": "conv2d", "out_channels": 4,
                  "kernel": 3, "padding": 1}, {"name": "features.1.0", "type": "layer_scale"})"),
                    kSource);
  EXPECT_EQ(def.layers[0].name, "features.1.0.block.0");
  EXPECT_EQ(def.layers[1].inputs, std::vector<std::string>{"features.1.0.block.0"});
  EXPECT_NE(config_error(R"({"name": "features..0", "type": "gelu"})").find("joined by '.'"),
            std::string::npos);
}

}  // namespace
}  // namespace vdnn::models
