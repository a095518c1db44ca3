// `vdnn inspect`: the expanded layer table of a config at a batch size, with totals; or the GPUs
// of this machine and how each pair is linked.
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
  bool devices = false;  // list the GPUs and their peer links instead (Note [Peer tier])
};

CLI::App* add_inspect_command(CLI::App& app, InspectOptions& options);

/// Prints the table (with `devices`: the GPUs, and peer access and link kind per pair) to stdout.
/// Throws InvalidArgument when given neither a config nor `devices`, and the library's typed
/// errors; returns 0.
int run_inspect(const InspectOptions& options);

}  // namespace vdnn::tools
