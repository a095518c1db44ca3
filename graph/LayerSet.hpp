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
  /// The largest workspace_bytes() of any layer.
  std::uint64_t workspace_bytes() const noexcept { return workspace_bytes_; }

 private:
  layers::Backend backend_;
  layers::LayerOptions options_;
  std::vector<std::unique_ptr<layers::Layer>> layers_;
  std::uint64_t workspace_bytes_ = 0;
};

}  // namespace vdnn::graph
