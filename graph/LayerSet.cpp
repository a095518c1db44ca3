// Builds the backend layers of a graph.
#include "graph/LayerSet.hpp"

#include <algorithm>

#include "layers/Registry.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {

LayerSet::LayerSet(const Graph& graph, layers::Backend backend, const layers::LayerOptions& options)
    : backend_(backend), options_(options) {
  options_.cache = &cache_;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    layers::LayerOptions layer = options_;
    layer.seed = options.seed + 1 + static_cast<std::uint64_t>(id);
    layers_.push_back(
        layers::make_layer(backend, graph.node(id).spec, graph.input_shapes(id), layer));
  }
  lean_.assign(layers_.size(), false);
  update_workspace_bytes();
}

void LayerSet::update_workspace_bytes() {
  workspace_bytes_ = 0;
  for (const auto& layer : layers_) {
    workspace_bytes_ = std::max<std::uint64_t>(workspace_bytes_, layer->workspace_bytes());
  }
  // Whole allocation units: the workspace is handed to layers as a float view.
  workspace_bytes_ = runtime::MemoryResource::align_up(workspace_bytes_);
}

bool LayerSet::downgrade_largest_workspace() {
  std::size_t largest = layers_.size();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (!lean_[i] && (largest == layers_.size() ||
                      layers_[i]->workspace_bytes() > layers_[largest]->workspace_bytes())) {
      largest = i;
    }
  }
  if (largest == layers_.size()) return false;
  const std::size_t before = layers_[largest]->workspace_bytes();
  layers_[largest]->prefer_lean_algorithms(true);
  lean_[largest] = true;
  downgraded_.push_back(largest);
  ++lean_layers_;
  update_workspace_bytes();
  return layers_[largest]->workspace_bytes() < before;
}

bool LayerSet::undo_last_downgrade() {
  if (downgraded_.empty()) return false;
  const std::size_t last = downgraded_.back();
  downgraded_.pop_back();
  layers_[last]->prefer_lean_algorithms(false);
  lean_[last] = false;
  --lean_layers_;
  update_workspace_bytes();
  return true;
}

}  // namespace vdnn::graph
