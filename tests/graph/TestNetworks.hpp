// Small networks defined in C++ for graph and executor tests (no JSON involved).
#pragma once

#include <string>
#include <vector>

#include "graph/NetworkDef.hpp"

namespace vdnn::testing {

inline graph::LayerDef layer(std::string name, layers::LayerSpec spec,
                             std::vector<std::string> inputs) {
  graph::LayerDef def{std::move(name), std::move(spec), std::move(inputs), ""};
  def.origin = "test.json at /layers/" + def.name;
  return def;
}

inline layers::Conv2dSpec conv(std::int64_t out, std::int64_t k, std::int64_t stride = 1) {
  layers::Conv2dSpec c;
  c.out_channels = out;
  c.kernel = {k, k};
  c.stride = {stride, stride};
  c.padding = {k / 2, k / 2};
  return c;
}

inline graph::NetworkDef network(std::vector<graph::LayerDef> layers, std::int64_t channels = 3,
                                 std::int64_t size = 8, std::int64_t classes = 4) {
  graph::NetworkDef def;
  def.name = "test";
  def.channels = channels;
  def.height = size;
  def.width = size;
  def.num_classes = classes;
  def.layers = std::move(layers);
  def.origin = "test.json";
  return def;
}

/// conv-bn-relu, a residual block with a projection-free identity join, pooling, linear, loss.
inline graph::NetworkDef small_residual_net() {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 4;
  return network({
      layer("stem", conv(8, 3), {"input"}),
      layer("bn", BatchNorm2dSpec{}, {"stem"}),
      layer("relu", ReluSpec{}, {"bn"}),
      layer("b.conv1", conv(8, 3), {"relu"}),
      layer("b.bn1", BatchNorm2dSpec{}, {"b.conv1"}),
      layer("b.relu1", ReluSpec{}, {"b.bn1"}),
      layer("b.conv2", conv(8, 3), {"b.relu1"}),
      layer("b.add", AddSpec{}, {"b.conv2", "relu"}),
      layer("b.relu2", ReluSpec{}, {"b.add"}),
      layer("pool", GlobalAvgPoolSpec{}, {"b.relu2"}),
      layer("fc", fc, {"pool"}),
      layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
  });
}

}  // namespace vdnn::testing
