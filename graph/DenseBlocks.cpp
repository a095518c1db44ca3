// Dense block storage: chains of concatenations whose earlier links are channel prefixes of the
// last one (Note [Dense block storage]).
#include "graph/DenseBlocks.hpp"

#include <algorithm>

namespace vdnn::graph {
namespace {

const layers::ConcatSpec* concat_of(const Node& node) {
  return std::get_if<layers::ConcatSpec>(&node.spec);
}

bool aligned(const Node& node) { return node.output_shape.c() % kBlockChannelAlignment == 0; }

runtime::TensorView packed_view(const Graph& g, NodeId t) {
  const Node& node = g.node(t);
  return {nullptr, node.output_shape, node.dtype, node.layout};
}

}  // namespace

bool can_take_first_in_place(const Graph& g, NodeId d) {
  const Node& node = g.node(d);
  const NodeId c = node.inputs.front();
  if (concat_of(node) == nullptr || c == kNetworkInput || concat_of(g.node(c)) == nullptr ||
      !aligned(node) || !aligned(g.node(c))) {
    return false;
  }
  return std::all_of(g.node(c).consumers.begin(), g.node(c).consumers.end(), [&](NodeId reader) {
    const Node& r = g.node(reader);
    const bool once_first =
        r.inputs.front() == c && std::count(r.inputs.begin(), r.inputs.end(), c) == 1;
    return once_first && (reader == d || (layers::batch_norm_of(r.spec) != nullptr &&
                                          layers::reads_row_strided_input(r.spec, 0)));
  });
}

std::vector<NodeId> block_storage(const Graph& g) {
  const auto n = static_cast<NodeId>(g.nodes().size());
  std::vector<NodeId> storage(g.nodes().size() + 1);
  storage.back() = kNetworkInput;
  // Backwards, so that a concatenation's storage is known when its first input takes it.
  for (NodeId t = n - 1; t >= 0; --t) {
    storage[static_cast<std::size_t>(t)] = t;
    const NodeId reader = [&] {
      for (NodeId r : g.node(t).consumers) {
        const layers::ConcatSpec* concat = concat_of(g.node(r));
        if (concat != nullptr && concat->first_in_place && g.node(r).inputs.front() == t) return r;
      }
      return NodeId{-1};
    }();
    if (reader != -1)
      storage[static_cast<std::size_t>(t)] = storage[static_cast<std::size_t>(reader)];
  }
  return storage;
}

std::vector<bool> shares_block(const std::vector<NodeId>& storage) {
  std::vector<bool> shares(storage.size(), false);
  for (std::size_t i = 0; i + 1 < storage.size(); ++i) {
    if (storage[i] == static_cast<NodeId>(i)) continue;
    shares[i] = true;
    shares[static_cast<std::size_t>(storage[i])] = true;
  }
  return shares;
}

BlockTotals block_totals(const Graph& g) {
  const std::vector<NodeId>& storage = g.storage();
  const std::vector<bool>& shared = g.in_block();
  BlockTotals totals;
  for (NodeId t = 0; t < static_cast<NodeId>(g.nodes().size()); ++t) {
    if (!shared[static_cast<std::size_t>(t)]) continue;
    ++totals.concatenations;
    totals.apart_bytes += g.tensor_bytes(t);
    if (storage[static_cast<std::size_t>(t)] != t) continue;
    ++totals.buffers;
    totals.buffer_bytes += g.tensor_bytes(t);
  }
  return totals;
}

runtime::TensorView block_view(const Graph& g, NodeId t, NodeId buffer, void* data) {
  runtime::TensorView view = packed_view(g, t);
  view.data = data;
  if (buffer != t) view.row_stride = packed_view(g, buffer).row_elements();
  return view;
}

}  // namespace vdnn::graph
