// The public network API: building in code, loading configs, and the errors of each.
#include <gtest/gtest.h>

#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Network.hpp>

#include "api/TinyNetwork.hpp"

namespace {

TEST(NetworkBuilder, BuildsAResidualNetworkWithItsParameters) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  EXPECT_EQ(network.name(), "tiny");
  const auto names = network.layer_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "conv1");
  EXPECT_EQ(names.back(), "loss");
  // conv1 3*8*9, bn1 16, block: 2 x (8*8*9 + 16), fc 8*10 + 10
  EXPECT_EQ(network.parameter_count(), 216 + 16 + 2 * (576 + 16) + 90);
}

TEST(NetworkBuilder, RefusesRepeatedAndInvalidNamesAndForeignHandles) {
  vdnn::NetworkBuilder net("n", 3, 8, 8, 4);
  const vdnn::Tensor x = net.conv2d("conv", net.input(), 4, 3, 1, 1);
  EXPECT_THROW(net.relu("conv", x), vdnn::InvalidArgument);
  EXPECT_THROW(net.relu("", x), vdnn::InvalidArgument);
  EXPECT_THROW(net.relu("input", x), vdnn::InvalidArgument);
  EXPECT_THROW(net.relu(".relu", x), vdnn::InvalidArgument);
  EXPECT_THROW(net.relu("relu", vdnn::Tensor{"elsewhere"}), vdnn::InvalidArgument);
  EXPECT_THROW(net.conv2d("c0", x, 4, 0, 1, 1), vdnn::InvalidArgument);
  EXPECT_THROW(net.dropout("d", x, 1.0), vdnn::InvalidArgument);
  EXPECT_THROW(net.add("a", {x}), vdnn::InvalidArgument);
  EXPECT_THROW(net.maxpool2d("mp", x, 0, 1, 0), vdnn::InvalidArgument);
  EXPECT_THROW(net.avgpool2d("ap", x, 2, 0, 0), vdnn::InvalidArgument);
  EXPECT_THROW(net.avgpool2d("ap", x, 2, 2, -1), vdnn::InvalidArgument);
  // A refused layer leaves no trace: its name is still free.
  EXPECT_NO_THROW(net.relu("relu", x));
}

TEST(NetworkBuilder, ShapeErrorsNameTheLayer) {
  vdnn::NetworkBuilder net("mismatch", 3, 8, 8, 4);
  const vdnn::Tensor a = net.conv2d("a", net.input(), 4, 3, 1, 1);
  const vdnn::Tensor b = net.conv2d("b", net.input(), 6, 3, 1, 1);
  const vdnn::Tensor sum = net.add("sum", {a, b});
  const vdnn::Tensor logits = net.linear("fc", net.flatten("flat", sum), 4);
  try {
    net.softmax_cross_entropy("loss", logits);
    FAIL() << "expected NetworkError";
  } catch (const vdnn::NetworkError& e) {
    EXPECT_NE(std::string(e.what()).find("sum"), std::string::npos) << e.what();
  }
  EXPECT_THROW(net.relu("late", a), vdnn::InvalidArgument);
}

TEST(NetworkFromConfig, LoadsAZooConfig) {
  const vdnn::Network network =
      vdnn::Network::from_file(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json");
  EXPECT_EQ(network.name(), "resnet20-cifar");
  EXPECT_EQ(network.parameter_count(), 272474);
}

TEST(NetworkFromConfig, ErrorsNameTheFileAndThePlace) {
  try {
    vdnn::Network::from_file("/nonexistent/net.json");
    FAIL() << "expected NetworkError";
  } catch (const vdnn::NetworkError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/net.json"), std::string::npos);
  }
  try {
    vdnn::Network::from_json(R"({"name": "x", "layers": [], "bogus": 1})", "inline.json");
    FAIL() << "expected NetworkError";
  } catch (const vdnn::NetworkError& e) {
    EXPECT_NE(std::string(e.what()).find("inline.json"), std::string::npos) << e.what();
  }
}

}  // namespace
