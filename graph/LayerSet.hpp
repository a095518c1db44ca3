// LayerSet: one backend Layer per graph node, built through the registry, and the workspace the
// largest of them needs (which the planner counts and the executor allocates once).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/Graph.hpp"
#include "layers/Layer.hpp"

namespace vdnn::graph {

/// Owns the layers of a graph on one backend. Building runs no kernel. Throws InvalidArgument
/// when the backend lacks a layer type, ShapeError for shapes a layer cannot take.
class LayerSet {
 public:
  /// Layer `i` draws its random numbers from options.seed + 1 + i.
  LayerSet(const Graph& graph, layers::Backend backend, const layers::LayerOptions& options);

  layers::Layer& at(NodeId node) { return *layers_.at(static_cast<std::size_t>(node)); }
  layers::Backend backend() const noexcept { return backend_; }
  const layers::LayerOptions& options() const noexcept { return options_; }
  /// The largest workspace_bytes() of any layer, in whole allocation units.
  std::uint64_t workspace_bytes() const noexcept { return workspace_bytes_; }
  /// vDNN's per-layer downgrade: switches the layer with the largest workspace (among those not
  /// yet switched) to its memory-lean algorithms. Returns false when that shrinks nothing.
  bool downgrade_largest_workspace();
  /// Takes the last downgrade back (the layer's fastest algorithms again). Returns false when
  /// there is none.
  bool undo_last_downgrade();
  /// Setup results the layers shared (e.g. one convolution measurement per distinct problem).
  const layers::LayerCache& cache() const noexcept { return cache_; }
  /// Layers switched to memory-lean algorithms so far.
  int lean_layers() const noexcept { return lean_layers_; }

 private:
  layers::Backend backend_;
  layers::LayerCache cache_;  // setup results shared by this set's layers
  layers::LayerOptions options_;
  std::vector<std::unique_ptr<layers::Layer>> layers_;
  std::uint64_t workspace_bytes_ = 0;
  std::vector<bool> lean_;
  std::vector<std::size_t> downgraded_;  // in order
  int lean_layers_ = 0;

  void update_workspace_bytes();
};

}  // namespace vdnn::graph
