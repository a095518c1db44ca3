// Builds the backend layers of a graph.
#include "graph/LayerSet.hpp"

#include <algorithm>

#include "layers/Registry.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {

LayerSet::LayerSet(const Graph& graph, layers::Backend backend,
                   const layers::LayerOptions& options)
    : backend_(backend), options_(options) {
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    layers::LayerOptions layer = options;
    layer.seed = options.seed + 1 + static_cast<std::uint64_t>(id);
    layers_.push_back(
        layers::make_layer(backend, graph.node(id).spec, graph.input_shapes(id), layer));
    workspace_bytes_ = std::max<std::uint64_t>(workspace_bytes_, layers_.back()->workspace_bytes());
  }
  // Whole allocation units: the workspace is handed to layers as a float view.
  workspace_bytes_ = runtime::MemoryResource::align_up(workspace_bytes_);
}

}  // namespace vdnn::graph
