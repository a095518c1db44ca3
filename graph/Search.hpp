// Search: the one search over every choice of a run that trades memory against time (Note
// [Search] in docs/ARCHITECTURE.md): which fusable chains are fused, the layout, each convolution
// pass's algorithm and workspace (batch chunks among them), and each feature map's keep, offload
// or recompute, weighed against one cost model and the budget. Session carries its result out;
// `vdnn plan` prints it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/CostModel.hpp"
#include "graph/Fusion.hpp"
#include "graph/Graph.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Layout.hpp"
#include "graph/Plan.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionOptions.hpp"
#include "layers/LayerCache.hpp"
#include "runtime/ExecutionContext.hpp"

namespace vdnn::graph {

/// What the search chose: the graph to run and its layers, the costs it planned with, the plan,
/// and why each choice other than the fastest default was taken.
struct SearchResult {
  Graph graph;                       // the source graph after the chosen fusion, laid out
  std::vector<FusedChain> fusion;    // the chains fused
  std::vector<FusedChain> declined;  // fusable chains left unfused
  LayoutDecision layout;
  std::unique_ptr<LayerSet> layers;  // with the chosen workspace limits
  CostModel costs;
  Plan plan;
  /// One line per non-default choice, e.g. "conv1_2 unfused: its fused backward holds 3.06 GiB
  /// more; the floor falls from 13.92 GiB to 12.90 GiB".
  std::vector<std::string> reasons;
};

/// Where the search may measure, and what it shares between the layer sets it builds.
struct SearchContext {
  /// Runs measurements (profiled steps). Null: nothing runs (`vdnn plan`): costs are the given
  /// ones or estimated.
  runtime::ExecutionContext* context = nullptr;
  layers::LayerOptions layer_options;  // its `cache` shared by every layer set the search builds
  SetupProgress* progress = nullptr;   // not owned; may be null
};

/// Searches the choices of a run of `network` (the graph as built, unfused) under `options`, in
/// options.precision (with_precision: the result's graph has the cast of a bf16 run). Throws
/// DoesNotFit when no choice fits the budget (naming the shortfall of the least-memory one), and
/// what building layers or measuring throws.
SearchResult search_run(const Graph& network, const SessionOptions& options,
                        const SearchContext& ctx);

/// The reasons of a search, one per line after a header ("choices: none beyond the fastest").
std::string format_reasons(const std::vector<std::string>& reasons);

}  // namespace vdnn::graph
