// `vdnn inspect`: one row per expanded layer (name, type, output shape, parameters, bytes).
#include "tools/cli/InspectCommand.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "runtime/ByteSize.hpp"

namespace vdnn::tools {

CLI::App* add_inspect_command(CLI::App& app, InspectOptions& o) {
  CLI::App* cmd = app.add_subcommand("inspect", "Print the expanded layer table of a config");
  cmd->add_option("--config", o.config, "Network config (JSON)")->required();
  cmd->add_option("--batch", o.batch, "Mini-batch size")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  return cmd;
}

int run_inspect(const InspectOptions& o) {
  const graph::Graph graph = graph::Graph::build(models::load_network(o.config), o.batch);
  std::printf("%-32s %-22s %-22s %14s %16s\n", "layer", "type", "output", "params", "output bytes");
  std::uint64_t total_params = 0;
  std::uint64_t total_bytes = graph.input_shape().bytes(runtime::DType::F32);
  for (graph::NodeId id = 0; id < static_cast<graph::NodeId>(graph.nodes().size()); ++id) {
    const graph::Node& node = graph.node(id);
    const auto params = static_cast<std::uint64_t>(graph.trainable_parameters(id));
    const std::uint64_t bytes = node.output_shape.bytes(runtime::DType::F32);
    total_params += params;
    total_bytes += bytes;
    std::printf("%-32s %-22s %-22s %14s %16s\n", node.name.c_str(),
                std::string(layers::type_name(node.spec)).c_str(),
                node.output_shape.to_string().c_str(), runtime::format_count(params).c_str(),
                runtime::format_count(bytes).c_str());
  }
  std::printf("\nnetwork %s, batch %lld, input %s, %zu layers\n", graph.name().c_str(),
              static_cast<long long>(graph.batch()), graph.input_shape().to_string().c_str(),
              graph.nodes().size());
  std::printf("total parameters: %s\n", runtime::format_count(total_params).c_str());
  std::printf("total activation bytes (input and every layer output, fp32): %s\n",
              runtime::format_count(total_bytes).c_str());
  return 0;
}

}  // namespace vdnn::tools
