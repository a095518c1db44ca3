// Liveness: per-tensor reference counts derived from the DAG: who reads each feature map in
// forward, who reads it again in backward, and when each may be freed. See Note [Tensor lifetime]
// in docs/ARCHITECTURE.md.
#pragma once

#include <vector>

#include "graph/Graph.hpp"

namespace vdnn::graph {

/// Lifetime facts of one node's output tensor (or of the network input).
struct TensorLife {
  int forward_consumers = 0;                // consumer edges (an input used twice counts twice)
  NodeId last_forward_use = kNetworkInput;  // last consumer in forward; the producer if none
  std::vector<NodeId> backward_readers;     // nodes whose backward reads this value, forward order
  bool needs_grad = true;                   // false for the network input
  /// Node after whose backward the value may be freed, i.e. the first reader in forward order
  /// (backward runs in reverse). kNetworkInput when backward never reads the value.
  NodeId last_backward_use() const {
    return backward_readers.empty() ? kNetworkInput : backward_readers.front();
  }
};

/// Reference counts of every tensor of a graph. Pure function of the graph: no kernel runs.
class Liveness {
 public:
  explicit Liveness(const Graph& graph);

  const TensorLife& of(NodeId tensor) const {
    return tensor == kNetworkInput ? input_ : nodes_.at(static_cast<std::size_t>(tensor));
  }

 private:
  TensorLife input_;
  std::vector<TensorLife> nodes_;
};

}  // namespace vdnn::graph
