// `vdnn inspect`: the expanded layer table of a config at a batch size, with totals.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace vdnn::tools {

struct InspectOptions {
  std::string config;
  std::int64_t batch = 1;
};

CLI::App* add_inspect_command(CLI::App& app, InspectOptions& options);

/// Prints the table to stdout. Throws the library's typed errors; returns 0.
int run_inspect(const InspectOptions& options);

}  // namespace vdnn::tools
