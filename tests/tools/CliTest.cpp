// The vdnn command line, run as a process: exit codes, outputs, and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/data/CifarFiles.hpp"
#include "tools/CliRun.hpp"

namespace {

namespace fs = std::filesystem;
using vdnn::test::CliRun;
using vdnn::test::config;
using vdnn::test::temp_dir;
using vdnn::test::vdnn;

TEST(Cli, UsageErrorsExitWith2) {
  EXPECT_EQ(vdnn("").code, 2);
  EXPECT_EQ(vdnn("frobnicate").code, 2);
  EXPECT_EQ(vdnn("train").code, 2);  // --config is required
  EXPECT_EQ(vdnn("train --config " + config("resnet20-cifar.json") + " --batch 0").code, 2);
  EXPECT_EQ(vdnn("train --config " + config("resnet20-cifar.json") + " --device tpu").code, 2);
  EXPECT_EQ(vdnn("--help").code, 0);
}

TEST(Cli, ConfigErrorsExitWith2AndNameFileAndPath) {
  const fs::path dir = temp_dir("bad-config");
  const fs::path bad = dir / "bad.json";
  std::ofstream(bad) << R"({"name": "x", "input": {"channels": 3, "height": 8, "width": 8},
    "num_classes": 2, "layers": [{"name": "fc", "type": "linear", "out_features": 2,
    "colour": "red"}, {"name": "loss", "type": "softmax_cross_entropy"}]})";
  const CliRun run = vdnn("train --config " + bad.string() + " --out " + dir.string());
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("bad.json"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("/layers/0/colour"), std::string::npos) << run.output;
  EXPECT_EQ(vdnn("inspect --config " + (dir / "missing.json").string()).code, 2);
}

TEST(Cli, DataErrorsExitWith1) {
  const fs::path dir = temp_dir("no-data");
  const CliRun run = vdnn("train --config " + config("resnet20-cifar.json") +
                          " --iters 1 --data cifar10:" + dir.string() + " --out " + dir.string());
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_NE(run.output.find("data_batch_1.bin"), std::string::npos) << run.output;
}

TEST(Cli, TrainWritesMetricsAndSummary) {
  const fs::path out = temp_dir("train");
  const CliRun run = vdnn("train --config " + config("resnet20-cifar.json") +
                          " --batch 4 --iters 3 --device cpu --out " + out.string());
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("iter 3/3"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(out.string()), std::string::npos) << run.output;
  const auto summary = nlohmann::json::parse(std::ifstream(out / "summary.json"));
  for (const char* key : {"config", "device", "policy", "batch", "iters", "losses",
                          "peak_device_bytes", "iter_ms_median", "images_per_s"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  EXPECT_EQ(summary["losses"].size(), 3u);
  EXPECT_EQ(summary["device"], "cpu");
  EXPECT_GT(summary["peak_device_bytes"].get<double>(), 0.0);
  std::ifstream metrics(out / "metrics.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(metrics, line)) {
    EXPECT_TRUE(nlohmann::json::parse(line).contains("loss"));
    ++lines;
  }
  EXPECT_EQ(lines, 3);
}

TEST(Cli, EvalEveryWritesEvalLinesAndTheLastEvalToTheSummary) {
  const fs::path out = temp_dir("eval");
  const fs::path data = out / "cifar";
  vdnn::testing::write_cifar_directory(data, 1, 12, 8);
  const CliRun run =
      vdnn("train --config " + config("resnet20-cifar.json") +
           " --batch 4 --iters 5 --eval-every 2 --device cpu --data cifar10:" + data.string() +
           " --out " + out.string());
  ASSERT_EQ(run.code, 0) << run.output;
  std::ifstream metrics(out / "metrics.jsonl");
  std::vector<std::int64_t> evaluated;  // iterations
  double last_top5 = -1.0;
  std::string line;
  int steps = 0;
  while (std::getline(metrics, line)) {
    const auto row = nlohmann::json::parse(line);
    if (!row.contains("eval")) {
      EXPECT_TRUE(row.contains("loss")) << line;  // the step lines are unchanged
      ++steps;
      continue;
    }
    const auto& eval = row["eval"];
    evaluated.push_back(eval["iteration"].get<std::int64_t>());
    EXPECT_EQ(eval["images"], 8) << line;  // test_batch.bin in full batches of 4
    EXPECT_GE(eval["accuracy"].get<double>(), 0.0) << line;
    EXPECT_LE(eval["accuracy"].get<double>(), 1.0) << line;
    last_top5 = eval["top5"].get<double>();  // of 10 classes
    EXPECT_GE(last_top5, eval["accuracy"].get<double>()) << line;
    EXPECT_LE(last_top5, 1.0) << line;
    EXPECT_EQ(last_top5 * 8, std::round(last_top5 * 8)) << line << ": not a count of 8 images";
    EXPECT_GT(eval["loss"].get<double>(), 0.0) << line;
  }
  EXPECT_EQ(steps, 5);
  EXPECT_EQ(evaluated, (std::vector<std::int64_t>{2, 4, 5}));  // every 2 steps and at the end
  const auto summary = nlohmann::json::parse(std::ifstream(out / "summary.json"));
  EXPECT_EQ(summary["eval"]["iteration"], 5);
  EXPECT_EQ(summary["eval"]["top5"], last_top5);
  EXPECT_EQ(summary["augment"], "crop-flip");  // cifar10's default
}

TEST(Cli, AugmentIsHonouredOnEverySourceAndCheckedByName) {
  const fs::path out = temp_dir("augment");
  const std::string train = "train --config " + config("resnet20-cifar.json") +
                            " --batch 2 --iters 1 --device cpu --out " + out.string();
  ASSERT_EQ(vdnn(train + " --augment crop-flip").code, 0);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(out / "summary.json"))["augment"], "crop-flip");
  ASSERT_EQ(vdnn(train).code, 0);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(out / "summary.json"))["augment"], "none");
  EXPECT_EQ(vdnn(train + " --augment mixup").code, 2);
  EXPECT_NE(vdnn("train --help").output.find("default crop-flip for cifar10"), std::string::npos);
}

TEST(Cli, AMalformedTestSplitExitsWith1NamingTheFileAndTheRecord) {
  const fs::path out = temp_dir("bad-test-split");
  const fs::path data = out / "cifar";
  vdnn::testing::write_cifar_directory(data, 1, 4, 3);
  std::ofstream(data / "test_batch.bin", std::ios::binary | std::ios::app) << "xyz";
  const std::string train = "train --config " + config("resnet20-cifar.json") +
                            " --batch 2 --iters 1 --device cpu --data cifar10:" + data.string() +
                            " --out " + out.string();
  EXPECT_EQ(vdnn(train).code, 0) << "the test split is read only for --eval-every";
  const CliRun run = vdnn(train + " --eval-every 1");
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_NE(run.output.find("cifar10:" + (data / "test_batch.bin").string() +
                            ": record 3 is truncated (3 of 3073 bytes)"),
            std::string::npos)
      << run.output;
}

TEST(Cli, PlanShowsOffloadsAndPrefetchesOfVdnnAll) {
  const CliRun run =
      vdnn("plan --config " + config("resnet20-cifar.json") + " --batch 8 --policy vdnn-all");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("offload         layer1.0.bn1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("prefetch        layer1.0.bn1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("predicted peak:"), std::string::npos) << run.output;
  // The fused chains come first (Note [Fusion]); --no-fuse plans the layers apart.
  EXPECT_NE(run.output.find("fusion: 19 chains fused"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("layer1.0.bn2 <- layer1.0.bn2 + layer1.0.add + layer1.0.relu2"),
            std::string::npos)
      << run.output;
  const CliRun unfused = vdnn("plan --config " + config("resnet20-cifar.json") +
                              " --batch 8 --policy vdnn-all --no-fuse");
  ASSERT_EQ(unfused.code, 0) << unfused.output;
  EXPECT_NE(unfused.output.find("fusion: none"), std::string::npos) << unfused.output;
  EXPECT_NE(unfused.output.find("offload         layer1.0.relu1"), std::string::npos)
      << unfused.output;
  const CliRun json = vdnn("plan --config " + config("resnet20-cifar.json") +
                           " --batch 8 --policy vdnn-conv --json");
  ASSERT_EQ(json.code, 0) << json.output;
  const auto plan = nlohmann::json::parse(json.output);
  EXPECT_EQ(plan["policy"], "vdnn-conv");
  EXPECT_GT(plan["offloaded_bytes"].get<double>(), 0.0);
}

// The bytes `vdnn plan --json` allocates for feature maps and their gradients: every allocation
// but those of the network input, its bf16 cast and the loss (which stay fp32).
std::uint64_t feature_map_bytes(const nlohmann::json& plan) {
  std::uint64_t total = 0;
  for (const auto& a : plan["actions"]) {
    const std::string op = a["op"];
    const std::string tensor = a["tensor"];
    if (op.rfind("allocate", 0) != 0 || tensor == "input" || tensor == "input.bf16" ||
        tensor == "loss") {
      continue;
    }
    total += a["bytes"].get<std::uint64_t>();
  }
  return total;
}

TEST(Cli, PlanInBf16HalvesTheFeatureMapBytes) {
  const std::string plan = "plan --config " + config("resnet20-cifar.json") +
                           " --batch 8 --policy vdnn-all --json --precision ";
  const CliRun fp32_run = vdnn(plan + "fp32");
  const CliRun bf16_run = vdnn(plan + "bf16");
  ASSERT_EQ(fp32_run.code, 0) << fp32_run.output;
  ASSERT_EQ(bf16_run.code, 0) << bf16_run.output;
  const auto fp32 = nlohmann::json::parse(fp32_run.output);
  const auto bf16 = nlohmann::json::parse(bf16_run.output);
  EXPECT_EQ(fp32["precision"], "fp32");
  EXPECT_EQ(bf16["precision"], "bf16");
  EXPECT_GT(feature_map_bytes(fp32), 0U);
  EXPECT_EQ(feature_map_bytes(fp32), 2 * feature_map_bytes(bf16));
  // FP32 parameters either way, and in bf16 one bf16 copy of each convolution and linear weight:
  // 270,896 of ResNet-20's 272,474 parameters.
  EXPECT_EQ(bf16["resident_bytes"].get<std::uint64_t>(),
            fp32["resident_bytes"].get<std::uint64_t>() + 2 * 270896);
  EXPECT_LT(bf16["predicted_peak_bytes"], fp32["predicted_peak_bytes"]);
  const CliRun text =
      vdnn("plan --config " + config("resnet20-cifar.json") + " --batch 8 --precision bf16");
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_EQ(text.output.rfind("precision: bf16\n", 0), 0U) << text.output;
  EXPECT_EQ(vdnn("plan --config " + config("resnet20-cifar.json") + " --precision fp16").code, 2);
}

TEST(Cli, BudgetBelowBaselineExitsWith3AndVdnnAllTrainsUnderIt) {
  const fs::path out = temp_dir("budget");
  const std::string args = "train --config " + config("resnet20-cifar.json") +
                           " --batch 16 --iters 2 --device cpu --mem-budget 10MiB --out " +
                           out.string();
  const CliRun baseline = vdnn(args);
  EXPECT_EQ(baseline.code, 3) << baseline.output;
  EXPECT_NE(baseline.output.find("short by"), std::string::npos) << baseline.output;
  EXPECT_NE(baseline.output.find("vdnn-all fits"), std::string::npos) << baseline.output;
  const CliRun all = vdnn(args + " --policy vdnn-all --debug-poison");
  ASSERT_EQ(all.code, 0) << all.output;
  const auto summary = nlohmann::json::parse(std::ifstream(out / "summary.json"));
  EXPECT_EQ(summary["policy"], "vdnn-all");
  EXPECT_EQ(summary["budget_bytes"], 10u << 20);
  EXPECT_LE(summary["peak_device_bytes"].get<double>(), 10.0 * (1 << 20));
  EXPECT_EQ(summary["peak_device_bytes"], summary["predicted_peak_bytes"]);
  EXPECT_GT(summary["offloaded_bytes"].get<double>(), 0.0);
  EXPECT_GT(summary["pinned_bytes"].get<double>(), 0.0);
  // Without --host-budget, what the machine leaves (Note [Host budget]), and the pool within it.
  ASSERT_TRUE(summary.contains("host_budget_bytes")) << summary.dump();
  EXPECT_GE(summary["host_budget_bytes"].get<double>(), summary["pinned_bytes"].get<double>());
}

TEST(Cli, UvmPrefetchUnderABudgetSaysManagedMemoryIsEmulatedOnTheCpu) {
  const fs::path out = temp_dir("uvm");
  const CliRun run = vdnn("train --config " + config("resnet20-cifar.json") +
                          " --batch 16 --iters 2 --device cpu --mem-budget 10MiB --policy "
                          "uvm-prefetch --out " +
                          out.string());
  ASSERT_EQ(run.code, 0) << run.output;
  const auto summary = nlohmann::json::parse(std::ifstream(out / "summary.json"));
  EXPECT_EQ(summary["device_memory"], "managed");
  EXPECT_NE(summary["managed_memory"].get<std::string>().find("emulated"), std::string::npos);
  EXPECT_NE(summary["migration_source"].get<std::string>().find("plan"), std::string::npos);
  EXPECT_LE(summary["peak_device_bytes"].get<double>(), 10.0 * (1 << 20));
  EXPECT_EQ(summary["peak_device_bytes"], summary["predicted_peak_bytes"]);
  EXPECT_GT(summary["evicted_bytes"].get<double>(), 0.0);
  EXPECT_EQ(summary["evicted_bytes"], summary["migrated_to_host_bytes_median"]);
  std::ifstream metrics(out / "metrics.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(metrics, line));
  const auto first = nlohmann::json::parse(line);
  for (const char* key : {"migrated_to_device_bytes", "migrated_to_host_bytes", "gpu_page_faults",
                          "evict_gbps", "migrate_gbps"}) {
    EXPECT_TRUE(first.contains(key)) << key;
  }
}

TEST(Cli, ManagedMemoryBeyondTheFreeDeviceMemoryExitsWith3) {
  const fs::path out = temp_dir("oversubscribe");
  const std::string args = "train --config " + config("resnet20-cifar.json") +
                           " --batch 16 --iters 1 --device cpu --policy uvm --debug-device-free "
                           "1MiB --out " +
                           out.string();
  const CliRun refused = vdnn(args);
  EXPECT_EQ(refused.code, 3) << refused.output;
  EXPECT_NE(refused.output.find("of managed memory: the device has 1.00 MiB free"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("refusing to allocate 29.26 MiB"), std::string::npos)
      << refused.output;
  EXPECT_EQ(vdnn(args + " --allow-oversubscription").code, 0);
}

TEST(Cli, PlanShowsEvictionsAndMigrations) {
  const CliRun run =
      vdnn("plan --config " + config("resnet20-cifar.json") + " --batch 8 --policy uvm-prefetch");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("evict           layer1.0.bn1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("migrate         layer1.0.bn1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("device memory:         managed"), std::string::npos) << run.output;
  const CliRun evict =
      vdnn("plan --config " + config("resnet20-cifar.json") + " --batch 8 --policy uvm-evict");
  EXPECT_NE(evict.output.find("fault-in        layer1.0.bn1"), std::string::npos) << evict.output;
}

TEST(Cli, PlanShowsRecomputations) {
  const CliRun run =
      vdnn("plan --config " + config("resnet20-cifar.json") + " --batch 8 --policy recompute");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("recompute       layer1.0.bn1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("recomputed per step:"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("offload "), std::string::npos) << run.output;
}

TEST(Cli, TraceHasAThreadPerStreamEveryLayerAndCopyAndMemoryCounters) {
  const fs::path out = temp_dir("trace");
  const CliRun run = vdnn("train --config " + config("resnet20-cifar.json") +
                          " --batch 4 --iters 2 --device cpu --policy vdnn-all --out " +
                          out.string() + " --trace " + (out / "trace.json").string());
  ASSERT_EQ(run.code, 0) << run.output;
  const auto trace = nlohmann::json::parse(std::ifstream(out / "trace.json"))["traceEvents"];
  std::map<int, std::string> threads;
  std::map<std::string, int> per_category;
  int counters = 0;
  for (const auto& e : trace) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "C") ++counters;
    if (e["ph"] != "X") continue;
    ++per_category[e["cat"]];
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_TRUE(e["args"].contains("tensor"));
    if (e["cat"] == "offload") {
      EXPECT_EQ(threads[e["tid"]], "offload");
      EXPECT_GT(e["args"]["bytes"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(threads, (std::map<int, std::string>{{1, "compute"}, {2, "offload"}, {3, "prefetch"}}));
  const auto plan = nlohmann::json::parse(
      vdnn("plan --config " + config("resnet20-cifar.json") + " --batch 4 --policy vdnn-all --json")
          .output);
  int offloads = 0;
  for (const auto& a : plan["actions"]) offloads += a["op"] == "offload" ? 1 : 0;
  EXPECT_EQ(per_category["offload"], offloads);
  EXPECT_EQ(per_category["prefetch"], offloads);
  EXPECT_EQ(per_category["forward"], per_category["backward"]);
  EXPECT_EQ(counters, static_cast<int>(plan["actions"].size()));
}

TEST(Cli, InspectReportsTorchvisionResNet50ParameterCount) {
  const CliRun run = vdnn("inspect --config " + config("resnet50.json") + " --batch 2");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("total parameters: 25,557,032"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("layer1.0.conv1"), std::string::npos) << run.output;
}

TEST(Cli, GenWritesAConfigThatBuildsAndMatchesTheShippedOne) {
  const fs::path dir = temp_dir("gen");
  const fs::path out = dir / "resnet1001-cifar.json";
  const CliRun gen = vdnn("gen resnet --depth 1001 --input cifar --out " + out.string());
  ASSERT_EQ(gen.code, 0) << gen.output;
  const CliRun run = vdnn("inspect --config " + out.string() + " --batch 2");
  ASSERT_EQ(run.code, 0) << run.output;
  const CliRun shipped = vdnn("inspect --config " + config("resnet1001-cifar.json") + " --batch 2");
  ASSERT_EQ(shipped.code, 0) << shipped.output;
  const std::string count = "total parameters: 10,327,706";
  EXPECT_NE(run.output.find(count), std::string::npos) << run.output;
  EXPECT_NE(shipped.output.find(count), std::string::npos) << shipped.output;
  const CliRun printed = vdnn("gen densenet --depth 100 --input cifar");
  ASSERT_EQ(printed.code, 0) << printed.output;
  EXPECT_NE(printed.output.find("\"name\": \"densenet100-cifar\""), std::string::npos)
      << printed.output;
}

TEST(Cli, GenRejectsAnInvalidDepthWithTheRuleAndExitCode2) {
  const CliRun resnet = vdnn("gen resnet --depth 1000 --input cifar");
  EXPECT_EQ(resnet.code, 2);
  EXPECT_NE(resnet.output.find("ResNet depth for cifar must be 3b+2 with b >= 3"),
            std::string::npos)
      << resnet.output;
  EXPECT_NE(resnet.output.find("1000 is not"), std::string::npos) << resnet.output;
  const CliRun densenet = vdnn("gen densenet --depth 122 --input imagenet");
  EXPECT_EQ(densenet.code, 2);
  EXPECT_NE(densenet.output.find("2b+5"), std::string::npos) << densenet.output;
  EXPECT_EQ(vdnn("gen lenet --depth 5 --input cifar").code, 2);
  EXPECT_EQ(vdnn("gen resnet --depth 1001 --input mnist").code, 2);
  EXPECT_EQ(vdnn("gen resnet --input cifar").code, 2);  // --depth is required
}

}  // namespace
