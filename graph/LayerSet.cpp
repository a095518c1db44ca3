// Builds the backend layers of a graph and keeps their workspace limits.
#include "graph/LayerSet.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "layers/Registry.hpp"
#include "runtime/Error.hpp"
#include "runtime/MemoryResource.hpp"

namespace vdnn::graph {
namespace {

constexpr layers::WorkspaceBytes kNoLimit{layers::kUnlimitedWorkspace, layers::kUnlimitedWorkspace};

layers::WorkspaceBytes aligned(const layers::WorkspaceBytes& w) {
  return {runtime::MemoryResource::align_up(w.forward),
          runtime::MemoryResource::align_up(w.backward)};
}

// Layers that measure at setup (cuDNN convolutions choose their algorithms).
bool measures(const layers::LayerSpec& spec) {
  return std::holds_alternative<layers::Conv2dSpec>(spec) ||
         std::holds_alternative<layers::Conv2dReluSpec>(spec);
}

}  // namespace

LayerSet::LayerSet(const Graph& graph, layers::Backend backend, const layers::LayerOptions& options,
                   SetupProgress* progress)
    : backend_(backend), options_(options) {
  if (options_.cache == nullptr) options_.cache = &cache_;
  if (options.disk_cache != nullptr) options_.cache->set_disk(options.disk_cache);
  int convolutions = 0;
  for (const Node& node : graph.nodes()) convolutions += measures(node.spec) ? 1 : 0;
  int done = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    if (progress != nullptr && measures(graph.node(id).spec)) {
      progress->count("setting up convolutions", ++done, convolutions);
    }
    layers::LayerOptions layer = options_;
    layer.seed = options.seed + 1 + static_cast<std::uint64_t>(id);
    layer.layout = graph.node(id).layout;
    layer.input_layout = graph.input_layout(id);
    layer.dtype = graph.input_dtype(id);  // Note [Precision]: what the layer reads
    layer.bf16_weight_copies = true;      // the executor's (graph::has_bf16_copy)
    layers_.push_back(
        layers::make_layer(backend, graph.node(id).spec, graph.input_shapes(id), layer));
  }
  limits_.assign(layers_.size(), kNoLimit);
  fastest_ = workspaces();
}

std::vector<layers::WorkspaceBytes> LayerSet::workspaces() const {
  std::vector<layers::WorkspaceBytes> w;
  w.reserve(layers_.size());
  for (const auto& layer : layers_) w.push_back(aligned(layer->workspace()));
  return w;
}

std::uint64_t LayerSet::workspace_bytes() const {
  std::uint64_t largest = 0;
  for (const layers::WorkspaceBytes& w : workspaces()) {
    largest = std::max<std::uint64_t>({largest, w.forward, w.backward});
  }
  return largest;
}

void LayerSet::limit_workspaces(std::vector<layers::WorkspaceBytes> limits) {
  VDNN_EXPECTS(limits.size() == layers_.size(),
               "LayerSet::limit_workspaces: " + std::to_string(limits.size()) + " limits for " +
                   std::to_string(layers_.size()) + " layers");
  limits_ = std::move(limits);
  for (std::size_t i = 0; i < layers_.size(); ++i) layers_[i]->limit_workspace(limits_[i]);
}

bool LayerSet::downgrade_largest_workspace() {
  struct Pass {
    std::size_t layer;
    bool backward;
    std::size_t bytes;
  };
  std::vector<Pass> passes;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const layers::WorkspaceBytes w = layers_[i]->workspace();
    if (w.forward > 0) passes.push_back({i, false, w.forward});
    if (w.backward > 0) passes.push_back({i, true, w.backward});
  }
  std::stable_sort(passes.begin(), passes.end(),
                   [](const Pass& a, const Pass& b) { return a.bytes > b.bytes; });
  for (const Pass& p : passes) {
    layers::WorkspaceBytes limit = limits_[p.layer];
    (p.backward ? limit.backward : limit.forward) = p.bytes - 1;
    layers_[p.layer]->limit_workspace(limit);
    const layers::WorkspaceBytes w = layers_[p.layer]->workspace();
    if ((p.backward ? w.backward : w.forward) < p.bytes) {
      limits_[p.layer] = limit;
      return true;
    }
    layers_[p.layer]->limit_workspace(limits_[p.layer]);  // nothing smaller: as it was
  }
  return false;
}

std::vector<std::size_t> LayerSet::limited() const {
  const std::vector<layers::WorkspaceBytes> now = workspaces();
  std::vector<std::size_t> limited;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (!(now[i] == fastest_[i])) limited.push_back(i);
  }
  return limited;
}

int LayerSet::limited_layers() const { return static_cast<int>(limited().size()); }

std::string LayerSet::limited_algorithms(const Graph& graph) const {
  std::string lines;
  for (const std::size_t i : limited()) {
    lines += graph.node(static_cast<NodeId>(i)).name + ": " + layers_[i]->algorithms() + "\n";
  }
  return lines;
}

std::uint64_t LayerSet::algorithm_key() const {
  std::string sizes;
  for (const layers::WorkspaceBytes& w : workspaces()) {
    sizes += std::to_string(w.forward) + ',' + std::to_string(w.backward) + ';';
  }
  return std::hash<std::string>{}(sizes);
}

}  // namespace vdnn::graph
