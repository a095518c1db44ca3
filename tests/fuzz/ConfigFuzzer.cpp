// Fuzz target of the config path: JSON bytes -> models::parse_network -> graph::Graph::build ->
// graph::make_plan under three policies (and the host memory count), never training. Every
// rejection must be one of vdnn's typed errors; anything else (a crash, a sanitizer report, a
// foreign exception, an allocation over the fuzzer's limit) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graph/MemoryCheck.hpp"
#include "graph/Planner.hpp"
#include "models/ConfigLoader.hpp"

namespace {

// Legitimate networks of up to 2^20 layers take seconds to expand and plan, over the per-input
// time limit under the sanitizers; the code paths are the same at a few thousand layers.
constexpr std::size_t kMaxLayers = 4096;
// Budget searches replan many times: keep them to graphs small enough to stay well inside the
// per-input time limit of 10 s under the sanitizers. On a 2-core CI machine, with auto trying up
// to 264 candidates: VGG-16's 41 nodes take 5 s, ResNet-18's 71 take 7.6 s, GoogLeNet-mini's 111
// take 13 s (6 s with the earlier 84), DenseNet-40's 160 take 17-40 s. The planner's budget code is
// the same at any size; the larger seeds still load, build and plan under baseline and vdnn-all.
constexpr std::size_t kMaxNodesForBudgetSearch = 60;

void plan_all_ways(const vdnn::graph::Graph& graph) {
  using namespace vdnn::graph;
  PlanRequest request;
  const Plan baseline = make_plan(graph, request);
  static_cast<void>(format_plan(graph, baseline));
  request.policy = Policy::VdnnAll;
  static_cast<void>(format_plan(graph, make_plan(graph, request)));
  static_cast<void>(host_needs(graph, Policy::VdnnConv, 0, vdnn::layers::Backend::Cpu));
  if (graph.nodes().size() <= kMaxNodesForBudgetSearch) {
    request.policy = Policy::VdnnDyn;
    request.budget_bytes = baseline.predicted_peak / 2 + 1;
    static_cast<void>(make_plan(graph, request));  // may throw DoesNotFit
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const vdnn::graph::NetworkDef def = vdnn::models::parse_network(text, "fuzz.json", kMaxLayers);
    plan_all_ways(vdnn::graph::Graph::build(def, 2));
  } catch (const vdnn::runtime::Error&) {
    // A typed rejection (ConfigError, GraphError, ShapeError, DoesNotFit, ...): the expected
    // outcome for most inputs.
  }
  return 0;
}
