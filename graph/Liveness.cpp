// Reference counts from the DAG: forward consumers and backward readers of every tensor.
#include "graph/Liveness.hpp"

namespace vdnn::graph {

Liveness::Liveness(const Graph& graph) : nodes_(graph.nodes().size()) {
  input_.needs_grad = false;
  auto life = [&](NodeId id) -> TensorLife& {
    return id == kNetworkInput ? input_ : nodes_[static_cast<std::size_t>(id)];
  };
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    life(id).last_forward_use = id;
  }
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    const Node& node = graph.node(id);
    const layers::BackwardNeeds needs = layers::backward_needs(node.spec);
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      TensorLife& t = life(node.inputs[i]);
      ++t.forward_consumers;
      t.last_forward_use = id;
      if (needs.input(i) && (t.backward_readers.empty() || t.backward_readers.back() != id)) {
        t.backward_readers.push_back(id);
      }
    }
    // Consumers come after their producer, so readers are appended in forward order.
    if (needs.output) life(id).backward_readers.push_back(id);
  }
}

}  // namespace vdnn::graph
