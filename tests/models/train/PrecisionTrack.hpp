// PrecisionTrack: ResNet-20 trained on CIFAR-format data in fp32 and in bf16 with the same seeds,
// for the tests that the bf16 loss curve tracks fp32 (issue 24; CPU emulation and CUDA alike).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <string>

#include "models/ConfigLoader.hpp"
#include "models/data/CifarFiles.hpp"
#include "models/train/Trainer.hpp"

namespace vdnn::testing {

/// What one tracked run ended with.
struct TrackedRun {
  double final_loss = 0.0;  // mean training loss of the last quarter of the steps
  double accuracy = 0.0;    // on the test split: the mean of 4 evaluations over the last quarter
};

/// `steps` steps of ResNet-20 at batch 32 on a CIFAR-format directory (made once under the
/// system's temporary folder), from `seed`, in `precision` on `session`'s backend.
inline TrackedRun track(graph::SessionOptions session, runtime::DType precision, int steps,
                        std::uint64_t seed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "vdnn-test-precision-track-8k";
  if (!fs::exists(dir / "test_batch.bin")) write_cifar_directory(dir, 1, 8192, 1024);
  models::TrainerOptions o;
  o.data = "cifar10:" + dir.string();
  o.evaluation = true;
  o.session = session;
  o.session.precision = precision;
  o.session.executor.seed = seed;
  o.schedule.base_lr = 0.02;
  o.schedule.total_steps = steps;
  models::Trainer trainer(
      models::load_network(std::string(VDNN_SOURCE_DIR) + "/configs/resnet20-cifar.json"), 32, o);
  // Evaluated four times over the last quarter: one evaluation right after a loss spike moves by
  // several points between runs that train equally well (batch-norm running statistics follow
  // the last few batches).
  double accuracy = 0.0;
  for (int i = 1; i <= steps; ++i) {
    trainer.step();
    if (4 * i > 3 * steps && i % (steps / 16) == 0) accuracy += trainer.evaluate().accuracy / 4.0;
  }
  const auto& history = trainer.history();
  const std::size_t tail = std::max<std::size_t>(1, history.size() / 4);
  double sum = 0.0;
  for (std::size_t i = history.size() - tail; i < history.size(); ++i) sum += history[i].loss;
  return {sum / static_cast<double>(tail), accuracy};
}

/// The bounds, final training loss within 5 % and test accuracy within 1 point of fp32's,
/// or within fp32's own spread where that is wider: the distance between two fp32 runs from
/// different seeds (the acceptable error is of the order of FP32's own).
inline void expect_bf16_tracks_fp32(const graph::SessionOptions& session, int steps) {
  const TrackedRun fp32 = track(session, runtime::DType::F32, steps, 7);
  const TrackedRun other = track(session, runtime::DType::F32, steps, 8);
  const TrackedRun bf16 = track(session, runtime::DType::BF16, steps, 7);
  std::printf("fp32: final loss %.4f, accuracy %.4f; fp32 seed 8: %.4f, %.4f; bf16: %.4f, %.4f\n",
              fp32.final_loss, fp32.accuracy, other.final_loss, other.accuracy, bf16.final_loss,
              bf16.accuracy);
  const double loss_bound =
      std::max(0.05 * fp32.final_loss, std::abs(other.final_loss - fp32.final_loss));
  const double accuracy_bound = std::max(0.01, std::abs(other.accuracy - fp32.accuracy));
  EXPECT_LE(std::abs(bf16.final_loss - fp32.final_loss), loss_bound);
  EXPECT_LE(std::abs(bf16.accuracy - fp32.accuracy), accuracy_bound);
  EXPECT_GT(fp32.accuracy, 0.2);  // it learned something: chance is 0.1
}

}  // namespace vdnn::testing
