// Graph::build: ordering, shapes, consumers, and every class of structural error.
#include "graph/Graph.hpp"

#include <gtest/gtest.h>

#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::layer;
using testing::network;

void expect_error(const NetworkDef& def, const std::string& fragment, std::int64_t batch = 2) {
  try {
    Graph::build(def, batch);
    FAIL() << "expected GraphError containing '" << fragment << "'";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Graph, BuildsShapesAndConsumers) {
  const Graph g = Graph::build(testing::small_residual_net(), 2);
  EXPECT_EQ(g.input_shape(), runtime::Shape::nchw(2, 3, 8, 8));
  EXPECT_EQ(g.nodes().size(), 12u);
  EXPECT_EQ(g.node(g.loss_node()).name, "loss");
  EXPECT_EQ(g.node(g.logits_node()).output_shape, (runtime::Shape{2, 4}));
  // relu feeds both the block's first conv and the residual add.
  EXPECT_EQ(g.node(2).consumers.size(), 2u);
  EXPECT_EQ(g.input_consumers(), std::vector<NodeId>{0});
}

TEST(Graph, ForwardReferencesAreOrderedTopologically) {
  layers::LinearSpec fc;
  fc.out_features = 4;
  const Graph g = Graph::build(network({layer("loss", layers::SoftmaxCrossEntropySpec{}, {"fc"}),
                                        layer("fc", fc, {"input"})}),
                               2);
  EXPECT_EQ(g.node(0).name, "fc");
  EXPECT_EQ(g.node(1).name, "loss");
}

TEST(Graph, RejectsDanglingInputWithOrigin) {
  auto def = testing::small_residual_net();
  def.layers[3].inputs = {"nope"};
  expect_error(def, "test.json at /layers/b.conv1: input 'nope'");
}

TEST(Graph, RejectsCycle) {
  auto def = testing::small_residual_net();
  def.layers[3].inputs = {"b.relu1"};
  expect_error(def, "cycle");
}

TEST(Graph, RejectsDuplicateNames) {
  auto def = testing::small_residual_net();
  def.layers[4].name = "b.conv1";
  expect_error(def, "duplicate layer name 'b.conv1'");
}

TEST(Graph, RejectsWrongArity) {
  auto def = testing::small_residual_net();
  def.layers[7].inputs = {"b.conv2"};
  expect_error(def, "expected at least 2 inputs, got 1");
}

TEST(Graph, RejectsBadShapeNamingTheLayer) {
  auto def = testing::small_residual_net();
  def.layers[3].spec = testing::conv(8, 3, /*stride=*/2);  // halves H, W: the add cannot join
  expect_error(def, "/layers/b.add: layer 'b.add': add: expected inputs of identical shape");
}

TEST(Graph, RejectsKernelLargerThanInput) {
  auto def = testing::small_residual_net();
  def.layers[0].spec = layers::Conv2dSpec{8, {9, 9}};
  expect_error(def, "window of 9");
}

TEST(Graph, RejectsUnusedLayer) {
  auto def = testing::small_residual_net();
  def.layers.insert(def.layers.begin() + 1, layer("orphan", layers::ReluSpec{}, {"stem"}));
  expect_error(def, "'orphan' is never used");
}

TEST(Graph, RejectsMissingOrMisplacedLoss) {
  auto def = testing::small_residual_net();
  def.layers.pop_back();
  expect_error(def, "never used");
  auto two = testing::small_residual_net();
  two.layers.push_back(layer("loss2", layers::SoftmaxCrossEntropySpec{}, {"fc"}));
  expect_error(two, "exactly one softmax_cross_entropy");
  // Found by tests/fuzz: the loss alone looked up the logits' node at index -1 (std::out_of_range).
  expect_error(network({layer("loss", layers::SoftmaxCrossEntropySpec{}, {"input"})}),
               "test.json at /layers/loss: the loss reads the network input");
}

TEST(Graph, RejectsClassCountMismatch) {
  auto def = testing::small_residual_net();
  def.num_classes = 10;
  expect_error(def, "expected num_classes = 10");
}

TEST(Graph, RejectsAbsurdSizesBeforeAllocating) {
  auto def = testing::small_residual_net();
  def.layers[0].spec = testing::conv(1 << 20, 3);
  expect_error(def, "exceeds the limit", 1 << 20);
  expect_error(testing::small_residual_net(), "batch size 0", 0);
}

}  // namespace
}  // namespace vdnn::graph
