// The peer tier through the public API (TrainerConfig::offload_peer, peer_budget) on the CPU
// backend's emulated peer: bitwise baseline's losses with maps offloaded to the peer, and the
// refusals as public errors.
#include <gtest/gtest.h>

#include <string>
#include <vdnn/Error.hpp>
#include <vdnn/Trainer.hpp>
#include <vector>

#include "api/TinyNetwork.hpp"

namespace {

// The API tests' CPU run under `policy`.
vdnn::TrainerConfig cpu_config(const std::string& policy) {
  vdnn::TrainerConfig config = vdnn::testing::tiny_cpu_config();
  config.policy = policy;
  return config;
}

std::vector<double> losses(vdnn::Trainer& trainer) {
  std::vector<double> out;
  for (int i = 0; i < 3; ++i) out.push_back(trainer.step().loss);
  return out;
}

TEST(PeerTierApi, OffloadsToThePeerAndMatchesBaselineBitwise) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::Trainer base(network, cpu_config("baseline"));
  vdnn::TrainerConfig config = cpu_config("vdnn-all");
  config.offload_peer = 1;
  config.peer_budget = std::uint64_t{1} << 30;
  vdnn::Trainer peer(network, config);
  EXPECT_EQ(losses(peer), losses(base));
  EXPECT_GT(peer.step().offloaded_bytes, 0U);
}

TEST(PeerTierApi, RefusesHalfAPeerTierAndAnUnreachablePeer) {
  const vdnn::Network network = vdnn::testing::tiny_resnet("tiny");
  vdnn::TrainerConfig config = cpu_config("vdnn-all");
  config.offload_peer = 1;
  EXPECT_THROW(vdnn::Trainer(network, config), vdnn::InvalidArgument);
  config.offload_peer = -1;
  config.peer_budget = 1 << 20;
  EXPECT_THROW(vdnn::Trainer(network, config), vdnn::InvalidArgument);
  config.offload_peer = 5;
  try {
    vdnn::Trainer trainer(network, config);
    FAIL() << "expected InvalidArgument";
  } catch (const vdnn::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no GPU 5"), std::string::npos) << e.what();
  }
}

}  // namespace
