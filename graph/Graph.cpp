// Graph::build: resolves names, orders the DAG topologically, infers shapes and rejects bad
// networks with errors that name where the offending layer was defined.
#include "graph/Graph.hpp"

#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

#include "graph/DenseBlocks.hpp"

namespace vdnn::graph {
namespace {

constexpr std::int64_t kMaxBatch = std::int64_t{1} << 20;

[[noreturn]] void fail(const std::string& origin, const std::string& message) {
  throw GraphError(origin + ": " + message);
}

// Bytes of an F32 tensor of `shape`, saturating instead of overflowing.
std::uint64_t saturating_bytes(const runtime::Shape& shape) {
  long double bytes = sizeof(float);
  for (int i = 0; i < shape.rank(); ++i) bytes *= static_cast<long double>(shape[i]);
  return bytes > static_cast<long double>(std::numeric_limits<std::uint64_t>::max() / 2)
             ? std::numeric_limits<std::uint64_t>::max()
             : static_cast<std::uint64_t>(bytes);
}

void check_size(const std::string& origin, const std::string& what, const runtime::Shape& shape) {
  if (saturating_bytes(shape) > kMaxTensorBytes) {
    fail(origin, what + " " + shape.to_string() + " exceeds the limit of " +
                     std::to_string(kMaxTensorBytes) + " bytes per tensor");
  }
}

// Definition indices in a topological order that keeps definition order where it is valid.
std::vector<std::size_t> topological_order(const NetworkDef& def,
                                           const std::vector<std::vector<std::size_t>>& preds) {
  const std::size_t n = def.layers.size();
  std::vector<std::vector<std::size_t>> succs(n);
  std::vector<std::size_t> pending(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    pending[i] = preds[i].size();
    for (std::size_t p : preds[i]) succs[p].push_back(i);
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (std::size_t s : succs[i]) {
      if (--pending[s] == 0) ready.push(s);
    }
  }
  if (order.size() != n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (pending[i] != 0) {
        fail(def.layers[i].origin, "layer '" + def.layers[i].name +
                                       "' is part of a cycle; expected inputs that lead back to '" +
                                       kInputName + "'");
      }
    }
  }
  return order;
}

}  // namespace

Graph Graph::build(const NetworkDef& def, std::int64_t batch) {
  if (batch < 1 || batch > kMaxBatch) {
    fail(def.origin, "batch size " + std::to_string(batch) + " is outside [1, " +
                         std::to_string(kMaxBatch) + "]");
  }
  if (def.channels < 1 || def.height < 1 || def.width < 1 || def.num_classes < 2) {
    fail(def.origin, "expected positive input channels, height, width and num_classes >= 2");
  }
  if (def.layers.empty()) fail(def.origin, "expected at least one layer");

  // Names and edges, by definition index.
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < def.layers.size(); ++i) {
    const LayerDef& layer = def.layers[i];
    if (layer.name.empty() || layer.name == kInputName) {
      fail(layer.origin,
           "expected a non-empty layer name other than '" + std::string(kInputName) + "'");
    }
    if (!index.emplace(layer.name, i).second) {
      fail(layer.origin, "duplicate layer name '" + layer.name + "'");
    }
  }
  std::vector<std::vector<std::size_t>> preds(def.layers.size());
  for (std::size_t i = 0; i < def.layers.size(); ++i) {
    const LayerDef& layer = def.layers[i];
    const layers::Arity a = layers::arity(layer.spec);
    const int count = static_cast<int>(layer.inputs.size());
    if (count < a.min || count > a.max) {
      fail(layer.origin, std::string(layers::type_name(layer.spec)) + " '" + layer.name +
                             "' expected " +
                             (a.max == 1 ? std::string("exactly 1 input")
                                         : "at least " + std::to_string(a.min) + " inputs") +
                             ", got " + std::to_string(count));
    }
    for (const std::string& in : layer.inputs) {
      if (in == kInputName) continue;
      const auto it = index.find(in);
      if (it == index.end()) {
        fail(layer.origin, "input '" + in + "' of layer '" + layer.name +
                               "' is not defined; expected '" + kInputName +
                               "' or the name of a layer in the network");
      }
      preds[i].push_back(it->second);
    }
  }
  const std::vector<std::size_t> order = topological_order(def, preds);

  Graph g;
  g.name_ = def.name;
  g.origin_ = def.origin;
  g.batch_ = batch;
  g.num_classes_ = def.num_classes;
  g.input_shape_ = runtime::Shape::nchw(batch, def.channels, def.height, def.width);
  g.image_input_ = def.image_input;
  check_size(def.origin, "input", g.input_shape_);

  std::vector<NodeId> node_of(def.layers.size());
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    node_of[order[pos]] = static_cast<NodeId>(pos);
  }
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const LayerDef& layer = def.layers[order[pos]];
    Node node{layer.name, layer.spec, {}, {}, {}, layer.origin};
    for (const std::string& in : layer.inputs) {
      node.inputs.push_back(in == kInputName ? kNetworkInput : node_of[index.at(in)]);
    }
    g.nodes_.push_back(std::move(node));
    const NodeId id = static_cast<NodeId>(pos);
    const std::vector<runtime::Shape> in_shapes = g.input_shapes(id);
    try {
      g.nodes_.back().output_shape = layers::infer_output_shape(layer.spec, in_shapes);
      for (const layers::ParamSpec& p : layers::param_specs(layer.spec, in_shapes)) {
        check_size(layer.origin, "parameter '" + layer.name + "." + p.name + "'", p.shape);
      }
    } catch (const runtime::ShapeError& e) {
      fail(layer.origin, "layer '" + layer.name + "': " + e.what());
    }
    check_size(layer.origin, "output of layer '" + layer.name + "'", g.nodes_.back().output_shape);
    g.nodes_.back().dtype = layers::output_dtype(layer.spec, g.input_dtype(id));
    g.nodes_.back().needs_grad =
        g.trainable_parameters(id) > 0 ||
        std::any_of(g.nodes_.back().inputs.begin(), g.nodes_.back().inputs.end(),
                    [&](NodeId in) { return in != kNetworkInput && g.node(in).needs_grad; });
    for (NodeId in : g.nodes_.back().inputs) {
      if (g.dtype(in) != g.input_dtype(id)) {
        fail(layer.origin, "layer '" + layer.name + "' reads inputs of different element types (" +
                               runtime::dtype_name(g.dtype(in)) + " and " +
                               runtime::dtype_name(g.input_dtype(id)) + ")");
      }
    }
    const bool normalizes = std::holds_alternative<layers::NormalizeSpec>(layer.spec);
    if (normalizes != (g.image_input_ && g.nodes_.back().inputs.front() == kNetworkInput) ||
        (normalizes && g.nodes_.back().inputs.size() != 1)) {
      fail(layer.origin, "layer '" + layer.name + "': " +
                             (g.image_input_ ? "image bytes are read by one normalize layer only"
                                             : "a normalize layer reads image bytes only"));
    }
    for (NodeId in : g.nodes_.back().inputs) {
      (in == kNetworkInput ? g.input_consumers_ : g.nodes_[static_cast<std::size_t>(in)].consumers)
          .push_back(id);
    }
  }

  // Exactly one loss, the only sink, fed by logits of num_classes per sample.
  for (const Node& node : g.nodes_) {
    const bool is_loss = std::holds_alternative<layers::SoftmaxCrossEntropySpec>(node.spec);
    if (is_loss && &node != &g.nodes_.back()) {
      fail(node.origin, "expected exactly one softmax_cross_entropy layer, consumed by nothing");
    }
    if (!is_loss && node.consumers.empty()) {
      fail(node.origin, "the output of layer '" + node.name +
                            "' is never used; expected every layer to feed the loss");
    }
  }
  const Node& loss = g.nodes_.back();
  if (!std::holds_alternative<layers::SoftmaxCrossEntropySpec>(loss.spec)) {
    fail(loss.origin, "expected the network to end in a softmax_cross_entropy layer");
  }
  if (g.logits_node() == kNetworkInput) {
    fail(loss.origin,
         "the loss reads the network input; expected layers before it that turn "
         "the input into num_classes logits per sample");
  }
  const runtime::Shape logits = g.node(g.logits_node()).output_shape;
  if (logits.sample_numel() != def.num_classes) {
    fail(loss.origin,
         "loss input has " + std::to_string(logits.sample_numel()) +
             " values per sample; expected num_classes = " + std::to_string(def.num_classes));
  }
  g.storage_ = block_storage(g);
  g.in_block_ = shares_block(g.storage_);
  return g;
}

void Graph::use_layout(runtime::Layout layout) {
  for (Node& node : nodes_) {
    node.layout = runtime::Layout::Nchw;
    if (node.output_shape.rank() != 4 || layout == runtime::Layout::Nchw) continue;
    if (layers::conv_of(node.spec) != nullptr) {
      node.layout = layout;  // a convolution converts an NCHW input itself
      continue;
    }
    if (std::holds_alternative<layers::NormalizeSpec>(node.spec)) continue;  // writes NCHW
    const auto layout_of = [&](NodeId in) {
      return in == kNetworkInput ? network_input_layout()
                                 : nodes_[static_cast<std::size_t>(in)].layout;
    };
    node.layout = layout_of(node.inputs.front());
    for (NodeId in : node.inputs) {
      if (layout_of(in) != node.layout) {
        fail(node.origin, "layer '" + node.name + "' reads inputs in different layouts (" +
                              runtime::layout_name(layout_of(in)) + " and " +
                              runtime::layout_name(node.layout) + "); expected one layout, or " +
                              "--layout nchw");
      }
    }
  }
}

runtime::DType Graph::dtype(NodeId t) const {
  if (t != kNetworkInput) return node(t).dtype;
  return image_input_ ? runtime::DType::U8 : runtime::DType::F32;
}

std::uint64_t Graph::tensor_bytes(NodeId t) const {
  return (t == kNetworkInput ? input_shape_ : node(t).output_shape).bytes(dtype(t));
}

NetworkDef Graph::definition() const {
  NetworkDef def;
  def.name = name_;
  def.channels = input_shape_.c();
  def.height = input_shape_.h();
  def.width = input_shape_.w();
  def.num_classes = num_classes_;
  def.image_input = image_input_;
  def.origin = origin_;
  for (const Node& node : nodes_) {
    LayerDef layer{node.name, node.spec, {}, node.origin};
    for (NodeId in : node.inputs)
      layer.inputs.push_back(in == kNetworkInput ? kInputName : this->node(in).name);
    def.layers.push_back(std::move(layer));
  }
  return def;
}

runtime::Layout Graph::input_layout(NodeId id) const {
  const NodeId in = node(id).inputs.front();
  return in == kNetworkInput ? network_input_layout() : node(in).layout;
}

runtime::Layout Graph::network_input_layout() const noexcept {
  return image_input_ ? runtime::Layout::Nhwc : runtime::Layout::Nchw;
}

std::vector<runtime::Shape> Graph::input_shapes(NodeId id) const {
  std::vector<runtime::Shape> shapes;
  for (NodeId in : node(id).inputs) {
    shapes.push_back(in == kNetworkInput ? input_shape_ : node(in).output_shape);
  }
  return shapes;
}

std::int64_t Graph::trainable_parameters(NodeId id) const {
  std::int64_t total = 0;
  for (const layers::ParamSpec& p : layers::param_specs(node(id).spec, input_shapes(id))) {
    if (p.kind == layers::ParamKind::Trainable) total += p.shape.numel();
  }
  return total;
}

std::int64_t Graph::trainable_parameters() const {
  std::int64_t total = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(nodes_.size()); ++id) {
    total += trainable_parameters(id);
  }
  return total;
}

}  // namespace vdnn::graph
