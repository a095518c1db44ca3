// `vdnn gen`: writes a generated ResNet or DenseNet config of a requested depth, or an EfficientNet
// of a requested width, depth and resolution.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace vdnn::tools {

struct GenOptions {
  std::string family;  // "resnet", "densenet" or "efficientnet"
  // resnet, densenet: weighted layers (a whole number); efficientnet: the depth multiplier.
  std::optional<double> depth;
  std::string input;  // resnet, densenet: "cifar" or "imagenet"
  // efficientnet: a preset ("b0".."b7") or width, depth and resolution; dropout and num_classes
  // override the preset's or the defaults (models/EfficientNetGenerator.hpp).
  std::string preset;
  std::optional<double> width;
  std::optional<std::int64_t> resolution;
  std::optional<double> dropout;
  std::optional<std::int64_t> num_classes;
  std::string out;  // empty: stdout
};

CLI::App* add_gen_command(CLI::App& app, GenOptions& options);

/// Writes the config to options.out, or to stdout; returns 0. Throws runtime::InvalidArgument for
/// a missing or misplaced option (--input for efficientnet, --width for resnet, ...), a depth its
/// family and input do not allow or EfficientNet options out of range (the message states the
/// rule), and an unwritable --out.
int run_gen(const GenOptions& options);

}  // namespace vdnn::tools
