// Writes pre-activation ResNet and DenseNet-BC configs of a requested depth: the stage rule, the
// templates and the layer list (models/ConfigPrinter lays them out).
#include "models/ZooGenerator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "models/ConfigPrinter.hpp"
#include "runtime/Error.hpp"

namespace vdnn::models {
namespace {

using Json = nlohmann::ordered_json;
using Stages = std::vector<std::int64_t>;

constexpr std::int64_t kMaxDepth = 100000;

const char* input_name(ZooInput input) { return input == ZooInput::Cifar ? "cifar" : "imagenet"; }

[[noreturn]] void reject(const char* family, ZooInput input, std::int64_t depth,
                         const std::string& rule) {
  throw runtime::InvalidArgument(std::string(family) + " depth for " + input_name(input) +
                                 " must be " + rule + "; " + std::to_string(depth) + " is not");
}

// `blocks` over `count` stages as evenly as possible, earlier stages taking the remainder.
Stages even_split(std::int64_t blocks, std::int64_t count) {
  Stages stages;
  for (std::int64_t s = 0; s < count; ++s) stages.push_back(blocks / count + (s < blocks % count));
  return stages;
}

std::int64_t share(std::int64_t blocks, std::int64_t numerator, std::int64_t denominator) {
  const auto rounded = static_cast<std::int64_t>(
      std::llround(static_cast<double>(blocks * numerator) / static_cast<double>(denominator)));
  return std::max<std::int64_t>(1, rounded);
}

// The b of depth = step * b + offset, with b >= min_blocks; else the rule, which is `rule`.
std::int64_t blocks_of(const char* family, ZooInput input, std::int64_t depth, std::int64_t step,
                       std::int64_t offset, std::int64_t min_blocks, const std::string& rule) {
  if (depth < step * min_blocks + offset || depth > kMaxDepth || (depth - offset) % step != 0) {
    reject(family, input, depth, rule + ", and at most " + std::to_string(kMaxDepth));
  }
  return (depth - offset) / step;
}

Stages resnet_stages(ZooInput input, std::int64_t depth) {
  if (input == ZooInput::Cifar) {
    return even_split(blocks_of("ResNet", input, depth, 3, 2, 3,
                                "3b+2 with b >= 3 pre-activation bottleneck blocks over 3 stages "
                                "(9n+2 for He et al.'s n blocks per stage)"),
                      3);
  }
  static const std::map<std::int64_t, Stages> paper_stages = {
      {50, {3, 4, 6, 3}}, {101, {3, 4, 23, 3}}, {152, {3, 8, 36, 3}}, {200, {3, 24, 36, 3}}};
  if (const auto it = paper_stages.find(depth); it != paper_stages.end()) return it->second;
  const std::int64_t blocks =
      blocks_of("ResNet", input, depth, 3, 2, 4,
                "3b+2 with b >= 4 pre-activation bottleneck blocks over 4 stages in ResNet-152's "
                "proportions 3:8:36:3");
  const std::int64_t s1 = share(blocks, 3, 50);
  const std::int64_t s2 = share(blocks, 8, 50);
  return {s1, s2, blocks - 2 * s1 - s2, s1};
}

Stages densenet_stages(ZooInput input, std::int64_t depth) {
  if (input == ZooInput::Cifar) {
    return Stages(3, blocks_of("DenseNet", input, depth, 6, 4, 1,
                               "6n+4 with n >= 1 bottleneck dense layers in each of 3 blocks "
                               "(DenseNet-BC)"));
  }
  static const std::map<std::int64_t, Stages> paper_stages = {{121, {6, 12, 24, 16}},
                                                              {169, {6, 12, 32, 32}},
                                                              {201, {6, 12, 48, 32}},
                                                              {264, {6, 12, 64, 48}}};
  if (const auto it = paper_stages.find(depth); it != paper_stages.end()) return it->second;
  const std::int64_t layers = blocks_of(
      "DenseNet", input, depth, 2, 5, 20,
      "121, 169, 201 or 264 (Huang et al.), or 2b+5 with b >= 20 bottleneck dense layers over 4 "
      "blocks of 6, 12 and the rest split 4:3");
  const std::int64_t rest = layers - 18;
  const std::int64_t third = share(rest, 4, 7);
  return {6, 12, third, rest - third};
}

Json layer(const char* name, const char* type) { return Json{{"name", name}, {"type", type}}; }

Json conv(const char* name, const Json& out, std::int64_t kernel) {
  Json l = layer(name, "conv2d");
  l["out_channels"] = out;
  l["kernel"] = kernel;
  return l;
}

Json block(const std::string& name, const char* tmpl, std::int64_t repeat, Json params) {
  return Json{
      {"name", name}, {"template", tmpl}, {"repeat", repeat}, {"params", std::move(params)}};
}

// The layers after the last stage, shared by both families.
void add_head(Json& layers, std::int64_t classes) {
  layers.push_back(layer("bn", "batchnorm2d"));
  layers.push_back(layer("relu", "relu"));
  layers.push_back(layer("avgpool", "global_avgpool"));
  layers.push_back(layer("flatten", "flatten"));
  Json fc = layer("fc", "linear");
  fc["out_features"] = classes;
  layers.push_back(fc);
  layers.push_back(layer("loss", "softmax_cross_entropy"));
}

// conv 7x7/2 - BN - ReLU - max-pool 3x3/2: the 224x224 stem of both families.
void add_imagenet_stem(Json& layers, std::int64_t channels) {
  Json stem = conv("conv1", channels, 7);
  stem["stride"] = 2;
  stem["padding"] = 3;
  layers.push_back(stem);
  layers.push_back(layer("bn1", "batchnorm2d"));
  layers.push_back(layer("relu1", "relu"));
  Json pool = layer("maxpool", "maxpool2d");
  pool["kernel"] = 3;
  pool["stride"] = 2;
  pool["padding"] = 1;
  layers.push_back(pool);
}

Json network(const std::string& name, ZooInput input, const std::string& description,
             Json templates, Json layers) {
  const bool cifar = input == ZooInput::Cifar;
  Json config;
  config["$schema"] = "schema/network.schema.json";
  config["description"] = description;
  config["name"] = name;
  config["input"] = {{"channels", 3}, {"height", cifar ? 32 : 224}, {"width", cifar ? 32 : 224}};
  config["num_classes"] = cifar ? 10 : 1000;
  config["templates"] = std::move(templates);
  config["layers"] = std::move(layers);
  return config;
}

std::string stage_list(const Stages& stages) {
  std::string text;
  for (const std::int64_t s : stages) text += (text.empty() ? "" : "/") + std::to_string(s);
  return text;
}

Json resnet(ZooInput input, std::int64_t depth) {
  const Stages stages = resnet_stages(input, depth);
  const bool cifar = input == ZooInput::Cifar;
  Json bottleneck = Json::array();
  Json bn1 = layer("bn1", "batchnorm2d");
  bn1["when"] = "$preact";
  Json relu1 = layer("relu1", "relu");
  relu1["when"] = "$preact";
  Json conv2 = conv("conv2", "$width", 3);
  conv2["stride"] = "$stride";
  conv2["padding"] = 1;
  // "downsample.0": the shortcut is PyTorch's nn.Sequential(conv1x1), as in bearpaw's preresnet.
  Json downsample = layer("downsample.0", "conv2d");
  downsample["inputs"] = Json::array({"$in"});
  downsample["when"] = "$project";
  downsample.update(conv("downsample.0", "$out", 1));
  downsample["stride"] = "$stride";
  Json add = layer("add", "add");
  add["inputs"] = Json::array({"conv3", "downsample.0"});
  for (Json& l :
       std::vector<Json>{bn1, relu1, conv("conv1", "$width", 1), layer("bn2", "batchnorm2d"),
                         layer("relu2", "relu"), conv2, layer("bn3", "batchnorm2d"),
                         layer("relu3", "relu"), conv("conv3", "$out", 1), downsample, add}) {
    bottleneck.push_back(std::move(l));
  }
  Json layers = Json::array();
  if (cifar) {
    Json stem = conv("conv1", 16, 3);
    stem["padding"] = 1;
    layers.push_back(stem);
  } else {
    add_imagenet_stem(layers, 64);
  }
  std::int64_t width = cifar ? 16 : 64;
  for (std::size_t s = 0; s < stages.size(); ++s, width *= 2) {
    const Json params = {
        {"width", width}, {"out", 4 * width}, {"stride", 1}, {"preact", true}, {"project", false}};
    Json first = Json::object();
    if (s > 0) first["stride"] = 2;
    first["project"] = true;
    if (s == 0 && !cifar) first["preact"] = false;  // the stem ends with BN-ReLU
    Json stage = block("layer" + std::to_string(s + 1), "preact_bottleneck", stages[s], params);
    stage["first"] = first;
    layers.push_back(stage);
  }
  add_head(layers, cifar ? 10 : 1000);
  const std::string description =
      "Pre-activation ResNet-" + std::to_string(depth) + " for " +
      (cifar ? "CIFAR-10" : "224x224 ImageNet") +
      " (He et al. 2016, identity mappings), made by `vdnn gen resnet --depth " +
      std::to_string(depth) + " --input " + input_name(input) + "`: " + stage_list(stages) +
      " bottleneck blocks (BN-ReLU-conv1x1, BN-ReLU-conv3x3 with the stage's stride, "
      "BN-ReLU-conv1x1, expansion 4) of widths " +
      (cifar ? "16/32/64" : "64/128/256/512") +
      "; the first block of each stage has a 1x1 conv shortcut on the block input, as in the "
      "common PyTorch port (bearpaw/pytorch-classification preresnet)" +
      (cifar ? "" : ", and skips its pre-activation after the conv-BN-ReLU-maxpool stem") +
      "; a final BN-ReLU before the pooling; module names as in that port (layerN.i.bn1 ... "
      "conv3, layerN.0.downsample.0, bn, fc" +
      (cifar ? ")" : "), with torchvision's stem names (conv1, bn1)");
  return network("resnet" + std::to_string(depth) + (cifar ? "-cifar" : ""), input, description,
                 Json{{"preact_bottleneck", bottleneck}}, std::move(layers));
}

Json densenet(ZooInput input, std::int64_t depth) {
  const Stages stages = densenet_stages(input, depth);
  const bool cifar = input == ZooInput::Cifar;
  const std::int64_t growth = cifar ? 12 : 32;
  Json conv2 = conv("conv2", "$growth", 3);
  conv2["padding"] = 1;
  Json concat = layer("concat", "concat");
  concat["inputs"] = Json::array({"$in", "conv2"});
  const Json dense_layer = {layer("norm1", "batchnorm2d"),
                            layer("relu1", "relu"),
                            conv("conv1", 4 * growth, 1),
                            layer("norm2", "batchnorm2d"),
                            layer("relu2", "relu"),
                            conv2,
                            concat};
  Json pool = layer("pool", "avgpool2d");
  pool["kernel"] = 2;
  const Json transition = {layer("norm", "batchnorm2d"), layer("relu", "relu"),
                           conv("conv", "$channels", 1), pool};
  Json layers = Json::array();
  std::int64_t channels = 2 * growth;
  if (cifar) {
    Json stem = conv("conv1", channels, 3);
    stem["padding"] = 1;
    layers.push_back(stem);
  } else {
    add_imagenet_stem(layers, channels);
  }
  for (std::size_t s = 0; s < stages.size(); ++s) {
    layers.push_back(
        block("dense" + std::to_string(s + 1), "dense_layer", stages[s], {{"growth", growth}}));
    channels += stages[s] * growth;
    if (s + 1 == stages.size()) break;
    channels /= 2;
    layers.push_back(
        block("transition" + std::to_string(s + 1), "transition", 1, {{"channels", channels}}));
  }
  add_head(layers, cifar ? 10 : 1000);
  const std::string description =
      "DenseNet-BC-" + std::to_string(depth) + " for " + (cifar ? "CIFAR-10" : "224x224 ImageNet") +
      " (Huang et al. 2017), made by `vdnn gen densenet --depth " + std::to_string(depth) +
      " --input " + input_name(input) + "`: growth " + std::to_string(growth) + ", a " +
      std::to_string(2 * growth) + "-channel " +
      (cifar ? "conv3x3 stem" : "conv7x7/2-BN-ReLU-maxpool stem") + ", dense blocks of " +
      stage_list(stages) +
      " layers (BN-ReLU-conv1x1 to 4*growth, BN-ReLU-conv3x3 to growth, concatenated to the "
      "input), transitions BN-ReLU-conv1x1-avgpool2 with compression 0.5 (channels halved, "
      "rounded down), a final BN-ReLU before the pooling, as torchvision's DenseNet";
  return network("densenet" + std::to_string(depth) + (cifar ? "-cifar" : ""), input, description,
                 Json{{"dense_layer", dense_layer}, {"transition", transition}}, std::move(layers));
}

}  // namespace

std::vector<std::int64_t> zoo_stages(ZooFamily family, ZooInput input, std::int64_t depth) {
  return family == ZooFamily::ResNet ? resnet_stages(input, depth) : densenet_stages(input, depth);
}

std::string generate_zoo_config(ZooFamily family, ZooInput input, std::int64_t depth) {
  return format_config_with_count(family == ZooFamily::ResNet ? resnet(input, depth)
                                                              : densenet(input, depth));
}

}  // namespace vdnn::models
