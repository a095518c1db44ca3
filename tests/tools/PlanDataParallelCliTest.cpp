// `vdnn plan --gpus N` (Note [Data parallelism]): the gradient buffer in its buckets, NCCL's memory
// (given, or said to be unmeasured) inside the budget, and the all-reduce stream's time and the
// part of it exposed after the backward pass; one GPU prints what it did before.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/CliRun.hpp"
#include "tools/cli/ExitCode.hpp"

namespace vdnn::tools {
namespace {

using nlohmann::json;

std::string plan_args() {
  return "plan --config " + test::config("resnet20-cifar.json") + " --batch 8";
}

TEST(PlanDataParallelCli, ShowsTheGradientBufferNcclMemoryAndTheExposedAllReduce) {
  const auto text = test::vdnn(plan_args() + " --gpus 2");
  ASSERT_EQ(text.code, kExitOk) << text.output;
  EXPECT_NE(text.output.find("data parallel:         2 GPUs"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("gradient buffer:"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("NCCL memory:           not measured (pass --nccl-bytes)"),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("at 329 GB/s bus bandwidth, exposed"), std::string::npos)
      << text.output;
  // One GPU: no data-parallel lines.
  const auto one = test::vdnn(plan_args());
  ASSERT_EQ(one.code, kExitOk) << one.output;
  EXPECT_EQ(one.output.find("gradient buffer:"), std::string::npos) << one.output;
}

TEST(PlanDataParallelCli, JsonGivesTheAllReduceAtTheGivenBandwidthAndNcclInsideTheBudget) {
  const auto run = test::vdnn(plan_args() +
                              " --world-size 4 --nccl-bytes 1MiB --mem-budget 1GiB "
                              "--allreduce-bw 100 --json");
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const json plan = json::parse(run.output);
  const json& dp = plan["data_parallel"];
  EXPECT_EQ(dp["gpus"], 4);
  EXPECT_EQ(dp["nccl_bytes"], 1U << 20);
  EXPECT_EQ(plan["communicator_bytes"], 1U << 20);
  EXPECT_EQ(plan["budget_bytes"], (1U << 30) - (1U << 20));  // what the search was given
  const double gradient_bytes = dp["gradient_bytes"].get<double>();
  EXPECT_GT(gradient_bytes, 1e5);  // ResNet-20's 0.27 M parameters, in FP32
  EXPECT_GE(dp["gradient_buckets"].get<int>(), 1);
  // A ring moves each byte 2 (4 - 1) / 4 times at 100 GB/s.
  EXPECT_NEAR(dp["allreduce_ms"].get<double>(), gradient_bytes * 1.5 / 100e9 * 1e3, 1e-9);
  const double exposed = dp["allreduce_exposed_ms"].get<double>();
  EXPECT_GE(exposed, 0.0);
  EXPECT_LE(exposed, dp["allreduce_ms"].get<double>());
  // The plan is made for the four ranks: its predicted step has the exposed all-reduce in it.
  EXPECT_EQ(dp["predicted_step_with_allreduce_ms"].get<double>(),
            plan["predicted_step_ms"].get<double>());
}

TEST(PlanDataParallelCli, NcclMemoryThatTakesTheWholeBudgetDoesNotFit) {
  const auto run = test::vdnn(plan_args() + " --gpus 2 --nccl-bytes 2GiB --mem-budget 1GiB");
  EXPECT_EQ(run.code, kExitDoesNotFit) << run.output;
  EXPECT_NE(run.output.find("--nccl-bytes"), std::string::npos) << run.output;
  EXPECT_NE(test::vdnn(plan_args() + " --gpus 0").code, kExitOk);
}

}  // namespace
}  // namespace vdnn::tools
