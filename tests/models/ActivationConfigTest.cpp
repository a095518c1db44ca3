// The smooth activations in the JSON network format: each type name reads into its spec, and,
// having no attributes, refuses any key beyond the structural ones.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "graph/Graph.hpp"
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
                               {"name": "c", "type": "sigmoid"}, {"name": "d", "type": "hardswish"})"),
                    kSource);
  ASSERT_GE(def.layers.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<layers::SiluSpec>(def.layers[0].spec));
  EXPECT_TRUE(std::holds_alternative<layers::GeluSpec>(def.layers[1].spec));
  EXPECT_TRUE(std::holds_alternative<layers::SigmoidSpec>(def.layers[2].spec));
  EXPECT_TRUE(std::holds_alternative<layers::HardswishSpec>(def.layers[3].spec));
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

}  // namespace
}  // namespace vdnn::models
