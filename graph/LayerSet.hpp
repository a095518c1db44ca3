// LayerSet: one backend Layer per graph node, built through the registry, and the workspace each
// pass of each layer needs under the limits the planner set (Note [Workspace]).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/Graph.hpp"
#include "graph/SetupProgress.hpp"
#include "layers/Layer.hpp"

namespace vdnn::graph {

/// Owns the layers of a graph on one backend. Building runs no kernel. Throws InvalidArgument
/// when the backend lacks a layer type, ShapeError for shapes a layer cannot take.
class LayerSet {
 public:
  /// Layer `i` draws its random numbers from options.seed + 1 + i and runs in node i's layout
  /// (Graph::use_layout). Setup results are shared through options.cache (which must outlive the
  /// construction) when given, else through a cache of the set's own. `progress`, when given, is
  /// told the convolutions set up so far (they measure their algorithms).
  LayerSet(const Graph& graph, layers::Backend backend, const layers::LayerOptions& options,
           SetupProgress* progress = nullptr);

  layers::Layer& at(NodeId node) { return *layers_.at(static_cast<std::size_t>(node)); }
  const layers::Layer& at(NodeId node) const { return *layers_.at(static_cast<std::size_t>(node)); }
  layers::Backend backend() const noexcept { return backend_; }
  const layers::LayerOptions& options() const noexcept { return options_; }
  /// Per node, the workspace of its forward and of its backward under the current limits, in
  /// whole allocation units (the executor hands it to the layer as a float view).
  std::vector<layers::WorkspaceBytes> workspaces() const;
  /// The largest workspace of any pass.
  std::uint64_t workspace_bytes() const;
  /// Per node, the limit on each pass's workspace (kUnlimitedWorkspace: the fastest algorithm).
  const std::vector<layers::WorkspaceBytes>& workspace_limits() const noexcept { return limits_; }
  /// Sets every node's limits (a vector of workspace_limits()' size; else InvalidArgument).
  void limit_workspaces(std::vector<layers::WorkspaceBytes> limits);
  /// vDNN's per-layer downgrade, one algorithm at a time: the pass with the largest workspace that
  /// a smaller one can replace takes the fastest algorithm below its current workspace. Returns
  /// false when no pass can shrink.
  bool downgrade_largest_workspace();
  /// Layers running an algorithm other than their fastest because of a limit.
  int limited_layers() const;
  /// Those layers with Layer::algorithms(), one "name: algorithms" line each, in node order.
  std::string limited_algorithms(const Graph& graph) const;
  /// Identifies the algorithm choice of every layer (a hash of workspaces()), for cost caches.
  std::uint64_t algorithm_key() const;
  /// Setup results the layers shared (e.g. one convolution measurement per distinct problem).
  const layers::LayerCache& cache() const noexcept { return *options_.cache; }

 private:
  layers::Backend backend_;
  layers::LayerCache cache_;  // setup results shared by this set's layers
  layers::LayerOptions options_;
  std::vector<std::unique_ptr<layers::Layer>> layers_;
  std::vector<layers::WorkspaceBytes> limits_;
  std::vector<layers::WorkspaceBytes> fastest_;  // each layer's workspace without a limit
  std::vector<std::size_t> limited() const;      // the layers limited_layers() counts
};

}  // namespace vdnn::graph
