// DenseBlocks: which feature maps share one device buffer (Note [Dense block storage]). In a dense
// block concatenation k is concatenation k-1 with one more map's channels, so every concatenation
// of the chain is a channel prefix of the chain's last one: they are views of its buffer (a row
// stride, runtime::TensorView::row_stride), and each concatenation copies only its new map.
#pragma once

#include <vector>

#include "graph/Graph.hpp"
#include "runtime/TensorView.hpp"

namespace vdnn::graph {

/// Channels of a block's maps are a multiple of this, so that their rows and row strides are too
/// (a pixel's C, or a sample's C * H * W), and every row of a view starts on a 16-byte boundary in
/// bf16 and in F32: the batch norms' vector loads need it (they refuse a view without it).
inline constexpr std::int64_t kBlockChannelAlignment = 8;

/// Whether concatenation `d` may take its first input in place (graph::fuse then sets
/// layers::ConcatSpec::first_in_place): that input c is a concatenation not read by the loss,
/// whose readers are d, reading it once, and batch norms reading it as their x
/// (layers::reads_row_strided_input), and both have channels a multiple of
/// kBlockChannelAlignment.
bool can_take_first_in_place(const Graph& g, NodeId d);

/// Where every map of `g` lies: storage[index] (the network input last, as Plan::placement) is the
/// map whose buffer holds it: the last of its chain of concatenations that take their first input
/// in place, else itself. Pure function of the graph, which Graph::build keeps as
/// Graph::storage() (and shares_block's answer as Graph::in_block()) for the planner's many plans.
std::vector<NodeId> block_storage(const Graph& g);

/// Whether each map (indexed as `storage`) shares its buffer with others: a block's views and
/// the map whose buffer holds them.
std::vector<bool> shares_block(const std::vector<NodeId>& storage);

/// What dense block storage does for a graph: its concatenations that share a buffer, the block
/// buffers and their bytes, and the bytes those concatenations would take apart.
struct BlockTotals {
  std::int64_t concatenations = 0;
  std::int64_t buffers = 0;
  std::uint64_t buffer_bytes = 0;
  std::uint64_t apart_bytes = 0;
};
BlockTotals block_totals(const Graph& g);

/// The view of map `t` in `buffer`'s memory at `data`: t's shape, element type and layout, with
/// buffer's rows as its row stride where t is not the buffer's own map.
runtime::TensorView block_view(const Graph& g, NodeId t, NodeId buffer, void* data);

}  // namespace vdnn::graph
