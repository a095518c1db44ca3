// The peer tier on two GPUs (Note [Peer tier]): with deterministic algorithms, every policy that
// offloads gives bitwise baseline's losses and weights with maps on the peer GPU and the host; the
// peer link is measured at setup; a peer without peer access is refused. Skips below two GPUs.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "graph/Fusion.hpp"
#include "graph/SessionHarness.hpp"
#include "runtime/Device.hpp"

namespace vdnn::graph {
namespace {

using testing::load_config;
using testing::run_steps;

constexpr int kPeer = 1;

class PeerTierCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() < 2) GTEST_SKIP() << "the peer tier needs two CUDA devices";
    if (!runtime::cuda_peer_link(0, kPeer).access) GTEST_SKIP() << "GPU 0 cannot reach GPU 1";
  }
};

SessionOptions cuda_options(Policy policy, std::uint64_t peer_budget) {
  SessionOptions o;
  o.backend = layers::Backend::Cuda;
  o.policy = policy;
  o.deterministic = true;
  o.executor.seed = 5;
  o.executor.poison_freed = true;
  o.peer_device = peer_budget > 0 ? kPeer : -1;
  o.peer_budget_bytes = peer_budget;
  return o;
}

TEST_F(PeerTierCuda, EveryPolicyWithThePeerTierMatchesBaselineBitwise) {
  // Issue 28's networks: ResNet-50 at batch 32 and DenseNet-40.
  for (const auto& [config, batch] :
       {std::pair{"resnet50.json", 32}, std::pair{"densenet40-cifar.json", 8}}) {
    SCOPED_TRACE(config);
    const Graph g = load_config(config, batch);
    const auto base = run_steps(g, cuda_options(Policy::Baseline, 0), 4);
    const std::uint64_t all = make_plan(fuse(g), {Policy::VdnnAll, 0, {}}).offloaded_bytes;
    for (Policy policy : {Policy::VdnnAll, Policy::VdnnConv, Policy::Auto}) {
      SessionOptions o = cuda_options(policy, all / 3);  // both tiers in use
      if (policy == Policy::Auto) o.budget_bytes = base.predicted_peak * 3 / 4;
      const auto run = run_steps(g, o, 4);
      EXPECT_EQ(run.losses, base.losses) << policy_name(policy);
      EXPECT_EQ(run.weights, base.weights) << policy_name(policy);
      EXPECT_GT(run.memory.peer_peak, 0U) << policy_name(policy);
    }
  }
}

TEST_F(PeerTierCuda, MeasuresThePeerLinkAtSetup) {
  SessionOptions o = cuda_options(Policy::VdnnAll, std::uint64_t{1} << 30);
  o.measure_costs = true;
  Session session(load_config("resnet20-cifar.json", 8), o);
  EXPECT_GT(session.plan().peer_offloaded_bytes, 0U);
  EXPECT_EQ(session.plan().cost_source, "measured");
}

}  // namespace
}  // namespace vdnn::graph
