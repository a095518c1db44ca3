// FitSearch: the planner's answer to "does this run fit?" without touching the device, and the
// monotone searches `vdnn compare --max-batch` and `--depth-sweep` build on it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "graph/Graph.hpp"
#include "graph/Plan.hpp"
#include "layers/Layer.hpp"
#include "models/ZooGenerator.hpp"
#include "runtime/Shape.hpp"

namespace vdnn::tools {

/// What a run must fit: the device budget (through the plan), the host (pinned pool, dataset),
/// and, for managed memory, the device's free memory (the oversubscription guard's limit).
struct FitLimits {
  graph::Policy policy = graph::Policy::Baseline;
  std::uint64_t budget_bytes = 0;  // 0: no budget
  layers::Backend backend = layers::Backend::Cpu;
  std::uint64_t managed_limit_bytes = 0;  // managed pools above this are refused; 0: no limit
  std::uint64_t host_extra_bytes = 0;     // host bytes beside the graph's own (the dataset)
  bool fuse = true;                       // the runs' fusion switch (--no-fuse: false)
  runtime::DType precision = runtime::DType::F32;  // the runs' feature maps (Note [Precision])
};

/// True when the search a run makes (graph::search_run in limits.precision: fusion, workspaces,
/// placement; the CPU
/// backend's workspace sizes stand in for the device's, and the confirming run downgrades
/// algorithms where the device needs more) places `graph` within `limits`, and the host keeps an
/// eighth of its available memory (at least 4 GiB) besides. Throws what the search throws, except
/// DoesNotFit.
bool plan_fits(const graph::Graph& graph, const FitLimits& limits);

/// The largest n in [lo, hi] with fits(n), for a `fits` that is true up to some n and false
/// after: doubling from lo, then bisection; 0 when fits(lo) is false. O(log(n)) calls.
std::int64_t largest_fitting(std::int64_t lo, std::int64_t hi,
                             const std::function<bool(std::int64_t)>& fits);

/// The depths `vdnn gen` accepts for a family and input, as an index k = 0, 1, ... (ResNet:
/// 3b+2; DenseNet: 6n+4 on cifar, 2b+5 on imagenet), from the shallowest valid one.
struct DepthLadder {
  models::ZooFamily family = models::ZooFamily::ResNet;
  models::ZooInput input = models::ZooInput::Cifar;
  /// The depth of rung k (>= 0).
  std::int64_t depth(std::int64_t k) const;
  /// The rung of the deepest network no deeper than `depth` (0 when below the first rung).
  std::int64_t rung_at_most(std::int64_t depth) const;
};

}  // namespace vdnn::tools
