// Resolving the layout choice, measuring the convolutions in both layouts for auto.
#include "graph/Layout.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "layers/Registry.hpp"
#include "runtime/Error.hpp"

namespace vdnn::graph {
namespace {

// The fastest measured time of each pass's choices, summed over passes; nullopt when unmeasured.
std::optional<double> fastest_seconds(const layers::Layer& layer) {
  double total = 0.0;
  for (const bool backward : {false, true}) {
    const std::vector<layers::WorkspaceOption> options = layer.workspace_options(backward);
    double best = -1.0;
    for (const layers::WorkspaceOption& o : options) {
      if (o.seconds >= 0.0 && (best < 0.0 || o.seconds < best)) best = o.seconds;
    }
    if (best < 0.0) return std::nullopt;
    total += best;
  }
  return total;
}

// Seconds of every convolution of `graph` run in `layout` (their fastest algorithms), each
// distinct problem measured once.
std::optional<double> convolution_seconds(Graph graph, runtime::Layout layout,
                                          layers::LayerOptions options) {
  graph.use_layout(layout);
  layers::LayerCache cache;
  options.cache = &cache;
  double total = 0.0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    if (!std::holds_alternative<layers::Conv2dSpec>(graph.node(id).spec)) continue;
    options.layout = graph.node(id).layout;
    options.input_layout = graph.input_layout(id);
    const auto layer = layers::make_layer(layers::Backend::Cuda, graph.node(id).spec,
                                          graph.input_shapes(id), options);
    const std::optional<double> seconds = fastest_seconds(*layer);
    if (!seconds) return std::nullopt;
    total += *seconds;
  }
  return total;
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f ms", seconds * 1e3);
  return text;
}

}  // namespace

const std::vector<std::string>& layout_choice_names() {
  static const std::vector<std::string> kNames = {"nchw", "nhwc", "auto"};
  return kNames;
}

LayoutChoice parse_layout_choice(std::string_view name) {
  const auto& names = layout_choice_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    throw runtime::InvalidArgument("unknown layout '" + std::string(name) +
                                   "'; expected nchw, nhwc or auto");
  }
  return static_cast<LayoutChoice>(it - names.begin());
}

LayoutDecision decide_layout(const Graph& graph, LayoutChoice choice, layers::Backend backend,
                             const layers::LayerOptions& options) {
  using runtime::Layout;
  if (backend == layers::Backend::Cpu) {
    if (choice == LayoutChoice::Nhwc) {
      throw runtime::InvalidArgument(
          "layout nhwc: the CPU backend runs NCHW only; expected --layout nchw or auto");
    }
    return {Layout::Nchw, choice == LayoutChoice::Auto ? "auto: the CPU backend runs NCHW" : ""};
  }
  if (choice != LayoutChoice::Auto) {
    return {choice == LayoutChoice::Nhwc ? Layout::Nhwc : Layout::Nchw, "asked for"};
  }
  const std::optional<double> nchw = convolution_seconds(graph, Layout::Nchw, options);
  const std::optional<double> nhwc =
      nchw ? convolution_seconds(graph, Layout::Nhwc, options) : std::nullopt;
  if (!nchw || !nhwc) {
    return options.allow_tf32
               ? LayoutDecision{Layout::Nhwc, "auto: TF32 tensor cores run NHWC natively"}
               : LayoutDecision{Layout::Nchw, "auto: FP32 math without tensor cores"};
  }
  const Layout faster = *nhwc < *nchw ? Layout::Nhwc : Layout::Nchw;
  return {faster, "auto: convolutions " + milliseconds(*nhwc) + " in nhwc, " +
                      milliseconds(*nchw) + " in nchw (cudnnFind)"};
}

}  // namespace vdnn::graph
