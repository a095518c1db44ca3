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

/// Two dense blocks of `layers` layers (bn-relu-conv1x1-bn-relu-conv3x3, then a concatenation
/// with the block's running map) of growth `growth` on a 16-channel stem, a transition between
/// them, and a bn-relu-pool-linear head: DenseNet's structure at test size (Note [Dense block
/// storage]).
inline graph::NetworkDef small_dense_net(int layers_per_block = 3, std::int64_t growth = 8) {
  using namespace layers;
  std::vector<graph::LayerDef> defs{layer("stem", conv(16, 3), {"input"})};
  std::string running = "stem";
  const auto block = [&](const std::string& b) {
    for (int k = 1; k <= layers_per_block; ++k) {
      const std::string at = b + "." + std::to_string(k) + ".";
      defs.push_back(layer(at + "norm1", BatchNorm2dSpec{}, {running}));
      defs.push_back(layer(at + "relu1", ReluSpec{}, {at + "norm1"}));
      defs.push_back(layer(at + "conv1", conv(2 * growth, 1), {at + "relu1"}));
      defs.push_back(layer(at + "norm2", BatchNorm2dSpec{}, {at + "conv1"}));
      defs.push_back(layer(at + "relu2", ReluSpec{}, {at + "norm2"}));
      defs.push_back(layer(at + "conv2", conv(growth, 3), {at + "relu2"}));
      defs.push_back(layer(at + "concat", ConcatSpec{}, {running, at + "conv2"}));
      running = at + "concat";
    }
  };
  AvgPool2dSpec pool;
  pool.kernel = {2, 2};
  LinearSpec fc;
  fc.out_features = 4;
  block("dense1");
  defs.push_back(layer("transition.norm", BatchNorm2dSpec{}, {running}));
  defs.push_back(layer("transition.relu", ReluSpec{}, {"transition.norm"}));
  defs.push_back(layer("transition.conv", conv(16, 1), {"transition.relu"}));
  defs.push_back(layer("transition.pool", pool, {"transition.conv"}));
  running = "transition.pool";
  block("dense2");
  defs.push_back(layer("norm", BatchNorm2dSpec{}, {running}));
  defs.push_back(layer("relu", ReluSpec{}, {"norm"}));
  defs.push_back(layer("pool", GlobalAvgPoolSpec{}, {"relu"}));
  defs.push_back(layer("flatten", FlattenSpec{}, {"pool"}));
  defs.push_back(layer("fc", fc, {"flatten"}));
  defs.push_back(layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}));
  return network(std::move(defs));
}

}  // namespace vdnn::testing
