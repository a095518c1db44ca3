// Liveness: consumer counts and backward readers derived from the DAG.
#include "graph/Liveness.hpp"

#include <gtest/gtest.h>

#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

TEST(Liveness, CountsConsumersAndBackwardReaders) {
  const Graph g = Graph::build(testing::small_residual_net(), 2);
  const Liveness live(g);
  // Input: read by the stem conv's backward (weight gradient), needs no gradient itself.
  EXPECT_EQ(live.of(kNetworkInput).forward_consumers, 1);
  EXPECT_EQ(live.of(kNetworkInput).backward_readers, std::vector<NodeId>{0});
  EXPECT_FALSE(live.of(kNetworkInput).needs_grad);
  // relu (node 2): its own backward reads its output; b.conv1 reads it as input; add does not.
  const TensorLife& relu = live.of(2);
  EXPECT_EQ(relu.forward_consumers, 2);
  EXPECT_EQ(relu.last_forward_use, 7);
  EXPECT_EQ(relu.backward_readers, (std::vector<NodeId>{2, 3}));
  EXPECT_EQ(relu.last_backward_use(), 2);
  // b.conv2 (node 6) feeds only the add, whose backward reads nothing: free after forward.
  EXPECT_TRUE(live.of(6).backward_readers.empty());
  EXPECT_EQ(live.of(6).last_forward_use, 7);
  // The loss output has no consumers and no readers.
  EXPECT_EQ(live.of(g.loss_node()).forward_consumers, 0);
  EXPECT_TRUE(live.of(g.loss_node()).backward_readers.empty());
}

TEST(Liveness, InputUsedTwiceByOneNodeCountsTwiceButReadsOnce) {
  layers::LinearSpec fc;
  fc.out_features = 4;
  const Graph g = Graph::build(
      testing::network({testing::layer("relu", layers::ReluSpec{}, {"input"}),
                        testing::layer("sum", layers::AddSpec{}, {"relu", "relu"}),
                        testing::layer("fc", fc, {"sum"}),
                        testing::layer("loss", layers::SoftmaxCrossEntropySpec{}, {"fc"})}),
      2);
  const Liveness live(g);
  EXPECT_EQ(live.of(0).forward_consumers, 2);
  EXPECT_EQ(live.of(0).backward_readers, std::vector<NodeId>{0});
  EXPECT_EQ(live.of(1).backward_readers, std::vector<NodeId>{2});  // fc reads its input
  EXPECT_EQ(live.of(1).forward_consumers, 1);
  EXPECT_EQ(live.of(2).backward_readers, std::vector<NodeId>{3});
}

}  // namespace
}  // namespace vdnn::graph
