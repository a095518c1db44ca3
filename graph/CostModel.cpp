// Estimated costs and the keys of measured ones.
#include "graph/CostModel.hpp"

#include <functional>
#include <numeric>
#include <sstream>

namespace vdnn::graph {
namespace {

constexpr double kFlopsPerSecond = 65e12;  // TF32 convolutions as cuDNN reaches them on an H200
constexpr double kBf16Speedup = 2.0;       // Hopper's bf16 tensor math over its TF32
constexpr double kMemoryBytesPerSecond = 2.5e12;
constexpr double kLinkBytesPerSecond = 55e9;
constexpr double kPeerLinkBytesPerSecond = 396e9;
constexpr double kPeerCopyLatency = 3e-6;
constexpr double kLaunchGap = 4e-6;

double flops(const Graph& g, NodeId id) {
  const Node& node = g.node(id);
  const runtime::Shape& out = node.output_shape;
  if (const layers::Conv2dSpec* conv = layers::conv_of(node.spec)) {  // conv2d_relu too
    const runtime::Shape in = g.input_shapes(id).front();
    return 2.0 * static_cast<double>(out.numel()) * static_cast<double>(in.c() / conv->groups) *
           static_cast<double>(conv->kernel[0] * conv->kernel[1]);
  }
  if (std::holds_alternative<layers::LinearSpec>(node.spec)) {
    const runtime::Shape in = g.input_shapes(id).front();
    return 2.0 * static_cast<double>(out.numel()) * static_cast<double>(in.sample_numel());
  }
  return 0.0;
}

double bytes_touched(const Graph& g, NodeId id) {
  double bytes = static_cast<double>(g.tensor_bytes(id));
  for (NodeId in : g.node(id).inputs) bytes += static_cast<double>(g.tensor_bytes(in));
  return bytes;
}

}  // namespace

double CostModel::forward_seconds() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0,
                         [](double sum, const LayerCost& c) { return sum + c.forward; });
}

CostModel estimate_costs(const Graph& g) {
  CostModel costs;
  costs.source = "estimated";
  costs.device_to_host = kLinkBytesPerSecond;
  costs.host_to_device = kLinkBytesPerSecond;
  costs.peer_link = kPeerLinkBytesPerSecond;
  costs.peer_copy_latency = kPeerCopyLatency;
  costs.gap = kLaunchGap;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    const double rate = g.input_dtype(id) == runtime::DType::BF16 ? kBf16Speedup * kFlopsPerSecond
                                                                  : kFlopsPerSecond;
    const double forward = flops(g, id) / rate + bytes_touched(g, id) / kMemoryBytesPerSecond;
    costs.layers.push_back({forward, 2.0 * forward});
  }
  return costs;
}

CostKey cost_key(const Graph& g, const std::string& device, bool deterministic, bool tf32) {
  std::ostringstream structure;
  NodeId id = 0;
  for (const Node& node : g.nodes()) {
    structure << node.name << ' ' << layers::type_name(node.spec) << ' '
              << node.output_shape.to_string() << ' ' << runtime::layout_name(node.layout) << ' '
              << runtime::dtype_name(node.dtype) << ' ' << g.trainable_parameters(id++);
    for (NodeId in : node.inputs) structure << ' ' << in;
    structure << '\n';
  }
  return {g.name(),      g.batch(), device,
          deterministic, tf32,      std::hash<std::string>{}(structure.str())};
}

}  // namespace vdnn::graph
