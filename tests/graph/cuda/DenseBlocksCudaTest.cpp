// Dense block storage on the CUDA backend (Note [Dense block storage]): with deterministic
// algorithms, the views train to bitwise the losses and weights of the packed maps (unfused: no
// views), in both layouts and both precisions, and every policy matches the views' baseline.
#include <gtest/gtest.h>

#include <string>

#include "graph/DenseBlocks.hpp"
#include "graph/Fusion.hpp"
#include "graph/SessionHarness.hpp"
#include "graph/TestNetworks.hpp"
#include "runtime/Device.hpp"

namespace vdnn::graph {
namespace {

using testing::run_steps;
using testing::small_dense_net;

struct DenseCase {
  LayoutChoice layout;
  runtime::DType precision;
};

class CudaDenseBlocks : public ::testing::TestWithParam<DenseCase> {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
  SessionOptions options(bool fuse, Policy policy) const {
    SessionOptions o;
    o.backend = layers::Backend::Cuda;
    o.deterministic = true;
    o.executor.seed = 5;
    o.executor.poison_freed = true;
    o.layout = GetParam().layout;
    o.precision = GetParam().precision;
    o.fuse = fuse;
    o.policy = policy;
    return o;
  }
};

// Growth 32 on 16x16 maps, as DenseNet-121's blocks are wide: rows of whole vectors.
Graph dense_net() {
  graph::NetworkDef def = small_dense_net(4, 32);
  def.height = def.width = 16;
  return Graph::build(def, 8);
}

TEST_P(CudaDenseBlocks, ViewsTrainBitwiseAsPackedMapsUnderEveryPolicy) {
  const std::vector<bool> shared = shares_block(block_storage(fuse(dense_net())));
  ASSERT_EQ(std::count(shared.begin(), shared.end(), true), 8);
  const auto packed = run_steps(dense_net(), options(false, Policy::Baseline), 6);
  const auto base = run_steps(dense_net(), options(true, Policy::Baseline), 6);
  EXPECT_EQ(base.losses, packed.losses);
  EXPECT_EQ(base.weights, packed.weights);
  EXPECT_LT(base.memory.device_peak, packed.memory.device_peak);
  for (Policy p : {Policy::VdnnAll, Policy::Recompute, Policy::UvmPrefetch}) {
    const auto run = run_steps(dense_net(), options(true, p), 6);
    EXPECT_EQ(run.losses, base.losses) << policy_name(p);
    EXPECT_EQ(run.weights, base.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CudaDenseBlocks,
                         ::testing::Values(DenseCase{LayoutChoice::Nhwc, runtime::DType::F32},
                                           DenseCase{LayoutChoice::Nchw, runtime::DType::F32},
                                           DenseCase{LayoutChoice::Nhwc, runtime::DType::BF16}),
                         [](const auto& test) {
                           return std::string(test.param.layout == LayoutChoice::Nhwc ? "nhwc"
                                                                                      : "nchw") +
                                  (test.param.precision == runtime::DType::BF16 ? "_bf16" : "");
                         });

}  // namespace
}  // namespace vdnn::graph
