// The fusion pass: which chains it merges and which it leaves (batch norm and convolution chains),
// that the fused graph keeps the parameter names and consumers, and that training with fused layers
// gives bitwise the losses of the unfused chain on the CPU backend, under every offload policy.
#include "graph/Fusion.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "graph/ParameterStore.hpp"
#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::layer;
using testing::load_config;
using testing::run_steps;

std::set<std::string> parameter_names(const Graph& g) {
  std::set<std::string> names;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    for (const layers::ParamSpec& p : layers::param_specs(g.node(id).spec, g.input_shapes(id))) {
      names.insert(g.node(id).name + "." + p.name);
    }
  }
  return names;
}

const Node& named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes()) {
    if (n.name == name) return n;
  }
  throw std::runtime_error("no node " + name);
}

TEST(Fusion, MergesBatchNormReluAndBatchNormAddReluChains) {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 4;
  // bn1 -> relu1; bn2 -> add(+ relu1) -> relu2; bn3 feeds two layers; bn4 -> add without relu.
  const Graph g = Graph::build(testing::network({
                                   layer("c1", testing::conv(8, 3), {"input"}),
                                   layer("bn1", BatchNorm2dSpec{}, {"c1"}),
                                   layer("relu1", ReluSpec{}, {"bn1"}),
                                   layer("c2", testing::conv(8, 3), {"relu1"}),
                                   layer("bn2", BatchNorm2dSpec{}, {"c2"}),
                                   layer("add", AddSpec{}, {"relu1", "bn2"}),
                                   layer("relu2", ReluSpec{}, {"add"}),
                                   layer("bn3", BatchNorm2dSpec{}, {"relu2"}),
                                   layer("relu3", ReluSpec{}, {"bn3"}),
                                   layer("bn4", BatchNorm2dSpec{}, {"bn3"}),
                                   layer("add2", AddSpec{}, {"bn4", "relu3"}),
                                   layer("pool", GlobalAvgPoolSpec{}, {"add2"}),
                                   layer("fc", fc, {"pool"}),
                                   layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
                               }),
                               2);
  std::vector<FusedChain> chains;
  const Graph f = fuse(g, &chains);
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_EQ(chains[0].node, "bn1");
  EXPECT_EQ(chains[0].type, "batchnorm2d_relu");
  EXPECT_EQ(chains[0].merged, (std::vector<std::string>{"bn1", "relu1"}));
  EXPECT_EQ(chains[1].node, "bn2");
  EXPECT_EQ(chains[1].type, "batchnorm2d_add_relu");
  EXPECT_EQ(chains[1].merged, (std::vector<std::string>{"bn2", "add", "relu2"}));
  EXPECT_EQ(f.nodes().size(), g.nodes().size() - 3);
  // The residual (relu1's output, now bn1's) is the fused node's second input; consumers follow.
  const Node& fused = named(f, "bn2");
  ASSERT_EQ(fused.inputs.size(), 2u);
  EXPECT_EQ(f.node(fused.inputs[0]).name, "c2");
  EXPECT_EQ(f.node(fused.inputs[1]).name, "bn1");
  EXPECT_EQ(f.node(named(f, "bn3").inputs[0]).name, "bn2");
  EXPECT_TRUE(std::holds_alternative<BatchNorm2dSpec>(named(f, "bn3").spec));  // two consumers
  EXPECT_TRUE(std::holds_alternative<BatchNorm2dSpec>(named(f, "bn4").spec));  // add, no relu
  EXPECT_EQ(parameter_names(f), parameter_names(g));
  EXPECT_NE(format_fusion(chains).find("bn2 <- bn2 + add + relu2 (batchnorm2d_add_relu)"),
            std::string::npos);
  EXPECT_EQ(format_fusion({}), "fusion: none\n");
}

TEST(Fusion, ResNet50FusesEveryBatchNormAndKeepsItsParameters) {
  const Graph g = load_config("resnet50.json", 2);
  std::vector<FusedChain> chains;
  const Graph f = fuse(g, &chains);
  int batch_norms = 0;
  int residual = 0;
  for (const Node& n : g.nodes()) batch_norms += layers::batch_norm_of(n.spec) != nullptr;
  for (const FusedChain& c : chains) residual += c.type == "batchnorm2d_add_relu";
  // Every batch norm but the 4 projection shortcuts' fuses; every block's add does.
  EXPECT_EQ(static_cast<int>(chains.size()), batch_norms - 4);
  EXPECT_EQ(residual, 16);
  EXPECT_EQ(parameter_names(f), parameter_names(g));
  EXPECT_EQ(f.trainable_parameters(), g.trainable_parameters());
}

TEST(Fusion, MergesConvReluChains) {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 4;
  Conv2dSpec with_bias = testing::conv(8, 3);
  with_bias.bias = true;
  // c1 -> r1 and c2 (bias) -> r2 fuse; c3 -> bn is no conv -> relu chain; r3 feeds a conv.
  const Graph g = Graph::build(testing::network({
                                   layer("c1", testing::conv(8, 3), {"input"}),
                                   layer("r1", ReluSpec{}, {"c1"}),
                                   layer("c2", with_bias, {"r1"}),
                                   layer("r2", ReluSpec{}, {"c2"}),
                                   layer("c3", testing::conv(8, 1), {"r2"}),
                                   layer("bn", BatchNorm2dSpec{}, {"c3"}),
                                   layer("r3", ReluSpec{}, {"bn"}),
                                   layer("pool", GlobalAvgPoolSpec{}, {"r3"}),
                                   layer("fc", fc, {"pool"}),
                                   layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
                               }),
                               2);
  std::vector<FusedChain> chains;
  const Graph f = fuse(g, &chains);
  ASSERT_EQ(chains.size(), 3u);
  EXPECT_EQ(chains[0].node, "c1");
  EXPECT_EQ(chains[0].type, "conv2d_relu");
  EXPECT_EQ(chains[0].merged, (std::vector<std::string>{"c1", "r1"}));
  EXPECT_EQ(chains[1].node, "c2");
  EXPECT_EQ(chains[1].merged, (std::vector<std::string>{"c2", "r2"}));
  EXPECT_EQ(chains[2].type, "batchnorm2d_relu");
  EXPECT_EQ(f.nodes().size(), g.nodes().size() - 3);
  // The fused node keeps the convolution (bias included) and takes the relu's consumers.
  const auto* fused_c2 = std::get_if<Conv2dReluSpec>(&named(f, "c2").spec);
  ASSERT_NE(fused_c2, nullptr);
  EXPECT_TRUE(fused_c2->conv.bias);
  EXPECT_EQ(type_name(named(f, "c2").spec), "conv2d_relu");
  EXPECT_EQ(f.node(named(f, "c2").inputs[0]).name, "c1");
  EXPECT_EQ(f.node(named(f, "c3").inputs[0]).name, "c2");
  EXPECT_TRUE(std::holds_alternative<Conv2dSpec>(named(f, "c3").spec));
  EXPECT_EQ(named(f, "c2").output_shape, named(g, "r2").output_shape);
  EXPECT_EQ(parameter_names(f), parameter_names(g));
  EXPECT_EQ(f.trainable_parameters(), g.trainable_parameters());
  // Backward reads x (the weight gradient) and y (the ReLU's mask).
  const BackwardNeeds needs = backward_needs(named(f, "c1").spec);
  EXPECT_TRUE(needs.inputs);
  EXPECT_TRUE(needs.output);
  EXPECT_NE(format_fusion(chains).find("  c2 <- c2 + r2 (conv2d_relu)\n"), std::string::npos);
}

TEST(Fusion, KeepsAConvWhoseOutputHasOtherConsumers) {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 4;
  // c1 feeds its relu and the add; c2's relu is not its only consumer either (c2 -> add too).
  const Graph g = Graph::build(testing::network({
                                   layer("c1", testing::conv(8, 3), {"input"}),
                                   layer("r1", ReluSpec{}, {"c1"}),
                                   layer("c2", testing::conv(8, 3), {"r1"}),
                                   layer("r2", ReluSpec{}, {"c2"}),
                                   layer("add", AddSpec{}, {"c1", "r2", "c2"}),
                                   layer("pool", GlobalAvgPoolSpec{}, {"add"}),
                                   layer("fc", fc, {"pool"}),
                                   layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
                               }),
                               2);
  std::vector<FusedChain> chains;
  const Graph f = fuse(g, &chains);
  EXPECT_TRUE(chains.empty());
  EXPECT_EQ(f.nodes().size(), g.nodes().size());
  EXPECT_TRUE(std::holds_alternative<Conv2dSpec>(named(f, "c1").spec));
  EXPECT_TRUE(std::holds_alternative<Conv2dSpec>(named(f, "c2").spec));
}

TEST(Fusion, Vgg16FusesEveryConvolutionWithItsRelu) {
  const Graph g = load_config("vgg16.json", 2);
  std::vector<FusedChain> chains;
  const Graph f = fuse(g, &chains);
  ASSERT_EQ(chains.size(), 13u);  // the classifier's linear -> relu chains stay
  for (const FusedChain& c : chains) EXPECT_EQ(c.type, "conv2d_relu") << c.node;
  EXPECT_EQ(chains.front().merged, (std::vector<std::string>{"block1.0.conv", "block1.0.relu"}));
  EXPECT_EQ(f.nodes().size(), g.nodes().size() - 13);
  EXPECT_EQ(parameter_names(f), parameter_names(g));
  EXPECT_EQ(f.trainable_parameters(), g.trainable_parameters());
}

SessionOptions fused(bool fuse, Policy policy) {
  SessionOptions o;
  o.fuse = fuse;
  o.policy = policy;
  o.executor.seed = 5;
  o.executor.poison_freed = true;
  return o;
}

class FusedTraining : public ::testing::TestWithParam<const char*> {};

TEST_P(FusedTraining, LossesAreBitwiseTheUnfusedChainsUnderEveryPolicy) {
  const auto unfused = run_steps(load_config(GetParam(), 4), fused(false, Policy::Baseline), 4);
  for (Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::Recompute}) {
    const auto run = run_steps(load_config(GetParam(), 4), fused(true, p), 4);
    EXPECT_EQ(run.losses, unfused.losses) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
  }
}

INSTANTIATE_TEST_SUITE_P(Networks, FusedTraining,
                         ::testing::Values("resnet20-cifar.json", "densenet40-cifar.json"));

// A VGG-like network: conv -> relu pairs with and without bias, max pooling, a 1x1 convolution and
// a classifier whose linear -> relu does not fuse.
graph::NetworkDef vgg_like() {
  using namespace layers;
  const auto conv = [](std::int64_t out, std::int64_t k, bool bias) {
    Conv2dSpec c = testing::conv(out, k);
    c.bias = bias;
    return c;
  };
  MaxPool2dSpec pool;
  pool.kernel = {2, 2};
  LinearSpec fc1;
  fc1.out_features = 16;
  LinearSpec fc2;
  fc2.out_features = 4;
  return testing::network({
      layer("conv1", conv(8, 3, true), {"input"}),
      layer("relu1", ReluSpec{}, {"conv1"}),
      layer("conv2", conv(8, 3, true), {"relu1"}),
      layer("relu2", ReluSpec{}, {"conv2"}),
      layer("pool1", pool, {"relu2"}),
      layer("conv3", conv(16, 3, false), {"pool1"}),
      layer("relu3", ReluSpec{}, {"conv3"}),
      layer("conv4", conv(16, 1, true), {"relu3"}),
      layer("relu4", ReluSpec{}, {"conv4"}),
      layer("pool2", pool, {"relu4"}),
      layer("flatten", FlattenSpec{}, {"pool2"}),
      layer("fc1", fc1, {"flatten"}),
      layer("relu5", ReluSpec{}, {"fc1"}),
      layer("fc2", fc2, {"relu5"}),
      layer("loss", SoftmaxCrossEntropySpec{}, {"fc2"}),
  });
}

TEST(FusedConvTraining, VggLikeTrainsBitwiseAsTheUnfusedChainsUnderEveryPolicy) {
  const Graph unfused_graph = Graph::build(vgg_like(), 4);
  std::vector<FusedChain> chains;
  static_cast<void>(fuse(unfused_graph, &chains));
  ASSERT_EQ(chains.size(), 4u);
  const auto unfused = run_steps(unfused_graph, fused(false, Policy::Baseline), 4);
  for (Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute}) {
    const auto run = run_steps(Graph::build(vgg_like(), 4), fused(true, p), 4);
    EXPECT_EQ(run.losses, unfused.losses) << policy_name(p);
    EXPECT_EQ(run.weights, unfused.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
  }
}

}  // namespace
}  // namespace vdnn::graph
