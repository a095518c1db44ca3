// `vdnn inspect`: one row per expanded layer (name, type, output shape, parameters, bytes).
#include "tools/cli/InspectCommand.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Device.hpp"
#include "runtime/Error.hpp"

namespace vdnn::tools {

CLI::App* add_inspect_command(CLI::App& app, InspectOptions& o) {
  CLI::App* cmd = app.add_subcommand("inspect", "Print the expanded layer table of a config");
  cmd->add_option("--config", o.config, "Network config (JSON)");
  cmd->add_flag("--devices", o.devices,
                "List the GPUs, and per pair peer access and the link (NVLink or PCIe), for "
                "--offload-peer");
  cmd->add_option("--batch", o.batch, "Mini-batch size")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  return cmd;
}

namespace {

// Note [Peer tier]: which GPU can offload to which, over what.
int print_devices() {
  const int count = runtime::cuda_device_count();
  if (count == 0) {
    std::printf(
        "no CUDA GPUs here (a build without CUDA, no driver, or none visible): nothing to "
        "offload to but pinned host memory\n");
    return 0;
  }
  for (int gpu = 0; gpu < count; ++gpu) {
    std::printf("GPU %d: %s, %s free\n", gpu, runtime::cuda_device_name(gpu).c_str(),
                runtime::format_bytes(runtime::cuda_free_memory(gpu)).c_str());
  }
  if (count == 1) return 0;  // no pair to link
  std::printf("\n%-8s %-8s %-12s %-8s %s\n", "from", "to", "peer access", "link", "rank");
  for (int from = 0; from < count; ++from) {
    for (int to = 0; to < count; ++to) {
      if (from == to) continue;
      const runtime::PeerLink link = runtime::cuda_peer_link(from, to);
      std::printf("GPU %-4d GPU %-4d %-12s %-8s %d\n", from, to, link.access ? "yes" : "no",
                  runtime::link_kind(link), link.performance_rank);
    }
  }
  return 0;
}

}  // namespace

int run_inspect(const InspectOptions& o) {
  if (o.devices) return print_devices();
  if (o.config.empty())
    throw runtime::InvalidArgument("vdnn inspect: give --config F or --devices");
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
