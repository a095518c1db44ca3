// ConvNeXt's layer types in the JSON network format: layernorm2d's eps, layer_scale without
// attributes, stochastic_depth's required p, and the ranges the loader enforces.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "graph/Graph.hpp"
#include "models/ConfigError.hpp"
#include "models/ConfigLoader.hpp"

namespace vdnn::models {
namespace {

constexpr const char* kSource = "convnext_layers.json";

std::string network(const std::string& layers) {
  return R"({"name": "cn", "input": {"channels": 3, "height": 4, "width": 4}, "num_classes": 2,
             "layers": [)" +
         layers +
         R"(, {"name": "pool", "type": "global_avgpool"},
              {"name": "fc", "type": "linear", "out_features": 2},
              {"name": "loss", "type": "softmax_cross_entropy"}]})";
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
  EXPECT_TRUE(std::holds_alternative<layers::LayerScaleSpec>(def.layers[2].spec));
  EXPECT_EQ(std::get<layers::StochasticDepthSpec>(def.layers[3].spec).p, 0.1);
}

TEST(ConvNextLayersConfig, RefusesMissingOrOutOfRangeAttributes) {
  EXPECT_NE(config_error(R"({"name": "d", "type": "stochastic_depth"})").find("\"p\""),
            std::string::npos);
  EXPECT_NE(config_error(R"({"name": "d", "type": "stochastic_depth", "p": 1})").find(kSource),
            std::string::npos);
  EXPECT_NE(config_error(R"({"name": "a", "type": "layernorm2d", "eps": 0})"), "no error");
  EXPECT_NE(config_error(R"({"name": "c", "type": "layer_scale", "init": 1e-6})")
                .find("unknown key \"init\" in a layer_scale layer"),
            std::string::npos);
}

}  // namespace
}  // namespace vdnn::models
