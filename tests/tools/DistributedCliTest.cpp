// `vdnn train --gpus N` and runs under torchrun's variables on the CPU: a world of one trains as
// one process (with --sync-bn too); ranks that fail make the launcher stop the others and exit 6
// naming the rank; bad
// --gpus and --nccl-timeout values are usage errors.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tools/CliRun.hpp"

namespace {

namespace fs = std::filesystem;
using vdnn::test::CliRun;
using vdnn::test::config;
using vdnn::test::shell;
using vdnn::test::temp_dir;
using vdnn::test::vdnn;

std::string train_args(const fs::path& out) {
  return "train --config " + config("resnet20-cifar.json") +
         " --batch 2 --iters 2 --device cpu --out " + out.string();
}

// `vdnn train` with `flags` under torchrun's variables for a world of one: a run that finishes,
// in an output folder of its own (`name`: ctest runs the tests side by side).
void expect_world_of_one_trains(const std::string& name, const std::string& flags) {
  const fs::path out = temp_dir(name);
  const CliRun run = shell("RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 " + std::string(VDNN_CLI_PATH) + " " +
                           train_args(out) + flags);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  fs::remove_all(out);
}

TEST(DistributedCli, AWorldOfOneUnderTorchrunTrainsAsOneProcess) {
  expect_world_of_one_trains("torchrun-one", "");
}

TEST(DistributedCli, SyncBnInAWorldOfOneTrainsAsOneProcess) {
  expect_world_of_one_trains("torchrun-one-sync-bn", " --sync-bn");
}

TEST(DistributedCli, FailedRanksStopTheLaunchWithExitCode6NamingTheRank) {
  const fs::path out = temp_dir("gpus-on-cpu");
  const auto start = std::chrono::steady_clock::now();
  // Each rank refuses the CPU backend (exit 2); the launcher reports the first and stops.
  const CliRun run = vdnn(train_args(out) + " --gpus 2");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_EQ(run.code, 6) << run.output;
  EXPECT_NE(run.output.find(" of 2 exited with code 2; stopping the other ranks"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("needs the CUDA backend"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(out / "summary.json"));
  fs::remove_all(out);
}

TEST(DistributedCli, BadGpusAndTimeoutsAreUsageErrors) {
  const fs::path out = temp_dir("gpus-usage");
  EXPECT_EQ(vdnn(train_args(out) + " --gpus 0").code, 2);
  EXPECT_EQ(vdnn(train_args(out) + " --nccl-timeout 0").code, 2);
  const CliRun bad_rank =
      shell("RANK=2 WORLD_SIZE=2 " + std::string(VDNN_CLI_PATH) + " " + train_args(out));
  EXPECT_EQ(bad_rank.code, 2) << bad_rank.output;
  EXPECT_NE(bad_rank.output.find("RANK"), std::string::npos) << bad_rank.output;
  fs::remove_all(out);
}

}  // namespace
