// The precision rewrite: a cast after the network input, so that the element types follow.
#include "graph/Precision.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>

#include "runtime/Error.hpp"

namespace vdnn::graph {

std::optional<runtime::DType> parse_precision(std::string_view name) {
  if (name == "fp32") return runtime::DType::F32;
  if (name == "bf16") return runtime::DType::BF16;
  return std::nullopt;
}

const char* precision_name(runtime::DType maps) noexcept {
  return maps == runtime::DType::BF16 ? "bf16" : "fp32";
}

Graph with_precision(const Graph& graph, runtime::DType maps) {
  VDNN_EXPECTS(maps == runtime::DType::F32 || maps == runtime::DType::BF16,
               "feature maps are fp32 or bf16");
  if (precision_of(graph) == maps) return graph;
  NetworkDef def = graph.definition();
  // Image bytes: the normalize writes the feature maps' type itself (Note [Image input]).
  if (auto* normalize = std::get_if<layers::NormalizeSpec>(&def.layers.front().spec)) {
    normalize->to = maps;
    return Graph::build(def, graph.batch());
  }
  if (maps == runtime::DType::F32) return graph;
  for (LayerDef& layer : def.layers) {
    std::replace(layer.inputs.begin(), layer.inputs.end(), std::string(kInputName),
                 std::string(kInputCastName));
  }
  def.layers.insert(def.layers.begin(),
                    LayerDef{kInputCastName, layers::CastSpec{maps}, {kInputName}, def.origin});
  return Graph::build(def, graph.batch());
}

runtime::DType precision_of(const Graph& graph) { return graph.node(0).dtype; }

}  // namespace vdnn::graph
