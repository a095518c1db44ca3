// `vdnn gen resnet|densenet --depth N --input cifar|imagenet` and `vdnn gen efficientnet
// (--preset bN | --width W --depth D --resolution R)`: the model zoo generators
// (models/ZooGenerator, models/EfficientNetGenerator) on the command line.
#include "tools/cli/GenCommand.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <iostream>

#include "models/EfficientNetGenerator.hpp"
#include "models/ZooGenerator.hpp"
#include "runtime/Error.hpp"

namespace vdnn::tools {
namespace {

constexpr double kMaxWholeDepth = 1e15;  // exactly representable, far beyond any family's limit

// Throws when `flag` was given to a command that does not take it.
void refuse(bool given, const std::string& flag, const std::string& command) {
  if (given) throw runtime::InvalidArgument(flag + " does not apply to `vdnn gen " + command + "`");
}

std::string resnet_or_densenet(const GenOptions& o) {
  refuse(!o.preset.empty(), "--preset", o.family);
  refuse(o.width.has_value(), "--width", o.family);
  refuse(o.resolution.has_value(), "--resolution", o.family);
  refuse(o.dropout.has_value(), "--dropout", o.family);
  refuse(o.num_classes.has_value(), "--num-classes", o.family);
  if (!o.depth || o.input.empty()) {
    throw runtime::InvalidArgument("vdnn gen " + o.family + " needs --depth and --input");
  }
  const double depth = *o.depth;
  if (!(std::abs(depth) <= kMaxWholeDepth) || std::floor(depth) != depth) {
    throw runtime::InvalidArgument("--depth of " + o.family +
                                   " is a whole number of weighted layers");
  }
  return models::generate_zoo_config(
      o.family == "resnet" ? models::ZooFamily::ResNet : models::ZooFamily::DenseNet,
      o.input == "cifar" ? models::ZooInput::Cifar : models::ZooInput::ImageNet,
      static_cast<std::int64_t>(depth));
}

std::string efficientnet(const GenOptions& o) {
  refuse(!o.input.empty(), "--input", o.family);
  models::EfficientNetOptions options;
  if (!o.preset.empty()) {
    refuse(o.width.has_value(), "--width (the preset sets it)", "efficientnet --preset");
    refuse(o.depth.has_value(), "--depth (the preset sets it)", "efficientnet --preset");
    options = models::efficientnet_preset(o.preset);
  } else if (!o.width || !o.depth || !o.resolution) {
    throw runtime::InvalidArgument(
        "vdnn gen efficientnet needs --preset b0..b7, or --width, --depth and --resolution");
  } else {
    options.width = *o.width;
    options.depth = *o.depth;
  }
  options.resolution = o.resolution.value_or(options.resolution);
  options.dropout = o.dropout.value_or(options.dropout);
  options.num_classes = o.num_classes.value_or(options.num_classes);
  return models::generate_efficientnet_config(options);
}

}  // namespace

CLI::App* add_gen_command(CLI::App& app, GenOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "gen",
      "Write the config of a pre-activation ResNet or a DenseNet-BC of a given depth, or of an "
      "EfficientNet of a given width, depth and resolution");
  cmd->add_option("family", o.family, "resnet, densenet or efficientnet")
      ->required()
      ->check(CLI::IsMember({"resnet", "densenet", "efficientnet"}));
  cmd->add_option(
      "--depth", o.depth,
      "resnet, densenet: weighted layers: resnet cifar 3b+2, imagenet 3b+2 "
      "(50/101/152/200 as He et al.); densenet cifar 6n+4, imagenet 2b+5 "
      "(121/169/201/264 as Huang et al.). efficientnet: the depth multiplier in (0, 8]");
  cmd->add_option("--input", o.input,
                  "resnet, densenet: cifar (32x32, 10 classes) or imagenet (224x224, 1000)")
      ->check(CLI::IsMember({"cifar", "imagenet"}));
  cmd->add_option("--preset", o.preset,
                  "efficientnet: torchvision's b0..b7 (width, depth, resolution, dropout, BN)")
      ->check(CLI::IsMember({"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"}));
  cmd->add_option("--width", o.width, "efficientnet: the width multiplier in (0, 8]");
  cmd->add_option("--resolution", o.resolution, "efficientnet: input pixels, in [32, 2048]");
  cmd->add_option("--dropout", o.dropout,
                  "efficientnet: before the classifier, in [0, 1) (default 0.2, or the preset's)");
  cmd->add_option("--num-classes", o.num_classes, "efficientnet: classes (default 1000)");
  cmd->add_option("--out", o.out, "Config file to write (default: stdout)");
  return cmd;
}

int run_gen(const GenOptions& o) {
  const std::string config = o.family == "efficientnet" ? efficientnet(o) : resnet_or_densenet(o);
  if (o.out.empty()) {
    std::cout << config;
    return 0;
  }
  std::ofstream file(o.out, std::ios::binary);
  if (!(file << config) || !file.flush()) {
    throw runtime::InvalidArgument("cannot write the config to --out " + o.out);
  }
  return 0;
}

}  // namespace vdnn::tools
