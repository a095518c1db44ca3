// Fusion: the graph rewrite that merges chains of memory-bound layers into one fused layer
// (Note [Fusion]): batchnorm2d -> relu, and batchnorm2d -> add -> relu.
#pragma once

#include <string>
#include <vector>

#include "graph/Graph.hpp"

namespace vdnn::graph {

/// One chain fuse() merged: the fused node (named as its batch norm, whose parameters it keeps),
/// its type name, and the names of the layers merged into it, in chain order.
struct FusedChain {
  std::string node;
  std::string type;
  std::vector<std::string> merged;
};

/// `graph` with each batchnorm2d whose only consumer is a relu merged with it
/// (batchnorm2d_relu), and each batchnorm2d whose only consumer is a two-input add whose only
/// consumer is a relu merged with both (batchnorm2d_add_relu, the add's other input becoming the
/// fused node's second input). The fused node stands where the relu stood and takes its consumers;
/// it keeps the batch norm's name, so parameter and checkpoint names do not change. Every other
/// node is kept as it is. Appends what it merged to `chains` when given.
Graph fuse(const Graph& graph, std::vector<FusedChain>* chains = nullptr);

/// One line per chain, "  layer1.0.bn1 <- layer1.0.bn1 + layer1.0.relu1 (batchnorm2d_relu)", after
/// a header line with the count; "fusion: none" when `chains` is empty.
std::string format_fusion(const std::vector<FusedChain>& chains);

}  // namespace vdnn::graph
