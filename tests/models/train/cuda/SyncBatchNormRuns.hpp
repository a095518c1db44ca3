// SyncBatchNormRuns: the synchronized batch norm's training runs that the NCCL and the one-GPU
// tests share: ResNet-50 at 64 x 64 in FP32 for nccl_test::kSteps steps, with or without
// --sync-bn, at one rank or as one rank of a communicator.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "models/ConfigLoader.hpp"
#include "models/train/cuda/NcclRanks.hpp"

namespace vdnn::models::sync_bn_test {

inline constexpr std::int64_t kSide = 64;  // the last stage at 2 x 2: 32 values a channel a rank

/// A rate at which ResNet-50 at batch 16 trains without diverging over ten steps (at 0.05 it
/// diverged, loss 7 -> 20, on one GPU too: differences of rounding then grow without bound).
inline constexpr double kRate = 0.002;

inline graph::NetworkDef small_resnet50() {
  graph::NetworkDef def = load_network(std::string(VDNN_SOURCE_DIR) + "/configs/resnet50.json");
  def.height = kSide;
  def.width = kSide;
  return def;
}

/// nccl_test::fp32_options (seed 11) with the batch norms synchronized over `communicator` when
/// `sync_bn`.
inline TrainerOptions options(int device, runtime::Communicator* communicator, bool sync_bn,
                              double lr) {
  TrainerOptions o = nccl_test::fp32_options(device, communicator, 11, lr);
  o.session.executor.batch_norm_communicator = sync_bn ? communicator : nullptr;
  return o;
}

/// kSteps steps of ResNet-50 at `batch` on CUDA device `device` with `options` (lr: `lr`,
/// `change` applied to them last), on the trainer's own data.
inline nccl_test::RankRun train(
    int device, std::int64_t batch, runtime::Communicator* communicator, bool sync_bn, double lr,
    const std::function<void(TrainerOptions&)>& change = [](TrainerOptions&) {}) {
  TrainerOptions o = options(device, communicator, sync_bn, lr);
  change(o);
  Trainer trainer(small_resnet50(), batch, std::move(o));
  return nccl_test::train_steps(trainer, nccl_test::kSteps);
}

}  // namespace vdnn::models::sync_bn_test
