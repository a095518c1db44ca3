// The fusion pass: finds batchnorm2d -> [add ->] relu, batchnorm2d -> silu / relu6 / hardswish and
// conv2d -> relu chains on the validated graph, rewrites its definition and validates the result
// again through Graph::build.
#include "graph/Fusion.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <utility>

#include "graph/DenseBlocks.hpp"

namespace vdnn::graph {
namespace {

template <typename Spec>
bool is(const Node& node) {
  return std::holds_alternative<Spec>(node.spec);
}

// The single consumer of `id`, if it has exactly one use.
std::optional<NodeId> only_consumer(const Graph& g, NodeId id) {
  const std::vector<NodeId>& consumers = g.node(id).consumers;
  if (consumers.size() != 1) return std::nullopt;
  return consumers.front();
}

// The activation a batch norm fuses with besides relu, when `node` is one: those that follow a
// batch norm in the zoo (MobileNetV2's relu6, EfficientNet's silu, MobileNetV3's hardswish).
std::optional<layers::Activation> fusable_activation(const Node& node) {
  if (is<layers::SiluSpec>(node)) return layers::Activation::Silu;
  if (is<layers::Relu6Spec>(node)) return layers::Activation::Relu6;
  if (is<layers::HardswishSpec>(node)) return layers::Activation::Hardswish;
  return std::nullopt;
}

// The chain starting at node `head` (a batch norm or a convolution), when there is one: the nodes
// merged (the head first, the relu last) and the residual input of a bn -> add -> relu chain.
struct Chain {
  std::vector<NodeId> nodes;
  std::optional<NodeId> residual;
};

std::optional<Chain> chain_from(const Graph& g, NodeId head) {
  if (is<layers::Conv2dSpec>(g.node(head))) {
    const std::optional<NodeId> relu = only_consumer(g, head);
    if (!relu || !is<layers::ReluSpec>(g.node(*relu))) return std::nullopt;
    return Chain{{head, *relu}, std::nullopt};
  }
  const NodeId bn = head;
  if (!is<layers::BatchNorm2dSpec>(g.node(bn))) return std::nullopt;
  const std::optional<NodeId> next = only_consumer(g, bn);
  if (!next) return std::nullopt;
  if (is<layers::ReluSpec>(g.node(*next)) || fusable_activation(g.node(*next))) {
    return Chain{{bn, *next}, std::nullopt};
  }
  const Node& add = g.node(*next);
  if (!is<layers::AddSpec>(add) || add.inputs.size() != 2) return std::nullopt;
  const NodeId other = add.inputs[0] == bn ? add.inputs[1] : add.inputs[0];
  if (other == bn) return std::nullopt;  // bn + bn
  const std::optional<NodeId> relu = only_consumer(g, *next);
  if (!relu || !is<layers::ReluSpec>(g.node(*relu))) return std::nullopt;
  return Chain{{bn, *next, *relu}, other};
}

std::string input_name(const Graph& g, NodeId id) {
  return id == kNetworkInput ? kInputName : g.node(id).name;
}

// The fused layer of `chain`.
layers::LayerSpec fused_spec(const Graph& g, const Chain& chain) {
  const Node& head = g.node(chain.nodes.front());
  if (const auto* conv = std::get_if<layers::Conv2dSpec>(&head.spec)) {
    return layers::Conv2dReluSpec{*conv};
  }
  const auto& bn = std::get<layers::BatchNorm2dSpec>(head.spec);
  if (const auto activation = fusable_activation(g.node(chain.nodes.back()))) {
    return layers::BatchNormActivationSpec{bn, *activation};
  }
  return layers::BatchNormReluSpec{bn, chain.residual.has_value()};
}

}  // namespace

Graph fuse(const Graph& graph, std::vector<FusedChain>* chains,
           const std::set<std::string>& declined) {
  const auto n = static_cast<NodeId>(graph.nodes().size());
  // Per node: the fused layer that replaces it at its position (chain ends), or nothing (merged
  // into a chain, or kept as it is).
  std::vector<std::optional<LayerDef>> replaced(static_cast<std::size_t>(n));
  std::vector<bool> merged(static_cast<std::size_t>(n), false);
  std::unordered_map<std::string, std::string> renamed;  // a chain's last name -> its head's
  for (NodeId id = 0; id < n; ++id) {
    const std::optional<Chain> chain = chain_from(graph, id);
    // An add joins two batch norms in a projection block: the first claims it.
    if (!chain || declined.count(graph.node(id).name) > 0 ||
        std::any_of(chain->nodes.begin(), chain->nodes.end(),
                    [&](NodeId m) { return merged[static_cast<std::size_t>(m)]; })) {
      continue;
    }
    const Node& head = graph.node(id);
    const layers::LayerSpec spec = fused_spec(graph, *chain);
    LayerDef def{head.name, spec, {input_name(graph, head.inputs.front())}, head.origin};
    if (chain->residual) def.inputs.push_back(input_name(graph, *chain->residual));
    FusedChain record{head.name, std::string(layers::type_name(spec)), {}};
    for (NodeId m : chain->nodes) {
      merged[static_cast<std::size_t>(m)] = true;
      record.merged.push_back(graph.node(m).name);
    }
    renamed[graph.node(chain->nodes.back()).name] = head.name;
    replaced[static_cast<std::size_t>(chain->nodes.back())] = std::move(def);
    if (chains != nullptr) chains->push_back(std::move(record));
  }
  NetworkDef def = graph.definition();  // layer i is node i
  // Note [Dense block storage]: a concatenation whose first input is one too takes it in place.
  for (NodeId id = 0; id < n; ++id) {
    if (can_take_first_in_place(graph, id)) {
      std::get<layers::ConcatSpec>(def.layers[static_cast<std::size_t>(id)].spec).first_in_place =
          true;
    }
  }
  std::vector<LayerDef> kept;
  for (std::size_t i = 0; i < def.layers.size(); ++i) {
    if (replaced[i]) {
      kept.push_back(std::move(*replaced[i]));
    } else if (!merged[i]) {
      kept.push_back(std::move(def.layers[i]));
    }
  }
  def.layers = std::move(kept);
  for (LayerDef& layer : def.layers) {
    for (std::string& in : layer.inputs) {
      if (const auto it = renamed.find(in); it != renamed.end()) in = it->second;
    }
  }
  return Graph::build(def, graph.batch());
}

namespace {

std::uint64_t bytes_of(const Graph& g, NodeId t) {
  return (t == kNetworkInput ? g.input_shape() : g.node(t).output_shape).bytes(runtime::DType::F32);
}

// What node `id`'s backward holds: what it reads, its output gradient and its input gradients.
std::uint64_t backward_bytes(const Graph& g, NodeId id) {
  const Node& node = g.node(id);
  const layers::BackwardNeeds needs = layers::backward_needs(node.spec);
  std::uint64_t bytes = bytes_of(g, id) * (needs.output ? 2 : 1);
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const std::uint64_t in = bytes_of(g, node.inputs[i]);
    bytes += (needs.input(i) ? in : 0) + (node.inputs[i] == kNetworkInput ? 0 : in);
  }
  return bytes;
}

// Each node's id by its name.
std::unordered_map<std::string, NodeId> ids(const Graph& g) {
  std::unordered_map<std::string, NodeId> by_name;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id)
    by_name[g.node(id).name] = id;
  return by_name;
}

NodeId id_of(const std::unordered_map<std::string, NodeId>& by_name, const std::string& name) {
  const auto it = by_name.find(name);
  VDNN_EXPECTS(it != by_name.end(), "fusion_extra_bytes: no layer " + name);
  return it->second;
}

}  // namespace

std::vector<std::uint64_t> fusion_extra_bytes(const Graph& source, const Graph& fused,
                                              const std::vector<FusedChain>& chains) {
  const auto in_source = ids(source);
  const auto in_fused = ids(fused);
  std::vector<std::uint64_t> extra;
  for (const FusedChain& chain : chains) {
    std::uint64_t parts = 0;
    for (const std::string& m : chain.merged) {
      parts = std::max(parts, backward_bytes(source, id_of(in_source, m)));
    }
    const std::uint64_t whole = backward_bytes(fused, id_of(in_fused, chain.node));
    extra.push_back(whole > parts ? whole - parts : 0);
  }
  return extra;
}

std::string format_fusion(const std::vector<FusedChain>& chains) {
  if (chains.empty()) return "fusion: none\n";
  std::string out =
      "fusion: " + std::to_string(chains.size()) + " chains fused (--no-fuse: none)\n";
  for (const FusedChain& c : chains) {
    std::string parts;
    for (const std::string& m : c.merged) parts += (parts.empty() ? "" : " + ") + m;
    out += "  " + c.node + " <- " + parts + " (" + c.type + ")\n";
  }
  return out;
}

}  // namespace vdnn::graph
