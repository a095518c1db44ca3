// Fusion: the graph rewrite that merges chains of layers into one fused layer (Note [Fusion]):
// batchnorm2d -> relu, batchnorm2d -> add -> relu, batchnorm2d -> silu / relu6 / hardswish, and
// conv2d -> relu.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "graph/Graph.hpp"

namespace vdnn::graph {

/// One chain fuse() merged: the fused node (named as its batch norm or convolution, whose
/// parameters it keeps), its type name, and the names of the layers merged into it, in chain order.
struct FusedChain {
  std::string node;
  std::string type;
  std::vector<std::string> merged;
};

/// `graph` with each batchnorm2d whose only consumer is a relu merged with it
/// (batchnorm2d_relu), each batchnorm2d whose only consumer is a two-input add whose only
/// consumer is a relu merged with both (batchnorm2d_add_relu, the add's other input becoming the
/// fused node's second input), each batchnorm2d whose only consumer is a silu, relu6 or hardswish
/// merged with it (batchnorm2d_silu, batchnorm2d_relu6, batchnorm2d_hardswish), and each conv2d
/// whose only consumer is a relu merged with it (conv2d_relu). The fused node stands where the
/// chain's last layer stood and takes its consumers; it keeps the batch norm's or convolution's
/// name, so parameter and checkpoint names do not change. Every other node (a conv2d or batchnorm2d
/// whose output has other consumers too) is kept as it is. Appends what it merged to `chains` when
/// given, in graph order. Chains whose head (batch norm or convolution) is named in `declined` stay
/// unfused (the search's choice, Note [Search]). Each concatenation whose first input is a
/// concatenation it can take in place (can_take_first_in_place) gets layers::ConcatSpec::
/// first_in_place: a dense block then lies in one buffer (Note [Dense block storage]).
Graph fuse(const Graph& graph, std::vector<FusedChain>* chains = nullptr,
           const std::set<std::string>& declined = {});

/// Per chain, the device bytes its fused layer holds in its backward beyond the most any of its
/// unfused layers holds in theirs (inputs and outputs backward reads, the output gradient, the
/// input gradients): what fusing it may add to the memory floor (Note [Search]); 0 when fusing
/// holds no more. `fused` is `source` after fuse(), `chains` fuse()'s record of what it merged.
/// O(N + C) for N nodes and C chains.
std::vector<std::uint64_t> fusion_extra_bytes(const Graph& source, const Graph& fused,
                                              const std::vector<FusedChain>& chains);

/// One line per chain, "  layer1.0.bn1 <- layer1.0.bn1 + layer1.0.relu1 (batchnorm2d_relu)", after
/// a header line with the count; "fusion: none" when `chains` is empty.
std::string format_fusion(const std::vector<FusedChain>& chains);

}  // namespace vdnn::graph
