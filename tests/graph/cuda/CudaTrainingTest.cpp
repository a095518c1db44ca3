// Training on the CUDA backend: agreement with the CPU backend, bitwise offload invariance with
// deterministic algorithms, measured peaks, and no device allocation after the first step.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "graph/Precision.hpp"
#include "graph/SessionHarness.hpp"
#include "runtime/ByteSize.hpp"
#include "runtime/Device.hpp"
#include "runtime/cuda/CudaContext.hpp"
#include "runtime/memory/OversubscriptionGuard.hpp"

namespace vdnn::graph {
namespace {

using testing::load_config;
using testing::run_steps;

class CudaTraining : public ::testing::Test {
 protected:
  void SetUp() override {
    if (runtime::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

SessionOptions cuda_options(Policy policy) {
  SessionOptions o;
  o.backend = layers::Backend::Cuda;
  o.policy = policy;
  o.deterministic = true;
  o.executor.seed = 5;
  return o;
}

// In both layouts, fused (the default) and not: the CPU runs NCHW and unfused. At a learning rate
// of 0.01: at 0.05 the steps amplify FP32 summation-order differences tenfold each from the third
// on (NHWC's convolutions sum in another order than NCHW's), which says nothing of correctness.
TEST_F(CudaTraining, ResNet20AgreesWithTheCpuBackendWithoutTf32) {
  constexpr double kLearningRate = 0.01;
  SessionOptions cpu;
  cpu.executor.seed = 5;
  cpu.fuse = false;
  const auto a = run_steps(load_config("resnet20-cifar.json", 8), cpu, 5, kLearningRate).losses;
  for (const LayoutChoice layout : {LayoutChoice::Nchw, LayoutChoice::Nhwc}) {
    for (const bool fuse : {true, false}) {
      SCOPED_TRACE(std::string(layout == LayoutChoice::Nhwc ? "nhwc" : "nchw") +
                   (fuse ? " fused" : " unfused"));
      SessionOptions gpu = cuda_options(Policy::Baseline);
      gpu.allow_tf32 = false;
      gpu.layout = layout;
      gpu.fuse = fuse;
      const auto b = run_steps(load_config("resnet20-cifar.json", 8), gpu, 5, kLearningRate).losses;
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(b[i], a[i], 1e-4 * std::abs(a[i])) << "step " << i;
      }
    }
  }
}

struct InvarianceCase {
  const char* config;
  std::int64_t batch;
  LayoutChoice layout;
  runtime::DType precision = runtime::DType::F32;  // Note [Precision]
};

class CudaInvariance : public CudaTraining, public ::testing::WithParamInterface<InvarianceCase> {
 protected:
  SessionOptions options(Policy policy) const {
    SessionOptions o = cuda_options(policy);
    o.layout = GetParam().layout;
    o.precision = GetParam().precision;
    return o;
  }
};

TEST_P(CudaInvariance, EveryPolicyMatchesBaselineBitwiseFor20Steps) {
  const auto [config, batch, layout, precision] = GetParam();
  const auto base = run_steps(load_config(config, batch), options(Policy::Baseline), 20);
  EXPECT_EQ(base.memory.device_peak, base.predicted_peak);
  // Auto under a budget a quarter of the way from vdnn-all's peak to baseline's, with costs
  // measured on this GPU at setup.
  const std::uint64_t all =
      make_plan(with_precision(load_config(config, batch), precision), {Policy::VdnnAll, 0, {}})
          .predicted_peak;
  const std::uint64_t budget = all + (base.predicted_peak - all) / 4;
  for (Policy p : {Policy::VdnnAll, Policy::VdnnConv, Policy::Recompute, Policy::Auto}) {
    SessionOptions o = options(p);
    o.executor.poison_freed = true;
    if (p == Policy::Auto) o.budget_bytes = budget;
    const auto run = run_steps(load_config(config, batch), o, 20);
    EXPECT_EQ(run.losses, base.losses) << policy_name(p);
    EXPECT_EQ(run.weights, base.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
    EXPECT_LT(run.memory.device_peak, base.memory.device_peak) << policy_name(p);
  }
}

// Managed memory: the same kernels on pages the driver migrates give the same bits.
TEST_P(CudaInvariance, UvmPoliciesMatchBaselineBitwiseFor20Steps) {
  const auto [config, batch, layout, precision] = GetParam();
  const auto base = run_steps(load_config(config, batch), options(Policy::Baseline), 20);
  for (Policy p : {Policy::Uvm, Policy::UvmEvict, Policy::UvmPrefetch}) {
    const auto run = run_steps(load_config(config, batch), options(p), 20);
    EXPECT_EQ(run.losses, base.losses) << policy_name(p);
    EXPECT_EQ(run.weights, base.weights) << policy_name(p);
    EXPECT_EQ(run.memory.device_peak, run.predicted_peak) << policy_name(p);
    EXPECT_EQ(run.memory.pool_peak, run.predicted_pool_peak) << policy_name(p);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Networks, CudaInvariance,
    ::testing::Values(InvarianceCase{"resnet50.json", 32, LayoutChoice::Nhwc},
                      InvarianceCase{"resnet50.json", 32, LayoutChoice::Nchw},
                      InvarianceCase{"densenet40-cifar.json", 32, LayoutChoice::Nhwc},
                      InvarianceCase{"resnet50.json", 32, LayoutChoice::Nhwc, runtime::DType::BF16},
                      InvarianceCase{"densenet40-cifar.json", 32, LayoutChoice::Nhwc,
                                     runtime::DType::BF16},
                      // Its 7x7 depthwise convolutions run our kernels (Note [Depthwise
                      // convolution]), recomputed and re-read under every policy.
                      InvarianceCase{"convnext_tiny.json", 4, LayoutChoice::Nhwc}),
    [](const auto& test) {
      const std::string name = test.param.config;
      return name.substr(0, name.find_first_of("-.")) +
             (test.param.layout == LayoutChoice::Nhwc ? "_nhwc" : "_nchw") +
             (test.param.precision == runtime::DType::BF16 ? "_bf16" : "");
    });

TEST_F(CudaTraining, IdenticalConvolutionsChooseAlgorithmsOnce) {
  SessionOptions o = cuda_options(Policy::Baseline);
  o.deterministic = false;  // measured with cudnnFind: the expensive case the cache is for
  Session session(load_config("resnet50.json", 8), o);
  std::size_t convs = 0;
  for (const Node& n : session.graph().nodes()) {
    convs += std::holds_alternative<layers::Conv2dSpec>(n.spec) ? 1 : 0;
  }
  EXPECT_EQ(convs, 53u);
  EXPECT_GT(session.layers().cache().size(), 0u);
  EXPECT_LT(session.layers().cache().size(), convs / 2);  // ResNet-50 repeats its blocks
}

// A downgrade takes the largest pass's next smaller algorithm; limits set back restore the fastest.
TEST_F(CudaTraining, LayerSetDowngradesOnePassAndTakesItBack) {
  runtime::cuda::CudaContext context(0);
  layers::LayerOptions o;
  o.cuda = &context.device();
  const Graph g = load_config("resnet50.json", 32);
  LayerSet layers(g, layers::Backend::Cuda, o);
  const std::vector<layers::WorkspaceBytes> fastest = layers.workspaces();
  const std::uint64_t largest = layers.workspace_bytes();
  const std::vector<layers::WorkspaceBytes> unlimited = layers.workspace_limits();
  ASSERT_TRUE(layers.downgrade_largest_workspace());
  EXPECT_EQ(layers.limited_layers(), 1);
  std::size_t changed = 0;
  const std::vector<layers::WorkspaceBytes> now = layers.workspaces();
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (now[i] == fastest[i]) continue;
    ++changed;
    EXPECT_TRUE(now[i].forward < fastest[i].forward || now[i].backward < fastest[i].backward);
    EXPECT_TRUE(fastest[i].forward == largest || fastest[i].backward == largest);
  }
  EXPECT_EQ(changed, 1u);
  layers.limit_workspaces(unlimited);
  EXPECT_EQ(layers.workspaces(), fastest);
  EXPECT_EQ(layers.limited_layers(), 0);
}

class CudaNoAllocation : public CudaTraining, public ::testing::WithParamInterface<Policy> {};

TEST_P(CudaNoAllocation, AfterTheFirstStep) {
  Session session(load_config("resnet20-cifar.json", 16), cuda_options(GetParam()));
  Executor& exec = session.executor();
  std::vector<std::int32_t> labels(16, 3);
  // Each step names the next batch, as the trainer does (Note [Input staging]).
  const auto step = [&] {
    exec.stage_next(exec.input_staging());
    exec.train_step(exec.input_staging(), labels.data(), 0.01);
  };
  // Two warm-up steps: the first loads kernels and lets cuDNN settle its own scratch.
  for (int i = 0; i < 2; ++i) step();
  std::size_t free_before = 0;
  std::size_t total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  const MemoryReport first = exec.memory();
  for (int i = 0; i < 5; ++i) step();
  std::size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  // Nobody (cuDNN, cuBLAS included) allocated or freed: this reads the whole device's free
  // memory, so the test needs the device to itself (tools/gpu-check.sh runs gpu tests serially).
  EXPECT_EQ(free_after, free_before);
  EXPECT_EQ(exec.memory().device_upstream_allocations, first.device_upstream_allocations);
  EXPECT_EQ(exec.memory().pinned_upstream_allocations, first.pinned_upstream_allocations);
  EXPECT_EQ(exec.memory().device_upstream_allocations, 1u);
}

// cudaMalloc, cudaMallocManaged and cudaHostAlloc happen at setup only, whatever the policy.
INSTANTIATE_TEST_SUITE_P(Policies, CudaNoAllocation,
                         ::testing::Values(Policy::VdnnAll, Policy::Uvm, Policy::UvmEvict,
                                           Policy::UvmPrefetch, Policy::Recompute),
                         [](const auto& test) {
                           std::string name = policy_name(test.param);
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

// vDNN's point: the offload stream copies while the compute stream computes.
TEST_F(CudaTraining, OffloadsOverlapCompute) {
  SessionOptions o = cuda_options(Policy::VdnnAll);
  o.executor.profile_layers = true;
  Session session(load_config("resnet50.json", 32), o);
  std::vector<std::int32_t> labels(32, 3);
  Executor& exec = session.executor();
  for (int i = 0; i < 2; ++i) exec.train_step(exec.input_staging(), labels.data(), 0.01);
  const StepTimeline timeline = exec.timeline();
  double overlap = 0.0;
  double offloading = 0.0;
  double forward = 0.0;
  for (const TimelineEvent& layer : timeline.events) {
    if (layer.op == Op::Forward) forward += layer.end - layer.start;
  }
  for (const TimelineEvent& copy : timeline.events) {
    if (copy.op != Op::Offload) continue;
    offloading += copy.end - copy.start;
    for (const TimelineEvent& layer : timeline.events) {
      if (layer.op != Op::Forward) continue;
      overlap += std::max(0.0, std::min(copy.end, layer.end) - std::max(copy.start, layer.start));
    }
  }
  // The copies take longer than forward (PCIe against HBM): forward runs mostly beside them.
  EXPECT_GT(offloading, 0.0);
  EXPECT_GT(overlap, 0.5 * std::min(offloading, forward))
      << "forward " << forward << " s, offloads " << offloading << " s, overlapping " << overlap;
}

// A managed pool larger than the device's free memory is refused before anything is allocated.
TEST_F(CudaTraining, ManagedMemoryBeyondTheFreeDeviceMemoryIsRefused) {
  std::size_t free_before = 0;
  std::size_t total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  // ResNet-50's feature maps at this batch need more than the whole device (and each tensor still
  // has fewer than 2^31 elements, as cuDNN requires).
  const std::int64_t batch = 2048;
  try {
    Session session(load_config("resnet50.json", batch), cuda_options(Policy::Uvm));
    FAIL() << "expected OversubscriptionRefused";
  } catch (const runtime::OversubscriptionRefused& e) {
    const std::string what = e.what();
    EXPECT_GT(e.bytes_requested(), total);
    EXPECT_NE(what.find(runtime::format_bytes(e.bytes_requested())), std::string::npos) << what;
    EXPECT_NE(what.find(runtime::format_bytes(e.bytes_limit()) + " free"), std::string::npos)
        << what;
  }
  std::size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_GE(free_after + (std::size_t{256} << 20), free_before);  // nothing big was taken
}

}  // namespace
}  // namespace vdnn::graph
