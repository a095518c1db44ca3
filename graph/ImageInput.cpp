// The image-input rewrite: a normalize node after the network input, in place of any cast.
#include "graph/ImageInput.hpp"

#include <algorithm>
#include <string>
#include <variant>

#include "graph/Precision.hpp"
#include "runtime/Error.hpp"

namespace vdnn::graph {

Graph with_image_input(const Graph& graph, const ImageStatistics& statistics) {
  VDNN_EXPECTS(!graph.image_input(), "the network takes image bytes already");
  VDNN_EXPECTS(graph.input_shape().c() == 3,
               "image input needs a network of 3 input channels, got " +
                   std::to_string(graph.input_shape().c()));
  VDNN_EXPECTS(
      std::all_of(statistics.std.begin(), statistics.std.end(), [](float s) { return s > 0.0f; }),
      "image normalization needs positive standard deviations");
  NetworkDef def = graph.definition();
  const runtime::DType maps = precision_of(graph);
  // The bf16 cast goes: the normalize writes bf16 itself.
  def.layers.erase(std::remove_if(def.layers.begin(), def.layers.end(),
                                  [](const LayerDef& l) { return l.name == kInputCastName; }),
                   def.layers.end());
  for (LayerDef& layer : def.layers) {
    for (std::string& in : layer.inputs) {
      if (in == kInputName || in == kInputCastName) in = kInputNormalizeName;
    }
  }
  def.layers.insert(def.layers.begin(),
                    LayerDef{kInputNormalizeName,
                             layers::NormalizeSpec{statistics.mean, statistics.std, maps},
                             {kInputName},
                             def.origin});
  def.image_input = true;
  return Graph::build(def, graph.batch());
}

}  // namespace vdnn::graph
