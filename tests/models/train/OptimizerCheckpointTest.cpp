// Optimizer state in checkpoints: resume is bitwise for every optimizer (N steps straight equal k
// steps, save, load into a fresh session, N - k steps), AdamW's state under PyTorch's names, a
// resume with another optimizer refused; and the plan counting each optimizer's state.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graph/Planner.hpp"
#include "models/train/Checkpoint.hpp"
#include "models/train/CheckpointHarness.hpp"
#include "models/train/SafetensorsBytes.hpp"

namespace vdnn::models {
namespace {

using layers::OptimizerConfig;
using layers::OptimizerKind;
using testing::bitwise_equal;
using testing::make_session;
using testing::snapshot;
using testing::TempDir;
using testing::train;

constexpr int kSteps = 5;
constexpr int kSaveAt = 2;

OptimizerConfig optimizer(OptimizerKind kind) {
  OptimizerConfig c;
  c.kind = kind;
  return c;
}

// Every optimizer, with the options that change its update path.
std::vector<OptimizerConfig> configurations() {
  OptimizerConfig nesterov = optimizer(OptimizerKind::Sgd);
  nesterov.nesterov = true;
  OptimizerConfig dampened = optimizer(OptimizerKind::Sgd);
  dampened.dampening = 0.3;
  dampened.clip_grad_norm = 0.5;
  OptimizerConfig adamw = optimizer(OptimizerKind::AdamW);
  adamw.weight_decay = 0.05;
  OptimizerConfig clipped_adamw = adamw;
  clipped_adamw.clip_grad_norm = 0.5;
  OptimizerConfig lars = optimizer(OptimizerKind::Lars);
  lars.clip_grad_norm = 1.0;
  return {nesterov, dampened, adamw, clipped_adamw, lars};
}

std::string describe(const OptimizerConfig& c) {
  return std::string(layers::optimizer_name(c.kind)) + (c.nesterov ? " nesterov" : "") +
         " dampening=" + std::to_string(c.dampening) + " clip=" + std::to_string(c.clip_grad_norm);
}

TEST(OptimizerCheckpoint, ResumeIsBitwiseForEveryOptimizer) {
  TempDir dir("optimizer-resume");
  const auto path = dir.path() / "model.safetensors";
  for (const OptimizerConfig& c : configurations()) {
    SCOPED_TRACE(describe(c));
    auto straight = make_session(3, testing::small_residual_net(), c);
    std::vector<double> straight_losses;
    train(*straight, kSteps, 7, 0, &straight_losses);

    auto first = make_session(3, testing::small_residual_net(), c);
    std::vector<double> resumed_losses;
    train(*first, kSaveAt, 7, 0, &resumed_losses);
    save_checkpoint(path, *first, {kSaveAt, 3, "{}"});
    auto resumed = make_session(99, testing::small_residual_net(), c);
    load_checkpoint(path, *resumed);
    train(*resumed, kSteps - kSaveAt, 7, kSaveAt, &resumed_losses);

    ASSERT_EQ(straight_losses.size(), resumed_losses.size());
    EXPECT_EQ(std::memcmp(straight_losses.data(), resumed_losses.data(),
                          straight_losses.size() * sizeof(double)),
              0);
    const testing::Snapshot a = snapshot(*straight);
    const testing::Snapshot b = snapshot(*resumed);
    EXPECT_TRUE(bitwise_equal(a.values, b.values));
    EXPECT_TRUE(bitwise_equal(a.states, b.states));
  }
}

const SafetensorsTensor* find(const SafetensorsFile& file, const std::string& name) {
  for (const SafetensorsTensor& t : file.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(OptimizerCheckpoint, AdamWStateHasPyTorchNames) {
  TempDir dir("optimizer-names");
  const auto path = dir.path() / "model.safetensors";
  auto session = make_session(3, testing::small_residual_net(), optimizer(OptimizerKind::AdamW));
  train(*session, 2);
  save_checkpoint(path, *session, {2, 3, "{}"});
  const SafetensorsFile file = read_safetensors(path, /*require_checksum=*/true);
  EXPECT_EQ(file.metadata.at("vdnn.optimizer"), "adamw");
  const std::string weight = session->executor().parameters().all().front().name;
  for (const char* state : {"exp_avg", "exp_avg_sq"}) {
    const SafetensorsTensor* t = find(file, optimizer_tensor_name(weight, state));
    ASSERT_NE(t, nullptr) << state;
    EXPECT_EQ(t->dtype, TensorDType::F32);
  }
  EXPECT_EQ(find(file, optimizer_tensor_name(weight, "momentum_buffer")), nullptr);
  const SafetensorsTensor* step = find(file, optimizer_tensor_name(weight, "step"));
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->shape.empty());
  float value = 0.0f;
  std::memcpy(&value, step->data.data(), sizeof(value));
  EXPECT_EQ(value, 2.0f);
}

TEST(OptimizerCheckpoint, ResumingWithAnotherOptimizerIsRefused) {
  TempDir dir("optimizer-mismatch");
  const auto path = dir.path() / "model.safetensors";
  auto sgd = make_session(3);
  train(*sgd, 1);
  save_checkpoint(path, *sgd, {1, 3, "{}"});
  auto adamw = make_session(3, testing::small_residual_net(), optimizer(OptimizerKind::AdamW));
  const std::string what = testing::load_error(path, *adamw);
  EXPECT_NE(what.find("sgd optimizer, but this run uses adamw"), std::string::npos) << what;
  // The weights alone load into any optimizer.
  LoadOptions weights_only;
  weights_only.weights_only = true;
  EXPECT_NO_THROW(load_checkpoint(path, *adamw, weights_only));
}

TEST(OptimizerCheckpoint, ThePlanCountsEachOptimizersState) {
  auto sgd = make_session(3);
  auto adamw = make_session(3, testing::small_residual_net(), optimizer(OptimizerKind::AdamW));
  const graph::Graph& g = sgd->graph();
  const auto trainable_bytes = static_cast<std::uint64_t>(g.trainable_parameters()) * sizeof(float);
  EXPECT_EQ(graph::resident_bytes(g, 2) - graph::resident_bytes(g, 1), trainable_bytes);
  EXPECT_EQ(adamw->plan().optimizer_state_buffers, 2);
  EXPECT_EQ(adamw->plan().resident_bytes - sgd->plan().resident_bytes, trainable_bytes);
  // The executor allocated exactly what the plan counted (the pool simulation replays it).
  train(*adamw, 1);
  EXPECT_EQ(adamw->executor().memory().pool_peak, adamw->plan().predicted_pool_peak);
}

}  // namespace
}  // namespace vdnn::models
