// Hostile input to the vdnn command line, run as a process: each case of issue 12 ends in its
// documented exit code and a message saying what was wrong, never in a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tools/CliRun.hpp"
#include "tools/cli/ExitCode.hpp"

namespace {

namespace fs = std::filesystem;
using vdnn::test::CliRun;
using vdnn::test::config;
using vdnn::test::temp_dir;
using vdnn::test::vdnn;
using namespace vdnn::tools;  // the exit codes

::testing::AssertionResult exits_with(const CliRun& run, int code, const std::string& fragment) {
  if (run.code == code && run.output.find(fragment) != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected exit " << code << " and '" << fragment
                                       << "', got exit " << run.code << ": " << run.output;
}

TEST(CliHardening, NestingBombIsAConfigError) {
  const fs::path dir = temp_dir("nesting-bomb");
  const fs::path bomb = dir / "bomb.json";
  std::ofstream(bomb) << std::string(100000, '[') << std::string(100000, ']');
  for (const std::string& command :
       {std::string("inspect"), std::string("plan"), "train --out " + dir.string()}) {
    const CliRun run = vdnn(command + " --config " + bomb.string());
    EXPECT_TRUE(exits_with(run, 2, "bomb.json at /0/0/0/0")) << command;
    EXPECT_TRUE(exits_with(run, 2, "nested deeper than 64 levels")) << command;
  }
}

TEST(CliHardening, NonFiniteFloatFlagsAreUsageErrors) {
  const fs::path out = temp_dir("non-finite");
  const std::string train = "train --config " + config("resnet20-cifar.json") + " --out " +
                            out.string() + " --iters 1 --batch 2 --device cpu ";
  for (const std::string flag :
       {"--lr nan", "--lr inf", "--lr -nan", "--momentum nan", "--weight-decay inf"}) {
    EXPECT_TRUE(exits_with(vdnn(train + flag), 2, "expected a finite number")) << flag;
  }
}

TEST(CliHardening, OptimizerFlagsTrainAndBadValuesAreUsageErrors) {
  const fs::path out = temp_dir("optimizer-flags");
  const std::string train = "train --config " + config("resnet20-cifar.json") + " --out " +
                            out.string() + " --iters 1 --batch 2 --device cpu ";
  for (const std::string flags :
       {"--optimizer adamw --betas 0.8,0.99 --adam-eps 1e-6 --weight-decay 0.05 "
        "--clip-grad-norm 1 --label-smoothing 0.1",
        "--optimizer lars --lars-trust 0.01 --nesterov --no-decay-bn-bias",
        "--optimizer sgd --dampening 0.1"}) {
    EXPECT_TRUE(exits_with(vdnn(train + flags), 0, "")) << flags;
  }
  EXPECT_TRUE(exits_with(vdnn(train + "--optimizer adam"), 2, "adamw"));
  EXPECT_TRUE(exits_with(vdnn(train + "--nesterov --momentum 0"), 2, "Nesterov"));
  EXPECT_TRUE(exits_with(vdnn(train + "--nesterov --dampening 0.5"), 2, "Nesterov"));
  EXPECT_TRUE(exits_with(vdnn(train + "--betas 0.9"), 2, "betas"));
  EXPECT_TRUE(exits_with(vdnn(train + "--betas 0.9,1.5"), 2, "betas"));
  EXPECT_TRUE(exits_with(vdnn(train + "--label-smoothing 2"), 2, "label-smoothing"));
  EXPECT_TRUE(exits_with(vdnn(train + "--clip-grad-norm -1"), 2, "clip-grad-norm"));
  EXPECT_TRUE(exits_with(vdnn(train + "--adam-eps 0"), 2, "adam-eps"));
}

TEST(CliHardening, NonFiniteLossStopsTrainingWithExitCode4) {
  const fs::path out = temp_dir("diverged");
  const CliRun run = vdnn("train --config " + config("resnet20-cifar.json") + " --out " +
                          out.string() + " --iters 5 --batch 2 --device cpu --lr 1e30");
  EXPECT_TRUE(exits_with(run, 4, "vdnn: diverged: the loss is "));
  EXPECT_TRUE(exits_with(run, 4, "training diverged; try a smaller --lr"));
  EXPECT_TRUE(exits_with(run, 4, "(\"iter\": "));
  // Nothing claims success: the iterations so far are in metrics.jsonl, and no summary.json.
  EXPECT_TRUE(fs::exists(out / "metrics.jsonl"));
  EXPECT_FALSE(fs::exists(out / "summary.json"));
}

TEST(CliHardening, CheckingGradientsAlsoStopsADivergingRunWithExitCode4) {
  const fs::path out = temp_dir("diverged-gradients");
  const CliRun run =
      vdnn("train --config " + config("resnet20-cifar.json") + " --out " + out.string() +
           " --iters 5 --batch 2 --device cpu --lr 1e30 " + "--check-gradients");
  EXPECT_TRUE(exits_with(run, 4, "training diverged; try a smaller --lr"));
  EXPECT_FALSE(fs::exists(out / "summary.json"));
}

TEST(CliHardening, BadOutIsAUsageErrorBeforeSetup) {
  const fs::path dir = temp_dir("bad-out");
  const fs::path file = dir / "file";
  std::ofstream(file) << "not a directory";
  const std::string train = "train --config " + config("resnet20-cifar.json") +
                            " --iters 1 --batch 2 --device cpu --out ";
  const CliRun not_a_dir = vdnn(train + file.string());
  EXPECT_TRUE(exits_with(not_a_dir, 2, "--out " + file.string() + ": exists and is not a dir"));
  EXPECT_EQ(not_a_dir.output.find("iter "), std::string::npos) << "trained before the check";
  EXPECT_TRUE(exits_with(vdnn(train + (file / "sub").string()), 2, ": cannot create it: "));
  // /proc takes no files, even from root (who passes every permission check).
  EXPECT_TRUE(exits_with(vdnn(train + "/proc"), 2, "--out /proc: cannot create files in it"));
  EXPECT_TRUE(fs::is_regular_file(file));
}

TEST(CliHardening, InputBeyondTheMachinesMemoryExitsWith3NamingTheTensors) {
  const fs::path dir = temp_dir("huge-input");
  const fs::path huge = dir / "huge.json";
  std::ofstream(huge) << R"({"name": "huge", "input": {"channels": 3, "height": 100000,
    "width": 100000}, "num_classes": 10, "layers": [{"name": "pool", "type": "global_avgpool"},
    {"name": "fc", "type": "linear", "out_features": 10},
    {"name": "loss", "type": "softmax_cross_entropy"}]})";
  const CliRun run = vdnn("train --config " + huge.string() + " --batch 2 --iters 1 --device cpu" +
                          " --out " + dir.string());
  EXPECT_TRUE(exits_with(run, 3, "vdnn: does not fit: network huge at batch 2 needs at least "));
  EXPECT_TRUE(exits_with(run, 3, "of host memory but "));
  EXPECT_TRUE(exits_with(run, 3, "the synthetic dataset 1.09 TiB"));
  EXPECT_TRUE(exits_with(run, 3, "the largest feature maps: input [2, 3, 100000, 100000] 223.52"));
}

TEST(CliHardening, ReadmeDocumentsEveryExitCode) {
  // Each code has a row in README.md's table and a test that runs vdnn into it: 0, 1 and 2 in
  // CliTest.cpp, 3 in CliTest.cpp and above, 4 above, 5 in CheckpointCliTest.cpp.
  std::ifstream in(std::string(VDNN_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const int code :
       {kExitOk, kExitRuntimeError, kExitUsage, kExitDoesNotFit, kExitDiverged, kExitInterrupted}) {
    EXPECT_NE(readme.find("| `" + std::to_string(code) + "` | "), std::string::npos) << code;
  }
}

}  // namespace
