// The JSON network format: layers, defaults, template expansion and naming, and one test per
// class of bad config, each checking that the message names the source and the JSON path.
#include "models/ConfigLoader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <variant>

#include "graph/Graph.hpp"
#include "models/config/JsonReader.hpp"

namespace vdnn::models {
namespace {

constexpr const char* kSource = "net.json";

// A network with a 3x8x8 input and 2 classes; `layers` and `templates` are JSON text.
std::string network(const std::string& layers, const std::string& templates = "") {
  return R"({"name": "net", "input": {"channels": 3, "height": 8, "width": 8}, "num_classes": 2, )" +
         (templates.empty() ? std::string() : "\"templates\": {" + templates + "}, ") +
         "\"layers\": [" + layers + "]}";
}

// A valid tail: global pooling, the logits and the loss.
const std::string kHead =
    R"({"name": "pool", "type": "global_avgpool"}, {"name": "fc", "type": "linear", "out_features": 2},
       {"name": "loss", "type": "softmax_cross_entropy"})";

// The message of the ConfigError that parsing `text` throws, or "" (and a failure) if it does not.
std::string config_error(const std::string& text) {
  try {
    parse_network(text, kSource);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.source(), kSource);
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError for " << text;
  return "";
}

::testing::AssertionResult contains(const std::string& text, const std::string& fragment) {
  if (text.find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << fragment << "' not in: " << text;
}

const graph::LayerDef& find_layer(const graph::NetworkDef& def, const std::string& name) {
  for (const graph::LayerDef& layer : def.layers) {
    if (layer.name == name) return layer;
  }
  throw std::out_of_range("no layer " + name);
}

TEST(ConfigLoader, ReadsLayersAttributesAndDefaults) {
  const graph::NetworkDef def = parse_network(
      network(R"({"name": "conv", "type": "conv2d", "out_channels": 4, "kernel": [3, 1],
                  "padding": [1, 0]}, {"name": "bn", "type": "batchnorm2d", "eps": 0.001},)" +
              kHead),
      kSource);
  EXPECT_EQ(def.name, "net");
  EXPECT_EQ(def.origin, kSource);
  EXPECT_EQ(def.channels, 3);
  EXPECT_EQ(def.num_classes, 2);
  ASSERT_EQ(def.layers.size(), 5u);
  const auto& conv = std::get<layers::Conv2dSpec>(def.layers[0].spec);
  EXPECT_EQ(conv.out_channels, 4);
  EXPECT_EQ(conv.kernel, (layers::Pair{3, 1}));
  EXPECT_EQ(conv.padding, (layers::Pair{1, 0}));
  EXPECT_EQ(conv.stride, layers::Conv2dSpec{}.stride);  // defaults come from LayerSpec.hpp
  EXPECT_EQ(conv.bias, layers::Conv2dSpec{}.bias);
  EXPECT_EQ(std::get<layers::BatchNorm2dSpec>(def.layers[1].spec).eps, 0.001);
  EXPECT_EQ(std::get<layers::BatchNorm2dSpec>(def.layers[1].spec).momentum,
            layers::BatchNorm2dSpec{}.momentum);
  EXPECT_EQ(def.layers[0].inputs, std::vector<std::string>{graph::kInputName});
  EXPECT_EQ(def.layers[1].inputs, std::vector<std::string>{"conv"});
  EXPECT_EQ(def.layers[1].origin, "net.json at /layers/1");
}

TEST(ConfigLoader, ExpandsRepetitionsWithDeterministicUnpaddedNames) {
  const graph::NetworkDef def = parse_network(
      network(R"({"name": "stage2", "template": "pair", "repeat": 20}, )" + kHead,
              R"("pair": [{"name": "conv1", "type": "conv2d", "out_channels": 3, "kernel": 1},
                          {"name": "conv2", "type": "conv2d", "out_channels": 3, "kernel": 1}])"),
      kSource);
  ASSERT_EQ(def.layers.size(), 43u);
  // PyTorch's nn.Sequential indices: "layer1.0.conv1", never zero-padded.
  EXPECT_EQ(def.layers[0].name, "stage2.0.conv1");
  EXPECT_EQ(def.layers[0].inputs, std::vector<std::string>{graph::kInputName});
  EXPECT_EQ(def.layers[2].name, "stage2.1.conv1");
  EXPECT_EQ(def.layers[20].name, "stage2.10.conv1");
  const graph::LayerDef& conv2 = find_layer(def, "stage2.17.conv2");
  EXPECT_EQ(conv2.inputs, std::vector<std::string>{"stage2.17.conv1"});
  EXPECT_EQ(conv2.origin, "net.json at /templates/pair/1 (expanded as stage2.17.conv2)");
  EXPECT_EQ(find_layer(def, "stage2.17.conv1").inputs, std::vector<std::string>{"stage2.16.conv2"});
  EXPECT_EQ(find_layer(def, "stage2.10.conv1").inputs, std::vector<std::string>{"stage2.9.conv2"});
  EXPECT_EQ(def.layers[40].inputs, std::vector<std::string>{"stage2.19.conv2"});
  // The same text expands to the same names.
  EXPECT_EQ(
      parse_network(network(R"({"name": "stage2", "template": "pair", "repeat": 20}, )" + kHead,
                            R"("pair": [{"name": "conv1", "type": "conv2d", "out_channels": 3,
                                    "kernel": 1}, {"name": "conv2", "type": "conv2d",
                                    "out_channels": 3, "kernel": 1}])"),
                    kSource)
          .layers[35]
          .name,
      def.layers[35].name);
}

TEST(ConfigLoader, RepetitionIndexIsNotPaddedWhateverTheRepeatCount) {
  const graph::NetworkDef def =
      parse_network(network(R"({"name": "b", "template": "t", "repeat": 1000}, )" + kHead,
                            R"("t": [{"name": "relu", "type": "relu"}])"),
                    kSource);
  EXPECT_EQ(def.layers[0].name, "b.0.relu");
  EXPECT_EQ(def.layers[99].name, "b.99.relu");
  EXPECT_EQ(def.layers[999].name, "b.999.relu");
}

// torchvision's shortcut: downsample = nn.Sequential(conv1x1, BatchNorm2d), whose tensors are
// "layer1.0.downsample.0.weight" and "layer1.0.downsample.1.running_mean".
TEST(ConfigLoader, TemplateLayerNamesMayHaveDotsAndBeReferredTo) {
  const graph::NetworkDef def = parse_network(
      network(R"({"name": "layer1", "template": "t", "repeat": 2,
                  "params": {"project": false}, "first": {"project": true}},
                 {"name": "tap", "type": "concat",
                  "inputs": ["layer1.0.downsample.1", "layer1.1.downsample.1", "layer1"]}, )" +
                  kHead,
              R"("t": [{"name": "conv1", "type": "conv2d", "out_channels": 4, "kernel": 1},
                       {"name": "downsample.0", "type": "conv2d", "inputs": ["$in"],
                        "when": "$project", "out_channels": 4, "kernel": 1},
                       {"name": "downsample.1", "type": "batchnorm2d", "when": "$project"},
                       {"name": "add", "type": "add", "inputs": ["conv1", "downsample.1"]}])"),
      kSource);
  EXPECT_EQ(find_layer(def, "layer1.0.downsample.0").inputs,
            std::vector<std::string>{graph::kInputName});
  EXPECT_EQ(find_layer(def, "layer1.0.downsample.1").inputs,
            std::vector<std::string>{"layer1.0.downsample.0"});
  EXPECT_EQ(find_layer(def, "layer1.0.add").inputs,
            (std::vector<std::string>{"layer1.0.conv1", "layer1.0.downsample.1"}));
  EXPECT_THROW(find_layer(def, "layer1.1.downsample.0"), std::out_of_range);
  // Left out, the shortcut stands for the repetition's input.
  EXPECT_EQ(find_layer(def, "layer1.1.add").inputs,
            (std::vector<std::string>{"layer1.1.conv1", "layer1.0.add"}));
  EXPECT_EQ(find_layer(def, "tap").inputs,
            (std::vector<std::string>{"layer1.0.downsample.1", "layer1.0.add", "layer1.1.add"}));
  EXPECT_EQ(find_layer(def, "layer1.0.downsample.1").origin,
            "net.json at /templates/t/2 (expanded as layer1.0.downsample.1)");
}

TEST(ConfigLoader, DotsOnlyJoinNamesAndNeverNameABlock) {
  const auto in_template = [](const std::string& name) {
    return config_error(network(R"({"name": "b", "template": "t", "repeat": 1}, )" + kHead,
                                R"("t": [{"name": ")" + name + R"(", "type": "relu"}])"));
  };
  for (const std::string& bad : {".a", "a.", "a..b", ".", "a.b c", "a/b"}) {
    SCOPED_TRACE(bad);
    const std::string e = in_template(bad);
    EXPECT_TRUE(contains(e, "net.json at /templates/t/0/name: expected a name of 1 to 128"));
    EXPECT_TRUE(contains(e, "or such names joined by '.'"));
  }
  EXPECT_TRUE(contains(in_template(std::string(120, 'a') + "." + std::string(8, 'b')),
                       "expected a name of 1 to 128"));
  // A top-level layer may have a dotted name, but not one a repetition expands to.
  EXPECT_TRUE(contains(config_error(network(R"({"name": "b", "template": "t", "repeat": 1},
                                               {"name": "b.0.x", "type": "relu"}, )" +
                                                kHead,
                                            R"("t": [{"name": "x", "type": "relu"}])")),
                       "net.json at /layers/1: duplicate layer name \"b.0.x\""));
  EXPECT_TRUE(
      contains(config_error(network(
                   R"({"name": "b", "template": "t", "repeat": 1}, )" + kHead,
                   R"("t": [{"name": "x.0", "type": "relu"}, {"name": "x.0", "type": "relu"}])")),
               "duplicate layer name \"x.0\" in template \"t\""));
}

// The residual template of the shipped ResNets: the projection exists in the first repetition
// only, and when left out the add reads the repetition input through it.
const std::string kResidualTemplate = R"("res": [
    {"name": "conv", "type": "conv2d", "out_channels": "$width", "kernel": 3, "padding": 1,
     "stride": "$stride"},
    {"name": "proj", "type": "conv2d", "inputs": ["$in"], "when": "$project",
     "out_channels": "$width", "kernel": 1, "stride": "$stride"},
    {"name": "add", "type": "add", "inputs": ["conv", "proj"]}])";

TEST(ConfigLoader, FirstOverridesParamsAndWhenLeavesLayersOut) {
  const graph::NetworkDef def = parse_network(network(R"({"name": "stem", "type": "relu"},
                 {"name": "s", "template": "res", "repeat": 3,
                  "params": {"width": 6, "stride": 1, "project": false},
                  "first": {"stride": 2, "project": true}},
                 {"name": "tap", "type": "concat", "inputs": ["s", "s.1.add", "s.2.proj"]}, )" +
                                                          kHead,
                                                      kResidualTemplate),
                                              kSource);
  const auto stride = [&](const std::string& name) {
    return std::get<layers::Conv2dSpec>(find_layer(def, name).spec).stride;
  };
  EXPECT_EQ(stride("s.0.conv"), (layers::Pair{2, 2}));
  EXPECT_EQ(stride("s.0.proj"), (layers::Pair{2, 2}));
  EXPECT_EQ(stride("s.1.conv"), (layers::Pair{1, 1}));
  EXPECT_EQ(find_layer(def, "s.0.proj").inputs, std::vector<std::string>{"stem"});
  EXPECT_EQ(find_layer(def, "s.0.add").inputs, (std::vector<std::string>{"s.0.conv", "s.0.proj"}));
  EXPECT_THROW(find_layer(def, "s.1.proj"), std::out_of_range);
  EXPECT_EQ(find_layer(def, "s.1.conv").inputs, std::vector<std::string>{"s.0.add"});
  EXPECT_EQ(find_layer(def, "s.1.add").inputs, (std::vector<std::string>{"s.1.conv", "s.0.add"}));
  // A block stands for its output; a left-out layer for its input.
  EXPECT_EQ(find_layer(def, "tap").inputs,
            (std::vector<std::string>{"s.2.add", "s.1.add", "s.1.add"}));
  EXPECT_EQ(find_layer(def, "pool").inputs, std::vector<std::string>{"tap"});
}

TEST(ConfigLoader, LoadsFilesAndNamesThemInErrors) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "vdnn-config-loader-test";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.json").string();
  std::ofstream(good) << network(kHead);
  EXPECT_EQ(load_network(good).layers.at(0).origin, good + " at /layers/0");

  const std::string malformed = (dir / "malformed.json").string();
  std::ofstream(malformed) << "{\"name\": \"net\",\n \"layers\": [}\n";
  try {
    load_network(malformed);
    ADD_FAILURE() << "malformed JSON accepted";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), malformed + ": malformed JSON"));
    EXPECT_TRUE(contains(e.what(), "line 2, column"));
  }
  const std::string missing = (dir / "missing.json").string();
  try {
    load_network(missing);
    ADD_FAILURE() << "missing file accepted";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), missing + ": cannot read"));
  }
  std::filesystem::remove_all(dir);
}

TEST(ConfigLoader, RejectsUnknownTopLevelKey) {
  const std::string e = config_error(
      R"({"name": "net", "input": {"channels": 3, "height": 8, "width": 8}, "num_classes": 2,
          "colour": "red", "layers": [)" +
      kHead + "]}");
  EXPECT_TRUE(contains(e, "net.json at /colour: unknown key \"colour\""));
  EXPECT_TRUE(contains(e, "allowed keys: $schema, description, name, input"));
}

TEST(ConfigLoader, RejectsUnknownLayerKeyListingTheTypesKeys) {
  const std::string e = config_error(network(
      R"({"name": "conv", "type": "conv2d", "out_channels": 4, "kernel": 3, "strdie": 2}, )" +
      kHead));
  EXPECT_TRUE(
      contains(e, "net.json at /layers/0/strdie: unknown key \"strdie\" in a conv2d layer"));
  EXPECT_TRUE(contains(e, "stride, padding, dilation, groups, bias"));
}

TEST(ConfigLoader, RejectsUnknownKeyInTemplateLayerNamingTheExpansion) {
  const std::string e =
      config_error(network(R"({"name": "b", "template": "t", "repeat": 2}, )" + kHead,
                           R"("t": [{"name": "act", "type": "relu", "inplace": true}])"));
  EXPECT_TRUE(contains(e, "net.json at /templates/t/0/inplace (expanded as b.0.act)"));
}

TEST(ConfigLoader, RejectsUnknownKeyInNestedObjects) {
  EXPECT_TRUE(
      contains(config_error(R"({"name": "net", "input": {"channels": 3, "height": 8, "width": 8,
                       "depth": 1}, "num_classes": 2, "layers": [)" +
                            kHead + "]}"),
               "net.json at /input/depth"));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "b", "template": "t", "repeat": 1,
                                               "count": 2}, )" +
                                                kHead,
                                            R"("t": [{"name": "act", "type": "relu"}])")),
                       "net.json at /layers/0/count: unknown key \"count\" in a block"));
}

TEST(ConfigLoader, RejectsUnknownTypeListingTheKnownOnes) {
  const std::string e = config_error(network(R"({"name": "c", "type": "conv"}, )" + kHead));
  EXPECT_TRUE(contains(e, "net.json at /layers/0/type: unknown layer type \"conv\""));
  EXPECT_TRUE(contains(e,
                       "conv2d, batchnorm2d, relu, maxpool2d, avgpool2d, global_avgpool, "
                       "linear, add, concat, dropout, flatten, softmax_cross_entropy"));
}

TEST(ConfigLoader, RejectsValuesOfTheWrongType) {
  EXPECT_TRUE(contains(
      config_error(network(
          R"({"name": "c", "type": "conv2d", "out_channels": 4, "kernel": "3"}, )" + kHead)),
      "net.json at /layers/0/kernel: expected an integer in [1, 1048576] or an array [h, w]"));
  EXPECT_TRUE(contains(
      config_error(network(
          R"({"name": "c", "type": "conv2d", "out_channels": 4.5, "kernel": 3}, )" + kHead)),
      "net.json at /layers/0/out_channels: expected an integer"));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "c", "type": "conv2d", "out_channels": 4,
                                               "kernel": [3, true]}, )" +
                                            kHead)),
                       "net.json at /layers/0/kernel/1: expected an integer"));
  EXPECT_TRUE(
      contains(config_error(network(R"({"name": "d", "type": "dropout", "p": 1}, )" + kHead)),
               "net.json at /layers/0/p: expected a number in [0, 1), got 1"));
  EXPECT_TRUE(contains(
      config_error(
          network(R"({"name": "c", "type": "linear", "out_features": 2, "bias": 1}, )" + kHead)),
      "net.json at /layers/0/bias: expected true or false, got 1"));
  EXPECT_TRUE(contains(
      config_error(network(R"({"name": "r", "type": "relu", "inputs": "input"}, )" + kHead)),
      "net.json at /layers/0/inputs: expected an array"));
}

TEST(ConfigLoader, RejectsWrongTypeThroughAParameterNamingWhereItWasSet) {
  const std::string e = config_error(network(
      R"({"name": "b", "template": "res", "repeat": 2,
          "params": {"width": 4, "stride": 1, "project": false}, "first": {"stride": "two"}}, )" +
          kHead,
      kResidualTemplate));
  EXPECT_TRUE(contains(e,
                       "net.json at /templates/res/0/stride (expanded as b.0.conv; $stride "
                       "from /layers/0/first/stride): expected an integer"));
}

TEST(ConfigLoader, RejectsMissingRequiredKeys) {
  EXPECT_TRUE(contains(
      config_error(network(R"({"name": "c", "type": "conv2d", "out_channels": 4}, )" + kHead)),
      "net.json at /layers/0: missing required key \"kernel\""));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "lin", "type": "linear"}, )" + kHead)),
                       "net.json at /layers/0: missing required key \"out_features\""));
  EXPECT_TRUE(contains(config_error(network(R"({"type": "relu"}, )" + kHead)),
                       "net.json at /layers/0: missing required key \"name\""));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "r"}, )" + kHead)),
                       "net.json at /layers/0: missing required key \"type\" (or \"template\""));
  EXPECT_TRUE(contains(config_error(R"({"name": "net", "input": {"channels": 3, "height": 8,
                                        "width": 8}, "layers": [)" +
                                    kHead + "]}"),
                       "net.json: missing required key \"num_classes\""));
}

TEST(ConfigLoader, RejectsBadRepeat) {
  for (const char* repeat : {"0", "-1", "2.5", "\"3\"", "100001"}) {
    const std::string e = config_error(network(
        R"({"name": "b", "template": "t", "repeat": )" + std::string(repeat) + "}, " + kHead,
        R"("t": [{"name": "act", "type": "relu"}])"));
    EXPECT_TRUE(contains(e, "net.json at /layers/0/repeat: expected an integer in [1, 100000]"));
  }
  EXPECT_TRUE(contains(config_error(network(R"({"name": "b", "template": "t"}, )" + kHead,
                                            R"("t": [{"name": "act", "type": "relu"}])")),
                       "net.json at /layers/0: missing required key \"repeat\""));
}

TEST(ConfigLoader, RejectsUndefinedTemplate) {
  const std::string e =
      config_error(network(R"({"name": "b", "template": "basic", "repeat": 2}, )" + kHead,
                           R"("bottleneck": [{"name": "act", "type": "relu"}])"));
  EXPECT_TRUE(contains(e,
                       "net.json at /layers/0/template: unknown template \"basic\"; defined "
                       "templates: bottleneck"));
}

TEST(ConfigLoader, RejectsUnusedTemplate) {
  EXPECT_TRUE(contains(config_error(network(kHead, R"("spare": [{"name": "a", "type": "relu"}])")),
                       "net.json at /templates/spare: template \"spare\" is never used"));
}

TEST(ConfigLoader, RejectsUndefinedParameter) {
  const std::string e = config_error(network(
      R"({"name": "b", "template": "res", "repeat": 2, "params": {"width": 4, "stride": 1}}, )" +
          kHead,
      kResidualTemplate));
  EXPECT_TRUE(contains(e,
                       "net.json at /templates/res/1/when (used by block \"b\" at /layers/0): "
                       "undefined parameter $project"));
}

TEST(ConfigLoader, RejectsParametersTheTemplateDoesNotUse) {
  EXPECT_TRUE(contains(
      config_error(network(R"({"name": "b", "template": "res", "repeat": 2,
          "params": {"width": 4, "stride": 1, "project": false, "depth": 3}}, )" +
                               kHead,
                           kResidualTemplate)),
      "net.json at /layers/0/params/depth: unknown key \"depth\" in the parameters of template "
      "\"res\"; allowed keys: project, stride, width"));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "b", "template": "res", "repeat": 2,
          "params": {"width": 4, "stride": 1, "project": false}, "first": {"strid": 2}}, )" +
                                                kHead,
                                            kResidualTemplate)),
                       "net.json at /layers/0/first/strid: unknown key \"strid\" in \"first\""));
}

TEST(ConfigLoader, RejectsDanglingInputs) {
  EXPECT_TRUE(contains(config_error(network(R"({"name": "r", "type": "relu"},
                              {"name": "a", "type": "add", "inputs": ["r", "relu2"]}, )" +
                                            kHead)),
                       "net.json at /layers/1/inputs/1: unknown input \"relu2\""));
  const std::string e = config_error(network(
      R"({"name": "b", "template": "t", "repeat": 1}, )" + kHead,
      R"("t": [{"name": "r", "type": "relu"}, {"name": "a", "type": "add", "inputs": ["r", "x"]}])"));
  EXPECT_TRUE(contains(e,
                       "net.json at /templates/t/1/inputs/1 (expanded as b.0.a): unknown "
                       "input \"x\"; inside template \"t\" an input is \"$in\""));
  EXPECT_TRUE(contains(
      config_error(network(R"({"name": "r", "type": "relu", "inputs": ["$in"]}, )" + kHead)),
      "net.json at /layers/0/inputs/0: \"$in\""));
}

TEST(ConfigLoader, RejectsCyclesAsReferencesToLaterLayers) {
  EXPECT_TRUE(contains(config_error(network(R"({"name": "a", "type": "relu", "inputs": ["b"]},
                                               {"name": "b", "type": "relu", "inputs": ["a"]}, )" +
                                            kHead)),
                       "net.json at /layers/0/inputs/0: \"b\" is not defined before this layer"));
  EXPECT_TRUE(
      contains(config_error(network(R"({"name": "a", "type": "relu", "inputs": ["a"]}, )" + kHead)),
               "net.json at /layers/0/inputs/0: \"a\" is not defined before this layer"));
  EXPECT_TRUE(contains(
      config_error(network(R"({"name": "b", "template": "t", "repeat": 1}, )" + kHead,
                           R"("t": [{"name": "p", "type": "relu", "inputs": ["q"]},
                                    {"name": "q", "type": "relu", "inputs": ["p"]}])")),
      "net.json at /templates/t/0/inputs/0 (expanded as b.0.p): \"q\" is not an earlier layer"));
}

TEST(ConfigLoader, RejectsWrongArity) {
  EXPECT_TRUE(contains(config_error(network(R"({"name": "r", "type": "relu"},
                                               {"name": "a", "type": "add", "inputs": ["r"]}, )" +
                                            kHead)),
                       "net.json at /layers/1/inputs: add takes at least 2 inputs, got 1"));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "r", "type": "relu"},
                                               {"name": "a", "type": "concat"}, )" +
                                            kHead)),
                       "net.json at /layers/1: concat takes at least 2 inputs, got 1 (by default"));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "r", "type": "relu"},
                              {"name": "s", "type": "relu", "inputs": ["r", "input"]}, )" +
                                            kHead)),
                       "net.json at /layers/1/inputs: relu takes exactly 1 input, got 2"));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "b", "template": "t", "repeat": 1,
                                               "inputs": ["input", "input"]}, )" +
                                                kHead,
                                            R"("t": [{"name": "r", "type": "relu"}])")),
                       "net.json at /layers/0/inputs: a block takes exactly 1 input, got 2"));
  EXPECT_TRUE(contains(
      config_error(network(R"({"name": "b", "template": "t", "repeat": 1}, )" + kHead,
                           R"("t": [{"name": "a", "type": "add", "inputs": ["$in", "$in"],
                                     "when": false}])")),
      "net.json at /templates/t/0/when (expanded as b.0.a): only a layer with exactly 1 input"));
}

TEST(ConfigLoader, RejectsDuplicateKeysAndNames) {
  EXPECT_TRUE(contains(config_error(network(R"({"name": "c", "type": "conv2d", "out_channels": 4,
                                               "kernel": 3, "kernel": 5}, )" +
                                            kHead)),
                       "net.json at /layers/0/kernel: duplicate key \"kernel\""));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "fc", "type": "relu"}, )" + kHead)),
                       "net.json at /layers/2/name: duplicate layer or block name \"fc\""));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "input", "type": "relu"}, )" + kHead)),
                       "net.json at /layers/0/name: \"input\" is reserved"));
  // A block's name is the prefix of its repetitions' names: no dots.
  EXPECT_TRUE(
      contains(config_error(network(R"({"name": "a.b", "template": "t", "repeat": 1}, )" + kHead,
                                    R"("t": [{"name": "x", "type": "relu"}])")),
               "net.json at /layers/0/name: expected a name of 1 to 128 letters"));
}

TEST(ConfigLoader, RejectsAbsurdSizes) {
  EXPECT_TRUE(contains(config_error(network(R"({"name": "c", "type": "conv2d",
                                               "out_channels": 2097152, "kernel": 3}, )" +
                                            kHead)),
                       "net.json at /layers/0/out_channels: expected an integer in [1, 1048576], "
                       "got 2097152"));
  EXPECT_TRUE(contains(
      config_error(R"({"name": "net", "input": {"channels": 3, "height": 2097152, "width": 8},
                       "num_classes": 2, "layers": [)" +
                   kHead + "]}"),
      "net.json at /input/height: expected an integer in [1, 1048576]"));
  EXPECT_TRUE(contains(config_error(network(R"({"name": "c", "type": "conv2d", "out_channels": 4,
                                               "kernel": 18446744073709551615}, )" +
                                            kHead)),
                       "net.json at /layers/0/kernel: expected an integer"));
  EXPECT_TRUE(
      contains(config_error(network(R"({"name": "b", "template": "t", "repeat": 100000}, )" + kHead,
                                    R"("t": [{"name": "a", "type": "relu"},
                                                     {"name": "b", "type": "relu"},
                                                     {"name": "c", "type": "relu"},
                                                     {"name": "d", "type": "relu"},
                                                     {"name": "e", "type": "relu"},
                                                     {"name": "f", "type": "relu"},
                                                     {"name": "g", "type": "relu"},
                                                     {"name": "h", "type": "relu"},
                                                     {"name": "i", "type": "relu"},
                                                     {"name": "j", "type": "relu"},
                                                     {"name": "k", "type": "relu"}])")),
               "net.json at /layers/0/repeat: the network would have more than 1048576"));
  // Every extent is sane but the feature map is not: Graph::build rejects it before allocating.
  const graph::NetworkDef huge = parse_network(
      R"({"name": "net", "input": {"channels": 3, "height": 1048576, "width": 1048576},
          "num_classes": 2, "layers": [)" +
          kHead + "]}",
      kSource);
  try {
    graph::Graph::build(huge, 2);
    ADD_FAILURE() << "a 24 TiB input was accepted";
  } catch (const graph::GraphError& e) {
    EXPECT_TRUE(contains(e.what(), "net.json"));
  }
}

TEST(ConfigLoader, BadShapesFailInGraphBuildNamingFileAndPath) {
  const graph::NetworkDef def = parse_network(
      network(R"({"name": "b", "template": "t", "repeat": 1}, )" + kHead,
              R"("t": [{"name": "c", "type": "conv2d", "out_channels": 4, "kernel": 9}])"),
      kSource);
  try {
    graph::Graph::build(def, 2);
    ADD_FAILURE() << "a 9x9 kernel on an 8x8 input was accepted";
  } catch (const graph::GraphError& e) {
    EXPECT_TRUE(contains(e.what(), "net.json at /templates/t/0 (expanded as b.0.c)"));
  }
}

TEST(ConfigLoader, MalformedJsonNamesTheSourceAndPosition) {
  const std::string e = config_error("{\"name\": \"net\",\n  \"layers\": [1, 2,]}");
  EXPECT_TRUE(contains(e, "net.json: malformed JSON: parse error at line 2, column"));
  EXPECT_TRUE(contains(config_error("{\"name\": \"net\"} // comment"), "net.json: malformed JSON"));
}

TEST(ConfigLoader, ALayerLimitBoundsTheExpansion) {
  // A block of 3 x 2 layers, then 3 plain ones: 9 layers.
  const std::string text =
      network(R"({"name": "b", "template": "t", "repeat": 3}, )" + kHead,
              R"("t": [{"name": "r1", "type": "relu"}, {"name": "r2", "type": "relu"}])");
  EXPECT_EQ(parse_network(text, kSource, 9).layers.size(), 9u);
  const auto error = [&](std::size_t max_layers) {
    try {
      parse_network(text, kSource, max_layers);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_TRUE(contains(error(8), "net.json at /layers/3: the network would have more than 8"));
  EXPECT_TRUE(contains(error(5),
                       "net.json at /layers/0/repeat: the network would have more "
                       "than 5 layers"));
}

TEST(ConfigLoader, NumbersBeyondDoubleAreMalformedJson) {
  // Found by tests/fuzz: nlohmann's out_of_range escaped as a foreign exception (exit code 1).
  EXPECT_TRUE(contains(config_error(R"({"name": 1e999})"),
                       "net.json: malformed JSON: number overflow parsing '1e999'"));
}

TEST(ConfigLoader, RefusesNestingBombsAtTheDepthLimit) {
  // 100,000 nested arrays used to overflow the stack when the error message printed the value.
  const std::string bomb = std::string(100000, '[') + std::string(100000, ']');
  const std::string e = config_error(bomb);
  std::string pointer;
  for (std::size_t i = 0; i < config::kMaxJsonDepth; ++i) pointer += "/0";
  EXPECT_TRUE(contains(e, "net.json at " + pointer + ": objects and arrays nested deeper than 64"));
  const auto nested = [](std::size_t depth) {
    std::string text;
    for (std::size_t i = 0; i < depth; ++i) text += "{\"a\": ";
    return text + "1" + std::string(depth, '}');
  };
  EXPECT_NO_THROW(config::parse_json(nested(config::kMaxJsonDepth), kSource));
  EXPECT_THROW(config::parse_json(nested(config::kMaxJsonDepth + 1), kSource), ConfigError);
}

}  // namespace
}  // namespace vdnn::models
