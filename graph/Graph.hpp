// Graph: the validated layer DAG of one network at one batch size, in topological order, with
// each node's output shape and its forward consumers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/NetworkDef.hpp"
#include "runtime/Error.hpp"

namespace vdnn::graph {

using NodeId = std::int32_t;
/// Input id that stands for the network's input images.
inline constexpr NodeId kNetworkInput = -1;
/// Largest single tensor Graph::build accepts (1 TiB): larger means a config error.
inline constexpr std::uint64_t kMaxTensorBytes = std::uint64_t{1} << 40;

/// A problem with the network's structure or shapes. what() starts with the origin (file and
/// JSON path) of the offending layer.
class GraphError : public runtime::Error {
 public:
  using Error::Error;
};

struct Node {
  std::string name;
  layers::LayerSpec spec;
  std::vector<NodeId> inputs;     // kNetworkInput or earlier nodes
  runtime::Shape output_shape;    // at the graph's batch size
  std::vector<NodeId> consumers;  // later nodes reading this node's output, in order, repeats kept
  std::string origin;
  runtime::Layout layout = runtime::Layout::Nchw;  // of the output in memory (Note [Layout])
  runtime::DType dtype = runtime::DType::F32;      // of the output's elements (Note [Precision])
  /// Whether backward needs the output's gradient: the node has trainable parameters or reads a
  /// tensor that needs one (a cast of the network input does not).
  bool needs_grad = true;
};

class Graph {
 public:
  /// Validates `def` at `batch`: unique names, known inputs, no cycles, layer arity, shapes
  /// (layers::infer_output_shape), tensor sizes under kMaxTensorBytes, a single loss layer that
  /// is the sink. Throws GraphError naming the origin and what was expected. Allocates nothing
  /// on any device.
  static Graph build(const NetworkDef& def, std::int64_t batch);

  const std::string& name() const noexcept { return name_; }
  /// Where the network was defined (NetworkDef::origin).
  const std::string& origin() const noexcept { return origin_; }
  std::int64_t batch() const noexcept { return batch_; }
  std::int64_t num_classes() const noexcept { return num_classes_; }
  /// Shape of the network input at this batch size (N, C, H, W).
  const runtime::Shape& input_shape() const noexcept { return input_shape_; }
  /// Nodes in topological order (execution order of forward).
  const std::vector<Node>& nodes() const noexcept { return nodes_; }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<std::size_t>(id)); }
  /// Consumers of the network input.
  const std::vector<NodeId>& input_consumers() const noexcept { return input_consumers_; }
  /// Shapes of a node's inputs.
  std::vector<runtime::Shape> input_shapes(NodeId id) const;
  /// Trainable parameters (weights and biases, not running statistics) of node `id`, and of all.
  std::int64_t trainable_parameters(NodeId id) const;
  std::int64_t trainable_parameters() const;
  /// The loss node (the last node).
  NodeId loss_node() const noexcept { return static_cast<NodeId>(nodes_.size()) - 1; }
  /// The node whose output feeds the loss (the logits).
  NodeId logits_node() const { return node(loss_node()).inputs.front(); }

  /// Sets every node's output layout for a network run in `layout` (Note [Layout]): with Nhwc,
  /// convolutions give NHWC, other rank-4 outputs follow their inputs, and rank-2 outputs (and the
  /// network input) stay NCHW-logical. Throws GraphError naming a node whose rank-4 inputs come in
  /// different layouts.
  void use_layout(runtime::Layout layout);
  /// The layout of node `id`'s inputs (all the same after use_layout); for the network input, Nhwc
  /// when it is image bytes, else Nchw.
  runtime::Layout input_layout(NodeId id) const;
  /// Whether the network input is u8 NHWC image bytes (NetworkDef::image_input).
  bool image_input() const noexcept { return image_input_; }
  /// The network input's layout: Nhwc when it is image bytes, else Nchw.
  runtime::Layout network_input_layout() const noexcept;
  /// The element type of tensor `t`: a node's output (layers::output_dtype of its inputs'); for
  /// the network input U8 when it is image bytes, else F32 (Note [Precision]).
  runtime::DType dtype(NodeId t) const;
  /// Bytes of tensor `t` (a node's output, or the network input) in its element type.
  std::uint64_t tensor_bytes(NodeId t) const;
  /// The element type of node `id`'s inputs (all the same: build checks it), which its layer is
  /// built for (LayerOptions::dtype).
  runtime::DType input_dtype(NodeId id) const { return dtype(node(id).inputs.front()); }
  /// Per map (the network input last, as Plan::placement), the map whose buffer holds it, and
  /// whether it shares that buffer with others (Note [Dense block storage]; graph::block_storage
  /// and graph::shares_block, found once at build).
  const std::vector<NodeId>& storage() const noexcept { return storage_; }
  const std::vector<bool>& in_block() const noexcept { return in_block_; }
  /// The network as a definition again: its layers in topological order, each reading its inputs
  /// by name, so that a rewrite (Fusion, Precision) can change it and build it again.
  NetworkDef definition() const;

 private:
  std::string name_;
  std::string origin_;
  std::int64_t batch_ = 0;
  std::int64_t num_classes_ = 0;
  runtime::Shape input_shape_;
  bool image_input_ = false;
  std::vector<Node> nodes_;
  std::vector<NodeId> input_consumers_;
  std::vector<NodeId> storage_;
  std::vector<bool> in_block_;
};

}  // namespace vdnn::graph
