// Where each fixed policy puts a feature map, and the facts about maps the planner shares.
#include <algorithm>
#include <iterator>
#include <string_view>

#include "graph/planner/PlanBuilder.hpp"

namespace vdnn::graph::planner {
namespace {

// Layers whose forward costs about one pass over their tensors: running them again in backward is
// cheaper than keeping their outputs (Note [Recomputation]).
constexpr std::string_view kCheapLayers[] = {
    // batch norm, pooling and the joins
    "batchnorm2d", "batchnorm2d_relu", "batchnorm2d_add_relu", "batchnorm2d_silu",
    "batchnorm2d_relu6", "batchnorm2d_hardswish", "maxpool2d", "avgpool2d", "global_avgpool", "add",
    "concat", "mul", "flatten", "dropout",
    // the element-wise activations
    "relu", "relu6", "silu", "gelu", "sigmoid", "hardswish", "hardsigmoid",
    // ConvNeXt's: a pass over each pixel's channels, a per-channel scale, a per-sample mask
    "layernorm2d", "layer_scale", "stochastic_depth"};

// conv2d, or conv2d_relu: fused or not, the layer reads its input as a convolution does.
bool is_conv(const Node& node) { return layers::conv_of(node.spec) != nullptr; }

bool is_cheap(const Node& node) {
  return std::find(std::begin(kCheapLayers), std::end(kCheapLayers),
                   layers::type_name(node.spec)) != std::end(kCheapLayers);
}

// Where a map that leaves the device goes under `policy`.
Placement away(Policy policy) {
  switch (policy) {
    case Policy::UvmEvict:
      return Placement::Evicted;
    case Policy::UvmPrefetch:
      return Placement::Migrated;
    default:
      return Placement::Offloaded;
  }
}

// Whether the producer of `t` can run again just before the backward of node `at` from what is on
// the device then: Resident maps not yet freed, and maps nobody keeps that can be rebuilt so
// themselves, as temporaries (Note [Recomputation]). `placement` is decided up to `t`.
bool rebuildable(const Graph& g, const Liveness& live, const std::vector<Placement>& placement,
                 NodeId t, NodeId at) {
  if (t == kNetworkInput || !is_cheap(g.node(t))) return false;
  return std::all_of(g.node(t).inputs.begin(), g.node(t).inputs.end(), [&](NodeId in) {
    switch (placement[index_of(g, in)]) {
      case Placement::Resident:
      case Placement::InBlock:
        return live.of(in).last_backward_use() <= at;  // freed after that node's backward
      case Placement::Retained:
        return true;  // freed after its consumers' backward passes, t's among them
      case Placement::ForwardOnly:
        return rebuildable(g, live, placement, in, at);
      default:
        return false;
    }
  });
}

}  // namespace

std::uint64_t tensor_bytes(const Graph& g, NodeId t) { return g.tensor_bytes(t); }

std::uint64_t peer_budget(const PlanRequest& request) {
  return request.peer_device >= 0 ? request.peer_budget_bytes : 0;
}

std::size_t index_of(const Graph& g, NodeId t) {
  return t == kNetworkInput ? g.nodes().size() : static_cast<std::size_t>(t);
}

const std::vector<NodeId>& consumers_of(const Graph& g, NodeId t) {
  return t == kNetworkInput ? g.input_consumers() : g.node(t).consumers;
}

bool read_by_loss(const Graph& g, NodeId t) {
  const std::vector<NodeId>& consumers = consumers_of(g, t);
  return std::find(consumers.begin(), consumers.end(), g.loss_node()) != consumers.end();
}

bool leaves_device(Placement p) {
  return p == Placement::Offloaded || p == Placement::Evicted || p == Placement::Migrated ||
         p == Placement::Recomputed;
}

std::vector<Placement> place(const Graph& g, const Liveness& live, Policy policy) {
  const auto n = static_cast<NodeId>(g.nodes().size());
  std::vector<Placement> placement(g.nodes().size() + 1);
  for (NodeId t = kNetworkInput; t < n; ++t) {
    Placement& p = placement[index_of(g, t)];
    if (live.of(t).backward_readers.empty()) {
      p = Placement::ForwardOnly;
      continue;
    }
    if (g.in_block()[index_of(g, t)]) {  // every policy's: the block's buffer stays on the device
      p = Placement::InBlock;
      continue;
    }
    const bool by_loss = read_by_loss(g, t);
    if (policy == Policy::Recompute) {
      // Rebuilt before its first backward reader, the last in forward order.
      const bool rebuilt =
          !by_loss && rebuildable(g, live, placement, t, live.of(t).backward_readers.back());
      p = rebuilt ? Placement::Recomputed : Placement::Resident;
      continue;
    }
    const std::vector<NodeId>& consumers = consumers_of(g, t);
    const bool feeds_conv = std::any_of(consumers.begin(), consumers.end(),
                                        [&](NodeId c) { return is_conv(g.node(c)); });
    const bool leaves =
        !by_loss && (policy == Policy::VdnnAll || policy == Policy::UvmEvict ||
                     policy == Policy::UvmPrefetch || (policy == Policy::VdnnConv && feeds_conv));
    p = leaves ? away(policy) : Placement::Resident;
  }
  return placement;
}

}  // namespace vdnn::graph::planner
