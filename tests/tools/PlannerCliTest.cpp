// The auto policy from the command line: measured costs cached per network and batch, the
// predicted step time beside the measured one in summary.json, `vdnn plan --costs`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/CliRun.hpp"

namespace {

namespace fs = std::filesystem;
using vdnn::test::CliRun;
using vdnn::test::config;
using vdnn::test::temp_dir;
using vdnn::test::vdnn;

nlohmann::json summary(const fs::path& out) {
  return nlohmann::json::parse(std::ifstream(out / "summary.json"));
}

TEST(PlannerCli, AutoMeasuresCostsOnceAndReportsThePredictedStepTime) {
  const fs::path dir = temp_dir("auto");
  const std::string train = "train --config " + config("resnet20-cifar.json") +
                            " --batch 16 --iters 2 --device cpu --mem-budget 10MiB --policy auto" +
                            " --cost-cache " + (dir / "costs").string() + " --out ";
  const CliRun first = vdnn(train + (dir / "first").string());
  ASSERT_EQ(first.code, 0) << first.output;
  const nlohmann::json a = summary(dir / "first");
  EXPECT_EQ(a["policy"], "auto");
  EXPECT_EQ(a["cost_source"], "measured");
  EXPECT_GT(a["predicted_step_ms"].get<double>(), 0.0);
  EXPECT_LE(a["peak_device_bytes"].get<double>(), 10.0 * (1 << 20));

  const CliRun second = vdnn(train + (dir / "second").string());
  ASSERT_EQ(second.code, 0) << second.output;
  const std::string source = summary(dir / "second")["cost_source"];
  EXPECT_EQ(source.rfind("cache ", 0), 0U) << source;
  EXPECT_EQ(summary(dir / "second")["losses"], a["losses"]);

  const fs::path file = fs::directory_iterator(dir / "costs")->path();
  const CliRun plan = vdnn("plan --config " + config("resnet20-cifar.json") +
                           " --batch 16 --mem-budget 10MiB --policy auto --costs " + file.string());
  ASSERT_EQ(plan.code, 0) << plan.output;
  EXPECT_NE(plan.output.find("predicted step time"), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find("costs file " + file.string()), std::string::npos) << plan.output;
}

TEST(PlannerCli, ACostFileForAnotherNetworkIsRefusedByName) {
  const fs::path dir = temp_dir("costs-other");
  const fs::path file = dir / "not-costs.json";
  std::ofstream(file) << "{\"layers\": []}";
  const CliRun plan = vdnn("plan --config " + config("resnet20-cifar.json") +
                           " --policy auto --costs " + file.string());
  EXPECT_EQ(plan.code, 2) << plan.output;
  EXPECT_NE(plan.output.find(file.string()), std::string::npos) << plan.output;
}

// AdamW keeps two state tensors per parameter, SGD one: the plan holds one parameter set more.
TEST(PlannerCli, TheOptimizersStateIsResident) {
  std::int64_t resident[2] = {0, 0};
  const char* optimizers[2] = {"sgd", "adamw"};
  for (int i = 0; i < 2; ++i) {
    const CliRun plan = vdnn("plan --json --config " + config("resnet20-cifar.json") +
                             " --optimizer " + optimizers[i]);
    ASSERT_EQ(plan.code, 0) << plan.output;
    resident[i] = nlohmann::json::parse(plan.output)["resident_bytes"].get<std::int64_t>();
  }
  // ResNet-20's 272,474 trainable parameters, in F32.
  EXPECT_EQ(resident[1] - resident[0], 272474 * 4);
}

// Note [Dense block storage]: DenseNet-121's four blocks of 6, 12, 24 and 16 layers each lie in
// one buffer, which the JSON counts; --no-fuse keeps every concatenation apart.
TEST(PlannerCli, DenseBlocksAreCountedInThePlansJson) {
  const std::string plan = "plan --json --config " + config("densenet121.json") + " --batch 2";
  const CliRun fused = vdnn(plan);
  ASSERT_EQ(fused.code, 0) << fused.output;
  const nlohmann::json blocks = nlohmann::json::parse(fused.output)["dense_blocks"];
  EXPECT_EQ(blocks["concatenations"], 6 + 12 + 24 + 16);
  EXPECT_EQ(blocks["buffers"], 4);
  EXPECT_LT(blocks["buffer_bytes"].get<std::uint64_t>(),
            blocks["apart_bytes"].get<std::uint64_t>());
  const CliRun apart = vdnn(plan + " --no-fuse");
  ASSERT_EQ(apart.code, 0) << apart.output;
  EXPECT_EQ(nlohmann::json::parse(apart.output)["dense_blocks"]["concatenations"], 0);
}

// Note [Host budget]: --host-budget bounds the pinned pool (a fixed policy that needs more exits
// with code 3 naming it, auto rebuilds instead) and plan --json reports it (a training run's
// default: Cli.BudgetBelowBaselineExitsWith3AndVdnnAllTrainsUnderIt).
TEST(PlannerCli, TheHostBudgetBoundsThePinnedPool) {
  constexpr std::uint64_t kMiB = 1 << 20;
  const std::string plan =
      "plan --json --config " + config("resnet20-cifar.json") + " --batch 32 --mem-budget 24MiB";
  const CliRun all = vdnn(plan + " --policy vdnn-all");
  ASSERT_EQ(all.code, 0) << all.output;
  const nlohmann::json unlimited = nlohmann::json::parse(all.output);
  ASSERT_GT(unlimited["pinned_bytes"].get<std::uint64_t>(), kMiB);
  EXPECT_FALSE(unlimited.contains("host_budget_bytes"));
  const CliRun refused = vdnn(plan + " --policy vdnn-all --host-budget 1MiB");
  EXPECT_EQ(refused.code, 3) << refused.output;
  EXPECT_NE(refused.output.find("--host-budget"), std::string::npos) << refused.output;
  const CliRun rebuilt = vdnn(plan + " --policy auto --host-budget 1MiB");
  ASSERT_EQ(rebuilt.code, 0) << rebuilt.output;
  const nlohmann::json bounded = nlohmann::json::parse(rebuilt.output);
  EXPECT_EQ(bounded["host_budget_bytes"], kMiB);
  EXPECT_LE(bounded["pinned_bytes"].get<std::uint64_t>(), kMiB);
}

// --inference plans a Predictor's forward pass: the parameters alone, less than any training step
// holds, under every policy; a budget it does not fit exits with code 3.
TEST(PlannerCli, InferencePlansTheForwardPassAlone) {
  const std::string plan = "plan --json --config " + config("resnet20-cifar.json") + " --batch 16";
  const CliRun step = vdnn(plan);
  ASSERT_EQ(step.code, 0) << step.output;
  const nlohmann::json training = nlohmann::json::parse(step.output);
  EXPECT_EQ(training["purpose"], "training");
  for (const char* policy : {"baseline", "vdnn-all", "recompute", "uvm"}) {
    const CliRun run = vdnn(plan + " --inference --policy " + policy);
    ASSERT_EQ(run.code, 0) << run.output;
    const nlohmann::json inference = nlohmann::json::parse(run.output);
    EXPECT_EQ(inference["purpose"], "inference");
    // No gradient or momentum for ResNet-20's 272,474 trainable parameters, in F32.
    EXPECT_LE(inference["resident_bytes"].get<std::int64_t>() + 2 * 272474 * 4,
              training["resident_bytes"].get<std::int64_t>())
        << policy;
    EXPECT_LT(inference["predicted_peak_bytes"], training["predicted_peak_bytes"]) << policy;
    EXPECT_EQ(inference["offloaded_bytes"], 0) << policy;
    EXPECT_EQ(inference["recomputed_bytes"], 0) << policy;
  }
  const CliRun text =
      vdnn("plan --inference --policy vdnn-all --config " + config("resnet20-cifar.json"));
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("vdnn-all has nothing to offload, prefetch or recompute"),
            std::string::npos)
      << text.output;
  const CliRun tight = vdnn(plan + " --inference --mem-budget 1MiB");
  EXPECT_EQ(tight.code, 3) << tight.output;
  EXPECT_NE(tight.output.find("inference under policy baseline needs"), std::string::npos)
      << tight.output;
}

// The setup cache is on by default, in $XDG_CACHE_HOME/vdnn; --no-cache writes nothing, and
// it cannot be combined with --cost-cache.
TEST(PlannerCli, TheSetupCacheIsOnByDefaultAndNoCacheTurnsItOff) {
  const fs::path dir = temp_dir("default-cache");
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string saved_value = saved != nullptr ? saved : "";
  ::setenv("XDG_CACHE_HOME", (dir / "xdg").c_str(), 1);
  const std::string train = "train --config " + config("resnet20-cifar.json") +
                            " --batch 4 --iters 1 --device cpu --policy auto --out ";
  const CliRun cached = vdnn(train + (dir / "cached").string());
  const CliRun uncached = vdnn(train + (dir / "uncached").string() + " --no-cache");
  const CliRun both = vdnn(train + (dir / "both").string() + " --no-cache --cost-cache " +
                           (dir / "elsewhere").string());
  ::setenv("XDG_CACHE_HOME", saved_value.c_str(), 1);
  if (saved == nullptr) ::unsetenv("XDG_CACHE_HOME");

  ASSERT_EQ(cached.code, 0) << cached.output;
  ASSERT_TRUE(fs::is_directory(dir / "xdg" / "vdnn"));
  int costs_files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir / "xdg" / "vdnn")) {
    EXPECT_EQ(e.path().filename().string().rfind("costs-", 0), 0u) << e.path();
    ++costs_files;
  }
  EXPECT_EQ(costs_files, 1);
  ASSERT_EQ(uncached.code, 0) << uncached.output;
  EXPECT_EQ(summary(dir / "uncached")["cost_source"], "measured");
  EXPECT_EQ(summary(dir / "uncached")["losses"], summary(dir / "cached")["losses"]);
  EXPECT_NE(both.code, 0) << both.output;
  EXPECT_NE(both.output.find("excludes"), std::string::npos) << both.output;
  EXPECT_FALSE(fs::exists(dir / "elsewhere"));
}

}  // namespace
