// The precision rewrite (Note [Precision]): where the cast goes, the element type of every tensor,
// the bytes plans count, and names.
#include "graph/Precision.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <variant>

#include "graph/Fusion.hpp"
#include "graph/Planner.hpp"
#include "graph/SessionHarness.hpp"

namespace vdnn::graph {
namespace {

using runtime::DType;
using testing::load_config;

TEST(Precision, Bf16PutsOneCastAfterTheInputAndEveryMapFollowsIt) {
  const Graph fp32 = load_config("resnet20-cifar.json", 4);
  const Graph bf16 = with_precision(fp32, DType::BF16);
  ASSERT_EQ(bf16.nodes().size(), fp32.nodes().size() + 1);
  const Node& cast = bf16.node(0);
  EXPECT_EQ(cast.name, kInputCastName);
  EXPECT_TRUE(std::holds_alternative<layers::CastSpec>(cast.spec));
  EXPECT_EQ(cast.inputs, std::vector<NodeId>{kNetworkInput});
  EXPECT_EQ(bf16.input_consumers(), std::vector<NodeId>{0});
  EXPECT_EQ(bf16.dtype(kNetworkInput), DType::F32);
  EXPECT_EQ(precision_of(bf16), DType::BF16);
  EXPECT_EQ(precision_of(fp32), DType::F32);
  for (NodeId id = 0; id < static_cast<NodeId>(bf16.nodes().size()); ++id) {
    const bool loss = id == bf16.loss_node();
    EXPECT_EQ(bf16.dtype(id), loss ? DType::F32 : DType::BF16) << bf16.node(id).name;
    EXPECT_EQ(bf16.input_dtype(id), id == 0 ? DType::F32 : DType::BF16) << bf16.node(id).name;
    EXPECT_EQ(bf16.tensor_bytes(id), bf16.node(id).output_shape.bytes(bf16.dtype(id)));
  }
  EXPECT_EQ(bf16.trainable_parameters(), fp32.trainable_parameters());
}

TEST(Precision, Fp32AndASecondRewriteChangeNothing) {
  const Graph fp32 = load_config("resnet20-cifar.json", 4);
  EXPECT_EQ(with_precision(fp32, DType::F32).nodes().size(), fp32.nodes().size());
  const Graph bf16 = with_precision(fp32, DType::BF16);
  EXPECT_EQ(with_precision(bf16, DType::BF16).nodes().size(), bf16.nodes().size());
  EXPECT_THROW(with_precision(fp32, DType::F64), runtime::InvalidArgument);
}

TEST(Precision, FusionKeepsTheCastAndTheTypes) {
  const Graph fused = fuse(with_precision(load_config("densenet40-cifar.json", 2), DType::BF16));
  EXPECT_EQ(fused.node(0).name, kInputCastName);
  for (NodeId id = 0; id + 1 < static_cast<NodeId>(fused.nodes().size()); ++id) {
    EXPECT_EQ(fused.dtype(id), DType::BF16) << fused.node(id).name;
  }
}

TEST(Precision, PlansCountBf16MapsAtHalfTheBytes) {
  const Graph fp32 = load_config("resnet20-cifar.json", 8);
  const Graph bf16 = with_precision(fp32, DType::BF16);
  const Plan a = make_plan(fp32, {Policy::VdnnAll, 0, {}});
  const Plan b = make_plan(bf16, {Policy::VdnnAll, 0, {}});
  // FP32 master weights in both; bf16 adds one bf16 copy of each convolution and linear weight.
  std::uint64_t copies = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(bf16.nodes().size()); ++id) {
    const layers::LayerSpec& spec = bf16.node(id).spec;
    if (layers::conv_of(spec) == nullptr && !std::holds_alternative<layers::LinearSpec>(spec)) {
      continue;
    }
    copies += 2 * static_cast<std::uint64_t>(
                      layers::param_specs(spec, bf16.input_shapes(id)).at(0).shape.numel());
  }
  EXPECT_GT(copies, 0u);
  EXPECT_EQ(b.resident_bytes, a.resident_bytes + copies);
  // Every offloaded map is half as large; the cast's output (the first conv's input, bf16) is
  // offloaded where the fp32 network input was.
  EXPECT_LT(b.offloaded_bytes, a.offloaded_bytes * 6 / 10);
  EXPECT_GT(b.offloaded_bytes, a.offloaded_bytes * 4 / 10);
  EXPECT_LT(b.predicted_peak, a.predicted_peak);
}

TEST(Precision, NamesRoundTrip) {
  EXPECT_EQ(parse_precision("bf16"), DType::BF16);
  EXPECT_EQ(parse_precision("fp32"), DType::F32);
  EXPECT_EQ(parse_precision("fp16"), std::nullopt);
  EXPECT_STREQ(precision_name(DType::BF16), "bf16");
  EXPECT_STREQ(precision_name(DType::F32), "fp32");
}

TEST(Precision, ATypeMismatchBetweenInputsIsAGraphError) {
  // An add of the fp32 network input and a bf16 cast of it: inputs of different element types.
  NetworkDef def;
  def.name = "mixed";
  def.channels = 1;
  def.height = 2;
  def.width = 2;
  def.num_classes = 4;
  def.origin = "mixed.json";
  def.layers = {{"cast", layers::CastSpec{}, {kInputName}, "mixed.json at /layers/0"},
                {"sum", layers::AddSpec{}, {kInputName, "cast"}, "mixed.json at /layers/1"},
                {"flat", layers::FlattenSpec{}, {"sum"}, "mixed.json at /layers/2"},
                {"loss", layers::SoftmaxCrossEntropySpec{}, {"flat"}, "mixed.json at /layers/3"}};
  try {
    Graph::build(def, 1);
    FAIL() << "expected GraphError";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("different element types"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/layers/1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vdnn::graph
