// The planner and the smooth activations (Note [Recomputation]): under `recompute` the maps of
// silu, gelu, hardswish and mul are rebuilt in backward from the convolution outputs their
// backward keeps; sigmoid's, whose backward reads only its output, stays. So are ConvNeXt's
// layernorm2d, layer_scale and stochastic_depth.
#include <gtest/gtest.h>

#include <string>

#include "graph/Graph.hpp"
#include "graph/LayerSet.hpp"
#include "graph/Planner.hpp"
#include "tests/graph/TestNetworks.hpp"

namespace vdnn::graph {
namespace {

using testing::conv;
using testing::layer;

// conv -> activation, four times, a squeeze-excitation-like scale of conv5 by a 1x1 convolution
// of its mean, then a convolution, pooling, the logits and the loss.
Graph activation_chain() {
  layers::LinearSpec fc;
  fc.out_features = 4;
  return Graph::build(testing::network({
                          layer("conv1", conv(8, 3), {"input"}),
                          layer("silu", layers::SiluSpec{}, {"conv1"}),
                          layer("conv2", conv(8, 3), {"silu"}),
                          layer("gelu", layers::GeluSpec{}, {"conv2"}),
                          layer("conv3", conv(8, 3), {"gelu"}),
                          layer("sigmoid", layers::SigmoidSpec{}, {"conv3"}),
                          layer("conv4", conv(8, 3), {"sigmoid"}),
                          layer("hardswish", layers::HardswishSpec{}, {"conv4"}),
                          layer("conv5", conv(8, 3), {"hardswish"}),
                          layer("se_pool", layers::GlobalAvgPoolSpec{}, {"conv5"}),
                          layer("se_fc", conv(8, 1), {"se_pool"}),
                          layer("scale", layers::MulSpec{}, {"conv5", "se_fc"}),
                          layer("conv6", conv(8, 3), {"scale"}),
                          layer("pool", layers::GlobalAvgPoolSpec{}, {"conv6"}),
                          layer("fc", fc, {"pool"}),
                          layer("loss", layers::SoftmaxCrossEntropySpec{}, {"fc"}),
                      }),
                      4);
}

NodeId node_named(const Graph& g, const std::string& name) {
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    if (g.node(id).name == name) return id;
  }
  ADD_FAILURE() << "no node " << name;
  return kNetworkInput;
}

Plan plan(const Graph& g, Policy policy) {
  PlanRequest r;
  r.policy = policy;
  r.workspace = LayerSet(g, layers::Backend::Cpu, {}).workspaces();
  return make_plan(g, r);
}

TEST(ActivationPlan, RecomputeRebuildsActivationAndMulMapsFromTheInputsTheirBackwardKeeps) {
  const Graph g = activation_chain();
  const Plan p = plan(g, Policy::Recompute);
  for (const char* name : {"silu", "gelu", "hardswish", "scale"}) {
    EXPECT_EQ(p.placement_of(node_named(g, name)), Placement::Recomputed) << name;
    EXPECT_EQ(p.placement_of(g.node(node_named(g, name)).inputs.front()), Placement::Resident)
        << name << "'s input, which its backward reads";
  }
  // sigmoid's backward reads only its output, so no backward keeps its input and it cannot be
  // rebuilt from it: the map stays.
  EXPECT_EQ(p.placement_of(node_named(g, "conv3")), Placement::ForwardOnly);
  EXPECT_EQ(p.placement_of(node_named(g, "sigmoid")), Placement::Resident);
  EXPECT_GT(p.recomputed_bytes, 0u);
  EXPECT_LT(p.predicted_peak, plan(g, Policy::Baseline).predicted_peak);
}

// A ConvNeXt-like block: depthwise conv -> layernorm2d -> 1x1 -> layer_scale -> 1x1, whose output
// feeds a GELU (which keeps it) and a stochastic_depth read by a convolution.
Graph convnext_chain() {
  layers::LinearSpec fc;
  fc.out_features = 4;
  layers::Conv2dSpec depthwise = conv(8, 3);
  depthwise.groups = 8;
  layers::StochasticDepthSpec drop_path;
  drop_path.p = 0.2;
  return Graph::build(testing::network({
                          layer("stem", conv(8, 3), {"input"}),
                          layer("dwconv", depthwise, {"stem"}),
                          layer("norm", layers::LayerNorm2dSpec{}, {"dwconv"}),
                          layer("pw1", conv(8, 1), {"norm"}),
                          layer("scale", layers::LayerScaleSpec{}, {"pw1"}),
                          layer("pw2", conv(8, 1), {"scale"}),
                          layer("gelu", layers::GeluSpec{}, {"pw2"}),
                          layer("conv_g", conv(8, 3), {"gelu"}),
                          layer("drop_path", drop_path, {"pw2"}),
                          layer("conv_d", conv(8, 3), {"drop_path"}),
                          layer("sum", layers::AddSpec{}, {"conv_g", "conv_d"}),
                          layer("pool", layers::GlobalAvgPoolSpec{}, {"sum"}),
                          layer("fc", fc, {"pool"}),
                          layer("loss", layers::SoftmaxCrossEntropySpec{}, {"fc"}),
                      }),
                      4);
}

TEST(ActivationPlan, RecomputeRebuildsConvNextLayerMapsFromTheInputsBackwardKeeps) {
  const Graph g = convnext_chain();
  const Plan p = plan(g, Policy::Recompute);
  for (const char* name : {"norm", "scale", "drop_path"}) {
    EXPECT_EQ(p.placement_of(node_named(g, name)), Placement::Recomputed) << name;
    EXPECT_EQ(p.placement_of(g.node(node_named(g, name)).inputs.front()), Placement::Resident)
        << name << "'s input";
  }
  EXPECT_LT(p.predicted_peak, plan(g, Policy::Baseline).predicted_peak);
}

}  // namespace
}  // namespace vdnn::graph
