// The fusion pass: which chains it merges and which it leaves (batch norm with relu, add + relu or
// a smooth activation, and convolution chains), that the fused graph keeps the parameter names and
// consumers, and that training with fused layers gives bitwise the losses of the unfused chain on
// the CPU backend, under every offload policy.
#include "graph/Fusion.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "graph/ParameterStore.hpp"
#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::layer;
using testing::load_config;
using testing::poisoned_options;
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

// bn1 -> silu, bn2 -> relu6, bn3 -> hardswish fuse; bn4 -> gelu does not; bn5 feeds its silu and
// the add, so it stays. Every conv is followed by its batch norm.
graph::NetworkDef smooth_chains() {
  using namespace layers;
  LinearSpec fc;
  fc.out_features = 4;
  return testing::network({
      layer("c1", testing::conv(8, 3), {"input"}),
      layer("bn1", BatchNorm2dSpec{}, {"c1"}),
      layer("act1", SiluSpec{}, {"bn1"}),
      layer("c2", testing::conv(8, 3), {"act1"}),
      layer("bn2", BatchNorm2dSpec{}, {"c2"}),
      layer("act2", Relu6Spec{}, {"bn2"}),
      layer("c3", testing::conv(8, 1), {"act2"}),
      layer("bn3", BatchNorm2dSpec{}, {"c3"}),
      layer("act3", HardswishSpec{}, {"bn3"}),
      layer("c4", testing::conv(8, 3), {"act3"}),
      layer("bn4", BatchNorm2dSpec{}, {"c4"}),
      layer("act4", GeluSpec{}, {"bn4"}),
      layer("c5", testing::conv(8, 1), {"act4"}),
      layer("bn5", BatchNorm2dSpec{}, {"c5"}),
      layer("act5", SiluSpec{}, {"bn5"}),
      layer("add", AddSpec{}, {"bn5", "act5"}),
      layer("pool", GlobalAvgPoolSpec{}, {"add"}),
      layer("fc", fc, {"pool"}),
      layer("loss", SoftmaxCrossEntropySpec{}, {"fc"}),
  });
}

TEST(Fusion, MergesBatchNormsWithSiluRelu6AndHardswish) {
  using namespace layers;
  const Graph g = Graph::build(smooth_chains(), 2);
  std::vector<FusedChain> chains;
  const Graph f = fuse(g, &chains);
  ASSERT_EQ(chains.size(), 3u);
  const std::vector<std::string> types = {"batchnorm2d_silu", "batchnorm2d_relu6",
                                          "batchnorm2d_hardswish"};
  const Activation activations[] = {Activation::Silu, Activation::Relu6, Activation::Hardswish};
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string bn = "bn" + std::to_string(i + 1);
    EXPECT_EQ(chains[i].node, bn);
    EXPECT_EQ(chains[i].type, types[i]);
    EXPECT_EQ(chains[i].merged, (std::vector<std::string>{bn, "act" + std::to_string(i + 1)}));
    const auto* spec = std::get_if<BatchNormActivationSpec>(&named(f, bn).spec);
    ASSERT_NE(spec, nullptr) << bn;
    EXPECT_EQ(spec->activation, activations[i]);
    EXPECT_EQ(type_name(named(f, bn).spec), types[i]);
  }
  // The fused node takes the activation's consumers; what does not fuse stays as it is.
  EXPECT_EQ(f.node(named(f, "c2").inputs[0]).name, "bn1");
  EXPECT_EQ(f.node(named(f, "c4").inputs[0]).name, "bn3");
  EXPECT_TRUE(std::holds_alternative<BatchNorm2dSpec>(named(f, "bn4").spec));
  EXPECT_TRUE(std::holds_alternative<BatchNorm2dSpec>(named(f, "bn5").spec));
  EXPECT_EQ(f.nodes().size(), g.nodes().size() - 3);
  EXPECT_EQ(parameter_names(f), parameter_names(g));
  // Backward reads x alone, as the batch norm's does: fusing holds no more.
  EXPECT_EQ(fusion_extra_bytes(g, f, chains), (std::vector<std::uint64_t>{0, 0, 0}));
  EXPECT_NE(format_fusion(chains).find("  bn2 <- bn2 + act2 (batchnorm2d_relu6)\n"),
            std::string::npos);
}

// Per zoo config, the chains of each type fuse() finds: MobileNetV2's stem, 16 expansions, 17
// depthwise and last convolutions with relu6; EfficientNet-B0's stem, 15 expansions, 16 depthwise
// and head with silu; MobileNetV3-Large's stem, 9 expansions and 9 depthwise convolutions and head
// with hardswish, 5 expansions and 6 depthwise with relu, and 8 squeeze-excitation fc1 -> relu.
struct ZooFusion {
  const char* config;
  std::map<std::string, int> chains;
};

class ZooSmoothFusion : public ::testing::TestWithParam<ZooFusion> {};

TEST_P(ZooSmoothFusion, FusesTheBatchNormActivationsAndKeepsEveryName) {
  const Graph g = load_config(GetParam().config, 2);
  std::vector<FusedChain> chains;
  const Graph f = fuse(g, &chains);
  std::map<std::string, int> by_type;
  std::size_t merged = 0;
  for (const FusedChain& c : chains) {
    ++by_type[c.type];
    merged += c.merged.size() - 1;
  }
  EXPECT_EQ(by_type, GetParam().chains);
  EXPECT_EQ(f.nodes().size(), g.nodes().size() - merged);
  EXPECT_EQ(parameter_names(f), parameter_names(g));
  EXPECT_EQ(f.trainable_parameters(), g.trainable_parameters());
}

INSTANTIATE_TEST_SUITE_P(
    Configs, ZooSmoothFusion,
    ::testing::Values(
        ZooFusion{"mobilenet_v2.json", {{"batchnorm2d_relu6", 35}}},
        ZooFusion{"efficientnet_b0.json", {{"batchnorm2d_silu", 33}}},
        ZooFusion{"mobilenet_v3_large.json",
                  {{"batchnorm2d_hardswish", 20}, {"batchnorm2d_relu", 11}, {"conv2d_relu", 8}}}));

class FusedTraining : public ::testing::TestWithParam<const char*> {};

TEST_P(FusedTraining, LossesAreBitwiseTheUnfusedChainsUnderEveryPolicy) {
  const auto unfused =
      run_steps(load_config(GetParam(), 4), poisoned_options(false, Policy::Baseline), 4);
  for (Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::Recompute}) {
    const auto run = run_steps(load_config(GetParam(), 4), poisoned_options(true, p), 4);
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

// F32 on the CPU, fused and unfused compute the same expressions on the same values: the fused
// layer normalizes x as the batch norm does, applies the activation's formula to that float, and
// in backward renormalizes x into the very bits the unfused activation read (the forward's
// statistics again), so its gradient and everything after it are the chain's bit for bit.
TEST(FusedSmoothTraining, TrainsBitwiseAsTheUnfusedChainsUnderEveryPolicy) {
  const auto unfused =
      run_steps(Graph::build(smooth_chains(), 4), poisoned_options(false, Policy::Baseline), 4);
  for (Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::Recompute}) {
    const auto run = run_steps(Graph::build(smooth_chains(), 4), poisoned_options(true, p), 4);
    EXPECT_EQ(run.losses, unfused.losses) << policy_name(p);
    EXPECT_EQ(run.weights, unfused.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
  }
}

TEST(FusedConvTraining, VggLikeTrainsBitwiseAsTheUnfusedChainsUnderEveryPolicy) {
  const Graph unfused_graph = Graph::build(vgg_like(), 4);
  std::vector<FusedChain> chains;
  static_cast<void>(fuse(unfused_graph, &chains));
  ASSERT_EQ(chains.size(), 4u);
  const auto unfused = run_steps(unfused_graph, poisoned_options(false, Policy::Baseline), 4);
  for (Policy p : {Policy::Baseline, Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute}) {
    const auto run = run_steps(Graph::build(vgg_like(), 4), poisoned_options(true, p), 4);
    EXPECT_EQ(run.losses, unfused.losses) << policy_name(p);
    EXPECT_EQ(run.weights, unfused.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
  }
}

}  // namespace
}  // namespace vdnn::graph
