// ParameterStore: every parameter and buffer of a graph, with its gradient and optimizer state,
// allocated once from the executor's memory resource and initialized from a seed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/Plan.hpp"
#include "layers/Optimizer.hpp"
#include "runtime/MemoryResource.hpp"
#include "runtime/Stream.hpp"
#include "runtime/TensorView.hpp"

namespace vdnn::graph {

/// One parameter (or buffer) of one node. grad and state are empty for buffers (and for every
/// parameter of an inference store).
struct Parameter {
  std::string name;  // "<node>.<param>", e.g. "layer2.17.conv2.weight" (PyTorch style)
  NodeId node = 0;
  layers::ParamSpec spec;
  runtime::Buffer value;
  runtime::Buffer grad;
  /// The optimizer's state tensors (layers::state_buffers of them; the rest empty): SGD's and
  /// LARS's momentum buffer, AdamW's exp_avg and exp_avg_sq.
  std::array<runtime::Buffer, layers::kMaxStateBuffers> state;
  /// The bf16 copy a BF16 layer reads instead of the value (layers::param_read_in_precision; Note
  /// [Precision]); empty for the others. The executor rounds it from the value once per pass.
  runtime::Buffer copy;

  bool trainable() const noexcept { return spec.kind == layers::ParamKind::Trainable; }
  runtime::TensorView value_view(runtime::DType dtype) const {
    return {value.data(), spec.shape, dtype, spec.layout};
  }
  runtime::TensorView grad_view(runtime::DType dtype) const {
    return {grad.data(), spec.shape, dtype, spec.layout};
  }
  /// The BF16 copy's view; empty without a copy.
  runtime::TensorView copy_view() const {
    if (copy.empty()) return {};
    return {copy.data(), spec.shape, runtime::DType::BF16, spec.layout};
  }
  runtime::TensorView state_view(std::size_t index, runtime::DType dtype) const {
    return {state.at(index).data(), spec.shape, dtype, spec.layout};
  }
};

/// Owns the parameters of a graph. The memory resource must outlive the store. Initial values are
/// computed on the host and copied in on `upload` (which is synchronized before the constructor
/// returns). The weight of a convolution whose output is NHWC is kept KRSC (ParamSpec::layout, its
/// gradient and optimizer state too), the order the convolution runs, so no step converts it; every
/// other parameter keeps PyTorch's order. Values are the same numbers in either order. Each
/// trainable parameter gets `state_buffers` (<= layers::kMaxStateBuffers) optimizer state tensors,
/// which hold no value until the first update writes them. A parameter that a BF16 layer reads in
/// bf16 (has_bf16_copy) also gets a bf16 copy. For Purpose::Inference the store holds the values
/// (and copies) alone: no gradients, no optimizer state (Note [Inference plan]). With a
/// `gradient_order` (training: the nodes in the order the backward pass runs them), every
/// trainable gradient is a view of one flat buffer, zeroed, laid out in that order at
/// 256-byte-aligned offsets: what the pool, which rounds every allocation to 256 bytes, would
/// take for them one by one, so the plan holds as before (Note [Data parallelism]). Throws
/// OutOfMemory, InvalidArgument when a node with trainable parameters is not in the order.
/// Whether parameter `index` (in layers::param_specs order) of `node` has a bf16 copy: a weight
/// that layers::param_read_in_precision names, of a node whose input dtype is BF16.
bool has_bf16_copy(const Graph& graph, NodeId node, std::size_t index);

class ParameterStore {
 public:
  ParameterStore(const Graph& graph, runtime::MemoryResource& memory, std::uint64_t seed,
                 runtime::Stream& upload, int state_buffers, Purpose purpose = Purpose::Training,
                 const std::vector<NodeId>& gradient_order = {});

  std::vector<Parameter>& all() noexcept { return params_; }
  const std::vector<Parameter>& all() const noexcept { return params_; }
  /// Indices into all() of a node's parameters, in layers::param_specs order.
  const std::vector<std::size_t>& of_node(NodeId node) const {
    return by_node_.at(static_cast<std::size_t>(node));
  }
  /// Number of trainable scalars (torchvision's parameter count).
  std::int64_t trainable_count() const noexcept;

  /// The flat gradient buffer (empty without a gradient order).
  const runtime::Buffer& flat_gradients() const noexcept { return flat_gradients_; }
  /// Indices into all() of the trainable parameters in the flat buffer's order (empty without
  /// a gradient order).
  const std::vector<std::size_t>& gradient_order() const noexcept { return gradient_order_; }

 private:
  void flatten_gradients(const std::vector<NodeId>& order, runtime::MemoryResource& memory,
                         runtime::Stream& upload);

  std::vector<Parameter> params_;
  runtime::Buffer flat_gradients_;
  std::vector<std::size_t> gradient_order_;
  std::vector<std::vector<std::size_t>> by_node_;
};

}  // namespace vdnn::graph
