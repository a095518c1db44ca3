// `vdnn train` checkpoints: resume equals an uninterrupted run bitwise, --resume latest skips a
// damaged file, --keep prunes, --init-from starts from trained weights, and kill -9 at random
// moments never leaves a checkpoint that does not load.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "models/train/Safetensors.hpp"
#include "tests/tools/CliRun.hpp"
#include "tools/cli/CheckpointFiles.hpp"
#include "tools/cli/ExitCode.hpp"

namespace vdnn::tools {
namespace {

std::string train_args(const std::filesystem::path& out, std::int64_t iters) {
  return "train --config " + test::config("resnet20-cifar.json") +
         " --device cpu --batch 4 --iters " + std::to_string(iters) + " --out " + out.string();
}

std::vector<double> losses(const std::filesystem::path& out) {
  std::ifstream in(out / "metrics.jsonl");
  std::vector<double> values;
  for (std::string line; std::getline(in, line);) {
    values.push_back(nlohmann::json::parse(line)["loss"].get<double>());
  }
  return values;
}

std::string bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CheckpointCli, FiveStepsAndAResumeForFiveEqualTenStepsBitwise) {
  const auto straight = test::temp_dir("ckpt-straight");
  const auto resumed = test::temp_dir("ckpt-resumed");
  ASSERT_EQ(test::vdnn(train_args(straight, 10) + " --checkpoint-every 5").code, kExitOk);
  ASSERT_EQ(test::vdnn(train_args(resumed, 5) + " --checkpoint-every 5").code, kExitOk);
  const auto run = test::vdnn(train_args(resumed, 10) + " --checkpoint-every 5 --resume latest");
  ASSERT_EQ(run.code, kExitOk) << run.output;
  EXPECT_NE(run.output.find("at iteration 5"), std::string::npos) << run.output;
  EXPECT_EQ(losses(straight), losses(resumed));  // metrics.jsonl appended: all 10, bitwise
  ASSERT_EQ(losses(straight).size(), 10U);
  // Weights, statistics, velocities, iteration: the same bytes.
  EXPECT_EQ(bytes_of(checkpoint_path(straight, 10)), bytes_of(checkpoint_path(resumed, 10)));
  const auto done = test::vdnn(train_args(resumed, 10) + " --resume latest");
  EXPECT_EQ(done.code, kExitUsage) << done.output;  // nothing left to train
}

TEST(CheckpointCli, ResumeLatestSkipsADamagedCheckpointAndKeepPrunes) {
  const auto out = test::temp_dir("ckpt-damaged");
  ASSERT_EQ(test::vdnn(train_args(out, 6) + " --checkpoint-every 2 --keep 2").code, kExitOk);
  ASSERT_EQ(checkpoints_newest_first(out).size(), 2U);  // 4 and 6; 2 was pruned
  {
    std::fstream f(checkpoint_path(out, 6), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  const auto run = test::vdnn(train_args(out, 8) + " --resume latest");
  ASSERT_EQ(run.code, kExitOk) << run.output;
  EXPECT_NE(run.output.find("skipping a damaged checkpoint"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("at iteration 4"), std::string::npos) << run.output;
}

// The tensors of a checkpoint whose names end in ".weight", by name.
std::map<std::string, std::string> weights(const std::filesystem::path& path) {
  std::map<std::string, std::string> found;
  for (const auto& t : models::read_safetensors(path, true).tensors) {
    const std::string suffix = ".weight";
    if (t.name.size() > suffix.size() &&
        t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      found[t.name] = std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size());
    }
  }
  return found;
}

TEST(CheckpointCli, InitFromStartsFromTheGivenWeights) {
  const auto trained = test::temp_dir("ckpt-trained");
  const auto tuned = test::temp_dir("ckpt-tuned");
  ASSERT_EQ(test::vdnn(train_args(trained, 3) + " --checkpoint-every 3").code, kExitOk);
  // A step at a learning rate of 1e-30 without weight decay leaves every weight as it was.
  const auto run =
      test::vdnn(train_args(tuned, 1) + " --lr 1e-30 --weight-decay 0 " +
                 "--checkpoint-every 1 --init-from " + checkpoint_path(trained, 3).string());
  ASSERT_EQ(run.code, kExitOk) << run.output;
  const auto loaded = weights(checkpoint_path(tuned, 1));
  EXPECT_GT(loaded.size(), 10U);
  EXPECT_EQ(loaded, weights(checkpoint_path(trained, 3)));
  const auto wrong = test::vdnn("train --config " + test::config("densenet40-cifar.json") +
                                " --device cpu --batch 2 --iters 1 --out " + tuned.string() +
                                " --init-from " + checkpoint_path(trained, 3).string());
  EXPECT_NE(wrong.code, kExitOk);
  EXPECT_NE(wrong.output.find("missing"), std::string::npos) << wrong.output;
}

// Note [Precision]: checkpoints hold the FP32 master weights, so a bf16 run resumes bitwise and
// starts from an fp32 run's weights (and an fp32 run from a bf16 run's).
TEST(CheckpointCli, Bf16ResumesBitwiseAndCrossesPrecisionsWithInitFrom) {
  const auto straight = test::temp_dir("ckpt-bf16-straight");
  const auto resumed = test::temp_dir("ckpt-bf16-resumed");
  const std::string bf16 = " --precision bf16 --checkpoint-every 3";
  ASSERT_EQ(test::vdnn(train_args(straight, 6) + bf16).code, kExitOk);
  ASSERT_EQ(test::vdnn(train_args(resumed, 3) + bf16).code, kExitOk);
  const auto run = test::vdnn(train_args(resumed, 6) + bf16 + " --resume latest");
  ASSERT_EQ(run.code, kExitOk) << run.output;
  EXPECT_EQ(losses(straight), losses(resumed));
  EXPECT_EQ(bytes_of(checkpoint_path(straight, 6)), bytes_of(checkpoint_path(resumed, 6)));
  const auto fp32 = test::temp_dir("ckpt-bf16-into-fp32");
  const auto back = test::temp_dir("ckpt-fp32-into-bf16");
  const std::string still = " --lr 1e-30 --weight-decay 0 --checkpoint-every 1 --init-from ";
  ASSERT_EQ(test::vdnn(train_args(fp32, 1) + still + checkpoint_path(straight, 6).string()).code,
            kExitOk);
  EXPECT_EQ(weights(checkpoint_path(fp32, 1)), weights(checkpoint_path(straight, 6)));
  ASSERT_EQ(test::vdnn(train_args(back, 1) + " --precision bf16" + still +
                       checkpoint_path(fp32, 1).string())
                .code,
            kExitOk);
  EXPECT_EQ(weights(checkpoint_path(back, 1)), weights(checkpoint_path(straight, 6)));
}

// Starts `vdnn ARGS` without waiting for it.
pid_t spawn(const std::string& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string command = std::string(VDNN_CLI_PATH) + " " + args + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

TEST(CheckpointCli, KillNineAtRandomMomentsNeverLeavesABadCheckpoint) {
  const auto out = test::temp_dir("ckpt-kill");
  std::mt19937 random(7);
  std::uniform_int_distribution<int> wait_ms(150, 900);
  int kills = 0;
  for (int round = 0; round < 24; ++round) {
    const bool any = !checkpoints_newest_first(out).empty();
    const pid_t pid = spawn(train_args(out, 100000) + " --checkpoint-every 1 --keep 3" +
                            (any ? " --resume latest" : ""));
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms(random)));
    kills += kill(pid, SIGKILL) == 0 ? 1 : 0;
    int status = 0;
    waitpid(pid, &status, 0);
    // Every checkpoint there is whole: a kill mid-write leaves at most a temporary file.
    for (const auto& path : checkpoints_newest_first(out)) {
      EXPECT_NO_THROW(static_cast<void>(models::read_safetensors(path, true))) << path;
    }
  }
  EXPECT_GE(kills, 20);
  ASSERT_FALSE(checkpoints_newest_first(out).empty());
  EXPECT_NO_THROW(static_cast<void>(latest_good_checkpoint(out)));
}

// Waits for `pid` and returns its exit code (-1 when a signal killed it).
int exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Waits (up to a minute) until the run in `out` has logged `steps` steps, so that its signal
// handlers are in place.
void wait_for_steps(const std::filesystem::path& out, std::size_t steps) {
  for (int i = 0; i < 600 && losses(out).size() < steps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

TEST(CheckpointCli, SigintFinishesTheStepWritesACheckpointAndExitsWith5) {
  const auto out = test::temp_dir("ckpt-sigint");
  const pid_t pid = spawn(train_args(out, 100000));
  ASSERT_GT(pid, 0);
  wait_for_steps(out, 3);
  ASSERT_EQ(kill(pid, SIGINT), 0);
  EXPECT_EQ(exit_code(pid), kExitInterrupted);
  const auto checkpoints = checkpoints_newest_first(out);
  ASSERT_EQ(checkpoints.size(), 1U);
  const auto file = models::read_safetensors(checkpoints.front(), true);
  const std::string iteration = file.metadata.at("vdnn.iteration");
  EXPECT_EQ(std::to_string(losses(out).size()), iteration);  // every step done is in it
  EXPECT_EQ(checkpoints.front(), checkpoint_path(out, std::stoll(iteration)));
  const auto run = test::vdnn(train_args(out, std::stoll(iteration) + 2) + " --resume latest");
  EXPECT_EQ(run.code, kExitOk) << run.output;
}

TEST(CheckpointCli, ASecondSignalExitsAtOnceAndKeepsTheLastGoodCheckpoint) {
  const auto out = test::temp_dir("ckpt-sigint-twice");
  // Batch 64: a step of a few hundred milliseconds, so the second signal comes mid-step.
  const pid_t pid =
      spawn("train --config " + test::config("resnet20-cifar.json") +
            " --device cpu --batch 64 --iters 100000 --checkpoint-every 1 --out " + out.string());
  ASSERT_GT(pid, 0);
  wait_for_steps(out, 1);
  // Into the next step (seconds long), past its predecessor's checkpoint.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  // Two different signals back to back: the kernel never merges them into one pending signal, and
  // the second comes microseconds after the first, before any graceful stop (a step's end, a
  // checkpoint) could end the process. Whichever is delivered second exits at once.
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const int code = exit_code(pid);
  EXPECT_TRUE(code == 128 + SIGTERM || code == 128 + SIGINT) << "exit code " << code;
  ASSERT_FALSE(checkpoints_newest_first(out).empty());
  for (const auto& path : checkpoints_newest_first(out)) {
    EXPECT_NO_THROW(static_cast<void>(models::read_safetensors(path, true))) << path;
  }
}

}  // namespace
}  // namespace vdnn::tools
