// `vdnn gen`: writes a generated ResNet or DenseNet config of a requested depth.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace vdnn::tools {

struct GenOptions {
  std::string family;  // "resnet" or "densenet"
  std::int64_t depth = 0;
  std::string input;  // "cifar" or "imagenet"
  std::string out;    // empty: stdout
};

CLI::App* add_gen_command(CLI::App& app, GenOptions& options);

/// Writes the config to options.out, or to stdout. Throws runtime::InvalidArgument for a depth
/// its family and input do not allow (the message states the rule) and for an unwritable --out;
/// returns 0.
int run_gen(const GenOptions& options);

}  // namespace vdnn::tools
