// `vdnn gen resnet|densenet --depth N --input cifar|imagenet [--out F]`: the model zoo generator
// (models/ZooGenerator) on the command line.
#include "tools/cli/GenCommand.hpp"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "models/ZooGenerator.hpp"
#include "runtime/Error.hpp"

namespace vdnn::tools {

CLI::App* add_gen_command(CLI::App& app, GenOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "gen", "Write the config of a pre-activation ResNet or a DenseNet-BC of a given depth");
  cmd->add_option("family", o.family, "resnet or densenet")
      ->required()
      ->check(CLI::IsMember({"resnet", "densenet"}));
  cmd->add_option("--depth", o.depth,
                  "Weighted layers: resnet cifar 3b+2, imagenet 3b+2 (50/101/152/200 as He et "
                  "al.); densenet cifar 6n+4, imagenet 2b+5 (121/169/201/264 as Huang et al.)")
      ->required();
  cmd->add_option("--input", o.input, "cifar (32x32, 10 classes) or imagenet (224x224, 1000)")
      ->required()
      ->check(CLI::IsMember({"cifar", "imagenet"}));
  cmd->add_option("--out", o.out, "Config file to write (default: stdout)");
  return cmd;
}

int run_gen(const GenOptions& o) {
  const std::string config = models::generate_zoo_config(
      o.family == "resnet" ? models::ZooFamily::ResNet : models::ZooFamily::DenseNet,
      o.input == "cifar" ? models::ZooInput::Cifar : models::ZooInput::ImageNet, o.depth);
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
